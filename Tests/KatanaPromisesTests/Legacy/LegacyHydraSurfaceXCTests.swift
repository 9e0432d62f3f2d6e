import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// The corners of Hydra's surface (katana6.md section 4.2) that the promise suites do not reach, used the
/// way Katana 6 code did.
final class LegacyHydraSurfaceXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testContexts_runCallbacksOnHydrasQueues() {
    let contexts: [(Context, DispatchQueue)] = [
      (.userInteractive, .global(qos: .userInteractive)),
      (.userInitiated, .global(qos: .userInitiated)),
      (.utility, .global(qos: .utility)),
      (.background, .global(qos: .background)),
    ]
    for (context, queue) in contexts {
      XCTAssertEqual(context.queue.label, queue.label)
      XCTAssertEqual(value(of: Promise(resolved: 1).then(in: context) { _ in currentQueueLabel }), queue.label)
    }
    XCTAssertEqual(value(of: Promise(resolved: 1).then(in: .main) { _ in Thread.isMainThread }), true)
    let custom = MarkedQueue("test.custom-context")
    XCTAssertEqual(
      value(of: Promise(resolved: 1).then(in: .custom(queue: custom.queue)) { _ in custom.isCurrent }), true)
  }

  func testPromiseTypealiases_andBodies_asKatana6CodeWroteThem() {
    let body: Promise<Int>.Body = { resolve, reject, status in
      if status.isCancelled { return reject(TestError(code: 0)) }
      resolve(21)
    }
    // A callback API wrapped in a promise, as in Katana 6's README.
    let fetchFactor: @Sendable (@escaping Promise<Int>.Resolved, @escaping Promise<Int>.Rejector) -> Void = {
      resolve, _ in resolve(2)
    }
    let doubled = Promise<Int>(in: .userInitiated, body).then { value in
      Promise<Int> { resolve, reject, _ in fetchFactor({ resolve($0 * value) }, reject) }
    }
    XCTAssertEqual(value(of: doubled), 42)
  }

  func testInvalidationToken_isAnInvalidatableProtocol_thatBodiesSee() {
    let token = InvalidationToken()
    let invalidatable: any InvalidatableProtocol = token
    XCTAssertFalse(invalidatable.isCancelled)
    token.invalidate()
    XCTAssertTrue(invalidatable.isCancelled)

    let seen = Promise<Bool>(token: token) { resolve, _, status in resolve(status.isCancelled) }
    XCTAssertEqual(value(of: seen), true)
    XCTAssertTrue(seen.isCancelled, "isCancelled reports the token, as in Hydra")
  }

  func testPromiseErrors_areHydras() {
    let errors: [PromiseError] = [.timeout, .rejected, .invalidInput, .invalidContext, .attemptsFailed]
    XCTAssertEqual(Set(errors.map { "\($0)" }).count, errors.count)
    XCTAssertEqual(error(of: Promise(resolved: 1).validate { _ in false }) as? PromiseError, .rejected)
  }
}
