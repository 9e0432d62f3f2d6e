import Foundation
import Testing

/// A dependency closure that fails the test if it is ever called: it records an issue that names the
/// dependency and the call, then throws ``UnimplementedDependencyError``.
///
/// Put it in a dependency container wherever a test must not reach the real world by accident, such as
/// the container's `init(dispatch:getState:)`, which test stores use when a test gives no container:
///
/// ```swift
/// final class WeatherDependencies: SideEffectDependencyContainer {
///   let forecast: @Sendable (String) async throws -> Forecast
///
///   init(forecast: @escaping @Sendable (String) async throws -> Forecast) {
///     self.forecast = forecast
///   }
///
///   init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
///     forecast = unimplemented("WeatherDependencies.forecast")
///   }
/// }
/// ```
///
/// A test that calls it records `Unimplemented: WeatherDependencies.forecast was called with ("home")`, at the
/// line that wrote `unimplemented`. The error then stops the side effect that called it.
///
/// - Parameters:
///   - name: The dependency, for the message (`"WeatherDependencies.forecast"`).
///   - fileID: Where the issue is attributed; leave the default (the line that writes `unimplemented`).
///   - filePath: The file path; leave the default.
///   - line: The line; leave the default.
///   - column: The column; leave the default.
/// - Returns: A closure of any arguments that records the issue and throws.
public func unimplemented<each Argument, Result>(
  _ name: String,
  fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
) -> @Sendable (repeat each Argument) async throws -> Result {
  let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
  return { (arguments: repeat each Argument) in
    recordIssue(unimplementedMessage(name, describeArguments(repeat each arguments)), at: location)
    throw UnimplementedDependencyError(name: name)
  }
}

/// A dependency closure that fails the test if it is ever called, for closures that cannot throw: it records
/// an issue that names the dependency and the call, then returns `placeholder`.
///
/// ```swift
/// uuid = unimplemented("AppDependencies.uuid", placeholder: UUID(0))
/// ```
///
/// - Parameters:
///   - name: The dependency, for the message.
///   - placeholder: What the closure returns after recording the issue, so that the code under test can go on.
///   - fileID: Where the issue is attributed; leave the default (the line that writes `unimplemented`).
///   - filePath: The file path; leave the default.
///   - line: The line; leave the default.
///   - column: The column; leave the default.
/// - Returns: A closure of any arguments that records the issue and returns `placeholder`.
public func unimplemented<each Argument, Result: Sendable>(
  _ name: String, placeholder: Result,
  fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
) -> @Sendable (repeat each Argument) -> Result {
  let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
  return { (arguments: repeat each Argument) in
    recordIssue(unimplementedMessage(name, describeArguments(repeat each arguments)), at: location)
    return placeholder
  }
}

/// What an ``unimplemented(_:fileID:filePath:line:column:)`` dependency throws once it has recorded its
/// issue. The error only stops the code that called the dependency; the issue is the test's failure.
public struct UnimplementedDependencyError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The dependency that was called.
  public let name: String

  /// Creates the error for the dependency `name`.
  public init(name: String) {
    self.name = name
  }

  /// `WeatherDependencies.forecast is unimplemented in this test`.
  public var description: String {
    "\(name) is unimplemented in this test"
  }
}

func unimplementedMessage(_ name: String, _ arguments: String) -> String {
  "Unimplemented: \(name) was called\(arguments.isEmpty ? "" : " with \(arguments)"). The test did not expect "
    + "this dependency to be used: give the test store a container with an implementation for it."
}

/// `("home", 3)`, or empty for no arguments.
func describeArguments<each Argument>(_ arguments: repeat each Argument) -> String {
  var parts: [String] = []
  for argument in repeat each arguments {
    parts.append(abbreviated(String(reflecting: argument), limit: 80))
  }
  return parts.isEmpty ? "" : "(\(parts.joined(separator: ", ")))"
}
