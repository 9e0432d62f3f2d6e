import Foundation
import NIOConcurrencyHelpers
import OrderedCollections

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The server's persistence: an append-only file of ``TodoChange``s, one JSON object per line.
///
/// - Start-up: ``load()`` replays the file into a ``TodoState`` with ``TodoChange/apply(to:)``, the same
///   code the store's updater runs, then rewrites the file compacted (one `created` line per live to-do) and
///   opens it for appending.
/// - Each change: ``append(_:)`` writes one line with one `write` call, and returns once the kernel has it.
///   A change is acknowledged to the client only after that, so a crash loses no acknowledged change.
/// - Durability: appends are not `fsync`ed, so an acknowledged change survives a crash of the server but
///   not necessarily a power loss (like SQLite with `synchronous=OFF`). Compaction does `fsync` the new file
///   before it replaces the old one.
/// - Crash recovery: bytes after the last line break are a write the process did not finish; that change
///   was never acknowledged, so ``load()`` drops it. Any other line that does not decode is corruption:
///   ``load()`` throws ``JournalError/corrupt(path:line:reason:)`` and the server refuses to start.
///
/// The journal does not order or validate changes; ``TodoDependencies`` does, under its write lock.
public final class TodoJournal: Sendable {
  private enum FileState: @unchecked Sendable {  // Sendable: only touched under `file`'s lock.
    case unopened
    case open(FileHandle, endOffset: UInt64)
    case inMemory
    case failed(FileHandle, reason: String)
    case closed
  }

  /// The journal's file, or nil for an in-memory journal.
  public let fileURL: URL?
  private let file: NIOLockedValueBox<FileState>

  /// A journal kept in the file at `fileURL` (created on ``load()`` if missing).
  public init(fileURL: URL) {
    self.fileURL = fileURL
    self.file = NIOLockedValueBox(.unopened)
  }

  private init() {
    self.fileURL = nil
    self.file = NIOLockedValueBox(.inMemory)
  }

  /// A journal that keeps nothing: ``load()`` returns the empty state and ``append(_:)`` does nothing. For
  /// stores that need no persistence (previews, unit tests of the updaters).
  public static func inMemory() -> TodoJournal {
    TodoJournal()
  }

  /// Replays the file into a state, rewrites it compacted, and opens it for appending. Call it once, before
  /// any ``append(_:)``; the store's state initializer does (see ``makeTodoStore(journal:)``).
  ///
  /// - Throws: ``JournalError/corrupt(path:line:reason:)`` if a complete line is not a change;
  ///   ``JournalError/alreadyLoaded`` on a second call; the file system's error if the file cannot be read
  ///   or rewritten.
  public func load() throws -> TodoState {
    guard let fileURL else { return TodoState() }
    return try file.withLockedValue { file in
      guard case .unopened = file else { throw JournalError.alreadyLoaded }
      let path = fileURL.path
      let data = FileManager.default.fileExists(atPath: path) ? try Data(contentsOf: fileURL) : Data()
      let state = try Self.replay(data, path: path)
      try Self.writeCompacted(state, to: fileURL)
      let handle = try FileHandle(forWritingTo: fileURL)
      file = .open(handle, endOffset: try handle.seekToEnd())
      return state
    }
  }

  /// Appends `change` as one line and returns once the kernel has it.
  ///
  /// - Throws: ``JournalError/notOpen`` before ``load()`` or after ``close()``;
  ///   ``JournalError/writeFailed(path:reason:)`` if the write fails (a full disk): the journal is then cut
  ///   back to its last complete line, so it still holds exactly the changes appended before.
  public func append(_ change: TodoChange) throws {
    let line = try Self.line(for: change)
    try file.withLockedValue { file in
      switch file {
      case .inMemory:
        return
      case .unopened, .closed:
        throw JournalError.notOpen
      case .failed(_, let reason):
        throw JournalError.writeFailed(path: fileURL?.path ?? "", reason: reason)
      case .open(let handle, let endOffset):
        do {
          try handle.write(contentsOf: line)
          file = .open(handle, endOffset: endOffset + UInt64(line.count))
        } catch {
          let reason = String(describing: error)
          // A write that failed part-way would leave a torn line in the middle of the journal. Cut it off; if
          // even that fails, take no more writes, so the torn line stays last and the next start drops it.
          do {
            try handle.truncate(atOffset: endOffset)
          } catch {
            file = .failed(handle, reason: reason)
          }
          throw JournalError.writeFailed(path: fileURL?.path ?? "", reason: reason)
        }
      }
    }
  }

  /// Closes the file; later appends throw ``JournalError/notOpen`` (an in-memory journal too). Calling it
  /// again does nothing.
  public func close() {
    file.withLockedValue { file in
      switch file {
      case .open(let handle, _), .failed(let handle, _): try? handle.close()
      case .unopened, .inMemory, .closed: break
      }
      file = .closed
    }
  }

  // MARK: - File format

  /// One change as one line: JSON never contains a raw line break (the encoder escapes them in strings).
  private static func line(for change: TodoChange) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    var line = try encoder.encode(change)
    line.append(UInt8(ascii: "\n"))
    return line
  }

  /// Applies every complete line of `data` to an empty state, in order; ignores the unterminated tail.
  private static func replay(_ data: Data, path: String) throws -> TodoState {
    var state = TodoState()
    let decoder = JSONDecoder()
    var lineStart = data.startIndex
    var lineNumber = 0
    while let lineEnd = data[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
      lineNumber += 1
      let line = data[lineStart..<lineEnd]
      lineStart = lineEnd + 1
      do {
        try decoder.decode(TodoChange.self, from: line).apply(to: &state)
      } catch {
        throw JournalError.corrupt(path: path, line: lineNumber, reason: String(describing: error))
      }
    }
    return state
  }

  /// Writes `state` as one `created` line per to-do to a new file, flushes it to disk, and moves it over
  /// `url` (a rename, so a crash leaves either the old journal or the new one).
  private static func writeCompacted(_ state: TodoState, to url: URL) throws {
    var contents = Data()
    for todo in state.todos.values {
      contents.append(try line(for: .created(todo: todo)))
    }
    let temporaryURL = url.appendingPathExtension("compacting")
    guard FileManager.default.createFile(atPath: temporaryURL.path, contents: nil) else {
      throw JournalError.writeFailed(path: temporaryURL.path, reason: "the file could not be created")
    }
    let handle = try FileHandle(forWritingTo: temporaryURL)
    defer { try? handle.close() }
    try handle.write(contentsOf: contents)
    try handle.synchronize()
    guard rename(temporaryURL.path, url.path) == 0 else {
      throw JournalError.writeFailed(path: url.path, reason: String(cString: strerror(errno)))
    }
  }
}

/// What the journal reports when it cannot do its job.
public enum JournalError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A complete line of the journal is not a change: the file was edited or damaged.
  case corrupt(path: String, line: Int, reason: String)
  /// ``TodoJournal/append(_:)`` before ``TodoJournal/load()``, or after ``TodoJournal/close()``.
  case notOpen
  /// ``TodoJournal/load()`` was called a second time.
  case alreadyLoaded
  /// Writing to the journal failed; nothing was appended.
  case writeFailed(path: String, reason: String)

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .corrupt(let path, let line, let reason):
      "Line \(line) of the journal \(path) is not a to-do change (\(reason)). Repair or remove that line, or "
        + "move the file away to start empty."
    case .notOpen:
      "The journal is not open: it takes changes after load() and until close() (server shutdown)."
    case .alreadyLoaded:
      "The journal was already loaded; load it once, from the store's state initializer."
    case .writeFailed(let path, let reason):
      "Writing to the journal \(path) failed (\(reason)); the change was not saved."
    }
  }
}
