/// The batch's items as JSON, written by hand: the inspector's hot path under load, several times faster than
/// `JSONEncoder` (which stays as the plain twin, ``ServerMessage/batchWithEncoder(_:live:)``; the tests compare
/// the two).
extension TimelineItem {
  func appendJSON(to text: inout String) {
    text += "{\"kind\":"
    Self.appendString(kind, to: &text)
    text += ",\"id\":\(id),\"type\":"
    Self.appendString(type, to: &text)
    text += ",\"scope\":"
    Self.appendOptionalString(scope, to: &text)
    text += ",\"cause\":"
    text += cause.map { String($0) } ?? "null"
    text += ",\"start\":\(start),\"duration\":"
    text += duration.map { String($0) } ?? "null"
    text += ",\"outcome\":"
    Self.appendOptionalString(outcome, to: &text)
    text += update ? ",\"update\":true}" : ",\"update\":false}"
  }

  static func appendOptionalString(_ value: String?, to text: inout String) {
    if let value {
      appendString(value, to: &text)
    } else {
      text += "null"
    }
  }

  /// `value` as a JSON string: quotes, backslashes and control characters escaped.
  static func appendString(_ value: String, to text: inout String) {
    text += "\""
    if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
      text += value
    } else {
      for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": text += "\\\""
        case "\\": text += "\\\\"
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case _ where scalar.value < 0x20:
          let hex = String(scalar.value, radix: 16)
          text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: text.unicodeScalars.append(scalar)
        }
      }
    }
    text += "\""
  }
}
