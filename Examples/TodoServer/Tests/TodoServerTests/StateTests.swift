import Foundation
import Katana
import OrderedCollections
import PostgresNIO
import Testing

@testable import TodoServer

/// How the state takes the database's changes: in sequence order, each once.
@Suite("Applying changes")
struct ApplyingChangesTests {
  let todo = Todo(id: UUID(), title: "milk", completed: false)

  @Test func apply_theNextChange_appliesItAndTakesItsNumber() {
    var state = TodoState()

    #expect(state.apply(SequencedChange(sequence: 1, change: .created(todo: todo))) == .applied)
    #expect(state.apply(SequencedChange(sequence: 2, change: .completed(id: todo.id))) == .applied)

    #expect(state.sequence == 2)
    #expect(state.todos[todo.id]?.completed == true)
  }

  @Test func apply_aChangeAlreadyApplied_changesNothing() {
    var state = TodoState()
    state.apply(SequencedChange(sequence: 1, change: .created(todo: todo)))
    state.apply(SequencedChange(sequence: 2, change: .deleted(id: todo.id)))
    let before = state

    #expect(state.apply(SequencedChange(sequence: 1, change: .created(todo: todo))) == .alreadyApplied)
    #expect(state == before)
  }

  @Test func apply_aChangeAfterAMissingOne_changesNothing() {
    var state = TodoState()

    #expect(state.apply(SequencedChange(sequence: 2, change: .created(todo: todo))) == .gap(expected: 1))
    #expect(state == TodoState())
  }

  @Test func commitChanges_withRepeatsAndAGap_appliesTheContiguousNewOnesOnly() {
    let other = Todo(id: UUID(), title: "eggs", completed: false)
    var state = TodoState(todos: [todo], sequence: 1)

    CommitChanges([
      SequencedChange(sequence: 1, change: .created(todo: todo)),
      SequencedChange(sequence: 2, change: .created(todo: other)),
      SequencedChange(sequence: 4, change: .deleted(id: todo.id)),
    ]).updateState(&state)

    #expect(state == TodoState(todos: [todo, other], sequence: 2))
  }
}

/// The gate requests wait on until their change is applied.
@Suite("Sequence gate", .timeLimit(.minutes(1)))
struct SequenceGateTests {
  @Test func wait_returnsOnceAdvancedFarEnough() async throws {
    let gate = SequenceGate()
    try await gate.wait(until: 0)

    async let waited: Void = gate.wait(until: 3)
    gate.advance(to: 2)
    gate.advance(to: 3)

    try await waited
  }

  @Test func wait_whenCancelled_throwsCancellationError() async throws {
    let gate = SequenceGate()
    let waiter = Task { try await gate.wait(until: 1) }

    waiter.cancel()

    await #expect(throws: CancellationError.self) { try await waiter.value }
  }

  @Test func stop_failsWaitersAndLaterWaitsWithClosed() async throws {
    let gate = SequenceGate()
    gate.advance(to: 1)
    let waiter = Task { try await gate.wait(until: 5) }

    gate.stop()

    await #expect(throws: TodoDatabaseError.closed) { try await waiter.value }
    await #expect(throws: TodoDatabaseError.closed) { try await gate.wait(until: 2) }
    try await gate.wait(until: 1)
  }

  @Test func manyWaiters_raceWithAdvancesAndCancellation_allSettle() async throws {
    let gate = SequenceGate()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 1...200 {
        group.addTask {
          let waiter = Task { try await gate.wait(until: Int64(index)) }
          if index.isMultiple(of: 3) { waiter.cancel() }
          do {
            try await waiter.value
          } catch is CancellationError {
            #expect(index.isMultiple(of: 3))
          }
        }
      }
      group.addTask {
        for value in 1...200 {
          gate.advance(to: Int64(value))
          await Task.yield()
        }
      }
      try await group.waitForAll()
    }
  }
}

/// `DATABASE_URL` parsing.
@Suite("Database URL")
struct DatabaseURLTests {
  @Test func url_withEverything_givesTheConfiguration() throws {
    let url = try DatabaseURL("postgres://todo:s3cret@db.example:6543/todos")

    #expect(url.configuration.host == "db.example")
    #expect(url.configuration.port == 6543)
    #expect(url.configuration.username == "todo")
    #expect(url.configuration.password == "s3cret")
    #expect(url.configuration.database == "todos")
    #expect(!url.redacted.contains("s3cret"))
  }

  @Test func url_withDefaults_usesPort5432AndNoDatabaseName() throws {
    let url = try DatabaseURL("postgresql://todo@127.0.0.1")

    #expect(url.configuration.port == 5432)
    #expect(url.configuration.database == nil)
    #expect(url.configuration.password == nil)
  }

  @Test(arguments: [
    "mysql://todo@host/db", "postgres:///db", "postgres://host/db", "not a url", "postgres://u@h/db?sslmode=maybe",
  ])
  func url_thatCannotBeUsed_throwsAMessageThatShowsTheForm(_ text: String) {
    #expect {
      try DatabaseURL(text)
    } throws: { error in
      String(describing: error).contains("postgres://USER")
    }
  }
}
