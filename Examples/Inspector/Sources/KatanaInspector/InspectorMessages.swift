import Foundation

/// What the page may send: `{"type": "ack"}`, `{"type": "state", "sequence": 12}`,
/// `{"type": "travel", "sequence": 12}`, `{"type": "live"}`.
struct PageRequest: Decodable {
  let type: String
  let sequence: Int?
}

/// The messages the server sends, as JSON text.
enum ServerMessage {
  private struct Hello: Encodable {
    let type = "hello"
    let version = 1
    let capacity: Int
    let live: Bool
  }

  private struct Batch: Encodable {
    let type = "batch"
    let items: [TimelineItem]
    let dropped: Int
    let last: Int
    let live: Bool
  }

  private struct Reply: Encodable {
    let type: String
    let sequence: Int?
    let live: Bool
  }

  private struct Failure: Encodable {
    let type = "error"
    let request: String?
    let message: String
  }

  private static func text(_ value: some Encodable) -> String {
    // These values hold strings and numbers only: encoding them cannot fail.
    let data = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  static func hello(capacity: Int, live: Bool) -> String {
    text(Hello(capacity: capacity, live: live))
  }

  /// `{"type":"batch","items":[…],"dropped":n,"last":k,"live":b}`, the items written by hand.
  static func batch(_ batch: FeedBatch, live: Bool) -> String {
    var text = "{\"type\":\"batch\",\"items\":["
    text.reserveCapacity(64 + batch.items.count * 160)
    for (index, item) in batch.items.enumerated() {
      if index > 0 { text += "," }
      item.appendJSON(to: &text)
    }
    text += "],\"dropped\":\(batch.dropped),\"last\":\(batch.lastSequence),\"live\":\(live)}"
    return text
  }

  /// ``batch(_:live:)``'s plain twin, with `JSONEncoder`.
  static func batchWithEncoder(_ batch: FeedBatch, live: Bool) -> String {
    text(Batch(items: batch.items, dropped: batch.dropped, last: batch.lastSequence, live: live))
  }

  static func reply(_ type: String, sequence: Int?, live: Bool) -> String {
    text(Reply(type: type, sequence: sequence, live: live))
  }

  static func error(_ message: String, request: String?) -> String {
    text(Failure(request: request, message: message))
  }

  /// `{"type":"state","sequence":k,"state":…,"previous":…}`, with the states' own JSON spliced in.
  static func state(sequence: Int, state: Data, previous: Data?) -> String {
    var text = "{\"type\":\"state\",\"sequence\":\(sequence),\"state\":"
    text += String(decoding: state, as: UTF8.self)
    text += ",\"previous\":"
    text += previous.map { String(decoding: $0, as: UTF8.self) } ?? "null"
    text += "}"
    return text
  }
}
