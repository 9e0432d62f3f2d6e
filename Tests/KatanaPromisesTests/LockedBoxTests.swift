import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("LockedBox", .timeLimit(.failsafeMinutes(3)))
struct LockedBoxTests {
  @Test(arguments: [1, 2, 3] as [UInt64])
  func withLock_fromManyThreadsAtOnce_losesNoUpdate(seed: UInt64) async throws {
    // Each thread adds its own seeded amounts: the total is known in advance.
    let threads = 8
    let perThread = 5_000
    let box = LockedBox(0)
    let amounts = (0..<threads).map { thread in
      var generator = SeededGenerator(seed: seed &+ UInt64(thread))
      return (0..<perThread).map { _ in Int.random(in: 1...9, using: &generator) }
    }
    let barrier = ThreadBarrier(parties: threads)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for thread in 0..<threads {
        group.addTask {
          try await onOwnThread {
            try barrier.arriveAndWait()
            for amount in amounts[thread] { box.withLock { $0 += amount } }
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(box.value == amounts.joined().reduce(0, +), "seed \(seed)")
  }

  @Test func withLock_returnsTheBodysValue_andRethrowsItsError() {
    let box = LockedBox([1, 2])
    let count = box.withLock { values -> Int in
      values.append(3)
      return values.count
    }
    #expect(count == 3)
    #expect(throws: TestError(code: 4)) {
      try box.withLock { values in
        values.append(4)
        throw TestError(code: 4)
      }
    }
    // A throwing body keeps what it changed before throwing, as an `inout` argument does.
    #expect(box.value == [1, 2, 3, 4])
  }

  @Test func sharedByASendableClosure_replacesACapturedVar() async throws {
    // What Swift 6 asks of Katana 6 code that counted listener calls in a captured `var`.
    let store = Store<CounterState, AppDependencies>(
      interceptors: [], stateInitializer: { CounterState() }, configuration: .katana6)
    let changes = LockedBox<[Int]>([])
    let listened = EventCounter()
    store.addListener { _, newState in
      changes.withLock { $0.append(newState.counter) }
      listened.increment()
    }
    try await store.dispatch(Increment())
    try await store.dispatch(Increment())
    await listened.wait(for: 2)
    #expect(changes.value == [1, 2])
  }
}
