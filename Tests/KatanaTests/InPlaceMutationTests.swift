import Katana
import KatanaTestSupport
import Testing

/// Bumps `items[0]` and records the address of the array's storage, as seen from inside the updater.
struct TouchFirstItem: StateUpdater {
  let addresses: Recorder<UInt>
  func updateState(_ state: inout CounterState) {
    state.items[0] += 1
    addresses.append(state.items.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) })
  }
}

/// Checks SPEC 4.1: with nothing holding the old value, an update mutates the state's collections in place.
@Suite("In-place mutation", .timeLimit(.failsafeMinutes(3)))
struct InPlaceMutationTests {
  static let largeState = CounterState(items: Array(repeating: 0, count: 100_000))

  /// Dispatches `TouchFirstItem` a few times and returns the storage addresses it saw. The first
  /// dispatch may copy (the initial value is still shared with the initializer), so callers compare the
  /// later ones.
  func addresses(in store: TestStore, dispatches: Int = 4) async throws -> [UInt] {
    let addresses = Recorder<UInt>()
    for _ in 0..<dispatches { try await store.dispatch(TouchFirstItem(addresses: addresses)) }
    return Array(addresses.values.dropFirst())
  }

  @Test func withNoObserver_theArrayIsMutatedInPlace() async throws {
    let store = try await makeReadyStore(Self.largeState)
    let seen = try await addresses(in: store)
    #expect(Set(seen).count == 1)
    #expect(store.state.items[0] == 4)
  }

  @Test func withProjectionObserversOfOtherFields_theArrayIsStillMutatedInPlace() async throws {
    let store = try await makeReadyStore(Self.largeState)
    var iterators = (0..<10).map { _ in store.values(of: \.counter).makeAsyncIterator() }
    for index in iterators.indices { _ = await iterators[index].next() }
    let seen = try await addresses(in: store)
    #expect(Set(seen).count == 1)
  }

  @Test func withASendDrivenPump_theArrayIsMutatedInPlace() async throws {
    let store = try await makeReadyStore(Self.largeState)
    let addresses = Recorder<UInt>()
    var last: DispatchHandle<Void>?
    for _ in 0..<4 { last = store.send(TouchFirstItem(addresses: addresses)) }
    try await last?.value
    #expect(Set(addresses.values.dropFirst()).count == 1)
  }

  /// The control: a listener holds the old state, so each update must copy. This shows the checks above
  /// would fail if the store copied.
  @Test func withAListener_eachUpdateCopies() async throws {
    let store = try await makeReadyStore(Self.largeState)
    store.addListener { _, _ in }
    let seen = try await addresses(in: store)
    // The old buffer is still alive (the listener holds it) when the copy is made, so consecutive
    // addresses differ; freed buffers may be reused later, so addresses can repeat further apart.
    #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 != $1 })
  }
}
