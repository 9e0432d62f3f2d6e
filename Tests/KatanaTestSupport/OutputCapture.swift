import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs `body` with the process's file descriptor `descriptor` (`STDOUT_FILENO` or `STDERR_FILENO`)
/// redirected into a pipe, and returns what was written to it meanwhile.
///
/// The redirection is process-wide: another test printing at the same time writes into the pipe too. So
/// callers look for their own lines in the result, and every captured line that does not start with one of
/// `ownPrefixes` is written on to the real descriptor afterwards, so that nothing printed by someone else
/// is lost. Captures of one descriptor take turns (a second one waits for the first to end), so that they
/// never undo each other's redirection.
public func capturingOutput(
  of descriptor: Int32, ownPrefixes: [String], _ body: () async throws -> Void
) async throws -> String {
  try await capturingOutput(
    of: descriptor, isOwn: { lines in lines.map { line in ownPrefixes.contains { line.hasPrefix($0) } } }, body)
}

/// Runs `body`, which records issues that the test expects (inside `withKnownIssue`), with standard error
/// captured, and drops Swift Testing's report of the known issues recorded meanwhile ("… recorded a known
/// issue at …", with the issue's message), so that a passing run does not print lines that read like
/// failures. Everything else written meanwhile (other tests' output, real failures) is written on.
public func withKnownIssueOutputCaptured(_ body: () async throws -> Void) async throws {
  _ = try await capturingOutput(of: STDERR_FILENO, isOwn: knownIssueReportLines, body)
}

/// Runs `body` with standard error captured, and returns the lines written meanwhile that start with
/// `prefix` (dropping them from the output); for tests of code that prints a warning on purpose.
public func capturingWarnings(startingWith prefix: String, _ body: () async throws -> Void) async throws
  -> [String]
{
  let output = try await capturingOutput(of: STDERR_FILENO, ownPrefixes: [prefix], body)
  return output.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map(String.init)
}

/// For each captured line, whether it belongs to Swift Testing's report of a known issue: the header line,
/// then the `↳` lines of its comments and their indented continuation lines.
public func knownIssueReportLines(_ lines: [Substring]) -> [Bool] {
  var inReport = false
  return lines.map { line in
    if line.contains(" recorded a known issue") {
      inReport = true
    } else if inReport, !(line.hasPrefix("↳ ") || line.hasPrefix(" ")) {
      inReport = false
    }
    return inReport
  }
}

/// The capture itself: `isOwn` tells, line by line, which captured lines the caller keeps (they are
/// returned, and not written on).
func capturingOutput(
  of descriptor: Int32, isOwn: @escaping @Sendable ([Substring]) -> [Bool], _ body: () async throws -> Void
) async throws -> String {
  let turn = CaptureTurns.shared
  await turn.acquire(descriptor)
  defer { turn.release(descriptor) }
  let pipe = Pipe()
  fflush(nil)  // what C stdio buffered before the redirection goes to the real descriptor
  let saved = dup(descriptor)
  guard saved >= 0, dup2(pipe.fileHandleForWriting.fileDescriptor, descriptor) >= 0 else {
    if saved >= 0 { close(saved) }
    throw CocoaError(.fileWriteUnknown)
  }
  // Drained while the body runs, so that a writer never blocks on a full pipe. The capture ends at a marker
  // written last, not at the end of the pipe: a child process started meanwhile (the thread sanitizer's
  // symbolizer, started the first time it symbolizes a report, suppressed ones included) inherits the
  // redirected descriptor and keeps the pipe open for as long as it lives.
  let marker = Data("\u{1}katana-capture-end-\(UInt64.random(in: 0...UInt64.max))\n".utf8)
  let reader = PipeReader(pipe.fileHandleForReading, marker: marker)
  let outcome: Result<Void, any Error>
  do {
    try await body()
    outcome = .success(())
  } catch {
    outcome = .failure(error)
  }
  fflush(nil)  // `print` buffers in C stdio: push what the body printed into the pipe
  pipe.fileHandleForWriting.write(marker)
  dup2(saved, descriptor)
  close(saved)
  try pipe.fileHandleForWriting.close()
  let captured = String(decoding: reader.waitForEnd(), as: UTF8.self)
  let lines = captured.split(separator: "\n")
  let own = isOwn(lines)
  let others = zip(lines, own).filter { !$0.1 }.map(\.0)
  if !others.isEmpty {
    let forwarded = others.joined(separator: "\n") + "\n"
    FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(Data(forwarded.utf8))
  }
  try outcome.get()
  return captured
}

/// Reads a pipe on a thread of its own, up to `marker` (or its end, if the marker never comes); what comes after
/// the marker (from a child process that inherited the pipe) is read and dropped until the pipe ends.
private final class PipeReader: @unchecked Sendable {
  // Sendable: `data` is written by the reading thread before it signals `done`, and read after `wait`.
  private var data = Data()
  private let done = DispatchSemaphore(value: 0)

  init(_ handle: FileHandle, marker: Data) {
    Thread.detachNewThread { [self] in
      var buffer = Data()
      var ended = false
      while true {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        if ended { continue }
        buffer.append(chunk)
        if let range = buffer.range(of: marker) {
          data = buffer[..<range.lowerBound]
          ended = true
          done.signal()
        }
      }
      if !ended {
        data = buffer
        done.signal()
      }
    }
  }

  func waitForEnd() -> Data {
    done.wait()
    return data
  }
}

/// Makes captures of the same descriptor take turns, process-wide: a redirection is process-wide state.
final class CaptureTurns: Sendable {
  static let shared = CaptureTurns()

  private struct Turns {
    var busy: Set<Int32> = []
    var waiters: [(descriptor: Int32, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = LockedValue(Turns())

  func acquire(_ descriptor: Int32) async {
    await withCheckedContinuation { continuation in
      let acquired = state.withLock { turns -> Bool in
        if turns.busy.insert(descriptor).inserted { return true }
        turns.waiters.append((descriptor, continuation))
        return false
      }
      if acquired { continuation.resume() }
    }
  }

  func release(_ descriptor: Int32) {
    let next = state.withLock { turns -> CheckedContinuation<Void, Never>? in
      guard let index = turns.waiters.firstIndex(where: { $0.descriptor == descriptor }) else {
        turns.busy.remove(descriptor)
        return nil
      }
      return turns.waiters.remove(at: index).continuation
    }
    next?.resume()
  }
}
