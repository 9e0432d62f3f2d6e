import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// Katana 6 section 1.6 and 2.5: synchronous interceptors, adapted with `synchronousInterceptor`, and their
/// edge cases.
final class LegacyInterceptorXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testInterceptors_runInArrayOrder_foreachDispatch() {
    let seen = Recorder<String>()
    let first = interceptor { _, next, item in
      seen.append("first \(itemName(item))")
      try next(item)
    }
    let second = interceptor { _, next, item in
      seen.append("second \(itemName(item))")
      try next(item)
    }
    let store = makeStore(interceptors: [first, second])
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertNotNil(value(of: store.dispatch(Answer(value: 1))))
    XCTAssertEqual(seen.values, ["first Increment", "second Increment", "first Answer", "second Answer"])
  }

  func testInterceptor_outerClosureRunsOncePerStore_withTheInitialisedState_middleOncePerDispatch() {
    let outer = LockedValue<[Int]>([])
    let middle = LockedValue(0)
    let counting = synchronousInterceptor { context in
      outer.withLock { $0.append((context.getAnyState() as? CounterState)?.counter ?? -1) }
      return { next in
        middle.withLock { $0 += 1 }
        return { item in try next(item) }
      }
    }
    let store = makeStore(interceptors: [counting], initialState: CounterState(counter: 10))
    for _ in 0..<3 { XCTAssertNotNil(value(of: store.dispatch(Increment()))) }
    XCTAssertEqual(outer.current, [10])
    XCTAssertEqual(middle.current, 3)
  }

  func testInterceptorThrows_rejectsTheUpdaterWithThatError_andSkipsIt() {
    // Katana 6's testStoreInterceptor_whenInterceptorThrows_propagationIsBlocked.
    let store = makeStore(interceptors: [
      interceptor { _, next, item in
        if item is Increment { throw TestError(code: 1) }
        try next(item)
      }
    ])
    let listened = LockedValue<[String]>([])
    store.addListener { _, new in listened.withLock { $0.append("\(new.counter) \(new.log)") } }

    XCTAssertEqual(error(of: store.dispatch(Increment())) as? TestError, TestError(code: 1))
    // A later update's `then` runs after its listeners: only that update was heard.
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "after"))))
    XCTAssertEqual(store.state, CounterState(counter: 0, log: ["after"]))
    XCTAssertEqual(listened.current, ["0 [\"after\"]"])
  }

  func testInterceptorThrows_rejectsTheSideEffectWithThatError_andSkipsTheBody() {
    let store = makeStore(interceptors: [
      interceptor { _, next, item in
        if item is Run { throw TestError(code: 2) }
        try next(item)
      }
    ])
    let ran = LockedValue(false)
    XCTAssertEqual(error(of: store.dispatch(Run { _ in ran.withLock { $0 = true } })) as? TestError, TestError(code: 2))
    XCTAssertFalse(ran.current)
  }

  func testInterceptorWithoutNext_resolvesTheUpdater_withoutApplyingIt() {
    let store = makeStore(interceptors: [
      interceptor { _, next, item in
        if item is Increment { return }
        try next(item)
      }
    ])
    let listened = LockedValue(0)
    store.addListener { _, _ in listened.withLock { $0 += 1 } }

    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(store.state.counter, 0)
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "after"))))
    XCTAssertEqual(listened.current, 1)
  }

  func testInterceptorWithoutNext_resolvesASideEffect_withoutRunningIt() {
    // Katana 6 crashed ("an interceptor that either stopped the execution of the side effect...").
    let store = makeStore(interceptors: [
      interceptor { _, next, item in
        if item is Run { return }
        try next(item)
      }
    ])
    let ran = LockedValue(false)
    XCTAssertNotNil(value(of: store.dispatch(Run { _ in ran.withLock { $0 = true } })))
    XCTAssertFalse(ran.current)
  }

  func testInterceptorWithoutNext_rejectsAReturningSideEffect_withReturnValueUnavailable() {
    // Katana 6 crashed (or resolved nil for an optional return type).
    let store = makeStore(interceptors: [
      interceptor { _, next, item in
        if item is Answer { return }
        try next(item)
      }
    ])
    XCTAssertEqual(
      error(of: store.dispatch(Answer(value: 1))) as? StoreError,
      .returnValueUnavailable(String(reflecting: Answer.self)))
  }

  func testInterceptorReplacingAnUpdater_withAnotherUpdater_appliesTheReplacementInPlace() {
    let seen = Recorder<String>()
    let replace = interceptor { _, next, item in
      try next(item is Increment ? AddLog(entry: "replaced") : item)
    }
    let store = makeStore(interceptors: [recordingInterceptor(seen), replace])
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(store.state, CounterState(counter: 0, log: ["replaced"]))
    XCTAssertEqual(seen.values, ["Increment"])
  }

  func testInterceptorReplacingAnUpdater_withASideEffect_dispatchesItThroughTheWholeChain_andTheCallerWaitsForIt() {
    // Katana 6 re-dispatched the side effect too, but resolved the original promise at once, before it ran.
    let seen = Recorder<String>()
    let replace = interceptor { _, next, item in
      try next((item as? AddLog)?.entry == "convert" ? IncrementTwice() : item)
    }
    let store = makeStore(interceptors: [recordingInterceptor(seen), replace])
    let counterWhenResolved = value(of: store.dispatch(AddLog(entry: "convert")).then { store.state.counter })
    XCTAssertEqual(counterWhenResolved, 2)
    XCTAssertEqual(seen.values, ["AddLog(convert)", "IncrementTwice", "Increment", "Increment"])
    XCTAssertEqual(store.state.log, [])
  }

  func testInterceptorReplacingASideEffect_withAnUpdater_dispatchesIt_andTheSideEffectResolves() {
    let seen = Recorder<String>()
    let replace = interceptor { _, next, item in
      try next(item is Run ? Increment() : item)
    }
    let store = makeStore(interceptors: [recordingInterceptor(seen), replace])
    let ran = LockedValue(false)
    XCTAssertNotNil(value(of: store.dispatch(Run { _ in ran.withLock { $0 = true } })))
    XCTAssertFalse(ran.current)
    XCTAssertEqual(store.state.counter, 1)
    XCTAssertEqual(seen.values, ["Run", "Increment"])
  }

  func testInterceptorReplacingAReturningSideEffect_withAnUpdater_rejectsWithReturnValueUnavailable() {
    // Katana 6 crashed for non-optional return types.
    let replace = interceptor { _, next, item in
      try next(item is Answer ? Increment() : item)
    }
    let store = makeStore(interceptors: [replace])
    XCTAssertEqual(
      error(of: store.dispatch(Answer(value: 1))) as? StoreError,
      .returnValueUnavailable(String(reflecting: Answer.self)))
    XCTAssertEqual(store.state.counter, 1, "the replacement was still dispatched")
  }

  func testInterceptorReplacingAReturningSideEffect_withOneOfAnotherValueType_rejectsWithReturnValueTypeMismatch() {
    // Katana 6 crashed on the cast.
    let replace = interceptor { _, next, item in
      try next(item is Answer ? Greeting() : item)
    }
    let store = makeStore(interceptors: [replace])
    XCTAssertEqual(
      error(of: store.dispatch(Answer(value: 1))) as? StoreError,
      .returnValueTypeMismatch(expected: String(reflecting: Int.self), actual: String(reflecting: String.self)))
  }

  func testInterceptorHandlingASideEffect_mayBlockOnANestedDispatch() {
    // Katana 6's testStoreInterceptor_whenReturningSideEffect_re...: blocking in an interceptor is fine
    // while it handles a side effect.
    let blocking = interceptor { context, next, item in
      // The nested `Answer(value: 0)` passes through here too: it must not block again.
      if let answer = item as? Answer, answer.value != 0 {
        try Hydra.await(context.dispatch(Increment()))
        let nested = try Hydra.await(context.dispatch(Answer(value: 0)))
        try Hydra.await(context.dispatch(Increment()))
        XCTAssertEqual(nested, 0)
      }
      try next(item)
    }
    let store = makeStore(interceptors: [blocking])
    XCTAssertEqual(value(of: store.dispatch(Answer(value: 7))), 7)
    XCTAssertEqual(store.state.counter, 2)
  }

  func testInterceptorHandlingAnUpdater_blockingOnADispatchToTheSameStore_throwsDeadlock_insteadOfHanging() {
    // Katana 6 hung: the updater queue waited on itself. The nested items still run, after the interceptor.
    let caught = LockedValue<[String]>([])
    let nestedSideEffectRan = expectation(description: "nested side effect ran")
    let blocking = interceptor { context, next, item in
      if item is Increment {
        for nested in [AddLog(entry: "nested") as any Dispatchable, Run { _ in nestedSideEffectRan.fulfill() }] {
          do {
            try Hydra.await(context.anyDispatch(nested))
          } catch let error as StoreError {
            if case .deadlock = error { caught.withLock { $0.append(itemName(nested)) } }
          }
        }
        // Waiting for anything else is fine.
        XCTAssertEqual(try Hydra.await(Promise<Int>(in: .background) { resolve, _, _ in resolve(1) }), 1)
      }
      try next(item)
    }
    let store = makeStore(interceptors: [blocking])
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(caught.current, ["AddLog(nested)", "Run"])
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "after"))))
    wait(for: [nestedSideEffectRan], timeout: failsafeSeconds)
    XCTAssertEqual(store.state, CounterState(counter: 1, log: ["nested", "after"]))
  }

  func testInterceptorHandlingAnUpdater_blockingOnATypedDispatchToTheSameStore_rejectsTheUpdaterWithDeadlock() {
    let blocking = interceptor { context, next, item in
      if item is Increment { try Hydra.await(context.dispatch(AddLog(entry: "nested"))) }
      try next(item)
    }
    let store = makeStore(interceptors: [blocking])
    guard case .deadlock = error(of: store.dispatch(Increment())) as? StoreError else {
      return XCTFail("expected StoreError.deadlock")
    }
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "after"))))
    XCTAssertEqual(store.state, CounterState(counter: 0, log: ["nested", "after"]))
  }

  func testInterceptorHandlingAnUpdater_blockingOnAPartialStoreOrAnyStoreDispatch_throwsDeadlock() {
    // The same store reached through the Katana 6 erasures: their promises are recorded too.
    let stores = LockedValue<(partial: PartialStore<CounterState>, any: any AnyStore)?>(nil)
    let caught = LockedValue<[String]>([])
    let blocking = interceptor { _, next, item in
      if item is Increment, let stores = stores.current {
        let waits: [(String, () throws -> Void)] = [
          ("partial", { try Hydra.await(stores.partial.dispatch(AddLog(entry: "partial"))) }),
          ("partial any", { _ = try Hydra.await(stores.partial.anyDispatch(AddLog(entry: "partial any"))) }),
          ("any store", { try Hydra.await(stores.any.dispatch(AddLog(entry: "any store"))) }),
        ]
        for (name, wait) in waits {
          do {
            try wait()
          } catch let error as StoreError {
            if case .deadlock = error { caught.withLock { $0.append(name) } }
          }
        }
      }
      try next(item)
    }
    let store = makeStore(interceptors: [blocking])
    stores.withLock { $0 = (PartialStore(store), store) }
    defer { stores.withLock { $0 = nil } }
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(caught.current, ["partial", "partial any", "any store"])
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "after"))))
    XCTAssertEqual(store.state, CounterState(counter: 1, log: ["partial", "partial any", "any store", "after"]))
  }

  func testInterceptorHandlingAnUpdater_blockingOnAPromiseDerivedFromItsDispatch_throwsDeadlock() {
    let outcomes = LockedValue<[String]>([])
    let blocking = interceptor { context, next, item in
      if item is Increment {
        let dispatched: Promise<Void> = context.dispatch(AddLog(entry: "nested"))
        let derived = dispatched.then(in: .background) { _ in 1 }.recover(in: .background) { _ in Promise(resolved: 2) }
        do {
          _ = try Hydra.await(derived)
        } catch let error as StoreError {
          if case .deadlock = error { outcomes.withLock { $0.append("deadlock") } }
        }
        // A timeout settles on its own: waiting for it is no deadlock.
        do {
          try Hydra.await(dispatched.timeout(in: .background, timeout: 0.01))
        } catch let error as PromiseError {
          if error == .timeout { outcomes.withLock { $0.append("timeout") } }
        }
      }
      try next(item)
    }
    let store = makeStore(interceptors: [blocking])
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(outcomes.current, ["deadlock", "timeout"])
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "after"))))
    XCTAssertEqual(store.state, CounterState(counter: 1, log: ["nested", "after"]))
  }

  func testInterceptorHandlers_runOffTheMainThread() {
    let onMain = LockedValue<[Bool]>([])
    let store = makeStore(interceptors: [
      interceptor { _, next, item in
        onMain.withLock { $0.append(Thread.isMainThread) }
        try next(item)
      }
    ])
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertNotNil(value(of: store.dispatch(Answer(value: 1))))
    XCTAssertEqual(onMain.current, [false, false])
  }

  func testNext_calledAfterTheHandlerReturned_throwsNextCalledOutOfScope() throws {
    let kept = LockedValue<SynchronousStoreInterceptorNext?>(nil)
    let keeping = synchronousInterceptor { _ in
      { next in
        { item in
          if item is Increment { kept.withLock { $0 = next } }
          try next(item)
        }
      }
    }
    let store = makeStore(interceptors: [keeping])
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    let next = try XCTUnwrap(kept.current)
    XCTAssertThrowsError(try next(AddLog(entry: "late"))) { error in
      XCTAssertEqual(error as? StoreError, .nextCalledOutOfScope(String(reflecting: AddLog.self)))
    }
    XCTAssertEqual(store.state, CounterState(counter: 1))
  }
}

/// A returning side effect whose value is not an `Int`.
private struct Greeting: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) throws -> String { "hello" }
}
