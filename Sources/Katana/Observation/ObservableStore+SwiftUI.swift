// Compiled on Apple platforms only; the platform-neutral part, `fieldBinding(_:send:)`, is tested on Linux.
#if canImport(SwiftUI) && canImport(Observation)
  import SwiftUI

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  extension ObservableStore {
    /// A SwiftUI binding to one field: it reads `keyPath` through the model and sends the updater that
    /// `makeUpdater` builds from each new value.
    ///
    /// ```swift
    /// TextField("Search", text: model.binding(\.query) { SetQuery(text: $0) })
    /// ```
    ///
    /// See ``fieldBinding(_:send:)-(_,(T)->U)``.
    public func binding<T, U: StateUpdater>(
      _ keyPath: KeyPath<S, T>, send makeUpdater: @escaping @Sendable (T) -> U
    ) -> Binding<T> where U.StateType == S {
      let field = fieldBinding(keyPath, send: makeUpdater)
      // `Binding`'s closures are `@isolated(any) @Sendable`: a closure literal does not inherit the main actor
      // from this method, so each one says it runs there (SwiftUI calls them on the main actor).
      return Binding(get: { @MainActor in field.get() }, set: { @MainActor in field.set($0) })
    }

    /// A SwiftUI binding to one field that sets it: it reads `keyPath` through the model and sends ``SetField``
    /// with each new value.
    ///
    /// ```swift
    /// Stepper("Steps", value: model.binding(\.stepCount))
    /// ```
    ///
    /// See ``fieldBinding(_:)``.
    public func binding<T: Sendable>(_ keyPath: any WritableKeyPath<S, T> & Sendable) -> Binding<T> {
      let field = fieldBinding(keyPath)
      // As below: each closure says it runs on the main actor.
      return Binding(get: { @MainActor in field.get() }, set: { @MainActor in field.set($0) })
    }

    /// A SwiftUI binding to one field whose changes start work: it reads `keyPath` through the model and
    /// sends the side effect that `makeSideEffect` builds from each new value.
    ///
    /// ```swift
    /// Toggle("Done", isOn: model.binding(\.isDone) { ToggleAndSave(isDone: $0) })
    /// ```
    ///
    /// See ``fieldBinding(_:send:)-(_,(T)->E)``.
    public func binding<T, E: SideEffect>(
      _ keyPath: KeyPath<S, T>, send makeSideEffect: @escaping @Sendable (T) -> E
    ) -> Binding<T> where E.StateType == S, E.Dependencies == D {
      let field = fieldBinding(keyPath, send: makeSideEffect)
      // As above: each closure says it runs on the main actor.
      return Binding(get: { @MainActor in field.get() }, set: { @MainActor in field.set($0) })
    }
  }
#endif
