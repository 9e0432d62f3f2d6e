import Foundation
import Katana

/// A Swift Testing test made from a range of recorded commits: a `TestStore` starts at the state before the range's
/// first commit, the test dispatches each commit's updater (decoded from its recorded JSON) and asserts its change
/// exhaustively (the whole state after the commit, decoded from the recording). It compiles in a test target that
/// depends on Katana, KatanaTesting and the module of the state and the updaters (imported `@testable`), and passes
/// as long as the updaters do what they did when the session was recorded.
///
/// Commits made by side effects are dispatched as the updaters they were: the test checks the state changes, not
/// the side effects (their work happened in the recorded session; dependencies stay out of the test).
enum SessionTest {
  /// Why a range cannot become a test.
  enum Failure: Error, CustomStringConvertible {
    case badRange(from: Int, to: Int, kept: ClosedRange<Int>?)
    case tooLong(Int)
    case notCodable(String)
    case scoped(sequence: Int, type: String)
    case unnamed(String)
    case states(CommitStates.Failure)
    case encoding(String)

    var description: String {
      switch self {
      case .badRange(let from, let to, let kept?):
        "Commits \(from) to \(to) are not a range the recording keeps (\(kept.lowerBound + 1) to \(kept.upperBound))."
      case .badRange(let from, let to, nil):
        "Commits \(from) to \(to) are not kept: the recording is empty."
      case .tooLong(let count):
        "A test covers at most \(SessionTest.maximumCommits) commits; this range has \(count)."
      case .notCodable(let type):
        "\(type) is not Codable: the test decodes it from the recording's JSON. Make it Codable, or pick a range "
          + "without it."
      case .scoped(let sequence, let type):
        "Commit \(sequence) (\(type)) was dispatched through a scope, which the test cannot name; pick a range of "
          + "root commits."
      case .unnamed(let type):
        "\(type) has no name a test can use (a type private to a function or file)."
      case .states(let failure):
        failure.description
      case .encoding(let reason):
        "A state or an updater in the range cannot be encoded: \(reason)"
      }
    }
  }

  /// The most commits one test covers.
  static var maximumCommits: Int { 200 }

  /// The test's source, for commits `from` through `to` of `recording`.
  static func source<S: State & Encodable>(from: Int, to: Int, of recording: Recording<S>) throws(Failure) -> String {
    let first = recording.commits.first?.sequence
    let kept = first.map { ($0 - 1)...($0 - 1 + recording.commits.count) }
    guard let first, let kept, from <= to, from > kept.lowerBound, to <= kept.upperBound else {
      throw .badRange(from: from, to: to, kept: kept)
    }
    let count = to - from + 1
    guard count <= maximumCommits else { throw .tooLong(count) }
    guard S.self is any Decodable.Type, S.self is any Equatable.Type else { throw .notCodable(typeName(S.self)) }
    let commits = recording.commits[(from - first)...(to - first)]
    for commit in commits {
      guard commit.scope == nil else { throw .scoped(sequence: commit.sequence, type: shortName(commit.base)) }
      guard commit.base is any Encodable, type(of: commit.base) is any Decodable.Type else {
        throw .notCodable(typeName(type(of: commit.base)))
      }
    }
    // The states: before the first commit, then after each (one replay from the nearest checkpoint, then one per
    // commit, each from the state before it).
    let start: S
    do {
      start = try CommitStates.states(at: from - 1, in: recording).0
    } catch {
      throw .states(error)
    }
    var states: [S] = []
    var state = start
    for commit in commits {
      do {
        state = try Recording(initialState: state, commits: [commit]).replayedState(equal: nil)
      } catch {
        throw .states(.replay(error))
      }
      states.append(state)
    }
    let stateName = try name(of: S.self)
    var modules: Set<String> = [module(of: stateName)]
    var lines: [String] = []
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    func json(_ value: some Encodable) throws(Failure) -> String {
      do {
        return rawLiteral(String(decoding: try encoder.encode(value), as: UTF8.self))
      } catch {
        throw .encoding("\(error)")
      }
    }
    lines.append("  let store = TestStore<\(stateName), EmptySideEffectDependencyContainer>(")
    lines.append("    initialState: try decode(\(stateName).self, \(try json(start))))")
    for (commit, after) in zip(commits, states) {
      let updaterName = try name(of: type(of: commit.base))
      modules.insert(module(of: updaterName))
      // Checked above: the updater is Encodable.
      guard let encodable = commit.base as? any Encodable else { throw .notCodable(updaterName) }
      let cause =
        commit.cause.map { id in
          let effect = recording.effects.first { $0.id == id }.map { " (\(shortName($0.sideEffect)))" } ?? ""
          return ", made by side effect \(id)\(effect)"
        } ?? ""
      lines.append("  // Commit \(commit.sequence): \(shortName(commit.base))\(cause).")
      lines.append("  try await store.dispatch(try decode(\(updaterName).self, \(try json(encodable)))) {")
      lines.append("    $0 = try decode(\(stateName).self, \(try json(after)))")
      lines.append("  }")
    }
    lines.append("  await store.finish()")
    let imports = modules.subtracting(["Swift", "Katana", "KatanaTesting", "Foundation", "Testing"]).sorted()
    return """
      // swift-format-ignore-file
      // Generated by the Katana inspector from commits \(from) to \(to) of a recorded session: each commit's
      // updater, decoded from the recording, must change the state exactly as it did then.
      import Foundation
      import Katana
      import KatanaTesting
      import Testing

      \(imports.map { "@testable import \($0)" }.joined(separator: "\n"))

      @Test func recordedSessionCommits\(from)To\(to)() async throws {
        func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
          try JSONDecoder().decode(type, from: Data(json.utf8))
        }
      \(lines.joined(separator: "\n"))
      }

      """
  }

  /// A type's full name (`Module.Type`), as a test names it; throws for a type that has none.
  static func name(of type: Any.Type) throws(Failure) -> String {
    let name = typeName(type)
    // A type inside a function, or a private one, reads "(unknown context at $...)" or "(private)".
    guard !name.contains("("), !name.contains(" ") else { throw .unnamed(name) }
    return name
  }

  static func typeName(_ type: Any.Type) -> String {
    String(reflecting: type)
  }

  static func shortName(_ item: any Dispatchable) -> String {
    String(describing: type(of: item))
  }

  /// The module of a full type name: its first component.
  static func module(of name: String) -> String {
    String(name.prefix { $0 != "." && $0 != "<" })
  }

  /// `text` as a raw string literal whose delimiter occurs nowhere in it (`#"..."#`, `##"..."##`, ...): neither its
  /// end (`"#`) nor its escape (`\#`). The JSON encoder escapes line breaks, so the literal is one line.
  static func rawLiteral(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    return hashes + "\"" + text + "\"" + hashes
  }
}
