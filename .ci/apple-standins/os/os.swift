// Stand-in for the Apple SDK's os module (its Swift overlay over <os/log.h> and <os/signpost.h>), for
// .ci/check-apple-branches: exactly the declarations that the package's `#if canImport(os)` code uses, with
// the signatures of os.swiftinterface (signposts came with the macOS 10.14 / iOS 12 SDKs). Bodies are never
// run.

/// <os/log.h>: `OS_OBJECT_DECL(os_log)`, imported as `open class OSLog : NSObject`; not `Sendable` in the SDKs
/// the package supports (the stand-in has no NSObject superclass: nothing the package uses comes from it).
open class OSLog {
  /// os.swiftinterface: `public convenience init(subsystem: Swift.String, category: Swift.String)`.
  public init(subsystem: String, category: String) {
    fatalError("stand-in: never run")
  }

  /// os.swiftinterface: `extension OSLog { public var signpostsEnabled: Swift.Bool { get } }`
  /// (macOS 10.14, iOS 12).
  public var signpostsEnabled: Bool { fatalError("stand-in: never run") }
}

/// os.swiftinterface: `public struct OSSignpostID { public init(log: OSLog); ... }` (macOS 10.14, iOS 12).
public struct OSSignpostID {
  public init(log: OSLog) {
    fatalError("stand-in: never run")
  }

  /// os.swiftinterface: `public static let exclusive: OSSignpostID`.
  public static var exclusive: OSSignpostID { fatalError("stand-in: never run") }
}

/// <os/signpost.h>: `OS_ENUM(os_signpost_type, uint8_t, OS_SIGNPOST_EVENT, OS_SIGNPOST_INTERVAL_BEGIN,
/// OS_SIGNPOST_INTERVAL_END)`, imported as `public struct OSSignpostType` with `.event`, `.begin`, `.end`.
public struct OSSignpostType: Equatable, RawRepresentable, Sendable {
  public var rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  public static let event = OSSignpostType(rawValue: 0)
  public static let begin = OSSignpostType(rawValue: 1)
  public static let end = OSSignpostType(rawValue: 2)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// os.swiftinterface (the SDK's name):
/// `public func os_signpost(_ type: OSSignpostType, dso: Swift.UnsafeRawPointer = #dsohandle,`
/// `  log: OSLog, name: Swift.StaticString, signpostID: OSSignpostID = .exclusive)`.
public func os_signpost(
  _ type: OSSignpostType, dso: UnsafeRawPointer = #dsohandle, log: OSLog, name: StaticString,
  signpostID: OSSignpostID = .exclusive
) {
  fatalError("stand-in: never run")
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// os.swiftinterface (the SDK's name):
/// `public func os_signpost(_ type: OSSignpostType, dso: Swift.UnsafeRawPointer = #dsohandle,`
/// `  log: OSLog, name: Swift.StaticString, signpostID: OSSignpostID = .exclusive,`
/// `  _ format: Swift.StaticString, _ arguments: Swift.CVarArg...)`.
public func os_signpost(
  _ type: OSSignpostType, dso: UnsafeRawPointer = #dsohandle, log: OSLog, name: StaticString,
  signpostID: OSSignpostID = .exclusive, _ format: StaticString, _ arguments: any CVarArg...
) {
  fatalError("stand-in: never run")
}
