import Foundation

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
/// is lost.
public func capturingOutput(
  of descriptor: Int32, ownPrefixes: [String], _ body: () async throws -> Void
) async throws -> String {
  let pipe = Pipe()
  fflush(nil)  // what C stdio buffered before the redirection goes to the real descriptor
  let saved = dup(descriptor)
  guard saved >= 0, dup2(pipe.fileHandleForWriting.fileDescriptor, descriptor) >= 0 else {
    throw CocoaError(.fileWriteUnknown)
  }
  let outcome: Result<Void, any Error>
  do {
    try await body()
    outcome = .success(())
  } catch {
    outcome = .failure(error)
  }
  fflush(nil)  // `print` buffers in C stdio: push what the body printed into the pipe
  dup2(saved, descriptor)
  close(saved)
  try pipe.fileHandleForWriting.close()
  let captured = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  let others = captured.split(separator: "\n").filter { line in !ownPrefixes.contains { line.hasPrefix($0) } }
  if !others.isEmpty {
    let forwarded = others.joined(separator: "\n") + "\n"
    FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(Data(forwarded.utf8))
  }
  try outcome.get()
  return captured
}
