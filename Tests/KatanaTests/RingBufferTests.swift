import KatanaTestSupport
import Testing

@testable import Katana

@Suite("Ring buffer")
struct RingBufferTests {
  /// ``RingBuffer/withElement(at:_:)`` reads in place what the subscript copies out: both agree with an array
  /// model at every offset, over seeded appends and removals that wrap around, grow the storage and empty it.
  @Test(arguments: 0..<20)
  func readingInPlace_matchesTheSubscriptAndAModel(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    var ring = RingBuffer<[Int]>()
    var model: [[Int]] = []
    var next = 0
    for _ in 0..<400 {
      if model.isEmpty || generator.next() % 3 != 0 {
        ring.append([next, next * 2])
        model.append([next, next * 2])
        next += 1
      } else {
        #expect(ring.removeFirst() == model.removeFirst())
      }
      #expect(ring.count == model.count)
      for offset in model.indices {
        #expect(ring.withElement(at: offset) { $0.pointee } == model[offset])
        #expect(ring.withElement(at: offset) { $0.pointee[1] } == ring[offset][1])
      }
    }
  }

  /// Removing several elements from either end, reading the newest, and changing an element in place agree with an
  /// array model over seeded sequences that wrap around, grow the storage and empty it; the storage's slots stay a
  /// power of two throughout (or none), which wrapping with a mask needs.
  @Test(arguments: 0..<20)
  func removingFromBothEnds_matchesAModel(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    var ring = RingBuffer<Int>()
    var model: [Int] = []
    var next = 0
    var mismatches = 0
    for _ in 0..<600 {
      switch generator.next() % 6 {
      case 0:
        let k = model.isEmpty ? 0 : Int(generator.next() % UInt64(model.count + 1))
        ring.removeFirst(k)
        model.removeFirst(k)
      case 1:
        let k = model.isEmpty ? 0 : Int(generator.next() % UInt64(min(model.count, 3) + 1))
        ring.removeLast(k)
        model.removeLast(k)
      case 2 where !model.isEmpty:
        ring[model.count - 1] = -next
        model[model.count - 1] = -next
      default:
        ring.append(next)
        model.append(next)
        next += 1
      }
      if ring.count != model.count || ring.last != model.last
        || (0..<model.count).contains(where: { ring[$0] != model[$0] })
      {
        mismatches += 1
      }
      // Positions wrap with a mask (``RingBuffer/slot(_:)``): the slots must stay zero or a power of two.
      if ring.capacity & (ring.capacity - 1) != 0 { mismatches += 1 }
    }
    #expect(mismatches == 0)
  }

  /// ``RingBuffer/withElement(at:_:)`` reads the element at its slot's address (an `Optional`'s payload comes first):
  /// it holds for elements of every layout, among them those whose optional takes an extra tag byte (no spare
  /// bits), those that are optionals themselves, enums with several payloads, and existentials (an undo entry).
  @Test(arguments: 0..<4)
  func readingInPlace_holdsForEveryLayout(seed: UInt64) {
    checkInPlaceReads(seed: seed) { $0 }
    checkInPlaceReads(seed: seed) { UInt8(truncatingIfNeeded: $0) }
    checkInPlaceReads(seed: seed) { $0 % 3 == 0 ? nil : $0 }
    checkInPlaceReads(seed: seed) { $0 % 4 == 0 ? Layout.none : $0 % 4 == 1 ? .number($0) : .text("\($0)") }
    checkInPlaceReads(seed: seed) { Boxed(value: $0, label: "\($0)") }
  }

  private enum Layout: Equatable {
    case none
    case number(Int)
    case text(String)
  }

  private struct Boxed: Equatable {
    let existential: any Sendable
    let step: Int?
    let label: String

    init(value: Int, label: String) {
      existential = value
      step = value % 2 == 0 ? value : nil
      self.label = label
    }

    static func == (lhs: Boxed, rhs: Boxed) -> Bool {
      lhs.existential as? Int == rhs.existential as? Int && lhs.step == rhs.step && lhs.label == rhs.label
    }
  }

  private func checkInPlaceReads<Element: Equatable>(seed: UInt64, _ make: (Int) -> Element) {
    var generator = SeededGenerator(seed: seed)
    var ring = RingBuffer<Element>()
    var model: [Element] = []
    var next = 0
    var mismatches = 0
    for _ in 0..<300 {
      if model.isEmpty || generator.next() % 3 != 0 {
        ring.append(make(next))
        model.append(make(next))
        next += 1
      } else if ring.removeFirst() != model.removeFirst() {
        mismatches += 1
      }
      for offset in model.indices where !ring.withElement(at: offset, { $0.pointee == model[offset] }) {
        mismatches += 1
      }
    }
    #expect(mismatches == 0, "\(Element.self)")
  }
}
