import Foundation
import KatanaBenchmarkFixtures

extension Runner {
  /// Feature scopes (SPEC 4.9): what dispatching through a scope adds to a root dispatch, nesting, the size
  /// of the feature's state, and observers of other features.
  func runScopeGroup() async throws {
    try await measure([.scopeRootDispatch, .scopeDispatch, .nestedScopeDispatch])
    if let ratio = perRound("scope: dispatch through a scope", "scope: root dispatch (reference)", /) {
      check(
        "dispatch through a scope <= 1.5x a root dispatch",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median,
          value("scope: dispatch through a scope") ?? 0, value("scope: root dispatch (reference)") ?? 0),
        met: ratio.median <= 1.5)
    }
    if let ratio = perRound("scope: dispatch through three nested scopes", "scope: root dispatch (reference)", /) {
      check(
        "dispatch through three nested scopes <= 2x a root dispatch",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns", ratio.median,
          value("scope: dispatch through three nested scopes") ?? 0),
        met: ratio.median <= 2)
    }

    try await measure([.scopeRootDispatchFiveInterceptors, .scopeDispatchFiveInterceptors])

    let small = BenchmarkFixture.scopedAppend(size: 10)
    let large = BenchmarkFixture.scopedAppend(size: 1_000_000)
    try await measure([small, large])
    if let ratio = perRound(large.name, small.name, /) {
      check(
        "append inside a scoped feature: 1,000,000 elements <= 1.2x 10 elements",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median, value(large.name) ?? 0,
          value(small.name) ?? 0),
        met: ratio.median <= 1.2)
    }

    let alone = BenchmarkFixture.otherFeatures(observers: 0)
    let observed = BenchmarkFixture.otherFeatures(observers: 10)
    try await measure([alone, observed])
    if let ratio = perRound(observed.name, alone.name, /) {
      check(
        "commit to one feature with 10 observers of other features <= 1.2x no observers",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median,
          value(observed.name) ?? 0, value(alone.name) ?? 0),
        met: ratio.median <= 1.2)
    }
  }
}
