import Katana
import KatanaTesting
import Testing

// Tests of The Composable Architecture's habits, ported line for line: `store.send(...)` (TCA's
// `await store.send(...)`), `await clock.advance(by: ...)`, `await store.receive(...)`, with no
// `waitForSleepers` and no adaptation. Each ran flaky or failed before the test clock settled the store's work
// (the advance found nobody asleep yet, a sleep of zero returned at once, a timer advanced by five
// intervals ticked once, a helper's wait failed at once).

/// A search box, as in TCA's Search example: typing stores the query, a debounced search shows results,
/// tapping a result loads its forecast (one request at a time).
struct WeatherState: State, Equatable {
  var query = ""
  var results: [String] = []
  var forecastInFlight: String?
  var forecast: String?
  var ticks = 0
  var taps: [Int] = []
}

final class WeatherDependencies: SideEffectDependencyContainer {
  let search: @Sendable (String) async throws -> [String]
  let forecast: @Sendable (String) async throws -> String

  init(
    search: @escaping @Sendable (String) async throws -> [String],
    forecast: @escaping @Sendable (String) async throws -> String
  ) {
    self.search = search
    self.forecast = forecast
  }

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    search = unimplemented("WeatherDependencies.search")
    forecast = unimplemented("WeatherDependencies.forecast")
  }
}

typealias WeatherContext = SideEffectContext<WeatherState, WeatherDependencies>

struct WeatherQueryChanged: StateUpdater, Equatable {
  let query: String
  func updateState(_ state: inout WeatherState) { state.query = query }
}

struct WeatherResultsLoaded: StateUpdater, Equatable {
  let results: [String]
  func updateState(_ state: inout WeatherState) { state.results = results }
}

/// Searches 300 ms after the last keystroke.
struct WeatherSearch: SideEffect, Equatable {
  struct ID: Hashable, Sendable {}
  func sideEffect(_ context: WeatherContext) async throws {
    try await context.debounce(id: ID(), for: .milliseconds(300)) {
      let results = try await context.dependencies.search(context.getState().query)
      try await context.dispatch(WeatherResultsLoaded(results: results))
    }
  }
}

struct ForecastRequested: StateUpdater, Equatable {
  let location: String
  func updateState(_ state: inout WeatherState) { state.forecastInFlight = location }
}

struct ForecastLoaded: StateUpdater, Equatable {
  let forecast: String
  func updateState(_ state: inout WeatherState) {
    state.forecastInFlight = nil
    state.forecast = forecast
  }
}

/// Loads the forecast of a tapped result; a newer tap cancels the request in flight.
struct ResultTapped: SideEffect, Equatable {
  struct ID: Hashable, Sendable {}
  let location: String
  func sideEffect(_ context: WeatherContext) async throws {
    try await context.dispatch(ForecastRequested(location: location))
    try await context.run(id: ID(), cancelInFlight: true) {
      let forecast = try await context.dependencies.forecast(location)
      try await context.dispatch(ForecastLoaded(forecast: forecast))
    }
  }
}

struct TimerTicked: StateUpdater, Equatable {
  func updateState(_ state: inout WeatherState) { state.ticks += 1 }
}

/// Ticks every second until cancelled, as TCA's Timers example.
struct StartTimer: SideEffect, Equatable {
  struct ID: Hashable, Sendable {}
  func sideEffect(_ context: WeatherContext) async throws {
    try await context.timer(id: ID(), every: .seconds(1)) { try await context.dispatch(TimerTicked()) }
  }
}

struct Tapped: StateUpdater, Equatable {
  let value: Int
  func updateState(_ state: inout WeatherState) { state.taps.append(value) }
}

/// A tap, throttled to one a second, the latest of each window kept (TCA's `throttle(latest: true)`).
struct ThrottledTap: SideEffect, Equatable {
  struct ID: Hashable, Sendable {}
  let value: Int
  func sideEffect(_ context: WeatherContext) async throws {
    try await context.throttle(id: ID(), for: .seconds(1), mode: .latest) {
      try await context.dispatch(Tapped(value: value))
    }
  }
}

@Suite("Ported from TCA: advancing the test clock", .timeLimit(.minutes(3)))
struct PortedFromTCATests {
  let clock = TestClock()

  func makeStore(
    search: @escaping @Sendable (String) async throws -> [String] = unimplemented("search"),
    forecast: @escaping @Sendable (String) async throws -> String = unimplemented("forecast")
  ) -> TestStore<WeatherState, WeatherDependencies> {
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    return TestStore(
      initialState: WeatherState(), dependencies: WeatherDependencies(search: search, forecast: forecast),
      configuration: configuration)
  }

  @Test func debouncedSearch_runsOnceTypingPauses() async throws {
    let store = makeStore(search: { query in ["\(query)ville"] })
    store.send(WeatherQueryChanged(query: "S")) { $0.query = "S" }
    store.send(WeatherSearch())
    await clock.advance(by: .milliseconds(200))
    store.send(WeatherQueryChanged(query: "Sa")) { $0.query = "Sa" }
    store.send(WeatherSearch())
    await clock.advance(by: .milliseconds(299))
    await clock.advance(by: .milliseconds(1))
    await store.receive(WeatherResultsLoaded(results: ["Saville"])) { $0.results = ["Saville"] }
    await store.finish()
  }

  /// TCA's Search test "tap on a location cancels the in-flight request": the forecast sleeps for zero on
  /// the clock, which holds it until the next advance, so the second tap cancels the first request.
  ///
  /// As written in TCA. It needed a `waitForSleepers` line before the test store ran the store's work on
  /// its serial executor: the second tap's side effect could run before the first had registered its request
  /// under the id (about 1 run in 100). Now the first tap's work runs to its first suspension, its request
  /// registered, before the second tap's starts.
  @Test func tapOnALocation_cancelsTheInFlightRequest() async throws {
    let clock = self.clock
    let store = makeStore(forecast: { location in
      try await clock.sleep(for: .zero)
      return "sunny in \(location)"
    })
    let home = store.send(ResultTapped(location: "home"))
    await store.receive(ForecastRequested(location: "home")) { $0.forecastInFlight = "home" }
    let work = store.send(ResultTapped(location: "work"))
    await store.receive(ForecastRequested(location: "work")) { $0.forecastInFlight = "work" }
    await clock.advance()
    await store.receive(ForecastLoaded(forecast: "sunny in work")) {
      $0.forecastInFlight = nil
      $0.forecast = "sunny in work"
    }
    await #expect(throws: CancellationError.self) { try await home.value }
    await work.finish()
    await store.finish()
  }

  /// TCA's Timers test: one advance of five seconds ticks five times.
  @Test func timer_ticksOncePerSecondPassed() async throws {
    let store = makeStore()
    let timer = store.send(StartTimer())
    await clock.advance(by: .seconds(1))
    await store.receive(TimerTicked()) { $0.ticks = 1 }
    await clock.advance(by: .seconds(5))
    for tick in 2...6 {
      await store.receive(TimerTicked()) { $0.ticks = tick }
    }
    store.cancel(id: StartTimer.ID())
    await timer.finish()
    await store.finish()
  }

  /// TCA's throttle test with `latest: true`, awaiting the taps from helper tasks while the test advances
  /// the clock: the helpers' waits wait for the clock instead of failing at once.
  @Test func throttleLatest_keepsTheLastTapOfTheWindow() async throws {
    let store = makeStore()
    let tap1 = store.send(ThrottledTap(value: 1))
    await store.receive(Tapped(value: 1)) { $0.taps = [1] }
    await tap1.finish()
    await clock.advance(by: .milliseconds(250))
    let tap2 = store.send(ThrottledTap(value: 2))
    await clock.advance(by: .milliseconds(250))
    let tap3 = store.send(ThrottledTap(value: 3))
    let finishing = Task {
      await tap2.finish()
      await tap3.finish()
    }
    await clock.advance(by: .milliseconds(500))
    await store.receive(Tapped(value: 3)) { $0.taps = [1, 3] }
    await finishing.value
    await clock.advance(by: .seconds(1))
    await store.finish()
  }
}
