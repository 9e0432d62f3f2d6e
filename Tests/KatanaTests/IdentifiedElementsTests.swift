import Foundation
import Katana
import Testing

struct IdentifiedRow: Identifiable, Equatable {
  var id: Int
  var title = ""
}

@Suite("Arrays of identified elements: by id")
struct IdentifiedElementsTests {
  let rows = [IdentifiedRow(id: 1, title: "a"), IdentifiedRow(id: 2, title: "b"), IdentifiedRow(id: 3, title: "c")]

  @Test func findReadReplaceAndRemove_byID() {
    var rows = self.rows
    #expect(rows.index(id: 2) == 1 && rows.index(id: 9) == nil)
    #expect(rows[id: 3]?.title == "c" && rows[id: 9] == nil)
    rows[id: 2]?.title = "B"
    #expect(rows.map(\.title) == ["a", "B", "c"])
    rows[id: 1] = nil
    #expect(rows.map(\.id) == [2, 3])
    rows[id: 7] = IdentifiedRow(id: 7)
    #expect(rows.map(\.id) == [2, 3, 7])
    #expect(rows.remove(id: 3)?.title == "c" && rows.remove(id: 3) == nil)
    #expect(rows.map(\.id) == [2, 7])
  }

  @Test func duplicates_concernTheFirst() {
    var rows = [IdentifiedRow(id: 1, title: "x"), IdentifiedRow(id: 1, title: "y")]
    #expect(rows[id: 1]?.title == "x")
    rows.remove(id: 1)
    #expect(rows.map(\.title) == ["y"])
  }

  /// `move(fromOffsets:toOffset:)` against a plain model of SwiftUI's rule, on every subset of offsets and every
  /// destination of a five-element array.
  @Test func move_matchesRemovingThenInsertingBeforeTheDestination() {
    let ids = Array(0..<5)
    for mask in 0..<(1 << ids.count) {
      let offsets = ids.filter { mask & (1 << $0) != 0 }
      for destination in 0...ids.count {
        var moved = ids.map { IdentifiedRow(id: $0) }
        moved.move(fromOffsets: offsets, toOffset: destination)
        // The model: take the moved elements out; insert them before the element that was at `destination`.
        let staying = ids.filter { !offsets.contains($0) }
        let insertAt = staying.filter { $0 < destination }.count
        var expected = staying
        expected.insert(contentsOf: offsets, at: insertAt)
        #expect(moved.map(\.id) == expected, "offsets \(offsets) to \(destination)")
      }
    }
  }

  /// `remove(atOffsets:)` against a plain model, on every subset of offsets of a five-element array, with offsets out
  /// of range and repeated ones mixed in.
  @Test func removeAtOffsets_removesExactlyTheElementsAtThoseOffsets() {
    let ids = Array(0..<5)
    for mask in 0..<(1 << ids.count) {
      let offsets = ids.filter { mask & (1 << $0) != 0 }
      var removed = ids.map { IdentifiedRow(id: $0) }
      removed.remove(atOffsets: offsets + offsets.prefix(1) + [-1, 5, 99])
      #expect(removed.map(\.id) == ids.filter { !offsets.contains($0) }, "offsets \(offsets)")
    }
  }

  /// What SwiftUI's `onMove` and `onDelete` hand over, Foundation's `IndexSet`, goes in as it is (and so do ranges),
  /// without `Katana` importing Foundation.
  @Test func offsets_takeAnIndexSetOrARange() {
    var rows = self.rows
    rows.move(fromOffsets: IndexSet([0, 2]), toOffset: 2)
    #expect(rows.map(\.id) == [2, 1, 3])
    rows.move(fromOffsets: 1..<3, toOffset: 0)
    #expect(rows.map(\.id) == [1, 3, 2])
    rows.remove(atOffsets: IndexSet(integer: 1))
    #expect(rows.map(\.id) == [1, 2])
    rows.remove(atOffsets: 0...1)
    #expect(rows.isEmpty)
  }
}
