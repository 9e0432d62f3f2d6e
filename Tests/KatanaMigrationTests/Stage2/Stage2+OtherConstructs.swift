import Katana

// The constructs of `Stage1/Stage1+OtherConstructs.swift` after stage 2: async interceptors, a view model without
// `PartialStore`, a stream instead of a listener for UI, and the default configuration.

extension Stage2 {
  protocol Tracker: Sendable {
    func track(_ event: String)
  }

  struct CounterLimitReached: Error, Equatable {}

  // MIGRATION-SNIPPET-BEGIN: stage2-interceptor
  enum AnalyticsInterceptor {
    static func interceptor(tracker: any Tracker) -> StoreInterceptor {
      return { context in
        return { next in
          return { dispatchable in
            try await next(dispatchable)
            tracker.track(dispatchable.debugDescription)
          }
        }
      }
    }
  }

  enum CounterLimitInterceptor {
    static func interceptor(limit: Int) -> StoreInterceptor {
      return { context in
        return { next in
          return { dispatchable in
            let state = context.getAnyState() as? CounterState
            if dispatchable is IncrementCounter, let state, state.counter >= limit {
              throw CounterLimitReached()
            }
            try await next(dispatchable)
          }
        }
      }
    }
  }
  // MIGRATION-SNIPPET-END: stage2-interceptor

  static func storeWithInterceptors(tracker: any Tracker) -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage2-interceptor-store
    let store = Store<CounterState, AppDependencies>(interceptors: [
      AnalyticsInterceptor.interceptor(tracker: tracker),
      CounterLimitInterceptor.interceptor(limit: 2),
    ])
    // MIGRATION-SNIPPET-END: stage2-interceptor-store
    return store
  }

  // MIGRATION-SNIPPET-BEGIN: stage2-view-model
  final class CounterViewModel<Dependencies: SideEffectDependencyContainer> {
    let store: Store<CounterState, Dependencies>

    init(store: Store<CounterState, Dependencies>) {
      self.store = store
    }

    var counterText: String {
      "\(store.state.counter)"
    }

    func increment() {
      store.send(IncrementCounter())
    }
  }
  // MIGRATION-SNIPPET-END: stage2-view-model

  /// Stands in for a label of a UI framework: main-actor isolated. `onSet` lets tests wait for updates.
  @MainActor final class CounterLabel {
    var onSet: ((String) -> Void)?
    var text = "" {
      didSet { onSet?(text) }
    }
  }

  @MainActor static func bind(_ label: CounterLabel, to store: Store<CounterState, AppDependencies>) -> Task<
    Void, Never
  > {
    // MIGRATION-SNIPPET-BEGIN: stage2-stream-ui
    let binding = Task { @MainActor in
      for await counter in store.values(of: \.counter) {
        label.text = "\(counter)"
      }
    }
    // later: binding.cancel()
    // MIGRATION-SNIPPET-END: stage2-stream-ui
    return binding
  }
}
