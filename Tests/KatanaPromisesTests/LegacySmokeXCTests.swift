import Dispatch
import Foundation
import KatanaPromises
import XCTest

private struct Counter: State { var value = 0 }
private final class Deps: SideEffectDependencyContainer {
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}
private struct Inc: StateUpdater {
  func updateState(_ state: inout Counter) { state.value += 1 }
}
private struct IncTwice: SideEffect {
  func sideEffect(_ context: SideEffectContext<Counter, Deps>) throws {
    try Hydra.await(context.dispatch(Inc()))
    try Hydra.await(context.dispatch(Inc()))
  }
}
private struct Answer: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) throws -> Int { 42 }
}

final class LegacySmokeXCTests: XCTestCase {
  func testSmoke() throws {
    let store = Store<Counter, Deps>(interceptors: [], stateInitializer: { Counter() }, configuration: .katana6)
    var seen: [Int] = []
    let listened = expectation(description: "listener")
    listened.expectedFulfillmentCount = 2
    store.addListener { _, new in
      XCTAssertTrue(Thread.isMainThread)
      MainActor.assumeIsolated { seen.append(new.value) }
      listened.fulfill()
    }
    let done = expectation(description: "then")
    store.dispatch(IncTwice()).then { _ in
      XCTAssertEqual(store.state.value, 2)
      done.fulfill()
    }
    wait(for: [listened, done], timeout: 10)
    XCTAssertEqual(seen, [1, 2])
    XCTAssertEqual(try Hydra.await(failsafe(store.dispatch(Answer()))), 42)
  }
}
