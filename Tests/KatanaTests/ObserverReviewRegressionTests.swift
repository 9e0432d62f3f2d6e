// Regression tests for the bugs the third outside review found in scopes, observers and start-up (issue 21,
// bugs 1-7 and 11). Each failed on the code before the fix, deterministically: the interleaving that loses a
// commit is forced with a gate inside a computed key path's getter, which the store calls outside its lock.
import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

// MARK: - Fixtures

/// Blocks the first read made while armed (after the reads it was armed to let through), on whatever thread makes
/// it, until released.
final class ReadGate: Sendable {
  /// The reads to let through before blocking one; nil while disarmed.
  private let readsToLetThrough = LockedValue<Int?>(nil)
  private let entered = DispatchSemaphore(value: 0)
  private let released = DispatchSemaphore(value: 0)

  func arm(lettingThrough reads: Int = 0) { readsToLetThrough.withLock { $0 = reads } }

  func disarm() { readsToLetThrough.withLock { $0 = nil } }

  /// Called by the getter: blocks once, if armed.
  func pass() {
    let blocks = readsToLetThrough.withLock { reads -> Bool in
      guard let left = reads else { return false }
      if left > 0 {
        reads = left - 1
        return false
      }
      reads = nil
      return true
    }
    guard blocks else { return }
    entered.signal()
    released.wait()
  }

  /// Blocks the calling thread until a read is blocked in the gate; false after 30 s (the failsafe, scaled).
  func waitUntilEntered() -> Bool { entered.wait(timeout: .now() + 30 * failsafeScale) == .success }

  func release() { released.signal() }
}

struct GatedSlice: State, Equatable {
  var value = 0
}

struct GatedRoot: State, Equatable {
  var slice = GatedSlice()
  var gate: ReadGate?

  /// `slice`, read through a gate: a scope of this key path reads it outside the store's lock.
  var gatedSlice: GatedSlice {
    get {
      gate?.pass()
      return slice
    }
    set { slice = newValue }
  }

  static func == (lhs: GatedRoot, rhs: GatedRoot) -> Bool {
    lhs.slice == rhs.slice && lhs.gate === rhs.gate
  }
}

struct SetGatedValue: StateUpdater {
  let value: Int
  func updateState(_ state: inout GatedRoot) { state.slice.value = value }
}

typealias GatedStore = Store<GatedRoot, EmptySideEffectDependencyContainer>

/// An iterator made on another thread and handed back to the test (iterators are not Sendable).
final class IteratorBox<Element: Sendable>: @unchecked Sendable {
  // Sendable: written once on the subscribing thread before `done` is signalled, read after.
  var iterator: StoreStream<Element>.Iterator?
}

/// Runs `body` on a thread of its own; the returned semaphore is signalled when it returns.
func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
  let done = DispatchSemaphore(value: 0)
  Thread {
    body()
    done.signal()
  }.start()
  return done
}

/// Waits for a semaphore without blocking a pool thread for long (a failsafe bounds it).
func waitFor(_ semaphore: DispatchSemaphore, seconds: Swift.Double = 30) async -> Bool {
  await withFailsafe(seconds: seconds) {
    await withCheckedContinuation { continuation in
      Thread {
        semaphore.wait()
        continuation.resume()
      }.start()
    }
  } != nil
}

/// The next element of an iterator, or nil after the failsafe.
func nextElement<Element: Sendable>(of box: IteratorBox<Element>, seconds: Swift.Double = 30) async -> Element? {
  await withFailsafe(seconds: seconds) {
    await box.iterator?.next()
  } ?? nil
}

struct RoomState: State, Identifiable, Equatable {
  var id = 0
  var title = ""
}

struct RenameRoom: StateUpdater {
  let to: Int
  func updateState(_ state: inout RoomState) { state.id = to }
}

struct RoomsState: State, Equatable {
  var rooms: [RoomState] = []
  var detail: GatedSlice?
  var lobby = GatedSlice()
}

struct PresentDetail: StateUpdater {
  let value: Int
  func updateState(_ state: inout RoomsState) { state.detail = GatedSlice(value: value) }
}

struct UnsubscribeFromUpdater: StateUpdater {
  let call: @Sendable () -> Void
  func updateState(_ state: inout RoomsState) {
    state.lobby.value += 1
    call()
  }
}

typealias RoomsStore = Store<RoomsState, EmptySideEffectDependencyContainer>

/// Feature states without stored properties: zero bytes each, all at offset 0.
struct EmptyFeatureA: State, Equatable {}
struct EmptyFeatureB: State, Equatable {}

struct TwoEmptyFeatures: State, Equatable {
  var first = EmptyFeatureA()
  var second = EmptyFeatureB()
  var counter = 0
}

struct RunUnderID: SideEffect {
  let id: String
  let started: Gate
  let outcome: Recorder<String>
  func sideEffect(_ context: SideEffectContext<EmptyFeatureB, EmptySideEffectDependencyContainer>) async throws {
    do {
      try await context.run(id: id) {
        started.open()
        await waitUntilCancelled()
        try Task.checkCancellation()
      }
      outcome.append("finished")
    } catch is CancellationError {
      outcome.append("cancelled")
    }
  }
}

// MARK: - Tests

@Suite("Observer review regressions (issue 21)", .timeLimit(.failsafeMinutes(3)))
struct ObserverReviewRegressionTests {
  // MARK: 1. Unsubscribing a scope observer from inside a state updater

  /// The closure a scope's `addListener` returns, called from inside a state updater (where the store's lock
  /// is held), must not take the lock again. Before the fix it deadlocked.
  @Test func scopeListenerUnsubscribe_calledInsideUpdater_doesNotDeadlock() async throws {
    let store = RoomsStore(initialState: RoomsState())
    let lobby = store.scope(\.lobby, dependencies: \.self)
    let calls = Recorder<Int>()
    let unsubscribe = lobby.addListener { _, new in calls.append(new.value) }
    let completed = completesOnThread(within: 30) {
      _ = store.send(UnsubscribeFromUpdater(call: { unsubscribe() }))
    }
    #expect(completed)
    guard completed else { return }
    // Unsubscribed: later commits do not reach the listener.
    try await store.dispatch(UnsubscribeFromUpdater(call: {}))
    #expect(calls.values.count <= 1)
  }

  /// A stream whose last iterator is released from inside a state updater (an object the updater drops from
  /// the state held it) unregisters without taking the store's lock again.
  @Test(arguments: ["root", "scope"])
  func streamReleasedInsideUpdater_doesNotDeadlock(kind: String) async throws {
    let store = Store<IteratorHolderState, EmptySideEffectDependencyContainer>(
      initialState: IteratorHolderState())
    // Only the state keeps the holder, and so the iterator.
    try await store.dispatch(
      HoldIterator(
        holder: IteratorHolder(
          kind == "root" ? store.values(of: \.count) : store.scope(\.self, dependencies: \.self).values(of: \.count))))
    #expect(store.core.observerCount == 1)
    let completed = completesOnThread(within: 30) {
      _ = store.send(DropIterator())
    }
    #expect(completed)
    guard completed else { return }
    try await store.dispatch(DropIterator())
    #expect(store.core.observerCount == 0)
  }

  // MARK: 2. A commit that races a scope observer's subscription

  /// A commit delivered between a scope stream's registration and its first read of the slice is neither lost
  /// nor reordered. Forced: the first read blocks in the slice's getter while the commit is delivered. (A scope's
  /// listeners and streams of changes read nothing at registration: see the next test.)
  ///
  /// With `shutsDownMeanwhile`, the store also shuts down before the first read is in: the stream, registered
  /// before shutdown, still yields the value at registration and the commit, then ends. (Shutdown used to finish
  /// its buffer at once, and both were dropped: the stream ended without yielding anything.)
  @Test(arguments: ["states", "values"], [false, true])
  func scopeObserver_commitRacingSubscription_isDelivered(kind: String, shutsDownMeanwhile: Bool) async throws {
    let gate = ReadGate()
    let store = GatedStore(initialState: GatedRoot(slice: GatedSlice(value: 1), gate: gate))
    try await store.waitUntilReady()
    let scope = store.scope(\.gatedSlice, dependencies: \.self)
    let states = IteratorBox<GatedSlice>()
    let values = IteratorBox<Int>()
    gate.arm()
    let subscribed = onThread {
      if kind == "states" {
        states.iterator = scope.states(buffering: .bufferingNewest(8)).makeAsyncIterator()
      } else {
        values.iterator = scope.values(of: \.value, buffering: .bufferingNewest(8)).makeAsyncIterator()
      }
    }
    // The subscriber is registered and blocked in its first read; a commit is delivered meanwhile.
    #expect(gate.waitUntilEntered())
    try await store.dispatch(SetGatedValue(value: 2))
    if shutsDownMeanwhile { await store.shutdown() }
    gate.release()
    #expect(await waitFor(subscribed))
    if kind == "states" {
      #expect(await nextElement(of: states) == GatedSlice(value: 1))
      #expect(await nextElement(of: states) == GatedSlice(value: 2))
      if shutsDownMeanwhile { #expect(await nextElement(of: states) == nil) }
    } else {
      #expect(await nextElement(of: values) == 1)
      #expect(await nextElement(of: values) == 2)
      if shutsDownMeanwhile { #expect(await nextElement(of: values) == nil) }
    }
  }

  /// A scope's listener or stream of changes keeps the state at registration and reads its slice with the first
  /// delivery, under the committing dispatch's turn: the first change it reports starts from the slice at
  /// registration, and its calls never overlap another listener's.
  @Test(arguments: ["listener", "changes"])
  func scopeChangeObserver_firstChange_startsFromTheSliceAtRegistration(kind: String) async throws {
    let store = GatedStore(initialState: GatedRoot(slice: GatedSlice(value: 1)))
    let scope = store.scope(\.gatedSlice, dependencies: \.self)
    let calls = Recorder<String>()
    let changes = IteratorBox<StateChange<GatedSlice>>()
    let subscribed = onThread {
      if kind == "listener" {
        scope.addListener { old, new in calls.append("\(old.value)->\(new.value)") }
      } else {
        changes.iterator = scope.changes().makeAsyncIterator()
      }
    }
    #expect(await waitFor(subscribed))
    try await store.dispatch(SetGatedValue(value: 2))
    try await store.dispatch(SetGatedValue(value: 3))
    if kind == "listener" {
      #expect(calls.values == ["1->2", "2->3"])
    } else {
      let first = await nextElement(of: changes)
      #expect(first?.old == GatedSlice(value: 1))
      #expect(first?.new == GatedSlice(value: 2))
      let second = await nextElement(of: changes)
      #expect(second?.old == GatedSlice(value: 2))
      #expect(second?.new == GatedSlice(value: 3))
    }
  }

  // MARK: 3. A slice that appears after subscription

  /// `states()` of an optional child yields the child when it appears after the stream started.
  @Test func scopeStates_optionalChildAppearingLater_isYielded() async throws {
    let store = RoomsStore(initialState: RoomsState())
    let detail = store.scope(\.detail, dependencies: \.self)
    let states = IteratorBox<GatedSlice>()
    states.iterator = detail.states().makeAsyncIterator()
    try await store.dispatch(PresentDetail(value: 5))
    #expect(await nextElement(of: states) == GatedSlice(value: 5))
  }

  // MARK: 4. An interceptor that calls `next` from a task it does not await

  /// An interceptor that hands `next` to a task of its own and returns while that call is still delivering
  /// its commit: the dispatch keeps the turn until the delivery is done, so the next updater's commit and
  /// delivery come after it, and the dispatch returns after its listeners ran. Before the fix the turn was
  /// released when the handler returned: `start 1, start 2, end 2, end 1`.
  ///
  /// The blocked listener holds a pool thread: the cases run one at a time.
  @Test(.serialized, arguments: ["dispatch", "send"])
  func interceptorCallingNextFromUnawaitedTask_deliveriesNeverOverlap(kind: String) async throws {
    let progress = EventCounter()
    let listenerStarted = Gate()
    let detachedOnce = AtomicFlag(true)
    let detach: StoreInterceptor = { _ in
      { next in
        { item in
          guard detachedOnce.isSet else { return try await next(item) }
          detachedOnce.set(false)
          Task { try? await next(item) }
          // Return while the detached call is delivering.
          await listenerStarted.wait()
        }
      }
    }
    var configuration = StoreConfiguration()
    configuration.onMailboxEnqueue = { _ in progress.increment() }
    let store = TestStore(interceptors: [detach], stateInitializer: { CounterState() }, configuration: configuration)
    try await store.waitUntilReady()
    let events = Recorder<String>()
    let hold = Gate()
    store.addListener { _, new in
      events.append("start \(new.counter)")
      if new.counter == 1 {
        listenerStarted.open()
        hold.waitBlocking()
      }
      events.append("end \(new.counter)")
      if new.counter == 2 { progress.increment() }
    }
    let first = Task {
      if kind == "dispatch" {
        try await store.dispatch(Increment(by: 1))
      } else {
        try await store.send(Increment(by: 1)).value
      }
      return events.values
    }
    await listenerStarted.wait()
    let second = Task { try await store.dispatch(Increment(by: 1)) }
    // The second dispatch waits in the mailbox (or, with the bug, was committed and delivered).
    await progress.wait(for: 1)
    hold.open()
    let seenWhenFirstReturned = try await first.value
    try await second.value
    await events.wait(forCount: 4)
    #expect(events.values == ["start 1", "end 1", "start 2", "end 2"])
    #expect(seenWhenFirstReturned.contains("end 1"))
    #expect(store.state.counter == 2)
  }

  // MARK: 5. An element renamed through its own scope

  /// Observers of `rooms[id: 4]` see room 3 renamed to 4 through room 3's scope (a temporary id replaced by
  /// the server's), as they do when a root updater renames it. Before the fix the scope's commit filter
  /// skipped them.
  @Test func elementRenamedThroughItsScope_reachesObserversOfTheNewID() async throws {
    let store = RoomsStore(initialState: RoomsState(rooms: [RoomState(id: 3, title: "draft")]))
    let room3 = store.scope(\.rooms, id: 3, dependencies: \.self)
    let room4 = store.scope(\.rooms, id: 4, dependencies: \.self)
    let titles = IteratorBox<String>()
    titles.iterator = room4.values(of: \.title).makeAsyncIterator()
    try await room3.dispatch(RenameRoom(to: 4))
    #expect(await nextElement(of: titles) == "draft")
  }

  // MARK: 6. Features whose states are empty

  /// Two features at different fields have different ids, and so different effect-id namespaces, even when
  /// their states have no stored properties (zero-sized fields all sit at offset 0).
  @Test func emptyFeatureStates_haveDistinctIDsAndNamespaces() async throws {
    let store = Store<TwoEmptyFeatures, EmptySideEffectDependencyContainer>(initialState: TwoEmptyFeatures())
    let first = store.scope(\.first, dependencies: \.self)
    let second = store.scope(\.second, dependencies: \.self)
    #expect(first.id != second.id)
    #expect(second.id.description.hasSuffix(".second"))
    let started = Gate()
    let outcome = Recorder<String>()
    let run = second.send(RunUnderID(id: "load", started: started, outcome: outcome))
    await started.wait()
    first.cancel(id: "load")
    // The same id in the feature's own namespace does reach it.
    second.cancel(id: "load")
    try await run.value
    #expect(outcome.values == ["cancelled"])
    #expect(store.scope(\.second, dependencies: \.self).id == second.id)
  }

  /// The same place reached two ways is one id: `\.a.b` and `\.a` then `\.b`.
  @Test func sameFieldReachedTwoWays_hasOneID() async throws {
    let store = try await makeFeatureStore()
    let direct = store.scope(\.shop.cart, dependencies: \.cart)
    let nested = store.scope(\.shop, dependencies: \.cart).scope(\.cart, dependencies: \.self)
    #expect(direct.id == nested.id)
    #expect(direct.id != store.scope(\.cart, dependencies: \.cart).id)
  }

  // MARK: 7. The start-up state is not a change

  /// A scope listener added before the store is ready is not called for the initial state (SPEC 4.6), as a
  /// store listener is not; a scope's `states()` does get it.
  @Test func scopeListener_addedBeforeReady_isNotCalledForInitialState() async throws {
    let start = Gate()
    let store = GatedStore(stateInitializer: {
      await start.wait()
      return GatedRoot(slice: GatedSlice(value: 7))
    })
    let scope = store.scope(\.slice, dependencies: \.self)
    let calls = Recorder<String>()
    scope.addListener { old, new in calls.append("\(old.value)->\(new.value)") }
    let rootCalls = Recorder<String>()
    store.addListener { old, new in rootCalls.append("\(old.slice.value)->\(new.slice.value)") }
    let states = IteratorBox<GatedSlice>()
    states.iterator = scope.states(buffering: .bufferingNewest(8)).makeAsyncIterator()
    start.open()
    try await store.waitUntilReady()
    try await store.dispatch(SetGatedValue(value: 8))
    #expect(calls.values == ["7->8"])
    #expect(rootCalls.values == ["7->8"])
    // The stream began with the slice of `S()`, then got the initial state, then the commit.
    #expect(await nextElement(of: states) == GatedSlice(value: 0))
    #expect(await nextElement(of: states) == GatedSlice(value: 7))
    #expect(await nextElement(of: states) == GatedSlice(value: 8))
  }

  // MARK: 11. A store built from a value

  /// `Store(initialState:)` holds its state and is ready when the initialiser returns.
  @Test func storeFromValue_holdsItsStateWhenInitReturns() async throws {
    for value in 1...200 {
      let store = GatedStore(initialState: GatedRoot(slice: GatedSlice(value: value)))
      #expect(store.state.slice.value == value)
      #expect(store.isReady)
      let withDependencies = GatedStore(
        initialState: GatedRoot(slice: GatedSlice(value: value)), dependencies: EmptySideEffectDependencyContainer())
      #expect(withDependencies.state.slice.value == value)
      #expect(withDependencies.isReady)
      if store.state.slice.value != value || !store.isReady { break }
    }
  }
}

// MARK: - Fixtures of the release-inside-updater test

final class IteratorHolder: @unchecked Sendable {
  // Sendable: the iterator is never used, only released.
  let iterator: StoreStream<Int>.Iterator

  init(_ stream: StoreStream<Int>) {
    iterator = stream.makeAsyncIterator()
  }
}

struct IteratorHolderState: State, Equatable {
  var count = 0
  var holder: IteratorHolder?

  static func == (lhs: IteratorHolderState, rhs: IteratorHolderState) -> Bool {
    lhs.count == rhs.count && lhs.holder === rhs.holder
  }
}

struct HoldIterator: StateUpdater {
  let holder: IteratorHolder
  func updateState(_ state: inout IteratorHolderState) { state.holder = holder }
}

/// Drops the holder: its iterator, the stream's last, is released inside the updater.
struct DropIterator: StateUpdater {
  func updateState(_ state: inout IteratorHolderState) {
    state.holder = nil
    state.count += 1
  }
}
