import Dispatch
import KatanaTestSupport
import Testing

@testable import Katana

@Suite("Published once")
struct PublishedOnceTests {
  /// A slot goes `unclaimed -> published` once: the first writer publishes (a value, or none), later writers publish
  /// nothing, and readers see the first writer's value.
  @Test func theFirstWriterPublishes_andLaterOnesDoNot() {
    let slot = PublishedOnce<String, Int>(fixed: "fixed")
    #expect(slot.state == .unclaimed)
    #expect(slot.published == nil)
    #expect(slot.withFixed { $0 } == "fixed")
    #expect(slot.publish(7))
    #expect(slot.state == .value)
    #expect(slot.published == .some(7))
    #expect(!slot.publish(8))
    #expect(!slot.publish(nil))
    #expect(slot.published == .some(7))

    let none = PublishedOnce<String, Int>(fixed: "fixed")
    #expect(none.publish(nil))
    #expect(none.state == .nothing)
    #expect(none.published == .some(nil))
    #expect(!none.publish(9))
    #expect(none.published == .some(nil))
  }

  /// A slot made published (what a log reads) starts in its published state, and takes no writer.
  @Test func aSlotMadePublished_takesNoWriter() {
    let value = PublishedOnce<Int, String>(fixed: 0, published: .some("read"))
    #expect(value.state == .value)
    #expect(value.published == .some("read"))
    #expect(!value.publish("other"))
    let nothing = PublishedOnce<Int, String>(fixed: 0, published: .some(nil))
    #expect(nothing.state == .nothing)
    #expect(!nothing.publish("other"))
    #expect(nothing.published == .some(nil))
  }

  /// Writers racing on many threads: exactly one publishes, and every reader that sees the slot published, during the
  /// race or after, reads that writer's value whole (a string built by the writer, so a torn or early read shows).
  @Test(arguments: 0..<8)
  func racingWriters_exactlyOnePublishes_andReadersSeeItsValue(seed: UInt64) {
    let rounds = 200
    for round in 0..<rounds {
      let slot = PublishedOnce<Int, [String]>(fixed: round)
      let winners = Locked<[Int]>([])
      let torn = Locked(0)
      DispatchQueue.concurrentPerform(iterations: 4) { writer in
        let value = (0..<8).map { "writer \(writer), seed \(seed), part \($0)" }
        if slot.publish(value) { winners.withLock { $0.append(writer) } }
        if let seen = slot.published, let seen, seen.count != 8 || !seen.allSatisfy({ $0.hasPrefix(seen[0].prefix(8)) })
        {
          torn.withLock { $0 += 1 }
        }
      }
      let won = winners.withLock { $0 }
      #expect(won.count == 1, "round \(round)")
      #expect(torn.withLock { $0 } == 0, "round \(round)")
      if let writer = won.first {
        #expect(slot.published == .some((0..<8).map { "writer \(writer), seed \(seed), part \($0)" }))
      }
    }
  }

  /// The slot releases what it holds when it goes: the fixed part and the value published.
  @Test func releasesWhatItHolds() {
    weak var fixedGone: Marker?
    weak var valueGone: Marker?
    do {
      let fixed = Marker()
      let value = Marker()
      fixedGone = fixed
      valueGone = value
      let slot = PublishedOnce<Marker, Marker>(fixed: fixed)
      #expect(slot.publish(value))
    }
    #expect(fixedGone == nil)
    #expect(valueGone == nil)
  }

  private final class Marker: Sendable {}
}
