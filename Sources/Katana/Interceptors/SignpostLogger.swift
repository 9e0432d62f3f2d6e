#if canImport(os)
  import Foundation
  import os
#endif

/// Emits an os_signpost interval for each dispatch, for Instruments: Katana 6's signpost logger, as an
/// interceptor.
///
/// ```swift
/// let store = Store<AppState, AppDependencies>(interceptors: [SignpostLogger.interceptor()])
/// ```
///
/// On Apple platforms each item handed on gets an interval named "State Updater" or "Side Effect", whose
/// message is the item's fully qualified type name, on the log with subsystem and category "Katana" (as in
/// Katana 6). The interval ends when the item has been handled, also when handling throws (Katana 6 left
/// the interval of a throwing side effect open); the end of a failed interval says "failed". While
/// Instruments is not recording signposts, the interceptor only checks a flag and hands items on.
///
/// On platforms without `os` (Linux), the interceptor hands items on and emits nothing; use
/// ``DispatchInstrumentation`` there.
///
/// - Important: Katana 6 switched signposts on with `SignpostLogger.isEnabled = true`, a global setting read
///   inside the store. Here, add ``interceptor(subsystem:category:)`` to the store's interceptors instead:
///   a store without it pays nothing.
public enum SignpostLogger {
  /// Returns an interceptor that emits a signpost interval for each item it hands on.
  ///
  /// - Parameters:
  ///   - subsystem: The subsystem of the signposts' log.
  ///   - category: The category of the signposts' log.
  public static func interceptor(subsystem: String = "Katana", category: String = "Katana") -> StoreInterceptor {
    #if canImport(os)
      let log = SignpostLog(subsystem: subsystem, category: category)
      return { _ in
        { next in
          { dispatchable in
            try await log.interval(for: dispatchable) { try await next(dispatchable) }
          }
        }
      }
    #else
      return { _ in { next in next } }
    #endif
  }

  /// Katana 6's switch for signposts. Add ``interceptor(subsystem:category:)`` to the store's interceptors
  /// instead.
  @available(*, unavailable, message: "Add SignpostLogger.interceptor() to the store's interceptors instead")
  public static var isEnabled: Bool {
    get { false }
    set {}  // Unavailable: never called.
  }
}

#if canImport(os)
  /// The log signposts go to.
  final class SignpostLog: @unchecked Sendable {
    // Sendable: `OSLog` is immutable and thread-safe, but not every supported SDK marks it `Sendable`.
    private let log: OSLog

    init(subsystem: String, category: String) {
      log = OSLog(subsystem: subsystem, category: category)
    }

    /// Runs `body` inside a signpost interval for `dispatchable`, ending the interval even if `body` throws.
    func interval(for dispatchable: any Dispatchable, _ body: () async throws -> Void) async throws {
      guard log.signpostsEnabled else {
        try await body()
        return
      }
      let name: StaticString = dispatchable is any AnySideEffect ? "Side Effect" : "State Updater"
      let id = OSSignpostID(log: log)
      os_signpost(.begin, log: log, name: name, signpostID: id, "%{public}@", dispatchable.debugDescription)
      do {
        try await body()
      } catch {
        os_signpost(.end, log: log, name: name, signpostID: id, "failed")
        throw error
      }
      os_signpost(.end, log: log, name: name, signpostID: id)
    }
  }
#endif
