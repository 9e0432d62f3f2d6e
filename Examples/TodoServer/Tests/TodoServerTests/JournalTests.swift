import Foundation
import Katana
import OrderedCollections
import Testing
import TodoServer

/// The journal on its own: the file format, recovery, and misuse.
@Suite("Journal", .timeLimit(.minutes(1)))
struct JournalTests {
  @Test func load_withoutFile_startsEmptyAndCreatesIt() async throws {
    try await withJournalURL { url in
      let journal = TodoJournal(fileURL: url)
      defer { journal.close() }

      let state = try journal.load()

      #expect(state == TodoState())
      #expect(FileManager.default.fileExists(atPath: url.path))
    }
  }

  @Test func append_writesOneJSONLinePerChange() async throws {
    try await withJournalURL { url in
      let journal = TodoJournal(fileURL: url)
      _ = try journal.load()
      let todo = Todo(id: UUID(), title: "line\nbreak \"quoted\"", completed: false)

      try journal.append(.created(todo: todo))
      try journal.append(.completed(id: todo.id))
      journal.close()

      let text = try String(contentsOf: url, encoding: .utf8)
      #expect(text.split(separator: "\n").count == 2)
      #expect(text.hasSuffix("\n"))
      #expect(try journalChanges(at: url) == [.created(todo: todo), .completed(id: todo.id)])
    }
  }

  @Test func load_replaysChangesInOrder() async throws {
    try await withJournalURL { url in
      let a = Todo(id: UUID(), title: "a", completed: false)
      let b = Todo(id: UUID(), title: "b", completed: false)
      try writeJournal(
        [
          journalLine(.created(todo: a)), journalLine(.created(todo: b)), journalLine(.completed(id: b.id)),
          journalLine(.deleted(id: a.id)),
        ], to: url)

      let state = try restoredState(from: url)

      #expect(Array(state.todos.values) == [Todo(id: b.id, title: "b", completed: true)])
    }
  }

  @Test func load_withCorruptLine_throwsWithItsNumberAndLeavesTheFile() async throws {
    try await withJournalURL { url in
      let todo = Todo(id: UUID(), title: "a", completed: false)
      try writeJournal([journalLine(.created(todo: todo)), #"{"renamed": {"id": "x"}}"#], to: url)
      let contents = try Data(contentsOf: url)

      #expect {
        try restoredState(from: url)
      } throws: { error in
        guard case JournalError.corrupt(let path, let line, _) = error else { return false }
        return path == url.path && line == 2
      }
      #expect(try Data(contentsOf: url) == contents)
    }
  }

  @Test func append_beforeLoadOrAfterClose_throwsNotOpen() async throws {
    try await withJournalURL { url in
      let journal = TodoJournal(fileURL: url)
      let change = TodoChange.deleted(id: UUID())

      #expect(throws: JournalError.notOpen) { try journal.append(change) }
      _ = try journal.load()
      journal.close()
      #expect(throws: JournalError.notOpen) { try journal.append(change) }
    }
  }

  @Test func load_calledTwice_throwsAlreadyLoaded() async throws {
    try await withJournalURL { url in
      let journal = TodoJournal(fileURL: url)
      defer { journal.close() }
      _ = try journal.load()

      #expect(throws: JournalError.alreadyLoaded) { try journal.load() }
    }
  }

  @Test func inMemoryJournal_keepsNothingAndClosesLikeAFile() throws {
    let journal = TodoJournal.inMemory()

    #expect(try journal.load() == TodoState())
    try journal.append(.created(todo: Todo(id: UUID(), title: "gone", completed: false)))
    #expect(journal.fileURL == nil)
    journal.close()
    #expect(throws: JournalError.notOpen) { try journal.append(.deleted(id: UUID())) }
  }
}
