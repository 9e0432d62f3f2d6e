import Foundation

/// Makes UUIDs that count up from zero, `00000000-0000-0000-0000-000000000000`, then `…-000000000001`, and so
/// on, so that a test knows every id the code under test makes.
///
/// ```swift
/// let uuid = IncrementingUUIDGenerator()
/// let store = TestStore(initialState: TodosState(), dependencies: TodosDependencies(uuid: { uuid() }))
/// store.send(AddTodoTapped(title: "milk"))   // the side effect asks the container for an id
/// await store.receive(AddTodo(id: UUID(0), title: "milk")) { $0.todos = [Todo(id: UUID(0), title: "milk")] }
/// ```
///
/// Safe to call from any task; each call returns the next id.
public final class IncrementingUUIDGenerator: Sendable {
  private let next = TestLock<UInt64>(0)

  /// A generator whose first UUID is `UUID(0)`.
  public init() {}

  /// The next UUID.
  public func callAsFunction() -> UUID {
    UUID(
      next.withLock { value in
        defer { value &+= 1 }
        return value
      })
  }
}

extension UUID {
  /// The UUID whose last twelve hexadecimal digits are `value`: `UUID(1)` is
  /// `00000000-0000-0000-0000-000000000001`, what an ``IncrementingUUIDGenerator`` returns second.
  ///
  /// - Parameter value: Zero or more; the low 48 bits are used.
  public init(_ value: some BinaryInteger) {
    let low = UInt64(truncatingIfNeeded: value) & 0xFFFF_FFFF_FFFF
    let bytes = (0..<6).map { UInt8(truncatingIfNeeded: low >> (8 * (5 - $0))) }
    self.init(
      uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]))
  }
}

/// Makes dates a test knows in advance: always the same one, or one that moves by a fixed step at each call.
///
/// ```swift
/// let now = DateGenerator.constant(Date(timeIntervalSince1970: 1_234_567_890))
/// let dependencies = TodosDependencies(now: { now() })
/// ```
///
/// Safe to call from any task.
public final class DateGenerator: Sendable {
  private let state: TestLock<Date>
  private let step: TimeInterval

  /// A generator that returns `start`, then `start + step`, `start + 2 * step`, and so on.
  ///
  /// - Parameters:
  ///   - start: The first date.
  ///   - step: How far each call moves the date; zero keeps it constant.
  public init(start: Date, step: Duration = .zero) {
    state = TestLock(start)
    let (seconds, attoseconds) = step.components
    self.step = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
  }

  /// A generator that always returns `date`.
  public static func constant(_ date: Date) -> DateGenerator {
    DateGenerator(start: date)
  }

  /// A generator that returns `start`, then moves on by `step` at each call.
  public static func stepping(from start: Date, by step: Duration) -> DateGenerator {
    DateGenerator(start: start, step: step)
  }

  /// The next date.
  public func callAsFunction() -> Date {
    state.withLock { date in
      defer { date = date.addingTimeInterval(step) }
      return date
    }
  }
}
