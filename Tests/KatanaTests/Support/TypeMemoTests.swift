import KatanaTestSupport
import Testing

@testable import Katana

/// The identities of `count` distinct types: `T`, `[T]`, `[[T]]`, and so on.
func nestedTypeIdentities<T>(_: T.Type, count: Int) -> [ObjectIdentifier] {
  guard count > 0 else { return [] }
  return [ObjectIdentifier(T.self)] + nestedTypeIdentities([T].self, count: count - 1)
}

@Suite("TypeMemo: what is remembered about types, against a Set and a Dictionary")
struct TypeMemoTests {
  /// Its plain twin is a `Set` of every type inserted: the memo may forget (a slot taken by another type), never
  /// invent. Random inserts and lookups over 60 types, more than its 16 slots, so that slots collide.
  @Test(arguments: 1...20 as ClosedRange<UInt64>)
  func randomInsertsAndLookups_neverAnswerATypeThatWasNotInserted(seed: UInt64) {
    let types = nestedTypeIdentities(Int.self, count: 30) + nestedTypeIdentities(String.self, count: 30)
    #expect(Set(types).count == 60)
    var generator = SeededGenerator(seed: seed)
    var memo = TypeMemo<Void>()
    var twin = Set<ObjectIdentifier>()
    var remembered = 0
    for _ in 0..<2_000 {
      let type = types[Int(generator.next() % UInt64(types.count))]
      if generator.next() % 3 == 0 {
        memo.insert(type)
        twin.insert(type)
        // Just inserted: remembered until another type takes the slot.
        #expect(memo.contains(type))
      } else if memo.contains(type) {
        #expect(twin.contains(type), "the memo answered a type never inserted")
        remembered += 1
      }
    }
    // The memo does remember: most lookups of inserted types hit.
    #expect(remembered > 0)
  }

  /// With values (an undo history's keepers): the memo answers a type's latest value or nothing, never another type's
  /// or an older one; its twin is a `Dictionary`.
  @Test(arguments: 1...20 as ClosedRange<UInt64>)
  func randomInsertsWithValues_answerTheLatestValueOrNothing(seed: UInt64) {
    let types = nestedTypeIdentities(Int.self, count: 30) + nestedTypeIdentities(String.self, count: 30)
    var generator = SeededGenerator(seed: seed)
    var memo = TypeMemo<Int>()
    var twin: [ObjectIdentifier: Int] = [:]
    var wrong = 0
    var remembered = 0
    for step in 0..<2_000 {
      let type = types[Int(generator.next() % UInt64(types.count))]
      if generator.next() % 3 == 0 {
        memo.insert(type, value: step)
        twin[type] = step
        if memo.value(for: type) != step { wrong += 1 }
      } else if let value = memo.value(for: type) {
        if twin[type] != value || !memo.contains(type) { wrong += 1 }
        remembered += 1
      } else if memo.contains(type) {
        wrong += 1
      }
    }
    #expect(wrong == 0)
    #expect(remembered > 0)
  }

  /// `value(for:orMaking:)` works a type's value out once, and answers the remembered value after: the store and the
  /// undo history make their appliers through it, once per type rather than once per commit.
  @Test func valueOrMaking_makesOncePerType_andAnswersWhatItRemembered() throws {
    var memo = TypeMemo<Int>()
    var made = 0
    // Three types in three different slots: where metadata lands is the runtime's choice, and two types sharing a
    // slot forget each other (as they should), so the types are picked by slot rather than assumed apart.
    var slotsTaken = Set<Int>()
    let types = Array(
      nestedTypeIdentities(Int.self, count: 40).filter { slotsTaken.insert(TypeMemo<Int>.slot(of: $0)).inserted }
        .prefix(3))
    try #require(types.count == 3)
    for round in 0..<3 {
      for (index, type) in types.enumerated() {
        let value = memo.value(for: type) {
          made += 1
          return index * 10 + round
        }
        // Made in the first round, remembered after.
        #expect(value == index * 10)
      }
    }
    #expect(made == types.count)
  }

  @Test func anEmptyMemo_containsNothing() {
    let memo = TypeMemo<Void>()
    for type in nestedTypeIdentities(Int.self, count: 20) { #expect(!memo.contains(type)) }
  }
}
