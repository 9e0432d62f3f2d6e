/// What the store's lock went through, counted under the lock in a build with `KATANA_CONTENTION_COUNTERS` defined
/// (`katana-benchmarks --counts`, and `.ci/contention-gate`, which reads it): a measure of the work per item that
/// does not drift with the machine's speed and load the way time does. Without the flag the counting functions are
/// empty and the store keeps no counts: the hot path pays nothing.
@usableFromInline
package struct ContentionCounts: Sendable, Equatable {
  /// Critical sections entered.
  @usableFromInline package var acquisitions = 0
  /// Critical sections entered by another thread than the one before: the lock's and the state's cache lines moved
  /// to another processor.
  @usableFromInline package var handOvers = 0
  /// Critical sections that found the lock taken and waited for it: the contended path.
  @usableFromInline package var contended = 0

  @inlinable
  package init() {}
}

extension CoreState {
  #if KATANA_CONTENTION_COUNTERS
    /// Counts a critical section; called first thing under the lock, with whether the lock was taken when the
    /// caller asked for it.
    @inlinable
    mutating func noteAcquisition(contended: Bool) {
      contention.acquisitions += 1
      if contended { contention.contended += 1 }
      let thread = ThreadOwner.currentThreadID
      if thread != lastHolder {
        contention.handOvers += 1
        lastHolder = thread
      }
    }
  #else
    /// Counts a critical section in a build with `KATANA_CONTENTION_COUNTERS`; nothing otherwise.
    @inlinable @inline(__always)
    func noteAcquisition(contended: Bool) {}
  #endif
}
