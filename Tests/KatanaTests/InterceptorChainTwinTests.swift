import KatanaTestSupport
import Testing

@testable import Katana

/// STYLE 11 for the interceptor chain: state updaters run the chain as an ``OpaqueChain`` (kept at the representation
/// of the interceptors' array, its end handing a quiet commit over in one critical section); the plain twin
/// (`StoreConfiguration.usesPlainInterceptorChain`) runs the chain at its substituted type, its end the async
/// `handleFromChain`. Each seed makes a random plan (what each of three interceptors does with each step: hand it on,
/// twice or from a child task, replace it, redirect it to a side effect, throw before or after, drop it, keep `next`
/// for later or call one kept from an earlier dispatch) and runs it, from one task, through every way to
/// dispatch an updater, on a store with each chain, with and without a listener (the quiet and the noticed commit);
/// what a user sees (each dispatch's outcome, each `next` call's error, the final state, the listener's commits) must
/// be the same. (Two calls of `next` at once are left out: which one is refused is the machine's, and what the layers
/// above do then depends on it; `InterceptorTests` and the observation fuzzer cover them.)
///
/// Ten minutes, as the fuzzers: about 4 s in a debug build, it passed three minutes under the thread sanitizer while
/// the whole suite started at once, and the limit's cancellation then showed as differences between the two runs.
@Suite("Interceptor chain: the opaque chain against its plain twin", .timeLimit(.failsafeMinutes(10)))
struct InterceptorChainTwinTests {
  @Test(arguments: [false, true])
  func opaqueChain_behavesAsThePlainChain_onSeededSchedules(listening: Bool) async throws {
    for seed in (0..<UInt64(200)).map({ 0xC4A1 &+ $0 &* 7_919 }) {
      let plan = TwinPlan(seed: seed)
      let opaque = await plan.run(plainChain: false, listening: listening)
      let plain = await plan.run(plainChain: true, listening: listening)
      #expect(opaque.usedOpaqueChain && !plain.usedOpaqueChain, "seed \(seed): the store did not take the chain asked")
      #expect(opaque.journal == plain.journal, "seed \(seed), listening \(listening): the outcomes differ")
      #expect(opaque.state == plain.state, "seed \(seed), listening \(listening): the final states differ")
      #expect(opaque.commits == plain.commits, "seed \(seed), listening \(listening): the commits differ")
    }
  }

  /// The same plans with the last one, two or all three layers written as `DispatchInterceptor`s (the faster form, run
  /// after the closure interceptors), on each chain: the opaque chain (where a chain of dispatch interceptors alone is
  /// handed the frame, with no task-local) behaves as the plain chain on the whole plan; and what a user sees is what
  /// the closure form gives, on the plan without a `next` kept by a dispatch interceptor (kept there, it carries its
  /// dispatch: called in a later one it is out of scope, called from a detached task while its dispatch runs it hands
  /// on, where a closure interceptor's `next` does the reverse; `DispatchInterceptorTests` pins both).
  @Test(arguments: [false, true])
  func dispatchInterceptors_behaveAsClosureInterceptors_onSeededSchedules(listening: Bool) async throws {
    var keptByDispatchInterceptors = 0
    for seed in (0..<UInt64(120)).map({ 0xD15 &+ $0 &* 7_919 }) {
      let plan = TwinPlan(seed: seed)
      let layers = 1 + Int(seed % UInt64(TwinPlan.layers))
      let firstTyped = TwinPlan.layers - layers
      if plan.keepsNext(fromLayer: firstTyped) { keptByDispatchInterceptors += 1 }
      let label = "seed \(seed), \(layers) dispatch layers, listening \(listening)"
      let opaque = await plan.run(plainChain: false, listening: listening, dispatchLayers: layers)
      let plain = await plan.run(plainChain: true, listening: listening, dispatchLayers: layers)
      #expect(opaque.usedOpaqueChain && !plain.usedOpaqueChain, "\(label): the store did not take the chain asked")
      #expect(opaque.journal == plain.journal, "\(label): the outcomes differ between the chains")
      #expect(opaque.state == plain.state, "\(label): the final states differ between the chains")
      #expect(opaque.commits == plain.commits, "\(label): the commits differ between the chains")
      let comparable = plan.handingOnInsteadOfKeeping(fromLayer: firstTyped)
      let closures = await comparable.run(plainChain: false, listening: listening)
      for plainChain in [false, true] {
        let typed = await comparable.run(plainChain: plainChain, listening: listening, dispatchLayers: layers)
        #expect(typed.journal == closures.journal, "\(label), plain \(plainChain): the outcomes differ")
        #expect(typed.state == closures.state, "\(label), plain \(plainChain): the final states differ")
        #expect(typed.commits == closures.commits, "\(label), plain \(plainChain): the commits differ")
      }
    }
    // The chains were compared on plans where a dispatch interceptor kept its `next`.
    #expect(keptByDispatchInterceptors > 20)
  }
}

/// One layer of a plan written as a `DispatchInterceptor`.
private struct TwinDispatchInterceptor: DispatchInterceptor {
  let layer: Int
  let plan: TwinPlan
  let journal: Recorder<String>
  let kept: LockedValue<StoreInterceptorNext?>

  func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws {
    try await plan.handle(item, layer: layer, next: { try await next($0) }, journal: journal, kept: kept)
  }
}

/// An updater the plan scripts: each interceptor does with it what the plan says for its step.
private struct TwinStep: StateUpdater {
  let step: Int
  func updateState(_ state: inout CounterState) {
    state.counter += 1
    state.log.append("step \(step)")
  }
}

/// What one interceptor does with one step.
private enum TwinBehaviour: CaseIterable {
  case handOn, handOnTwice, handOnFromChildTask, replace, redirect, throwBefore, throwAfter
  case drop, keepNext, callKeptNext
}

/// How a step is dispatched.
private enum TwinRoute: CaseIterable {
  case dispatch, anyDispatch, send, fromSideEffect
}

private struct TwinPlan: Sendable {
  static let layers = 3
  let behaviours: [[TwinBehaviour]]
  let routes: [TwinRoute]

  init(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    let steps = 24
    // Mostly hand-ons, so that most steps reach the store through several layers.
    behaviours = (0..<steps).map { _ in
      (0..<Self.layers).map { _ in
        generator.next() % 2 == 0 ? .handOn : TwinBehaviour.allCases[Int(generator.next() % 10)]
      }
    }
    routes = (0..<steps).map { _ in TwinRoute.allCases[Int(generator.next() % 4)] }
  }

  private init(behaviours: [[TwinBehaviour]], routes: [TwinRoute]) {
    self.behaviours = behaviours
    self.routes = routes
  }

  /// Whether a layer from `layer` on keeps its `next` at some step.
  func keepsNext(fromLayer layer: Int) -> Bool {
    behaviours.contains { $0[layer...].contains(.keepNext) }
  }

  /// The plan with the layers from `layer` on handing on where they would keep their `next`.
  func handingOnInsteadOfKeeping(fromLayer layer: Int) -> TwinPlan {
    TwinPlan(
      behaviours: behaviours.map { step in
        step.enumerated().map { index, behaviour in index >= layer && behaviour == .keepNext ? .handOn : behaviour }
      },
      routes: routes)
  }

  struct Outcome: Sendable {
    var journal: [String]
    var state: CounterState
    var commits: [String]
    var usedOpaqueChain: Bool
  }

  /// Runs the plan with its last `dispatchLayers` layers as `DispatchInterceptor`s, the others as closures.
  func run(plainChain: Bool, listening: Bool, dispatchLayers: Int = 0) async -> Outcome {
    let journal = Recorder<String>()
    let kept = LockedValue<StoreInterceptorNext?>(nil)
    let closureLayers = Self.layers - dispatchLayers
    let interceptors = (0..<closureLayers).map { layer in interceptor(layer: layer, journal: journal, kept: kept) }
    var configuration = StoreConfiguration()
    configuration.dispatchInterceptors = (closureLayers..<Self.layers).map { layer in
      TwinDispatchInterceptor(layer: layer, plan: self, journal: journal, kept: kept)
    }
    configuration.usesPlainInterceptorChain = plainChain
    let store = TestStore(initialState: CounterState(), interceptors: interceptors, configuration: configuration)
    let commits = Recorder<String>()
    let unsubscribe =
      listening ? store.addListener { old, new in commits.append("\(old.counter) -> \(new.counter) \(new.log)") } : {}
    for (step, route) in routes.enumerated() {
      do {
        switch route {
        case .dispatch: try await store.dispatch(TwinStep(step: step))
        case .anyDispatch: _ = try await store.anyDispatch(TwinStep(step: step))
        case .send: try await store.send(TwinStep(step: step)).value
        case .fromSideEffect:
          try await store.dispatch(Script { context in try await context.dispatch(TwinStep(step: step)) })
        }
        journal.append("step \(step): returned")
      } catch {
        journal.append("step \(step): \(error)")
      }
    }
    unsubscribe()
    let usedOpaqueChain = store.core.withLock { $0.opaqueChain != nil }
    let state = store.state
    await store.shutdown()
    return Outcome(journal: journal.values, state: state, commits: commits.values, usedOpaqueChain: usedOpaqueChain)
  }

  func interceptor(layer: Int, journal: Recorder<String>, kept: LockedValue<StoreInterceptorNext?>)
    -> StoreInterceptor
  {
    { _ in { next in { item in try await handle(item, layer: layer, next: next, journal: journal, kept: kept) } } }
  }

  /// What the interceptor at `layer` does with `item`, whichever its form.
  func handle(
    _ item: any Dispatchable, layer: Int, next: @escaping StoreInterceptorNext, journal: Recorder<String>,
    kept: LockedValue<StoreInterceptorNext?>
  ) async throws {
    guard let step = (item as? TwinStep)?.step else { return try await next(item) }
    switch behaviours[step][layer] {
    case .handOn:
      try await next(item)
    case .handOnTwice:
      try await next(item)
      try await next(item)
    case .handOnFromChildTask:
      try await Task { try await next(item) }.value
    case .replace:
      try await next(Log(tag: "replaced \(step) at \(layer)"))
    case .redirect:
      try await next(Script { context in try await context.dispatch(Log(tag: "redirected \(step) at \(layer)")) })
    case .throwBefore:
      throw TestError(code: step * 10 + layer)
    case .throwAfter:
      try await next(item)
      throw TestError(code: step * 10 + layer)
    case .drop:
      return
    case .keepNext:
      kept.withLock { $0 = next }
      try await next(item)
    case .callKeptNext:
      // Kept from an earlier dispatch: called here, it hands on within this dispatch (the chain is composed once);
      // called from outside of any dispatch, it is out of scope.
      if let kept = kept.withLock({ $0 }) {
        let inScope = await twinOutcome { try await kept(Log(tag: "kept \(step) at \(layer)")) }
        let outside = await Task.detached { await twinOutcome { try await kept(Log(tag: "outside \(step)")) } }
          .value
        journal.append("step \(step), layer \(layer), kept next: \(inScope), outside: \(outside)")
      }
      try await next(item)
    }
  }
}

/// What running `body` came to: "handled", or its error.
private func twinOutcome(_ body: @Sendable () async throws -> Void) async -> String {
  do {
    try await body()
    return "handled"
  } catch {
    return "\(error)"
  }
}
