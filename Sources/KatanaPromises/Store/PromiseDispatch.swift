import Katana

/// Katana 6's dispatch closure for dependency containers: dispatches an item and returns a promise of its
/// outcome.
public typealias PromiseDispatch = @Sendable (_ dispatchable: any Dispatchable) -> Promise<any Sendable>

/// Wraps the `dispatch` closure a dependency container receives so that it returns promises, as in Katana
/// 6: change the stored property's type from `AnyDispatch` to ``PromiseDispatch``, and assign
/// `promiseDispatch(dispatch)` in `init`; call sites stay as they are.
///
/// ```swift
/// final class AppDependencies: SideEffectDependencyContainer {
///   let dispatch: PromiseDispatch
///   init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
///     self.dispatch = promiseDispatch(dispatch)
///   }
/// }
/// ```
///
/// Each call starts the dispatch at once, whether or not anyone observes the promise; `retry` on the
/// promise dispatches again; cancelling it cancels the dispatch's task. That task runs on the threads of
/// `.katana6` stores' own work, so that Katana 6 code blocking Dispatch's worker threads does not delay it.
///
/// - Important: Each call runs the dispatch in a task of its own. A call chained on the previous one's
///   promise runs after it, but two calls made one after the other from synchronous code may be handled
///   in either order (Katana 6 kept their order). Where order matters, dispatch through the store
///   (`store.dispatch`, `send`) or a side effect's context, which keep call order.
public func promiseDispatch(_ dispatch: @escaping AnyDispatch) -> PromiseDispatch {
  // A store builds its dependencies, and so this closure, where its configuration was made: forced fallbacks
  // there hold for every call, also from code that runs outside the store's tasks (a main-queue block).
  let forcesFallbacks = TaskExecutorFallbacks.areForced
  return { item in
    // Eager, as Katana 6's dispatch was: the task starts now, whether or not anyone observes the promise;
    // `retry` runs the body again, which dispatches again.
    Promise(eager: { resolver in
      let task = LegacyTasks.start(forcingFallbacks: forcesFallbacks || TaskExecutorFallbacks.areForced) {
        do {
          resolver.resolve(try await dispatch(item))
        } catch {
          resolver.reject(error)
        }
      }
      resolver.onCancel { task.cancel() }
    })
  }
}
