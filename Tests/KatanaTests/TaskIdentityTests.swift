import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

/// `TaskIdentity.current` reads the current task's optional as it lies (nil the null pointer): it must give nil outside
/// of any task, the identity `TaskIdentity(_:)` takes from the task inside one, and different identities for tasks alive
/// at once.
@Suite("Task identity")
struct TaskIdentityTests {
  @Test func current_isNilOnAThreadWithoutATask() async {
    let identity = await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: TaskIdentity.current) }.start()
    }
    #expect(identity == nil)
  }

  @Test func current_isTheIdentityOfTheRunningTask() async throws {
    let taken = try #require(withUnsafeCurrentTask { task in task.map(TaskIdentity.init) })
    #expect(TaskIdentity.current == taken)
    #expect(taken.address != 0)
  }

  @Test func current_differsBetweenTasksAliveAtOnce() async throws {
    // Each task waits until all have taken their identity: none has ended, so none could share its memory.
    let arrived = EventCounter()
    let release = Gate()
    let tasks = (0..<8).map { _ in
      Task {
        let identity = TaskIdentity.current
        arrived.increment()
        await release.wait()
        return identity
      }
    }
    await arrived.wait(for: tasks.count)
    release.open()
    var identities: [TaskIdentity?] = []
    for task in tasks { identities.append(await task.value) }
    #expect(!identities.contains(nil))
    #expect(Set(identities.compactMap { $0 }).count == tasks.count)
  }
}
