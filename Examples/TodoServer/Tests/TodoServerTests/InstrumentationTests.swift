import Foundation
import InMemoryTracing
import Katana
import MetricsTestKit
import Testing
import Tracing

@testable import TodoServer

/// The store's dispatches feed swift-metrics and swift-distributed-tracing through its interceptors.
@Suite("Instrumentation", .timeLimit(.minutes(1)))
struct InstrumentationTests {
  @Test func dispatches_recordATimerAndCountersPerItemType() async throws {
    let metrics = TestMetrics()
    let store = makeTodoStore(
      database: try SQLiteTodoDatabase.inMemory(),
      interceptors: TodoInstrumentation(metricsFactory: metrics, tracer: NoOpTracer()).interceptors)

    let todo = try await store.dispatch(CreateTodo(title: "measured"))
    _ = try await store.dispatch(CompleteTodo(id: todo.id))
    await #expect(throws: TodoError.self) { try await store.dispatch(CompleteTodo(id: UUID())) }
    await store.shutdown()

    func count(_ type: String, _ outcome: String) -> Int64 {
      metrics.counterTotal(label: "katana_dispatches_total", dimensions: [("type", type), ("outcome", outcome)])
    }
    #expect(count("CreateTodo", "success") == 1)
    #expect(count("CompleteTodo", "success") == 1)
    #expect(count("CompleteTodo", "failure") == 1)
    #expect(count("CommitChanges", "success") == 2)
    let createTimers = metrics.timers(
      label: "katana_dispatch_duration", dimensions: [("type", "CreateTodo"), ("kind", "sideEffect")])
    #expect(createTimers.first?.values.count == 1)
    let commitTimers = metrics.timers(
      label: "katana_dispatch_duration", dimensions: [("type", "CommitChanges"), ("kind", "stateUpdater")])
    #expect(commitTimers.first?.values.count == 2)
  }

  @Test func dispatchSpans_joinTheCallersSpan_andTheCommitJoinsTheSideEffect() async throws {
    let tracer = InMemoryTracer()
    let store = makeTodoStore(
      database: try SQLiteTodoDatabase.inMemory(),
      interceptors: TodoInstrumentation(metricsFactory: TestMetrics(), tracer: tracer).interceptors)
    try await store.waitUntilReady()

    try await tracer.withSpan("POST /todos") { _ in
      _ = try await store.dispatch(CreateTodo(title: "traced"))
    }
    await #expect(throws: TodoError.self) { try await store.dispatch(CompleteTodo(id: UUID())) }
    await store.shutdown()

    let spans = tracer.finishedSpans
    let request = try #require(spans.first { $0.operationName == "POST /todos" })
    let create = try #require(spans.first { $0.operationName == "CreateTodo" })
    let commit = try #require(spans.first { $0.operationName == "CommitChanges" })
    let failed = try #require(spans.first { $0.operationName == "CompleteTodo" })
    #expect(create.parentSpanID == request.spanID)
    #expect(commit.parentSpanID == create.spanID)
    #expect(commit.traceID == request.traceID)
    #expect(create.attributes["katana.kind"]?.toSpanAttribute() == "sideEffect")
    #expect(failed.errors.count == 1)
    #expect(failed.traceID != request.traceID)
  }
}
