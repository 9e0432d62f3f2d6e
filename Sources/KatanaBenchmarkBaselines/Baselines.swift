import Foundation

/// The state the baselines mutate: the same shape as the benchmarks' store state, so that a baseline does
/// exactly the work of a state updater.
public struct BaselineState: Sendable {
  public var counter = 0
  public var items: [Int] = []

  public init() {}
}

/// A bare actor whose method does the same mutation as the benchmarked state updater: the floor for an
/// awaited call that serialises a mutation.
public actor BaselineActor {
  private var state = BaselineState()

  public init() {}

  /// Adds `amount` to the counter.
  public func increment(by amount: Int) {
    state.counter &+= amount
  }

  public var counter: Int { state.counter }
}

/// A mutation behind a lock: the floor for a synchronous, thread-safe mutation.
public final class LockedBaseline: @unchecked Sendable {  // Sendable: `state` is only touched under `lock`.
  private let lock = NSLock()
  private var state = BaselineState()

  public init() {}

  public func increment(by amount: Int) {
    lock.lock()
    state.counter &+= amount
    lock.unlock()
  }

  public var counter: Int {
    lock.lock()
    defer { lock.unlock() }
    return state.counter
  }
}

/// A chain of `depth` plain async closures that hand a value on, the shape of an interceptor chain with no
/// store behind it: the floor for pass-through interceptors.
public func makeClosureChain(depth: Int, final: @escaping @Sendable (Int) async throws -> Void)
  -> @Sendable (Int) async throws -> Void
{
  var next = final
  for _ in 0..<depth {
    let inner = next
    next = { value in try await inner(value) }
  }
  return next
}

/// Keeps a value alive as far as the optimizer knows.
@inline(never)
public func blackHole<T>(_ value: T) {
  withExtendedLifetime(value) {}
}

/// The shape of `StoreInterceptorNext`, with no store behind it.
public typealias BaselineNext = @Sendable (any Sendable) async throws -> Void

/// The shape of `StoreInterceptor`, with no store behind it.
public typealias BaselineInterceptor = @Sendable (Int) -> @Sendable (@escaping BaselineNext) -> BaselineNext

/// Composes interceptors passed as an array, the way a store composes the ones it receives: where their types
/// are generic parameters, so that the handlers call each other at the array's own (maximal) abstraction.
/// What remains, the thunks the caller's code made when it put its closures in the array, is the floor for
/// interceptors handed to `Store.init` in an array.
public func composeInterceptorArray(_ interceptors: [BaselineInterceptor], final: @escaping BaselineNext)
  -> BaselineNext
{
  composeAtMaximalAbstraction(interceptors, context: 0, final: final)
}

@_semantics("optimize.sil.specialize.generic.never")
@inline(never)
func composeAtMaximalAbstraction<Context, Next>(
  _ interceptors: [@Sendable (Context) -> @Sendable (Next) -> Next], context: Context, final: Next
) -> Next {
  var next = final
  for interceptor in interceptors.reversed() {
    next = interceptor(context)(next)
  }
  return next
}
