import Dispatch

/// Creates a promise that runs `body` on `context` (default ``Context/background``) when first observed,
/// and settles with what it returns or throws.
///
/// ```swift
/// async { _ in try parse(data) }.then { model in ... }
/// ```
///
/// For async code, prefer ``Promise/init(priority:_:)``.
@discardableResult
public func async<T>(
  in context: Context? = nil, token: InvalidationToken? = nil, _ body: @escaping @Sendable (PromiseStatus) throws -> T
) -> Promise<T> {
  Promise(in: context, token: token) { resolve, _, status in
    resolve(try body(status))
  }
}

/// Runs `block` on `context`, after `after` seconds if given: a shortcut for `DispatchQueue.async`, with no
/// promise involved.
public func async(in context: Context, after: Double? = nil, _ block: @escaping @Sendable () -> Void) {
  if let after {
    context.schedule(after: after, block)
  } else {
    context.schedule(block)
  }
}
