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
        #expect(ring.withElement(at: offset) { $0 } == model[offset])
        #expect(ring.withElement(at: offset) { $0[1] } == ring[offset][1])
      }
    }
  }
}
