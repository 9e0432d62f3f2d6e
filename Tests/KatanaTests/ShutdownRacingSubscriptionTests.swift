// A shutdown that lands while an observer is still taking its first value (after its registration, before its
// first read of the slice is in): the observer was registered before shutdown, so it must still yield the value at
// registration and the commits delivered to it before shutdown, then end. Before the fix, shutdown finished the
// observer's buffer at once, the first value and the queued commits were pushed into a finished buffer and dropped,
// and the stream ended empty; an `ObservableStore` subscribing then never applied a state at all.
//
// The interleaving is forced with the gate of `GatedRoot.gatedSlice` (ObserverReviewRegressionTests.swift): the
// observer's first read of the slice, which the store makes outside its lock right after registering it, blocks
// there while the test commits and shuts the store down. The same race for a scope's stream is a case of
// `ObserverReviewRegressionTests.scopeObserver_commitRacingSubscription_isDelivered`.
import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

@Suite("Shutdown racing a subscription", .timeLimit(.failsafeMinutes(3)))
struct ShutdownRacingSubscriptionTests {
  #if canImport(Observation)
    /// An `ObservableStore` whose subscription (made as the model is) was registered before shutdown applies the
    /// latest state it was delivered before shutdown (its subscription keeps only the latest), then stops following:
    /// it does not keep the state it was created with. The subscription's first read of the slice, on the main actor
    /// in the model's initialiser, is held in the gate while the store commits and shuts down.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func observableStore_shutDownWhileSubscribing_appliesWhatItWasDelivered() async throws {
      let applied = Recorder<Int>()
      // The model reads the slice once for its first state, then subscribes: that read goes through, the
      // subscription's first one is held.
      let model = try await makeModelAsTheStoreShutsDown(lettingThrough: 1) { scope in
        let model = ObservableStore(scope: scope)
        model.didApply = { applied.append($0.value) }
        return model
      }
      guard let model else { return }
      #expect(await ends(await MainActor.run { model.updates }))
      #expect(applied.values.last == 2)
      #expect(await MainActor.run { model.untrackedState } == GatedSlice(value: 2))
    }

    /// A model made as the store shuts down (it read the state, then the store committed and shut down before the
    /// model subscribed) shows the state the store shut down with, not the older one it read. Forced: the model's
    /// first read of the slice is held in the gate while the store commits and shuts down. Before (the observation
    /// fuzzer, once in 20 runs of the suite; and this test) the model kept the state it read.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func observableStore_madeAsTheStoreShutsDown_showsTheStateItShutDownWith() async throws {
      let model = try await makeModelAsTheStoreShutsDown(lettingThrough: 0) { ObservableStore(scope: $0) }
      guard let model else { return }
      #expect(await ends(await MainActor.run { model.updates }))
      #expect(await MainActor.run { model.untrackedState } == GatedSlice(value: 2))
    }

    /// Makes a model of a gated slice (value 1) with `make`, on the main actor, and holds its read of the slice that
    /// comes after the first `reads` in the gate while the store commits value 2 and shuts down; then lets it through
    /// and returns the model. Nil, with an issue recorded, if the model never read the slice through the gate.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func makeModelAsTheStoreShutsDown(
      lettingThrough reads: Int,
      _ make:
        @escaping @MainActor @Sendable (ScopedStore<GatedSlice, EmptySideEffectDependencyContainer>) ->
        ObservableStore<GatedSlice, EmptySideEffectDependencyContainer>
    ) async throws -> ObservableStore<GatedSlice, EmptySideEffectDependencyContainer>? {
      let gate = ReadGate()
      let store = GatedStore(initialState: GatedRoot(slice: GatedSlice(value: 1), gate: gate))
      try await store.waitUntilReady()
      let scope = store.scope(\.gatedSlice, dependencies: \.self)
      gate.arm(lettingThrough: reads)
      let made = Task { @MainActor in make(scope) }
      let entered = LockedValue(false)
      #expect(await waitFor(onThread { entered.withLock { $0 = gate.waitUntilEntered() } }))
      guard entered.withLock({ $0 }) else {
        // The model read the slice some other number of times: nothing is held, and the commit must not be.
        gate.disarm()
        Issue.record("the model never read the slice through the gate")
        return nil
      }
      try await store.dispatch(SetGatedValue(value: 2))
      await store.shutdown()
      gate.release()
      return await made.value
    }
  #endif
}
