/// A minimal first-in first-out queue with amortised O(1) append, removal at the head, and access by offset
/// from the head; used for the store's mailbox and for stream buffers.
///
/// Storage grows by doubling and is released whenever the queue empties while holding more than
/// ``retainedCapacity`` slots, so that a burst does not keep its high-water memory forever.
///
/// The number of slots is always zero or a power of two (``grow()`` doubles from 8; nothing else sets it but to
/// empty), so a position wraps around with a mask (``slot(_:)``) rather than a division: an integer division was a
/// third of an in-place undo's own time.
@usableFromInline
struct RingBuffer<Element> {
  @usableFromInline var storage: [Element?] = []
  @usableFromInline var head = 0
  @usableFromInline private(set) var count = 0

  /// The most slots an empty buffer keeps.
  @usableFromInline static var retainedCapacity: Int { 64 }

  @inlinable
  init() {}

  @inlinable
  var isEmpty: Bool { count == 0 }

  /// The number of slots allocated.
  var capacity: Int { storage.count }

  @inlinable
  var first: Element? {
    count == 0 ? nil : storage[head]
  }

  /// The slot of `position` (the head's position plus an offset, below twice the slots' count): `position` modulo
  /// the slots' count, a power of two. Called only while the buffer has slots.
  @inlinable
  func slot(_ position: Int) -> Int {
    // Internal invariant (see the type's comment); checked in debug builds, which the tests run.
    assert(storage.count & (storage.count &- 1) == 0, "Katana internal error: ring buffer slots not a power of two")
    return position & (storage.count &- 1)
  }

  /// The element `offset` places after the head.
  @inlinable
  subscript(offset: Int) -> Element {
    get {
      // Internal invariant: callers pass an offset below `count`, and those slots always hold an element.
      precondition(offset >= 0 && offset < count, "Katana internal error: ring buffer offset out of range")
      guard let element = storage[slot(head + offset)] else {
        preconditionFailure("Katana internal error: ring buffer slot unexpectedly empty")
      }
      return element
    }
    set {
      precondition(offset >= 0 && offset < count, "Katana internal error: ring buffer offset out of range")
      storage[slot(head + offset)] = newValue
    }
  }

  /// Hands `body` a pointer to the element `offset` places after the head, in its slot: a large element (an undo
  /// history's entry, two existentials) is not copied out, with its references retained and released, to read one
  /// field. `body` reads through the pointer (`$0.pointee.field`), only while it runs.
  ///
  /// The element lies at its slot's address: an `Optional`'s payload is stored at its start (Swift's layout of a
  /// single-payload enum). Binding it (`case .some(let element)`) copied it out, a tenth of an undo's time; so did
  /// handing `body` the element itself, `borrowing` (its `pointee` was copied to pass it), where reading a field
  /// through the pointer copies that field alone.
  @inlinable
  func withElement<Result>(at offset: Int, _ body: (UnsafePointer<Element>) -> Result) -> Result {
    precondition(offset >= 0 && offset < count, "Katana internal error: ring buffer offset out of range")
    return storage.withUnsafeBufferPointer { slots in
      // Internal invariant: the slots of the `count` elements from the head always hold one (``append(_:)`` fills
      // them, the removals empty only slots they take out of that range). Checked in debug builds only: in release,
      // the check copied the element out, as the binding did (an undo and a redo 0.69 -> 0.83 µs).
      let slot = slots.baseAddress.unsafelyUnwrapped + slot(head + offset)
      assert(slot.pointee != nil, "Katana internal error: ring buffer slot unexpectedly empty")
      return body(UnsafeRawPointer(slot).assumingMemoryBound(to: Element.self))
    }
  }

  @inlinable
  mutating func append(_ element: Element) {
    if count == storage.count {
      grow()
    }
    storage[slot(head + count)] = element
    count += 1
  }

  @inlinable
  @discardableResult
  mutating func removeFirst() -> Element? {
    guard count > 0 else { return nil }
    let element = storage[head]
    storage[head] = nil
    head = slot(head + 1)
    count -= 1
    if count == 0 { resetEmptied() }
    return element
  }

  /// The newest element.
  @inlinable
  var last: Element? {
    count == 0 ? nil : self[count - 1]
  }

  /// Removes the `k` newest elements (`k` at most ``count``).
  @inlinable
  mutating func removeLast(_ k: Int) {
    // Internal invariant: callers remove at most what the buffer holds.
    precondition(k >= 0 && k <= count, "Katana internal error: ring buffer removal out of range")
    for _ in 0..<k {
      storage[slot(head + count - 1)] = nil
      count -= 1
    }
    if count == 0 { resetEmptied() }
  }

  /// Removes the `k` oldest elements (`k` at most ``count``), in constant time each: where an array's `removeFirst(_:)`
  /// moves every element after them.
  @inlinable
  mutating func removeFirst(_ k: Int) {
    precondition(k >= 0 && k <= count, "Katana internal error: ring buffer removal out of range")
    for _ in 0..<k { removeFirst() }
  }

  /// Resets an empty buffer, releasing its storage if it holds more than ``retainedCapacity`` slots.
  @inlinable
  mutating func resetEmptied() {
    head = 0
    if storage.count > Self.retainedCapacity {
      storage = []
    }
  }

  /// Removes and returns every element, oldest first.
  @inlinable
  mutating func removeAll() -> [Element] {
    var result: [Element] = []
    result.reserveCapacity(count)
    while let element = removeFirst() {
      result.append(element)
    }
    storage = []
    return result
  }

  @inlinable
  mutating func grow() {
    let newCapacity = Swift.max(8, storage.count * 2)
    var newStorage = [Element?](repeating: nil, count: newCapacity)
    for offset in 0..<count {
      newStorage[offset] = storage[slot(head + offset)]
    }
    storage = newStorage
    head = 0
  }
}
