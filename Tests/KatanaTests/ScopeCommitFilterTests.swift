import KatanaTestSupport
import Testing

@testable import Katana

// MARK: - Fixtures: slices that are not Equatable, so that only the commit filter keeps their observers quiet

struct PlainCounter: State {
  var value = 0
}

struct PlainIncrement: StateUpdater {
  func updateState(_ state: inout PlainCounter) { state.value += 1 }
}

struct PlainRow: State, Identifiable {
  var id = 0
  var counter = PlainCounter()
}

struct PlainGroup: State {
  var first = PlainCounter()
  var second = PlainCounter()
}

struct PlainAppState: State {
  var a = PlainCounter()
  var b = PlainCounter()
  var group = PlainGroup()
  var rows: [PlainRow] = [PlainRow(id: 1), PlainRow(id: 2)]
  var optional: PlainCounter? = PlainCounter()
  /// Changing `watched` changes `sibling` too: a stored property with observers has no fixed place, so its
  /// scope's commits must reach every observer.
  var watched = PlainCounter() {
    didSet { sibling.value += 1 }
  }
  var sibling = PlainCounter()
}

struct PlainRootIncrementA: StateUpdater {
  func updateState(_ state: inout PlainAppState) { state.a.value += 1 }
}

typealias PlainStore = Store<PlainAppState, EmptySideEffectDependencyContainer>

func makePlainStore() async throws -> PlainStore {
  let store = PlainStore(initialState: PlainAppState())
  try await store.waitUntilReady()
  return store
}

/// Counts a listener's calls.
func countCalls(of scope: ScopedStore<PlainCounter, EmptySideEffectDependencyContainer>) -> (
  EventCounter, StoreUnsubscribe
) {
  let calls = EventCounter()
  let unsubscribe = scope.addListener { _, _ in calls.increment() }
  return (calls, unsubscribe)
}

// MARK: - Locations

@Suite("Scopes: which locations may overlap")
struct ScopeLocationOverlapTests {
  let bytesA = ScopeLocation.root.appendingBytes(offset: 0, size: 16)
  let bytesB = ScopeLocation.root.appendingBytes(offset: 16, size: 16)

  @Test func differentStoredFields_doNotOverlap() {
    #expect(!bytesA.mayOverlap(bytesB))
    #expect(!bytesB.mayOverlap(bytesA))
  }

  @Test func aFieldAndAPartOfIt_overlap_bothWays() {
    let inner = bytesA.appendingBytes(offset: 8, size: 8)
    #expect(bytesA.mayOverlap(inner))
    #expect(inner.mayOverlap(bytesA))
    #expect(!inner.mayOverlap(bytesB))
  }

  @Test func theRoot_overlapsEverything() {
    #expect(ScopeLocation.root.mayOverlap(bytesA))
    #expect(bytesA.mayOverlap(.root))
    #expect(ScopeLocation.root.mayOverlap(.root))
  }

  @Test func elements_overlapOnlyTheSameElement_andTheirCollection() {
    let one = bytesA.appending(.element(hash: 1.hashValue))
    let two = bytesA.appending(.element(hash: 2.hashValue))
    #expect(!one.mayOverlap(two))
    #expect(one.mayOverlap(one.appendingBytes(offset: 0, size: 8)))
    #expect(one.mayOverlap(bytesA))
    #expect(!one.mayOverlap(bytesB))
    // Parts of two different elements.
    #expect(!one.appendingBytes(offset: 0, size: 8).mayOverlap(two.appendingBytes(offset: 0, size: 8)))
  }

  @Test func computedKeyPaths_overlapEverythingUnderTheirParent() {
    let computed = bytesA.appending(.computed)
    #expect(computed.mayOverlap(bytesA.appendingBytes(offset: 0, size: 8)))
    #expect(computed.mayOverlap(bytesA.appending(.element(hash: 0))))
    #expect(!computed.mayOverlap(bytesB))
    let computedAtRoot = ScopeLocation.root.appending(.computed)
    #expect(computedAtRoot.mayOverlap(bytesB))
  }

  @Test func anOptionalsValue_overlapsItsOptional() {
    let value = bytesA.appending(.some)
    #expect(value.mayOverlap(bytesA))
    #expect(value.mayOverlap(value.appendingBytes(offset: 0, size: 8)))
    #expect(!value.mayOverlap(bytesB))
  }
}

// MARK: - Which observers a scope's commit reaches

@Suite(
  "Scopes: a commit through a scope reaches the observers it may concern, and only those",
  .timeLimit(.failsafeMinutes(3)))
struct ScopeCommitFilterTests {
  @Test func observerOfAnotherField_isNotCalled_evenForASliceThatIsNotEquatable() async throws {
    let store = try await makePlainStore()
    let a = store.scope(\.a, dependencies: \.self)
    let (bCalls, unsubscribe) = countCalls(of: store.scope(\.b, dependencies: \.self))
    let (aCalls, unsubscribeA) = countCalls(of: a)
    for _ in 0..<3 { try await a.dispatch(PlainIncrement()) }
    a.send(PlainIncrement())
    try await store.dispatch(PlainRootIncrementA())
    #expect(store.state.a.value == 5)
    #expect(aCalls.count == 5)
    // A commit of the root store may change anything: a slice that is not Equatable hears of it.
    #expect(bCalls.count == 1)
    unsubscribe()
    unsubscribeA()
  }

  @Test func observersOfTheWholeAndOfParts_areCalled() async throws {
    let store = try await makePlainStore()
    let group = store.scope(\.group, dependencies: \.self)
    let first = group.scope(\.first, dependencies: \.self)
    let groupCalls = EventCounter()
    let unsubscribeGroup = group.addListener { _, _ in groupCalls.increment() }
    let (firstCalls, unsubscribeFirst) = countCalls(of: first)
    let (secondCalls, unsubscribeSecond) = countCalls(of: group.scope(\.second, dependencies: \.self))
    let rootCalls = EventCounter()
    let unsubscribeRoot = store.addListener { _, _ in rootCalls.increment() }
    try await first.dispatch(PlainIncrement())
    #expect(groupCalls.count == 1)
    #expect(firstCalls.count == 1)
    #expect(secondCalls.count == 0)
    #expect(rootCalls.count == 1)
    unsubscribeGroup()
    unsubscribeFirst()
    unsubscribeSecond()
    unsubscribeRoot()
  }

  @Test func elementScopes_reachObserversOfTheirElement_notOfOtherElements() async throws {
    let store = try await makePlainStore()
    let one = store.scope(\.rows, id: 1, dependencies: \.self).scope(\.counter, dependencies: \.self)
    let (oneCalls, unsubscribeOne) = countCalls(of: one)
    let (twoCalls, unsubscribeTwo) = countCalls(
      of: store.scope(\.rows, id: 2, dependencies: \.self).scope(\.counter, dependencies: \.self))
    let (rowOneCalls, unsubscribeRowOne) = countCalls(
      of: store.scope(\.rows, id: 1, dependencies: \.self).scope(\.counter, dependencies: \.self))
    try await one.dispatch(PlainIncrement())
    #expect(store.state.rows[0].counter.value == 1)
    #expect(oneCalls.count == 1)
    #expect(rowOneCalls.count == 1)
    #expect(twoCalls.count == 0)
    unsubscribeOne()
    unsubscribeTwo()
    unsubscribeRowOne()
  }

  @Test func aPropertyWithObservers_reachesObserversOfWhatItsDidSetChanges() async throws {
    let store = try await makePlainStore()
    let watched = store.scope(\.watched, dependencies: \.self)
    let (siblingCalls, unsubscribe) = countCalls(of: store.scope(\.sibling, dependencies: \.self))
    try await watched.dispatch(PlainIncrement())
    #expect(store.state.watched.value == 1)
    #expect(store.state.sibling.value == 1)
    #expect(siblingCalls.count == 1)
    unsubscribe()
  }

  @Test func observersAddedAndRemovedBetweenCommits_areSeenAtTheNextCommit() async throws {
    let store = try await makePlainStore()
    let a = store.scope(\.a, dependencies: \.self)
    // The filter's cache is computed with these observers, then they change around it.
    let (bCalls, unsubscribeB) = countCalls(of: store.scope(\.b, dependencies: \.self))
    let (firstA, unsubscribeFirstA) = countCalls(of: a)
    try await a.dispatch(PlainIncrement())
    // Removing an observer listed before the concerned one moves it in the store's list.
    unsubscribeB()
    let (secondA, unsubscribeSecondA) = countCalls(of: a)
    try await a.dispatch(PlainIncrement())
    unsubscribeFirstA()
    try await a.dispatch(PlainIncrement())
    #expect(bCalls.count == 0)
    #expect(firstA.count == 2)
    #expect(secondA.count == 2)
    unsubscribeSecondA()
  }

  @Test func optionalChild_reachesObserversOfItsOptional() async throws {
    let store = try await makePlainStore()
    let child = store.scope(\.optional, dependencies: \.self)
    let (childCalls, unsubscribeChild) = countCalls(of: child)
    let (aCalls, unsubscribeA) = countCalls(of: store.scope(\.a, dependencies: \.self))
    try await child.dispatch(PlainIncrement())
    #expect(store.state.optional?.value == 1)
    #expect(childCalls.count == 1)
    #expect(aCalls.count == 0)
    unsubscribeChild()
    unsubscribeA()
  }
}

// MARK: - Seeded: every observer sees every change of its slice, whichever scope made it

/// The app for the seeded check: Equatable slices, so that what each observer must see is exactly the
/// sequence of distinct values of its slice.
struct SeededSlice: State, Equatable {
  var value = 0
}

struct SeededSet: StateUpdater {
  let value: Int
  func updateState(_ state: inout SeededSlice) { state.value = value }
}

struct SeededPair: State, Equatable {
  var left = SeededSlice()
  var right = SeededSlice()
}

struct SeededRow: State, Equatable, Identifiable {
  var id = 0
  var slice = SeededSlice()
}

struct SeededAppState: State, Equatable {
  var x = SeededSlice()
  var pair = SeededPair()
  var rows = [SeededRow(id: 0), SeededRow(id: 1)]
  var optional: SeededSlice? = SeededSlice()
}

struct SeededRootSet: StateUpdater {
  let row: Int
  let value: Int
  func updateState(_ state: inout SeededAppState) {
    state.rows[row].slice.value = value
    state.pair.left.value = value
  }
}

@Suite(
  "Scopes: seeded dispatches through random scopes reach every observer of what they change",
  .timeLimit(.failsafeMinutes(3)))
struct ScopeCommitFilterSeededTests {
  typealias SeededStore = Store<SeededAppState, EmptySideEffectDependencyContainer>
  typealias SliceScope = ScopedStore<SeededSlice, EmptySideEffectDependencyContainer>

  /// The places a slice lives, each with a way to read it from the whole state.
  static func places(_ store: SeededStore) -> [(scope: SliceScope, read: @Sendable (SeededAppState) -> SeededSlice?)] {
    let pair = store.scope(\.pair, dependencies: \.self)
    return [
      (store.scope(\.x, dependencies: \.self), { $0.x }),
      (pair.scope(\.left, dependencies: \.self), { $0.pair.left }),
      (store.scope(\.pair.right, dependencies: \.self), { $0.pair.right }),
      (store.scope(\.rows, id: 0, dependencies: \.self).scope(\.slice, dependencies: \.self), { $0.rows[0].slice }),
      (store.scope(\.rows, id: 1, dependencies: \.self).scope(\.slice, dependencies: \.self), { $0.rows[1].slice }),
      (store.scope(\.optional, dependencies: \.self), { $0.optional }),
    ]
  }

  @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
  func everyObserver_seesEachChangeOfItsSlice_andNothingElse(seed: UInt64) async throws {
    var random = SeededGenerator(seed: seed)
    let store = SeededStore(initialState: SeededAppState())
    try await store.waitUntilReady()
    let places = Self.places(store)
    // A random half of the places is observed (the first always), so that the store's list of observers
    // differs from seed to seed. Each observer records the values it is told of.
    let observed = places.indices.filter { $0 == 0 || Bool.random(using: &random) }
    let seen = places.map { _ in Recorder<Int>() }
    var unsubscribes: [StoreUnsubscribe] = []
    for index in observed {
      unsubscribes.append(places[index].scope.addListener { _, new in seen[index].append(new.value) })
    }
    // The root listener records every committed state, in commit order.
    let states = Recorder<SeededAppState>()
    unsubscribes.append(store.addListener { _, new in states.append(new) })
    var handles: [DispatchHandle<Void>] = []
    for step in 1...60 {
      let value = Int.random(in: 0..<4, using: &random)
      let place = places[Int.random(in: 0..<places.count, using: &random)]
      switch Int.random(in: 0..<10, using: &random) {
      case 0: handles.append(store.send(SeededRootSet(row: step % 2, value: value)))
      case 1...4: handles.append(place.scope.send(SeededSet(value: value)))
      default: try await place.scope.dispatch(SeededSet(value: value))
      }
    }
    for handle in handles { try await handle.value }
    // What each observer must have seen: every value of its slice that differs from the one before.
    let committed = [SeededAppState()] + states.values
    for index in observed {
      var expected: [Int] = []
      for (before, after) in zip(committed, committed.dropFirst()) {
        let slice = places[index].read(after)
        if let slice, slice != places[index].read(before) { expected.append(slice.value) }
      }
      #expect(seen[index].values == expected, "seed \(seed), place \(index)")
    }
    for unsubscribe in unsubscribes { unsubscribe() }
  }
}

// MARK: - The rest of the observation surface of a scope

@Suite("Scopes: changes() and addAnyListener follow the slice", .timeLimit(.failsafeMinutes(3)))
struct ScopeChangesTests {
  @Test func changes_ofScope_yieldOldAndNewSlice_skippingOtherCommits() async throws {
    let store = try await makeFeatureStore()
    let cart = store.scope(\.cart, dependencies: \.cart)
    let wishlist = store.scope(\.wishlist, dependencies: \.wishlist)
    // Making the iterator subscribes.
    var iterator = cart.changes().makeAsyncIterator()
    try await wishlist.dispatch(FeatAddToCart(value: 1))
    try await store.dispatch(FeatRootLog(value: 2))
    try await cart.dispatch(FeatAddToCart(value: 3))
    let change = await iterator.next()
    #expect(change?.old == FeatCartState())
    #expect(change?.new == FeatCartState(items: [3]))
  }

  @Test func addAnyListener_ofScope_getsTheSlicesAsAnyState() async throws {
    let store = try await makeFeatureStore()
    let cart = store.scope(\.cart, dependencies: \.cart)
    let seen = Recorder<[Int]>()
    let unsubscribe = cart.addAnyListener { old, new in
      seen.append((old as? FeatCartState)?.items ?? [-1])
      seen.append((new as? FeatCartState)?.items ?? [-1])
    }
    try await store.dispatch(FeatRootLog(value: 1))
    try await cart.dispatch(FeatAddToCart(value: 4))
    #expect(seen.values == [[], [4]])
    unsubscribe()
  }
}
