import Testing

@testable import Katana

/// `Lifecycle.carriers()`: which tasks carry a store's in-flight work, followed through the effect tools'
/// hand-offs. The test store calls the work parked when all of them sleep on its clock, so an answer that
/// names a task that is not doing the work would fail a test early, and one that misses a unit would hide
/// work that is awake.
@Suite("State machines: activity carriers")
struct ActivityCarrierTests {
  typealias Machine = Lifecycle<FakeContinuation<Void>, Int>

  /// Distinct identities without tasks: addresses are only compared, so any distinct values do.
  let a = TaskIdentity(address: 0x10)
  let b = TaskIdentity(address: 0x20)
  let c = TaskIdentity(address: 0x30)

  @Test func nothingInFlight_hasNoCarriers() {
    let machine = Machine(tracksActivity: true)
    #expect(machine.carriers() == [])
  }

  @Test func aUnitWithoutACarrier_makesTheAnswerUnknown_untilItsTaskStarts() {
    var machine = Machine(tracksActivity: true)
    machine.beginActivity(.dispatch(1), carrier: a)
    let reserved = machine.reserveTask(2)
    #expect(reserved)
    #expect(machine.carriers() == nil)
    machine.taskStarted(2, identity: b)
    #expect(Set(machine.carriers() ?? []) == [a, b])
    _ = machine.taskFinished(2)
    _ = machine.endActivity(.dispatch(1))
    #expect(machine.carriers() == [])
    #expect(machine.activeWork == 0)
  }

  @Test func tasksOfTheTest_mustEachCarryAUnitThemselves_evenWhenTheirWorkIsHandedOff() {
    var machine = Machine(tracksActivity: true)
    // The test's task `a` dispatched, and waits for a run that `b` carries.
    machine.beginActivity(.dispatch(1), carrier: a)
    machine.handOff(from: a, to: 5)
    machine.bind(5, to: b)
    #expect(machine.carriers(inside: [a]) == [b])
    // Another task of the test that carries nothing has left the store (or never reached it): not parked.
    #expect(machine.carriers(inside: [a, c]) == nil)
    // `a`'s dispatch returns: the work left is `b`'s, but `a` is still reporting.
    machine.handOff(from: a, to: nil)
    _ = machine.endActivity(.dispatch(1))
    machine.beginActivity(.dispatch(2), carrier: b)
    #expect(machine.carriers() == [b])
    #expect(machine.carriers(inside: [a]) == nil)
    #expect(machine.carriers(inside: []) == [b])
  }

  @Test func aSentItemIsCarriedByTheTaskThatRunsIt_onceKnown() {
    var machine = Machine(tracksActivity: true)
    machine.beginActivity(.job(7), carrier: nil)
    #expect(machine.carriers() == nil)
    machine.setCarrier(of: .job(7), to: c)
    #expect(machine.carriers() == [c])
    // A carrier set for a unit that has ended does not bring it back.
    _ = machine.endActivity(.job(7))
    machine.setCarrier(of: .job(7), to: c)
    #expect(machine.activeWork == 0)
  }

  @Test func handOffs_leadToTheTaskDoingTheWork_throughNesting_withoutDuplicates() {
    var machine = Machine(tracksActivity: true)
    machine.beginActivity(.dispatch(1), carrier: a)
    machine.beginActivity(.dispatch(2), carrier: a)  // a nested dispatch in the same task
    machine.handOff(from: a, to: 100)
    // The run's task has not started: nobody is known to do the work.
    #expect(machine.carriers() == nil)
    machine.bind(100, to: b)
    #expect(machine.carriers() == [b])
    machine.handOff(from: b, to: 200)
    machine.bind(200, to: c)
    #expect(machine.carriers() == [c])
    // The inner run ends, then the outer one: the waiting task carries its work again.
    machine.bind(200, to: nil)
    machine.handOff(from: b, to: nil)
    #expect(machine.carriers() == [b])
    machine.bind(100, to: nil)
    machine.handOff(from: a, to: nil)
    #expect(machine.carriers() == [a])
    #expect(machine.handOffs.isEmpty && machine.tokenCarriers.isEmpty)
  }

  @Test func aCycleOfHandOffs_isUnknown_notAnEndlessLoop() {
    var machine = Machine(tracksActivity: true)
    machine.beginActivity(.dispatch(1), carrier: a)
    machine.handOff(from: a, to: 1)
    machine.bind(1, to: b)
    machine.handOff(from: b, to: 2)
    machine.bind(2, to: a)
    #expect(machine.carriers() == nil)
  }
}
