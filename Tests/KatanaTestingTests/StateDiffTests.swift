import KatanaTesting
import Testing

private struct Todo: Equatable {
  var title: String
  var done = false
}

private enum Status: Equatable {
  case idle
  case loading(query: String)
  case failed(message: String, code: Int)
}

private struct Nested: Equatable {
  var todos: [Todo] = []
  var scores: [String: Int] = [:]
  var selected: Todo?
  var note: String?
  var status = Status.idle
  var tags: Set<String> = []
  var pair = (1, "one")

  static func == (lhs: Nested, rhs: Nested) -> Bool {
    lhs.todos == rhs.todos && lhs.scores == rhs.scores && lhs.selected == rhs.selected && lhs.note == rhs.note
      && lhs.status == rhs.status && lhs.tags == rhs.tags && lhs.pair == rhs.pair
  }
}

private final class Node {
  var value: Int
  var next: Node?
  init(value: Int, next: Node? = nil) {
    self.value = value
    self.next = next
  }
}

@Suite("StateDiff")
struct StateDiffTests {
  private func diff(_ expected: Nested, _ actual: Nested) -> [String] {
    StateDiff.lines(expected: expected, actual: actual)
  }

  @Test func equalValues_haveNoDifference() {
    #expect(diff(Nested(), Nested()).isEmpty)
  }

  @Test func nestedStructFields_inArrays_areNamedByPath() {
    var expected = Nested()
    expected.todos = [Todo(title: "milk"), Todo(title: "eggs")]
    var actual = expected
    actual.todos[1].title = "bread"
    actual.todos[1].done = true
    #expect(
      diff(expected, actual) == [
        #"todos[1].title: expected "eggs", actual "bread""#,
        "todos[1].done: expected false, actual true",
      ])
  }

  @Test func arraysOfDifferentLengths_reportTheCountAndTheExtraElements() {
    var expected = Nested()
    expected.todos = [Todo(title: "milk")]
    var actual = expected
    actual.todos.append(Todo(title: "eggs"))
    #expect(
      diff(expected, actual) == [
        "todos.count: expected 1, actual 2",
        #"todos[1]: unexpected element Todo(title: "eggs", done: false)"#,
      ])
    #expect(
      diff(actual, expected) == [
        "todos.count: expected 2, actual 1",
        #"todos[1]: expected Todo(title: "eggs", done: false), actual no element"#,
      ])
  }

  @Test func dictionaries_areComparedKeyByKey() {
    var expected = Nested()
    expected.scores = ["ann": 3, "bob": 1]
    var actual = Nested()
    actual.scores = ["ann": 4, "cid": 2]
    #expect(
      diff(expected, actual) == [
        #"scores["ann"]: expected 3, actual 4"#,
        #"scores["bob"]: expected 1, actual no such key"#,
        #"scores["cid"]: unexpected key, with value 2"#,
      ])
  }

  @Test func optionals_showNilOrTheWrappedValue() {
    var expected = Nested()
    expected.note = "hello"
    expected.selected = Todo(title: "milk")
    var actual = Nested()
    actual.selected = Todo(title: "milk", done: true)
    #expect(
      diff(expected, actual) == [
        "selected.done: expected false, actual true",
        #"note: expected "hello", actual nil"#,
      ])
  }

  @Test func enums_differentCases_showTheWholeValue_sameCase_showsThePayloadField() {
    var expected = Nested()
    expected.status = .loading(query: "kat")
    var actual = Nested()
    #expect(diff(expected, actual) == [#"status: expected loading(query: "kat"), actual idle"#])
    expected.status = .failed(message: "offline", code: 1)
    actual.status = .failed(message: "offline", code: 2)
    #expect(diff(expected, actual) == ["status.failed.code: expected 1, actual 2"])
  }

  @Test func sets_reportMissingAndUnexpectedMembers() {
    var expected = Nested()
    expected.tags = ["a", "b"]
    var actual = Nested()
    actual.tags = ["b", "c"]
    #expect(
      diff(expected, actual) == [
        #"tags: expected to contain "a", actual does not"#,
        #"tags: unexpectedly contains "c""#,
      ])
  }

  @Test func tuples_areComparedByElement() {
    var actual = Nested()
    actual.pair = (1, "uno")
    #expect(diff(Nested(), actual) == [#"pair.1: expected "one", actual "uno""#])
  }

  @Test func classes_areComparedByField_andCyclesStop() {
    let expected = Node(value: 1, next: Node(value: 2))
    let actual = Node(value: 1, next: Node(value: 3))
    #expect(StateDiff.lines(expected: expected, actual: actual) == ["next.value: expected 2, actual 3"])
    let cycle = Node(value: 1)
    cycle.next = cycle
    let otherCycle = Node(value: 1)
    otherCycle.next = otherCycle
    #expect(StateDiff.lines(expected: cycle, actual: otherCycle).isEmpty)
  }

  @Test func manyDifferences_areCappedWithACount() {
    var expected = Nested()
    expected.todos = (0..<50).map { Todo(title: "\($0)") }
    var actual = expected
    for index in actual.todos.indices { actual.todos[index].done = true }
    let lines = StateDiff.lines(expected: expected, actual: actual, limit: 5)
    #expect(lines.count == 6)
    #expect(lines.last == "… and 45 more differences")
  }
}
