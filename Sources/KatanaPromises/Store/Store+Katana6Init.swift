import Katana

// Katana 6's state initializers are synchronous, and Katana 6 ran them on its configuration's
// `stateInitializerAsyncProvider` (the main queue by default). These overloads take such initializers and run
// them there; Swift picks them for a synchronous closure or function (`AppState.init`), and the store's own
// initializers for an `async` or throwing one.

extension Store {
  /// Creates a store with a synchronous state initializer, Katana 6's designated initializer.
  ///
  /// `stateInitializer` runs on the executor of a Katana 6 configuration
  /// (``Katana/StoreConfiguration/init(stateInitializerAsyncProvider:listenersAsyncProvider:)``, or
  /// ``Katana/StoreConfiguration/katana6``: the main queue), in the store's start-up, asynchronously as in
  /// Katana 6; with any other configuration, in the start-up task. Everything else is as in
  /// `init(interceptors:stateInitializer:dependenciesInitializer:configuration:)`.
  public init(
    interceptors: [StoreInterceptor] = [],
    stateInitializer: @escaping @Sendable () -> S,
    dependenciesInitializer: sending DependenciesInitializer,
    configuration: Configuration = .init()
  ) {
    self.init(
      interceptors: interceptors,
      stateInitializer: Self.runningOnConfiguredExecutor(stateInitializer, configuration: configuration),
      dependenciesInitializer: dependenciesInitializer,
      configuration: configuration)
  }

  /// Creates a store with a synchronous state initializer, whose dependency container is built with its
  /// required initializer; see ``init(interceptors:stateInitializer:dependenciesInitializer:configuration:)``.
  public init(
    interceptors: [StoreInterceptor] = [],
    stateInitializer: @escaping @Sendable () -> S,
    configuration: Configuration = .init()
  ) {
    self.init(
      interceptors: interceptors,
      stateInitializer: Self.runningOnConfiguredExecutor(stateInitializer, configuration: configuration),
      configuration: configuration)
  }

  /// `initializer` as an async initializer that runs it on the configured executor, if any.
  private static func runningOnConfiguredExecutor(
    _ initializer: @escaping @Sendable () -> S, configuration: Configuration
  ) -> StateInitializer {
    guard let runner = configuration.stateInitializerRunner else { return initializer }
    return { try await runner.run { initializer() } }
  }
}
