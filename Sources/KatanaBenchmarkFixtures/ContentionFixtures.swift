import Foundation
import Katana
import KatanaBenchmarkBaselines

/// The callers a contention case uses, and how many.
public enum Callers: Sendable, Hashable {
  /// Tasks on Swift's cooperative pool.
  case tasks(Int)
  /// Plain threads (a server's request handlers that do not await).
  case threads(Int)

  var count: Int {
    switch self {
    case .tasks(let count), .threads(let count): count
    }
  }

  var label: String {
    switch self {
    case .tasks(let count): "\(count) task\(count == 1 ? "" : "s")"
    case .threads(let count): "\(count) thread\(count == 1 ? "" : "s")"
    }
  }
}

extension BenchmarkFixture {
  /// Awaited `store.dispatch` from `tasks` tasks at once: ns per dispatch of the aggregate, every update counted.
  public static func contendedDispatch(tasks: Int) -> BenchmarkFixture {
    BenchmarkFixture(
      name: "contention: awaited dispatch, \(Callers.tasks(tasks).label)",
      explanation: "try await store.dispatch(Increment()) from \(tasks) tasks at once; ns per dispatch of the "
        + "aggregate, with the total checked."
    ) { operations in
      let store = try await makeStore()
      let each = Swift.max(1, operations / tasks)
      return PreparedFixture(operations: each * tasks) {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for _ in 0..<tasks {
            group.addTask { for _ in 0..<each { try await store.dispatch(Increment()) } }
          }
          try await group.waitForAll()
        }
      } verify: {
        try expectCounter(of: store, each * tasks)
      }
    }
  }

  /// `store.send` from `threads` plain threads at once: ns per item of the aggregate, every item counted.
  public static func contendedSend(threads: Int) -> BenchmarkFixture {
    BenchmarkFixture(
      name: "contention: send, \(Callers.threads(threads).label)",
      explanation: "store.send(Increment()) from \(threads) plain threads at once, then each thread's last handle "
        + "awaited; ns per item of the aggregate, with the total checked."
    ) { operations in
      let store = try await makeStore()
      let each = Swift.max(1, operations / threads)
      return PreparedFixture(operations: each * threads) {
        let handles = await onThreads(threads) { _ in
          var last: DispatchHandle<Void>?
          for _ in 0..<each { last = store.send(Increment()) }
          return last
        }
        for handle in handles { try await handle?.value }
      } verify: {
        try expectCounter(of: store, each * threads, "send lost updates")
      }
    }
  }

  /// The same mutation on a plain actor from `tasks` tasks: what a user would write instead of a store.
  public static func contendedActor(tasks: Int) -> BenchmarkFixture {
    BenchmarkFixture(
      name: "baseline: actor, \(Callers.tasks(tasks).label)", isBaseline: true,
      explanation: "await actor.increment(by: 1) from \(tasks) tasks at once."
    ) { operations in
      let actor = BaselineActor()
      let each = Swift.max(1, operations / tasks)
      return PreparedFixture(operations: each * tasks) {
        await withTaskGroup(of: Void.self) { group in
          for _ in 0..<tasks {
            group.addTask { for _ in 0..<each { await actor.increment(by: 1) } }
          }
        }
      } verify: {
        guard await actor.counter == each * tasks else { throw CorrectnessError(description: "actor lost updates") }
      }
    }
  }

  /// The same mutation under a lock from `callers`.
  public static func contendedLock(_ callers: Callers) -> BenchmarkFixture {
    BenchmarkFixture(
      name: "baseline: lock-protected mutation, \(callers.label)", isBaseline: true,
      explanation: "locked.increment(by: 1) from \(callers.label) at once."
    ) { operations in
      let locked = LockedBaseline()
      let each = Swift.max(1, operations / callers.count)
      return PreparedFixture(operations: each * callers.count) {
        switch callers {
        case .tasks(let count):
          await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
              group.addTask { for _ in 0..<each { locked.increment(by: 1) } }
            }
          }
        case .threads(let count):
          _ = await onThreads(count) { _ in
            for _ in 0..<each { locked.increment(by: 1) }
            return 0
          }
        }
      } verify: {
        guard locked.counter == each * callers.count else {
          throw CorrectnessError(description: "lock lost updates")
        }
      }
    }
  }
}

/// Runs `body` on `count` new threads at once (released together), and returns their results once all are done.
func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async -> [T] {
  let start = DispatchSemaphore(value: 0)
  let results = ResultSlots<T>(count: count)
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    for index in 0..<count {
      let thread = Thread {
        start.wait()
        if results.set(index, body(index)) { continuation.resume() }
      }
      thread.start()
    }
    for _ in 0..<count { start.signal() }
  }
  return results.values
}

/// One result slot per thread.
final class ResultSlots<T: Sendable>: @unchecked Sendable {  // Sendable: `slots` is only touched under `lock`.
  private let lock = NSLock()
  private var slots: [T?]
  private var filled = 0

  init(count: Int) { slots = Array(repeating: nil, count: count) }

  /// Stores the result of thread `index`; returns true for the last one.
  func set(_ index: Int, _ value: T) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    slots[index] = value
    filled += 1
    return filled == slots.count
  }

  var values: [T] {
    lock.lock()
    defer { lock.unlock() }
    return slots.compactMap { $0 }
  }
}
