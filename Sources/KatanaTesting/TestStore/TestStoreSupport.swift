import Foundation
import Katana
import Testing

/// A value guarded by a lock. KatanaTesting keeps its own (Katana's is internal to the core); tests are not a
/// hot path, so `NSLock` does.
final class TestLock<Value>: @unchecked Sendable {  // Sendable: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// Records a test failure at `location`.
///
/// `Issue.record` is silently ignored outside a Swift Testing test (for example in an XCTest case), so the
/// message also goes to standard error there: a failure the test framework cannot see is still visible.
func recordIssue(_ message: String, at location: SourceLocation) {
  if Test.current == nil {
    let line =
      "[KatanaTesting] error: \(location.fileID):\(location.line): \(message)\n"
      + "[KatanaTesting] TestStore reports failures through Swift Testing; this code is not running inside a "
      + "Swift Testing test, so the failure above is not reported to any test framework.\n"
    FileHandle.standardError.write(Data(line.utf8))
  }
  Issue.record(Comment(rawValue: message), sourceLocation: location)
}

/// Records `message` as an issue at `location` and returns the error that stops the test, so that one
/// mistake is reported once.
///
/// In a Swift Testing test, the issue is recorded by a failed `#require`, and the error returned is the
/// `ExpectationFailedError` it throws: Swift Testing does not report that error again when the test throws it
/// (any other error would add a "Caught error" issue). Elsewhere the message goes to standard error, and the
/// error returned is `fallback`, which says what happened.
func recordIssueStoppingTest(_ message: String, at location: SourceLocation, otherwise fallback: any Error)
  -> any Error
{
  guard Test.current != nil else {
    recordIssue(message, at: location)
    return fallback
  }
  let theTestCanGoOn = false
  do {
    try #require(theTestCanGoOn, Comment(rawValue: message), sourceLocation: location)
  } catch {
    return error
  }
  return fallback
}

/// Shows, without failing the test, an assertion that a non-exhaustive test store skipped
/// (``Exhaustivity/off(showSkippedAssertions:)``): a known issue in Swift Testing, a note on standard error
/// elsewhere.
func recordSkippedAssertion(_ message: String, at location: SourceLocation) {
  guard Test.current != nil else {
    let line = "[KatanaTesting] skipped assertion: \(location.fileID):\(location.line): \(message)\n"
    FileHandle.standardError.write(Data(line.utf8))
    return
  }
  withKnownIssue("Skipped by a non-exhaustive test store (showSkippedAssertions)", sourceLocation: location) {
    Issue.record(Comment(rawValue: message), sourceLocation: location)
  }
}

/// Builds the Swift Testing source location of a caller from the literals it passed.
///
/// The test store takes `#fileID`, `#filePath`, `#line` and `#column` rather than a `#_sourceLocation`
/// default: that macro expands at the call site, so every test file would need `import Testing`.
func sourceLocation(fileID: String, filePath: String, line: Int, column: Int) -> SourceLocation {
  SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
}

/// How the test store names an item in messages: its value, shortened; for an item dispatched through a
/// scope, the feature's item and the scope (`AddItem(sku: "A1") through AppState.cart`).
func describe(_ item: any Dispatchable) -> String {
  if let scoped = item as? any ScopedDispatchable {
    return "\(describe(scoped.base)) through \(scoped.scope)"
  }
  return abbreviated(String(describing: item))
}

/// How the test store names an item's type in messages, without the module prefix; for an item dispatched
/// through a scope, the type of the feature's item.
func typeName(of item: any Dispatchable) -> String {
  if let scoped = item as? any ScopedDispatchable {
    return typeName(of: scoped.base)
  }
  return String(describing: type(of: item))
}

/// Lists items for a message: `A(x: 1), B()` or, past `limit`, the first ones and a count of the rest.
func describeList(_ items: [any Dispatchable], limit: Int = 8) -> String {
  var parts = items.prefix(limit).map(describe)
  if items.count > limit {
    parts.append("and \(items.count - limit) more")
  }
  return parts.joined(separator: ", ")
}

/// `text`, cut to `limit` characters with an ellipsis.
func abbreviated(_ text: String, limit: Int = 160) -> String {
  guard text.count > limit else { return text }
  return String(text.prefix(limit - 1)) + "…"
}

/// `count` and the noun, singular or plural: `1 item`, `2 items`.
func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
  "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}

/// How a failsafe bound reads in messages: `30 seconds`, `250 milliseconds`.
func describe(_ duration: Duration) -> String {
  let (seconds, attoseconds) = duration.components
  if attoseconds == 0 { return counted(Int(seconds), "second") }
  let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
  return counted(Int(milliseconds), "millisecond")
}
