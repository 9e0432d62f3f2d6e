import Foundation
import KatanaTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The tests' output capture (KatanaTestSupport), which the tests that expect issues or warnings rely on.
@Suite("Output capture", .serialized, .timeLimit(.failsafeMinutes(3)))
struct OutputCaptureTests {
  /// A child process started during a capture inherits the redirected descriptor and keeps the pipe open (the
  /// thread sanitizer's symbolizer does this): the capture must end anyway, with what the test wrote. It used to
  /// wait for the pipe's end, so it waited for the child, and every later capture waited behind it.
  @Test func aChildProcessHoldingThePipe_doesNotKeepTheCaptureOpen() async throws {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/bin/sleep")
    child.arguments = ["600"]
    // Its standard output must not be the test runner's pipe, which `swift test` reads to its end.
    child.standardInput = FileHandle.nullDevice
    child.standardOutput = FileHandle.nullDevice
    let warnings = try await capturingWarnings(startingWith: "capture-test:") {
      // Without its own standard error, the child inherits the process's: the capture's pipe.
      try child.run()
      FileHandle.standardError.write(Data("capture-test: written before the capture ends\n".utf8))
    }
    let stillRunning = child.isRunning
    // SIGKILL: a child started from a test thread may inherit a signal mask that blocks SIGTERM.
    kill(child.processIdentifier, SIGKILL)
    child.waitUntilExit()
    #expect(stillRunning, "the child ended before the capture did: nothing was checked")
    #expect(warnings == ["capture-test: written before the capture ends"])
  }
}
