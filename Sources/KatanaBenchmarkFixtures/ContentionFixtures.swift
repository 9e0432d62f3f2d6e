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

/// How many times the requested operations a contention batch runs: long enough that starting and releasing its
/// callers (64 thread wake-ups take about 0.3 ms here) stays under 2% of the batch. With the default 100,000, the
/// release alone was a third of a 64-thread batch, and every kind of caller seemed to collapse, the lock included.
let contentionScale = 10

extension BenchmarkFixture {
  /// Awaited `store.dispatch` from `tasks` tasks at once: ns per dispatch of the aggregate, every update counted.
  public static func contendedDispatch(tasks: Int) -> BenchmarkFixture {
    BenchmarkFixture(
      name: "contention: awaited dispatch, \(Callers.tasks(tasks).label)",
      explanation: "try await store.dispatch(Increment()) from \(tasks) tasks at once; ns per dispatch of the "
        + "aggregate, with the total checked."
    ) { operations in
      let store = try await makeStore()
      let each = Swift.max(1, operations * contentionScale / tasks)
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
      explanation: "store.send(Increment()) from \(threads) plain threads at once (started beforehand, released "
        + "together), then each thread's last handle awaited; ns per item of the aggregate, with the total checked."
    ) { operations in
      let store = try await makeStore()
      let each = Swift.max(1, operations * contentionScale / threads)
      let gang = ThreadGang(count: threads) { _ in
        var last: DispatchHandle<Void>?
        for _ in 0..<each { last = store.send(Increment()) }
        return last
      }
      return PreparedFixture(operations: each * threads) {
        for handle in await gang.run() { try await handle?.value }
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
      let each = Swift.max(1, operations * contentionScale / tasks)
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
      let each = Swift.max(1, operations * contentionScale / callers.count)
      var gang: ThreadGang<Int>?
      if case .threads(let count) = callers {
        gang = ThreadGang(count: count) { _ in
          for _ in 0..<each { locked.increment(by: 1) }
          return 0
        }
      }
      return PreparedFixture(operations: each * callers.count) { [gang] in
        switch callers {
        case .tasks(let count):
          await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
              group.addTask { for _ in 0..<each { locked.increment(by: 1) } }
            }
          }
        case .threads:
          _ = await gang?.run()
        }
      } verify: {
        guard locked.counter == each * callers.count else {
          throw CorrectnessError(description: "lock lost updates")
        }
      }
    }
  }
}

/// `count` plain threads, started before the measured part (a server's request threads exist before its requests
/// come) and parked until ``run()`` releases them together.
public final class ThreadGang<T: Sendable>: @unchecked Sendable {  // Sendable: `continuation` is under `lock`.
  private let start = DispatchSemaphore(value: 0)
  private let results: ResultSlots<T>
  private let count: Int
  private let lock = NSLock()
  private var continuation: CheckedContinuation<Void, Never>?

  /// Starts the threads, and returns once every one of them waits for ``run()``.
  public init(count: Int, _ body: @escaping @Sendable (Int) -> T) {
    self.count = count
    results = ResultSlots(count: count)
    let ready = DispatchSemaphore(value: 0)
    for index in 0..<count {
      let thread = Thread { [self] in
        ready.signal()
        start.wait()
        if results.set(index, body(index)) { finished() }
      }
      thread.start()
    }
    for _ in 0..<count { ready.wait() }
  }

  private func finished() {
    lock.lock()
    let continuation = self.continuation
    lock.unlock()
    continuation?.resume()
  }

  /// Releases the threads at once, and returns their results once all are done. Call it once.
  public func run() async -> [T] {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      lock.lock()
      self.continuation = continuation
      lock.unlock()
      for _ in 0..<count { start.signal() }
    }
    return results.values
  }
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
