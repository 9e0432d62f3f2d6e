import Dispatch

/// Where Katana 6's store ran its state initializer and its listeners: something that runs closures one
/// at a time, in the order it gets them.
///
/// `DispatchQueue` conforms. Pass executors to
/// ``Katana/StoreConfiguration/init(stateInitializerAsyncProvider:listenersAsyncProvider:)``.
///
/// Unlike Katana 6's protocol, `execute(_:)` takes `@Sendable` closures (the store calls it from any
/// thread), the protocol requires `Sendable`, and there is no `executeSync`: the store no longer needs it
/// to guard its listeners.
public protocol Executor: Sendable {
  /// Runs `closure` later, after every closure handed over before it. It must not run closures in
  /// parallel.
  func execute(_ closure: @escaping @Sendable () -> Void)
}

extension Executor {
  /// Katana 6's name for ``execute(_:)``.
  public func executeAsync(_ closure: @escaping @Sendable () -> Void) {
    execute(closure)
  }
}

extension DispatchQueue: Executor {
  /// Runs `closure` asynchronously on the queue (`async`). Use serial queues, such as `.main`.
  public func execute(_ closure: @escaping @Sendable () -> Void) {
    async(execute: closure)
  }
}
