extension Promise {
  /// Waits for the promise to settle and returns its value: the bridge from promises to async/await.
  ///
  /// ```swift
  /// let user = try await loadUser(id: 3).value
  /// ```
  ///
  /// Observing starts a lazy body, as `then` does. No task is created and no queue is involved: settling the
  /// promise resumes the waiting task directly, on its own executor.
  ///
  /// - Throws: The promise's error; `CancellationError` if the promise was cancelled.
  ///
  /// - Important: Like `Task.value`, waiting is not cancelled with the waiting task, and cancelling the
  ///   waiting task does not cancel the promise. Call ``cancel()`` for that.
  @inlinable
  public nonisolated(nonsending) var value: Value {
    get async throws {
      let result: Result<Value, any Error> = await withUnsafeContinuation { continuation in
        subscribe { outcome in continuation.resume(returning: outcome.result) }
      }
      return try result.get()
    }
  }

  /// Creates a promise that runs `operation` in a new task when the promise is first observed: the bridge
  /// from async/await to promises.
  ///
  /// ```swift
  /// func loadUser(id: Int) -> Promise<User> {
  ///   Promise { try await api.user(id: id) }
  /// }
  /// ```
  ///
  /// The promise settles with what `operation` returns or throws. ``cancel()`` cancels the task;
  /// ``retry(_:delay:_:)`` runs `operation` again in a new task.
  ///
  /// - Important: Like every promise with a body, it is lazy: the task starts when something observes the
  ///   promise. Use `Task` directly for work that must start now.
  public convenience init(priority: TaskPriority? = nil, _ operation: @escaping @Sendable () async throws -> Value) {
    self.init(lazy: { resolver in
      let task = Task(priority: priority) {
        do {
          resolver.resolve(try await operation())
        } catch {
          resolver.reject(error)
        }
      }
      resolver.onCancel { task.cancel() }
    })
  }
}
