import Foundation

/// An item that ``ObserverInterceptor`` dispatches when the store starts.
///
/// ```swift
/// struct LoadSettings: SideEffect, OnStartObserverDispatchable {
///   init() {}
///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws { ... }
/// }
///
/// ObserverInterceptor.observe([.onStart([LoadSettings.self])])
/// ```
public protocol OnStartObserverDispatchable: Dispatchable {
  /// Creates the item to dispatch at start-up, or returns nil to dispatch nothing.
  init?()
}

/// An item that ``ObserverInterceptor`` dispatches when the state changes in a way an
/// ``ObserverInterceptor/ObserverType/onStateChange(_:_:)`` entry selects.
public protocol StateObserverDispatchable: Dispatchable {
  /// Creates the item to dispatch, or returns nil to dispatch nothing.
  ///
  /// - Parameters:
  ///   - prevState: The store's state before the observed state updater was handled.
  ///   - currentState: The store's state after it was handled.
  init?(prevState: any State, currentState: any State)
}

/// An item that ``ObserverInterceptor`` dispatches after an item of a given type was dispatched (an
/// ``ObserverInterceptor/ObserverType/onDispatch(_:_:)`` entry).
public protocol DispatchObserverDispatchable: Dispatchable {
  /// Creates the item to dispatch, or returns nil to dispatch nothing.
  ///
  /// - Parameters:
  ///   - dispatchedItem: The observed item, as the observer interceptor received it.
  ///   - prevState: The store's state right before the observed item was handled.
  ///   - currentState: The store's state right after it was handled. For a side effect, other dispatches
  ///     that ran concurrently with it may have changed the state too.
  init?(dispatchedItem: any Dispatchable, prevState: any State, currentState: any State)
}

/// An item that ``ObserverInterceptor`` dispatches when a notification is posted (an
/// ``ObserverInterceptor/ObserverType/onNotification(_:_:)`` entry).
public protocol NotificationObserverDispatchable: Dispatchable {
  /// Creates the item to dispatch, or returns nil to dispatch nothing.
  ///
  /// It runs synchronously on the thread that posted the notification.
  init?(notification: Notification)
}
