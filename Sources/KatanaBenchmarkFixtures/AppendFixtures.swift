import Katana
import KatanaBenchmarkBaselines

/// Who observes the store in an append case.
public enum AppendObservers: String, CaseIterable, Sendable {
  case none = "no observer"
  case projections = "10 projections"
  case listener = "one listener"
}

extension BenchmarkFixture {
  /// A state updater appends to (and drops from) an array of `size` elements, with `observers`.
  public static func append(size: Int, observers: AppendObservers) -> BenchmarkFixture {
    BenchmarkFixture(
      name: "append: \(size == 10 ? "10" : "1,000,000") elements, \(observers.rawValue)",
      // With a listener holding the old state, each append copies the array: keep those runs short.
      relativeCost: observers == .listener ? (size == 10 ? 10 : 2_000) : 1,
      explanation: "A state updater appends to (and drops from) an array of \(size) elements, with "
        + "\(observers.rawValue)."
    ) { operations in
      let store = try await makeStore(BenchState(items: Array(repeating: 0, count: size)))
      var iterators: [StoreStream<Int>.Iterator] = []
      switch observers {
      case .none: break
      case .listener: store.addListener { old, new in blackHole(old.items.count &+ new.items.count) }
      case .projections:
        for stream in BenchState.observeOtherFields(of: store) {
          var iterator = stream.makeAsyncIterator()
          _ = await iterator.next()
          iterators.append(iterator)
        }
      }
      // Drop the initializer's reference to the array: the first mutation copies it once.
      try await store.dispatch(AppendAndDrop())
      return PreparedFixture(operations: operations) {
        for _ in 0..<operations { try await store.dispatch(AppendAndDrop()) }
      } verify: {
        blackHole(iterators)
        try expectCounter(of: store, operations + 1)
      }
    }
  }
}
