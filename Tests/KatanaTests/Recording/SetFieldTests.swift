import Foundation
import Katana
import KatanaRecordingLog
import KatanaTestSupport
import Testing

struct FieldRoom: FeatureState, Equatable, Codable, Identifiable {
  let id: String
  var topic = ""
  var unread = 0
}

struct FieldAppState: State, Equatable, Codable {
  var query = ""
  var count = 0
  var limit = 0
  var notes = LogNotes()
  var draft: LogNotes?
  var rooms: [FieldRoom] = [FieldRoom(id: "a"), FieldRoom(id: "b")]
}

typealias FieldStore = Store<FieldAppState, EmptySideEffectDependencyContainer>

func fieldRegistry() -> ReplayRegistry<FieldAppState> {
  var registry = ReplayRegistry<FieldAppState>()
  registry.register(field: \.query, as: "query.set")
  // Two fields of one value type: one entry each.
  registry.register(field: \.count, as: "count.set")
  registry.register(field: \.limit, as: "limit.set")
  registry.register(field: \LogNotes.lines, as: "notes.lines.set", at: \.notes)
  registry.register(field: \LogNotes.lines, as: "draft.lines.set", at: \.draft)
  registry.register(field: \FieldRoom.topic, as: "rooms.topic.set", onElementsOf: \.rooms)
  return registry
}

@Suite("SetField: one updater that sets a field", .timeLimit(.failsafeMinutes(3)))
struct SetFieldTests {
  @Test func setsItsField_comparesByFieldAndValue_andSaysWhatItSets() async throws {
    let store = FieldStore(initialState: FieldAppState())
    try await store.dispatch(SetField(\.query, "milk"))
    try await store.scope(\.rooms, id: "b", dependencies: \.self).dispatch(SetField(\.topic, "news"))
    #expect(store.state.query == "milk")
    #expect(store.state.rooms.map(\.topic) == ["", "news"])
    #expect(SetField(\FieldAppState.count, 1) == SetField(\.count, 1))
    #expect(SetField(\FieldAppState.count, 1) != SetField(\.limit, 1))
    #expect(SetField(\FieldAppState.count, 1) != SetField(\.count, 2))
    #expect(String(describing: SetField(\FieldAppState.query, "milk")) == #"SetField(\FieldAppState.query, "milk")"#)
  }

  /// Set through the root, a feature's field, an optional feature's field and an element's field, written to a log
  /// with the registry's names and read back: the same states.
  @Test func aSessionOfFieldSetters_writtenAndReadBack_replaysToTheSameStates() async throws {
    let recorder = StoreRecorder<FieldAppState>(checkpointInterval: 2)
    let store = FieldStore(initialState: FieldAppState(), interceptors: [recorder.interceptor])
    try await store.dispatch(SetField(\.query, "milk"))
    try await store.dispatch(SetField(\.count, 3))
    try await store.dispatch(SetField(\.limit, 9))
    try await store.scope(\.notes, dependencies: \.self).dispatch(SetField(\.lines, ["one"]))
    try await store.dispatch(SetField(\.draft, LogNotes()))
    try await store.scope(\.draft, dependencies: \.self).dispatch(SetField(\.lines, ["two"]))
    try await store.scope(\.rooms, id: "b", dependencies: \.self).dispatch(SetField(\.topic, "news"))
    let recording = recorder.recording()
    // The optional field set whole is not registered: written by name only.
    var registry = fieldRegistry()
    registry.register(field: \.draft, as: "draft.set")
    let text = try RecordingLog.encode(recording, registry: registry)
    #expect(text.contains(#""type":"count.set""#) && text.contains(#""type":"limit.set""#))
    #expect(text.contains(#""type":"rooms.topic.set""#) && text.contains(#""element":"b""#))
    #expect(!text.contains(#""registered":false"#))
    let read = try RecordingLog.decode(text, registry: registry)
    #expect(try read.replayedStates() == recording.replayedStates())
    #expect(try read.replayedState() == store.state)
  }

  /// A field that is not registered is written by name only, and replay stops at it, as for any unregistered
  /// updater: registering another field of the same type does not cover it.
  @Test func anUnregisteredField_isWrittenByNameOnly() async throws {
    let recorder = StoreRecorder<FieldAppState>()
    let store = FieldStore(initialState: FieldAppState(), interceptors: [recorder.interceptor])
    try await store.dispatch(SetField(\.count, 3))
    var registry = ReplayRegistry<FieldAppState>()
    registry.register(field: \.limit, as: "limit.set")
    let text = try RecordingLog.encode(recorder.recording(), registry: registry)
    #expect(text.contains(#""registered":false"#))
    let read = try RecordingLog.decode(text, registry: registry)
    #expect(throws: ReplayError.self) { try read.replayedState() }
  }

  #if canImport(Observation)
    /// A binding that only sets its field sends `SetField`, on a model of the store and on a row's model (a feature
    /// state without `init()`).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    @Test func fieldBinding_withoutAnUpdater_sendsSetField() async throws {
      let sent = Recorder<String>()
      var configuration = StoreConfiguration()
      configuration.dispatchObservers = [DispatchObserver(willHandle: { item in sent.append("\(item)") })]
      let store = FieldStore(initialState: FieldAppState(), configuration: configuration)
      try await store.waitUntilReady()
      let model = ObservableStore(store: store)
      let query = model.fieldBinding(\.query)
      query.set("milk")
      let row = try #require(ObservableStore(scope: store.scope(\.rooms, id: "a", dependencies: \.self)))
      row.fieldBinding(\.topic).set("news")
      // Awaited after both sends: the store has applied them, in order.
      try await store.dispatch(SetField(\.count, 1))
      #expect(store.state.query == "milk" && store.state.rooms[0].topic == "news")
      #expect(
        sent.values.prefix(2) == [#"SetField(\FieldAppState.query, "milk")"#, #"SetField(\FieldRoom.topic, "news")"#])
    }
  #endif
}
