/// A minimal first-in first-out queue with amortised O(1) push and pop, used for the store's mailbox and
/// for stream buffers.
@usableFromInline
struct RingBuffer<Element> {
  @usableFromInline var storage: [Element?] = []
  @usableFromInline var head = 0
  @usableFromInline private(set) var count = 0

  @inlinable
  init() {}

  @inlinable
  var isEmpty: Bool { count == 0 }

  @inlinable
  var first: Element? {
    count == 0 ? nil : storage[head]
  }

  @inlinable
  mutating func append(_ element: Element) {
    if count == storage.count {
      grow()
    }
    storage[(head + count) % storage.count] = element
    count += 1
  }

  @inlinable
  @discardableResult
  mutating func removeFirst() -> Element? {
    guard count > 0 else { return nil }
    let element = storage[head]
    storage[head] = nil
    head = (head + 1) % storage.count
    count -= 1
    if count == 0 {
      head = 0
    }
    return element
  }

  /// Replaces, in place, the first element for which `update` returns a new value. Returns that element's
  /// previous value. O(n); used only for cancellation, which is rare.
  @inlinable
  mutating func replaceFirst(where update: (Element) -> Element?) -> Element? {
    for offset in 0..<count {
      let index = (head + offset) % storage.count
      // Internal invariant: slots in `head ..< head + count` always hold an element.
      guard let element = storage[index] else { preconditionFailure("RingBuffer slot unexpectedly empty") }
      if let replacement = update(element) {
        storage[index] = replacement
        return element
      }
    }
    return nil
  }

  /// Whether some element satisfies `predicate`. O(n).
  @inlinable
  func contains(where predicate: (Element) -> Bool) -> Bool {
    for offset in 0..<count {
      if let element = storage[(head + offset) % storage.count], predicate(element) { return true }
    }
    return false
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
      newStorage[offset] = storage[(head + offset) % storage.count]
    }
    storage = newStorage
    head = 0
  }
}
