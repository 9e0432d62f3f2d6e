/// What scoping over identified elements needs, on any array of `Identifiable` values: find, read, replace,
/// remove and move elements by their ids, as a store's state updaters do for the elements features are
/// mounted on (`store.scope(\.rooms, id: 3, ...)`).
///
/// ```swift
/// struct RemoveRoom: StateUpdater {
///   let id: Room.ID
///   func updateState(_ state: inout AppState) { state.rooms.remove(id: id) }
/// }
/// ```
///
/// Each operation finds an element by scanning from the front and stops at the first element with the id, as
/// `scope(_:id:dependencies:)` does: O(n) in the array's length. (An array keeps the order users see; for
/// collections of many thousands of elements looked up on every change, keep a dictionary from id to index in
/// the state beside it.) Ids are expected to be unique; with duplicates, each operation concerns the first.
extension Array where Element: Identifiable {
  /// The position of the first element with identifier `id`, or nil. O(n).
  public func index(id: Element.ID) -> Int? {
    firstIndex { $0.id == id }
  }

  /// The first element with identifier `id`, or nil; setting replaces it (the element set keeps its place,
  /// whatever its own id), setting nil removes it, and setting a value where no element has the id appends it.
  /// O(n), plus O(n) to remove.
  public subscript(id id: Element.ID) -> Element? {
    get { index(id: id).map { self[$0] } }
    set {
      switch (index(id: id), newValue) {
      case (let index?, let element?): self[index] = element
      case (let index?, nil): remove(at: index)
      case (nil, let element?): append(element)
      case (nil, nil): break
      }
    }
  }

  /// Removes the first element with identifier `id`, and returns it; nil if there is none. O(n).
  @discardableResult
  public mutating func remove(id: Element.ID) -> Element? {
    index(id: id).map { remove(at: $0) }
  }

  /// Moves the elements at `offsets` so that they stand, in their order, before the element that was at
  /// `destination` (the array's length: at the end), as SwiftUI's `onMove` reports a drag. Offsets out of range
  /// are ignored, and so are repeated ones. O(n + k) for k offsets.
  ///
  /// `offsets` is any sequence of offsets: the `IndexSet` that `onMove` gives (Foundation's, which this module
  /// does not import), an array or a range. Where SwiftUI is imported, SwiftUI's own `move(fromOffsets:toOffset:)`,
  /// which takes an `IndexSet` and does the same, is the one chosen for an `IndexSet`.
  public mutating func move(fromOffsets offsets: some Sequence<Int>, toOffset destination: Int) {
    let moving = Set(offsets.filter { indices.contains($0) })
    guard !moving.isEmpty else { return }
    let target = Swift.min(Swift.max(destination, 0), count)
    var before: [Element] = []
    var moved: [Element] = []
    var after: [Element] = []
    for (offset, element) in enumerated() {
      if moving.contains(offset) {
        moved.append(element)
      } else if offset < target {
        before.append(element)
      } else {
        after.append(element)
      }
    }
    self = before + moved + after
  }

  /// Removes the elements at `offsets`, as SwiftUI's `onDelete` reports a swipe. Offsets out of range are ignored,
  /// and so are repeated ones. O(n + k) for k offsets.
  ///
  /// `offsets` is any sequence of offsets: the `IndexSet` that `onDelete` gives (Foundation's, which this module
  /// does not import), an array or a range. Where SwiftUI is imported, SwiftUI's own `remove(atOffsets:)`, which
  /// takes an `IndexSet` and does the same, is the one chosen for an `IndexSet`.
  public mutating func remove(atOffsets offsets: some Sequence<Int>) {
    let removing = Set(offsets.filter { indices.contains($0) })
    guard !removing.isEmpty else { return }
    var kept: [Element] = []
    kept.reserveCapacity(count - removing.count)
    for (offset, element) in enumerated() where !removing.contains(offset) {
      kept.append(element)
    }
    self = kept
  }
}
