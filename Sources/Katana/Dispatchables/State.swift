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
public protocol State: Sendable {
  /// The empty state.
  ///
  /// The store holds this value until its state initializer has produced the first real state (see
  /// ``Store/init(interceptors:stateInitializer:dependenciesInitializer:configuration:)``).
  init()
}
