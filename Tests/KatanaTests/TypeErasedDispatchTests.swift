import Katana
import KatanaTestSupport
import Testing

/// A library-style updater that works on any state with a counter.
protocol HasCounter: State {
  var counter: Int { get set }
}

extension CounterState: HasCounter {}

struct GenericIncrement: AnyStateUpdater {
  func updatedState(currentState: any State) throws -> any State {
    guard var state = currentState as? any HasCounter else {
      throw StoreError.wrongStateType(expected: "HasCounter", actual: "\(type(of: currentState))")
    }
    state.counter += 1
    return state
  }
}

struct BothKinds: StateUpdater, AnySideEffect {
  func updateState(_ state: inout CounterState) {}
  func anySideEffect(_ context: any AnySideEffectContext) async throws -> any Sendable { () }
}

struct NeitherKind: Dispatchable {}

/// A side effect for another store type.
struct OtherStoreSideEffect: SideEffect {
  func sideEffect(_ context: SideEffectContext<OtherState, EmptySideEffectDependencyContainer>) async throws {}
}

@Suite("Type-erased dispatch", .timeLimit(.failsafeMinutes(3)))
struct TypeErasedDispatchTests {
  @Test func anyDispatch_handlesEachKind_andReturnsValues() async throws {
    let store = try await makeReadyStore()
    #expect(try await store.anyDispatch(Increment()) is Void)
    #expect(try await store.anyDispatch(IncrementTwice()) is Void)
    #expect(try await store.anyDispatch(AddAndRead(by: 1)) as? Int == 4)
    #expect(try await store.anyDispatch(GenericIncrement()) is Void)
    #expect(store.state.counter == 5)
  }

  @Test func anyDispatch_wrongStateType_throws() async throws {
    let store = try await makeReadyStore()
    await #expect(
      throws: StoreError.wrongStateType(
        expected: String(reflecting: OtherState.self), actual: String(reflecting: CounterState.self))
    ) {
      _ = try await store.anyDispatch(Rename(name: "x"))
    }
    await #expect(throws: StoreError.self) { _ = try await store.anyDispatch(OtherStoreSideEffect()) }
    await #expect(throws: StoreError.self) { try await store.anySend(Rename(name: "x")).value }
    #expect(store.state == CounterState())
  }

  @Test func anyDispatch_itemOfBothOrNeitherKind_throws() async throws {
    let store = try await makeReadyStore()
    await #expect(throws: StoreError.ambiguousDispatchable(String(reflecting: BothKinds.self))) {
      _ = try await store.anyDispatch(BothKinds())
    }
    await #expect(throws: StoreError.unsupportedDispatchable(String(reflecting: NeitherKind.self))) {
      _ = try await store.anyDispatch(NeitherKind())
    }
    await #expect(throws: StoreError.unsupportedDispatchable(String(reflecting: NeitherKind.self))) {
      _ = try await store.anySend(NeitherKind()).value
    }
  }

  @Test func returningSideEffect_inAStoreOfAnotherType_throwsWrongContext() async throws {
    let store = Store<OtherState, EmptySideEffectDependencyContainer>()
    await #expect(throws: StoreError.self) { _ = try await store.dispatch(AddAndRead(by: 1)) }
  }

  @Test func anySend_returnsValues() async throws {
    let store = try await makeReadyStore()
    #expect(try await store.anySend(Increment()).value is Void)
    #expect(try await store.anySend(AddAndRead(by: 2)).value as? Int == 3)
  }

  @Test func anyDispatch_throughInterceptors_handlesEachKind() async throws {
    let recorder = Recorder<String>()
    let store = try await makeReadyStore(interceptors: [recordingInterceptor("r", into: recorder)])
    #expect(try await store.anyDispatch(GenericIncrement()) is Void)
    #expect(try await store.anyDispatch(AddAndRead(by: 1)) as? Int == 2)
    await #expect(throws: StoreError.self) { _ = try await store.anyDispatch(Rename(name: "x")) }
    #expect(store.state.counter == 2)
  }
}
