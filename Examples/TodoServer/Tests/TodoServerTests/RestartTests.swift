import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import OrderedCollections
import Testing
import TodoServer

/// The state survives a restart: the next server restores it from the journal through the store's async
/// state initializer.
@Suite("Restart", .timeLimit(.minutes(1)))
struct RestartTests {
  @Test func restart_restoresTheStateTheServerHad() async throws {
    try await withJournalURL { url in
      let before = try await withLiveServer(journalURL: url) { server in
        let milk = try await server.client.createTodo("milk")
        let eggs = try await server.client.createTodo("eggs")
        _ = try await server.client.createTodo("bread")
        _ = try await server.client.execute(uri: "/todos/\(milk.id)/complete", method: .post)
        _ = try await server.client.execute(uri: "/todos/\(eggs.id)", method: .delete)
        return try await server.client.execute(uri: "/todos", method: .get).decoded(as: [Todo].self)
      }
      #expect(before.map(\.title) == ["milk", "bread"])

      let after = try await withLiveServer(journalURL: url) { server in
        try await server.client.execute(uri: "/todos", method: .get).decoded(as: [Todo].self)
      }

      #expect(after == before)
    }
  }

  @Test func restart_compactsTheJournalToOneLinePerLiveTodo() async throws {
    try await withJournalURL { url in
      let todos = try await withLiveServer(journalURL: url) { server in
        let first = try await server.client.createTodo("first")
        let second = try await server.client.createTodo("second")
        _ = try await server.client.execute(uri: "/todos/\(first.id)/complete", method: .post)
        _ = try await server.client.execute(uri: "/todos/\(second.id)", method: .delete)
        return Array(server.store.state.todos.values)
      }
      #expect(try journalChanges(at: url).count == 4)

      try await withLiveServer(journalURL: url) { server in
        #expect(Array(server.store.state.todos.values) == todos)
      }

      #expect(try journalChanges(at: url) == todos.map { .created(todo: $0) })
    }
  }

  @Test func restart_afterCrashMidWrite_dropsTheTornLastLineAndKeepsWorking() async throws {
    try await withJournalURL { url in
      let saved = Todo(id: UUID(), title: "saved", completed: false)
      let torn = try journalLine(.created(todo: Todo(id: UUID(), title: "never acknowledged", completed: false)))
      try writeJournal([journalLine(.created(todo: saved))], tail: String(torn.prefix(20)), to: url)

      try await withLiveServer(journalURL: url) { server in
        #expect(Array(server.store.state.todos.values) == [saved])
        let added = try await server.client.createTodo("after the crash")
        #expect(try journalChanges(at: url) == [.created(todo: saved), .created(todo: added)])
      }
    }
  }

  @Test func start_withCorruptJournal_failsWithTheLineAndLeavesTheFileAlone() async throws {
    try await withJournalURL { url in
      let todo = Todo(id: UUID(), title: "fine", completed: false)
      try writeJournal(
        [journalLine(.created(todo: todo)), "{not json}", journalLine(.completed(id: todo.id))], to: url)
      let contents = try Data(contentsOf: url)
      let store = makeTodoStore(journal: TodoJournal(fileURL: url))

      let error = await #expect(throws: StoreError.self) { try await store.waitUntilReady() }

      guard case .startupFailed(let cause) = error, case JournalError.corrupt(_, let line, _) = cause else {
        Issue.record("expected a corrupt-journal start-up failure, got \(String(describing: error))")
        return
      }
      #expect(line == 2)
      await #expect(throws: StoreError.self) { try await store.dispatch(CreateTodo(title: "refused")) }
      #expect(try Data(contentsOf: url) == contents)
      await store.shutdown()
    }
  }

  @Test func application_withCorruptJournal_failsBeforeListening() async throws {
    try await withJournalURL { url in
      try writeJournal(["garbage"], to: url)
      let store = makeTodoStore(journal: TodoJournal(fileURL: url))
      let application = makeTodoApplication(
        store: store, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quietLogger())

      // The server waits for the store before it binds its port; the store's start-up error ends the run.
      await #expect(throws: StoreError.self) { try await application.run() }
    }
  }
}

/// Graceful shutdown: the HTTP server stops first, then the journal is closed and the store shut down.
@Suite("Shutdown", .timeLimit(.minutes(1)))
struct ShutdownTests {
  @Test func gracefulShutdown_closesTheJournalAndShutsTheStoreDown() async throws {
    try await withJournalURL { url in
      let (store, todo) = try await withLiveServer(journalURL: url) { server in
        (server.store, try await server.client.createTodo("last words"))
      }

      #expect(!store.isReady)
      #expect(Array(store.state.todos.values) == [todo])
      await #expect(throws: StoreError.storeShutDown) { try await store.dispatch(CreateTodo(title: "too late")) }
      #expect(throws: JournalError.notOpen) {
        try store.dependencies.journal.append(.deleted(id: todo.id))
      }
      #expect(try journalChanges(at: url) == [.created(todo: todo)])
    }
  }
}
