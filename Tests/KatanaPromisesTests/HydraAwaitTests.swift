import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("Hydra.await: blocking waits", .timeLimit(.failsafeMinutes(3)))
struct HydraAwaitTests {
  @Test func plainThread_blocksUntilTheValueArrives() async throws {
    let promise = Promise<Int>()
    let release = Gate()
    let waiting = Task { try await onPlainThread { try Hydra.await(failsafe(promise)) } }
    Task {
      await release.wait()
      promise.resolve(5)
    }
    release.open()
    #expect(try await waiting.value == 5)
  }

  /// The form Katana 6's own tests used: a context other than `.main` changes nothing.
  @Test func backgroundContextForm_blocksLikeThePlainForm() async throws {
    let promise = Promise<Int>(in: .background) { resolve, _, _ in resolve(6) }
    #expect(try await onPlainThread { try Hydra.await(in: .background, failsafe(promise)) } == 6)
  }

  @Test func plainThread_throwsTheRejection() async throws {
    await #expect(throws: TestError(code: 1)) {
      try await onPlainThread { try Hydra.await(Promise<Int>(rejected: TestError(code: 1))) }
    }
  }

  @Test func plainThread_startsALazyBody() async throws {
    let value = try await onPlainThread { try Hydra.await(failsafe(Promise<Int> { resolve, _, _ in resolve(8) })) }
    #expect(value == 8)
  }

  @Test func plainThread_waitsForMainContextCallbacks() async throws {
    let value = try await onPlainThread { try Hydra.await(failsafe(Promise(resolved: 1).then { $0 + 1 })) }
    #expect(value == 2)
  }

  @Test func bodyForm_runsTheBodyAndWaits() async throws {
    let value = try await onPlainThread {
      try Hydra.await(in: .utility) { (resolve: @escaping Promise<String>.Resolved, _, _) in resolve(currentQueueLabel)
      }
    }
    #expect(value == Context.utility.label)
  }

  @Test func mainContext_throwsInvalidContext() async throws {
    await #expect(throws: PromiseError.invalidContext) {
      try await onPlainThread { try Hydra.await(in: .main, Promise(resolved: 1)) }
    }
    await #expect(throws: PromiseError.invalidContext) {
      try await onPlainThread { try Hydra.await(in: .custom(queue: .main), Promise(resolved: 1)) }
    }
    await #expect(throws: PromiseError.invalidContext) {
      try await onPlainThread {
        try Hydra.await(in: .main) { (resolve: @escaping Promise<Int>.Resolved, _, _) in resolve(1) }
      }
    }
  }

  @Test func insideATask_throwsInvalidContext_insteadOfBlocking() async throws {
    let neverSettles = failsafe(Promise<Int>())  // A regression blocks for 30 s, then fails.
    #expect(throws: PromiseError.invalidContext) { try Hydra.await(neverSettles) }
    let onAnActor = await TestActor().tryToBlock(on: neverSettles)
    #expect(onAnActor as? PromiseError == .invalidContext)
    let onTheMainActor = await MainActor.run { () -> (any Error)? in
      do {
        try Hydra.await(neverSettles)
        return nil
      } catch {
        return error
      }
    }
    #expect(onTheMainActor as? PromiseError == .invalidContext)
  }

  @Test func cancelledPromise_throwsCancellationError_insteadOfWaitingForever() async throws {
    let promise = Promise<Int>()
    promise.cancel()
    await #expect(throws: CancellationError.self) { try await onPlainThread { try Hydra.await(promise) } }
  }

  @Test func prefixOperators() async throws {
    let values = try await onPlainThread { () -> (Int, Int?, Int?) in
      (try ..Promise(resolved: 1), ..!Promise(resolved: 2), ..!Promise<Int>(rejected: TestError(code: 3)))
    }
    #expect(values.0 == 1 && values.1 == 2 && values.2 == nil)
  }

  @Test func mainQueueBlock_runsMainContextCallbacksWhileWaiting() async throws {
    // The block occupies the main queue: without running the promise's main-queue callbacks itself, the
    // wait would deadlock (as Hydra did).
    let value = try await onMainQueue {
      try Hydra.await(
        failsafe(
          Promise(resolved: 1)
            .then { $0 + 1 }
            .then(in: .background) { $0 * 10 }
            .then { Promise(resolved: $0 + 1) }))
    }
    #expect(value == 21)
    let caught = try await onMainQueue { () -> Int in
      let code = LockedValue<Int?>(nil)
      try Hydra.await(
        Promise<Int>(rejected: TestError(code: 4)).catch { error in code.withLock { $0 = (error as? TestError)?.code } }
      )
      return code.current ?? 0
    }
    #expect(caught == 4)
    let onCustomMain = try await onMainQueue {
      try Hydra.await(failsafe(Promise(resolved: 1).then(in: .custom(queue: .main)) { $0 + 2 }))
    }
    #expect(onCustomMain == 3)
  }

  @Test func mainQueueBlock_mainContextCallbacksKeepTheirOrder() async throws {
    let log = try await onMainQueue { () -> [Int] in
      let log = LockedValue<[Int]>([])
      let source = Promise<Int>()
      let steps = (0..<5).map { index in source.then { _ in log.withLock { $0.append(index) } } }
      DispatchQueue.global().async { source.resolve(0) }
      try Hydra.await(failsafe(all(steps)))
      return log.current
    }
    #expect(log == [0, 1, 2, 3, 4])
  }
}

@Suite("LegacyBlocking: threads and queues allowed to block", .timeLimit(.failsafeMinutes(3)))
struct LegacyBlockingTests {
  @Test func markedScope_insideATask_blocksAndWaits() async throws {
    let promise = Promise<Int>()
    DispatchQueue.global().async { promise.resolve(7) }
    // Blocking a cooperative thread for a moment is what the mark allows; the promise settles from a
    // dispatch thread.
    let value = try LegacyBlocking.allowingBlocking { try Hydra.await(failsafe(promise)) }
    #expect(value == 7)
    #expect(!LegacyBlocking.isBlockingAllowed)
  }

  @Test func markedQueue_allowsBlockingInItsBlocks() async throws {
    let queue = DispatchQueue(label: "legacy.queue")
    LegacyBlocking.allowBlocking(on: queue)
    let marked = await withCheckedContinuation { continuation in
      queue.async { continuation.resume(returning: LegacyBlocking.isBlockingAllowed) }
    }
    #expect(marked)
    let unmarked = try await onPlainThread { LegacyBlocking.isBlockingAllowed }
    #expect(!unmarked)
  }

  @Test func markedThread_staysMarked() async throws {
    let marked = await withCheckedContinuation { continuation in
      let thread = Thread {
        LegacyBlocking.allowBlockingOnCurrentThread()
        continuation.resume(returning: LegacyBlocking.isBlockingAllowed)
      }
      thread.start()
    }
    #expect(marked)
  }
}

/// An actor that tries to block.
actor TestActor {
  func tryToBlock(on promise: Promise<Int>) -> (any Error)? {
    do {
      try Hydra.await(promise)
      return nil
    } catch {
      return error
    }
  }
}
