/// The whole state of an application: one value, kept by a ``Store`` and changed only by ``StateUpdater``s.
///
/// Make your state a struct of plain values. It must be `Sendable`, because readers on any thread get
/// snapshots of it (``Store/state``).
///
/// ```swift
/// struct AppState: State {
///   var todos: [Todo] = []
///   var isSyncing = false
/// }
/// ```
public protocol State: FeatureState {
  /// The empty state.
  ///
  /// The store holds this value until its state initializer has produced the first real state (see
  /// ``Store/init(interceptors:stateInitializer:dependenciesInitializer:configuration:)``).
  init()
}

/// What a feature's state must be to be mounted with `scope`: a `Sendable` value, nothing more.
///
/// A store's whole state is a ``State``, which also has Katana 6's `init()` (the value the store holds until
/// its state initializer has run). A feature's state, mounted at a key path of it, needs no `init()`: a row
/// whose identity is a `let` conforms as it is.
///
/// ```swift
/// struct TodoRow: FeatureState, Identifiable, Equatable {
///   let id: Int
///   var title: String
///   var isDone = false
/// }
/// let row = store.scope(\.rows, id: 3, dependencies: \.rows)   // ScopedStore<TodoRow, RowDependencies>
/// ```
///
/// State updaters and side effects of such a feature name it as their `StateType`, as any other. What a
/// feature state without `init()` gives up is the placeholder for a slice that is missing (a removed element,
/// a nil optional child): ``ScopedStore/stateIfPresent`` and ``SideEffectContext/getStateIfPresent()`` read it
/// for every feature, and `state` and `getState()`, which answer `init()` for a missing slice, are there only
/// for a feature state that is a ``State``. Every ``State`` is a `FeatureState`.
public protocol FeatureState: Sendable {}
