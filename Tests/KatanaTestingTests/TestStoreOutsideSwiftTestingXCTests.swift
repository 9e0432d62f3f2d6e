import Foundation
import KatanaTestSupport
import KatanaTesting
import XCTest

/// The test store used outside a Swift Testing test: Swift Testing drops its issues there, so the test store
/// prints them to standard error.
///
/// An XCTest case is the honest harness: it is the case the documentation describes, and in its test
/// methods `Test.current` is nil, as in any code Swift Testing does not run. (`swift test` runs the XCTest
/// pass alone, one test at a time, so capturing standard error does not catch Swift Testing's output.)
final class TestStoreOutsideSwiftTestingXCTests: XCTestCase {
  func testWrongMutation_isPrintedToStandardError_atTheCallersLine() async throws {
    let store = CounterTestStore(initialState: CounterState())
    let line = #line + 2
    let output = try await capturingOutput(of: STDERR_FILENO, ownPrefixes: ["[KatanaTesting]", "  "]) {
      try await store.dispatch(Increment(by: 2)) { $0.count = 3 }
    }
    await store.finish()
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let first = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("[KatanaTesting] error:") })
    XCTAssertEqual(
      Array(lines[first...].prefix(3)),
      [
        "[KatanaTesting] error: KatanaTestingTests/TestStoreOutsideSwiftTestingXCTests.swift:\(line): State change "
          + "of Increment(by: 2) does not match the expectation (expected: the state before it, changed by your "
          + "mutation). Differences:",
        "  count: expected 3, actual 2",
        "[KatanaTesting] TestStore reports failures through Swift Testing; this code is not running inside a Swift "
          + "Testing test, so the failure above is not reported to any test framework.",
      ])
    XCTAssertEqual(store.state.count, 2)
  }
}
