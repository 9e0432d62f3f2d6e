import KatanaTestSupport
import Testing

@testable import Katana

/// The plain twin of ``EffectTimeline`` (STYLE 11): the side effects in one array, found by a linear search.
struct PlainEffectTimeline {
  var effects: [(effect: RecordedEffect, stamp: Int)] = []
  var nextID = 1
  var version = 0

  mutating func start(_ item: any Dispatchable, cause: Int?, id given: Int?, at time: Duration, capacity: Int) -> (
    Int, RecordedEffect?
  ) {
    let id = given ?? nextID
    nextID = max(nextID, id + 1)
    version += 1
    effects.append((RecordedEffect(id: id, sideEffect: item, cause: cause, start: time), version))
    guard effects.count > capacity else { return (id, nil) }
    return (id, effects.removeFirst().effect)
  }

  mutating func end(_ id: Int, at time: Duration, outcome: RecordedEffect.Outcome) {
    guard let index = effects.firstIndex(where: { $0.effect.id == id }) else { return }
    version += 1
    effects[index].effect.end = time
    effects[index].effect.outcome = outcome
    effects[index].stamp = version
  }

  var all: [RecordedEffect] { effects.map(\.effect) }

  func changed(since version: Int) -> [RecordedEffect] {
    effects.filter { $0.stamp > version }.map(\.effect)
  }

  /// A drain: a fresh timeline that goes on numbering and keeps the side effects still running.
  func drained() -> PlainEffectTimeline {
    var fresh = PlainEffectTimeline()
    fresh.nextID = nextID
    fresh.version = version
    fresh.effects = effects.filter { $0.effect.outcome == nil }
    return fresh
  }
}

@Suite("EffectTimeline: the recorder's side effects, against a plain twin")
struct EffectTimelineTests {
  static func describe(_ effects: [RecordedEffect]) -> [String] {
    effects.map {
      "\($0.id) cause:\($0.cause ?? 0) \($0.start) \($0.end.map { "\($0)" } ?? "-") \($0.outcome.map { "\($0)" } ?? "running")"
    }
  }

  /// Random starts (numbered by the timeline, or given in an order with local swaps, as a second recorder gets them),
  /// ends (of kept, dropped and unknown side effects), drops past a small capacity, and drains that carry what still
  /// runs: the timeline and its twin agree on everything read, after every step.
  @Test(arguments: 1...30 as ClosedRange<UInt64>)
  func randomSessions_readAsThePlainTwin(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    let capacity = 3 + Int(generator.next() % 12)
    let givesNumbers = seed % 2 == 0
    var timeline = EffectTimeline()
    var twin = PlainEffectTimeline()
    var counter = 1
    var pending: [Int] = []
    var started: [Int] = []
    for step in 0..<400 {
      let time = Duration.milliseconds(step)
      switch generator.next() % 10 {
      case 0...4:
        var given: Int?
        if givesNumbers {
          // Numbers in order, but now and then two swapped: side effects starting at once on two threads.
          if pending.isEmpty {
            pending = generator.next() % 3 == 0 ? [counter + 1, counter] : [counter]
            counter += pending.count
          }
          given = pending.removeFirst()
        }
        let cause = generator.next() % 2 == 0 ? nil : Int(generator.next() % 5)
        let item = RecAdd(amount: step)
        let (id, dropped) = timeline.start(item, cause: cause, id: given, at: time, capacity: capacity)
        let (twinID, twinDropped) = twin.start(item, cause: cause, id: given, at: time, capacity: capacity)
        #expect(id == twinID && dropped?.id == twinDropped?.id, "seed \(seed), step \(step)")
        started.append(id)
      case 5...7:
        // A kept side effect, an old (maybe dropped) one, or one never started.
        let id =
          started.isEmpty || generator.next() % 5 == 0
          ? Int(generator.next() % 1_000) : started[Int(generator.next() % UInt64(started.count))]
        let outcome: RecordedEffect.Outcome = generator.next() % 2 == 0 ? .completed : .cancelled
        timeline.end(id, at: time, outcome: outcome)
        twin.end(id, at: time, outcome: outcome)
      case 8:
        var fresh = EffectTimeline()
        fresh.continueNumbering(from: timeline)
        fresh.carryRunning(from: timeline)
        timeline = fresh
        twin = twin.drained()
      default:
        let version = Int(generator.next() % UInt64(twin.version + 2))
        #expect(
          Self.describe(timeline.changed(since: version)) == Self.describe(twin.changed(since: version)),
          "seed \(seed), step \(step)")
      }
      #expect(Self.describe(timeline.all) == Self.describe(twin.all), "seed \(seed), step \(step)")
      #expect(timeline.version == twin.version && timeline.nextID == twin.nextID, "seed \(seed), step \(step)")
    }
  }
}
