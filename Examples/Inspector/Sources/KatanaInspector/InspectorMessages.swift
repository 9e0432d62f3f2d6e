import Foundation
import Katana

/// What the page may send: `{"type": "ack"}`, `{"type": "state", "sequence": 12}` (with `"skipped": [3, 5]`, the
/// state as it would be without those commits), `{"type": "travel", "sequence": 12}`, `{"type": "live"}`,
/// `{"type": "effect", "id": 4}` (side effect 4's payload), `{"type": "test", "from": 3, "to": 9}` (a Swift
/// Testing test of those commits).
struct PageRequest: Decodable {
  let type: String
  let sequence: Int?
  let skipped: [Int]?
  let id: Int?
  let from: Int?
  let to: Int?
}

/// The messages the server sends, as JSON text.
enum ServerMessage {
  private struct Hello: Encodable {
    let type = "hello"
    let version = 2
    let capacity: Int
    let live: Bool
    /// ``InspectorConfiguration/travelTimeout``, in seconds.
    let travelTimeout: Double
    /// False for a recording opened from a log: nothing to move.
    let canTravel: Bool
    /// Whether `/session.katana.jsonl` serves the session as a log.
    let canExport: Bool
  }

  private struct Batch: Encodable {
    let type = "batch"
    let items: [TimelineItem]
    let dropped: Int
    let last: Int
    let live: Bool
    let refused: Int
    let answers: Int
  }

  private struct GeneratedTest: Encodable {
    let type = "test"
    let from: Int
    let to: Int
    let source: String
  }

  private struct Reply: Encodable {
    let type: String
    let sequence: Int?
    let live: Bool
    /// Why the store came back to live without the page asking ("timeout"); nil otherwise.
    let reason: String?
    /// What the store refused since it last went away from live.
    let refused: Int
    /// This answer's number (``MoveGuard/answered()``).
    let answer: Int
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

  static func hello(capacity: Int, live: Bool, travelTimeout: Duration, canTravel: Bool, canExport: Bool) -> String {
    let (seconds, attoseconds) = travelTimeout.components
    return text(
      Hello(
        capacity: capacity, live: live, travelTimeout: Double(seconds) + Double(attoseconds) / 1e18,
        canTravel: canTravel, canExport: canExport))
  }

  /// `{"type":"effect","id":k,"payload":…}`.
  static func effect(id: Int, payload: Payload) -> String {
    var text = "{\"type\":\"effect\",\"id\":\(id),\"payload\":"
    payload.appendJSON(to: &text)
    return text + "}"
  }

  static func test(from: Int, to: Int, source: String) -> String {
    text(GeneratedTest(from: from, to: to, source: source))
  }

  /// `{"type":"batch","items":[…],"dropped":n,"last":k,"live":b,"refused":r,"answers":a}`, the items written by
  /// hand; `refused` counts what the store refused since it last went away from live, `answers` the answers to
  /// moves given before `live` was read (``MoveGuard/answered()``).
  static func batch(_ batch: FeedBatch, live: Bool, refused: Int, answers: Int) -> String {
    var text = "{\"type\":\"batch\",\"items\":["
    text.reserveCapacity(64 + batch.items.count * 160)
    for (index, item) in batch.items.enumerated() {
      if index > 0 { text += "," }
      item.appendJSON(to: &text)
    }
    text +=
      "],\"dropped\":\(batch.dropped),\"last\":\(batch.lastSequence),\"live\":\(live),\"refused\":\(refused),\"answers\":\(answers)}"
    return text
  }

  /// ``batch(_:live:)``'s plain twin, with `JSONEncoder`.
  static func batchWithEncoder(_ batch: FeedBatch, live: Bool, refused: Int, answers: Int) -> String {
    text(
      Batch(
        items: batch.items, dropped: batch.dropped, last: batch.lastSequence, live: live, refused: refused,
        answers: answers))
  }

  static func reply(_ type: String, sequence: Int?, live: Bool, reason: String?, refused: Int, answer: Int) -> String {
    text(Reply(type: type, sequence: sequence, live: live, reason: reason, refused: refused, answer: answer))
  }

  static func error(_ message: String, request: String?) -> String {
    text(Failure(request: request, message: message))
  }

  /// `{"type":"state","sequence":k,"state":…,"previous":…,"payload":…}`, with the states' own JSON spliced in;
  /// `payload` is the commit's updater (``Payload``), null for the state before the window's first commit.
  static func state(sequence: Int, state: Data, previous: Data?, payload: Payload?, skipped: [Int] = []) -> String {
    var text = "{\"type\":\"state\",\"sequence\":\(sequence),\"state\":"
    text += String(decoding: state, as: UTF8.self)
    text += ",\"previous\":"
    text += previous.map { String(decoding: $0, as: UTF8.self) } ?? "null"
    text += ",\"payload\":"
    if let payload {
      payload.appendJSON(to: &text)
    } else {
      text += "null"
    }
    text += ",\"skipped\":[" + skipped.map(String.init).joined(separator: ",") + "]}"
    return text
  }
}

/// What a commit's updater holds, for the page: its `Encodable` form (`form` "fields", `json` an object or value)
/// when it has one that encodes, a readable description otherwise (`form` "description", `json` a string), as
/// `String(describing:)` gives it (a struct's fields and values, or the type's own `description`).
struct Payload {
  let form: String
  let json: String

  init(of updater: any Dispatchable) {
    if let encodable = updater as? any Encodable {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys]
      if let data = try? encoder.encode(encodable) {
        form = "fields"
        json = String(decoding: data, as: UTF8.self)
        return
      }
    }
    var text = ""
    TimelineItem.appendString(String(describing: updater), to: &text)
    form = "description"
    json = text
  }

  /// `{"form":…,"value":…}`.
  func appendJSON(to text: inout String) {
    text += "{\"form\":"
    TimelineItem.appendString(form, to: &text)
    text += ",\"value\":" + json + "}"
  }
}
