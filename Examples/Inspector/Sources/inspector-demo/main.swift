import Foundation
import Katana
import KatanaInspector

// `swift run --package-path Examples/Inspector inspector-demo [--port N] [--rate N] [--scripted] [--open FILE]
//   [--travel-timeout SECONDS] [--capacity COMMITS]`
//
// Starts a demo store with a recorder and an inspector on 127.0.0.1, prints the inspector's address, and runs a
// looping session (about `--rate` commits a second, 5 by default) until interrupted. `--scripted` runs a fixed
// session instead and then reports each state the store moves to as a JSON line: the browser test's store.
// `--open FILE` opens a session downloaded from the page (a `KatanaRecordingLog` file), without a store, read-only.
// `--travel-timeout SECONDS` sets how long the page may keep the store away from live (300 by default);
// `--capacity COMMITS` how many commits the recorder keeps (10,000 by default: a tenth of a second at 100,000 a
// second, too short to travel to a commit the page shows).
var port = 9_000
var rate = 5.0
var scripted = false
var opened: String?
var travelTimeout = Duration.seconds(300)
var capacity = 10_000
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  switch argument {
  case "--port":
    guard let value = arguments.popFirst().flatMap(Int.init), (0...65_535).contains(value) else {
      print("--port takes a port number (0 for a free one)")
      exit(2)
    }
    port = value
  case "--rate":
    guard let value = arguments.popFirst().flatMap(Double.init), value > 0 else {
      print("--rate takes a number of commits a second")
      exit(2)
    }
    rate = value
  case "--scripted":
    scripted = true
  case "--travel-timeout":
    guard let value = arguments.popFirst().flatMap(Double.init), value > 0, value < 1e9 else {
      print("--travel-timeout takes a number of seconds")
      exit(2)
    }
    travelTimeout = .milliseconds(Int64(value * 1000))
  case "--capacity":
    guard let value = arguments.popFirst().flatMap(Int.init), (1...10_000_000).contains(value) else {
      print("--capacity takes a number of commits, 1 to 10,000,000")
      exit(2)
    }
    capacity = value
  case "--open":
    guard let path = arguments.popFirst() else {
      print("--open takes the path of a session's log (downloaded from the page)")
      exit(2)
    }
    opened = path
  default:
    print(
      "usage: inspector-demo [--port N] [--rate COMMITS_PER_SECOND] [--scripted] [--open FILE] "
        + "[--travel-timeout SECONDS] [--capacity COMMITS]")
    exit(2)
  }
}

if let opened {
  let inspector: Inspector
  do {
    let log = try Data(contentsOf: URL(fileURLWithPath: opened))
    inspector = try await Inspector.open(
      log: log, registry: demoRegistry, configuration: .init(binding: .loopback(port: port)))
  } catch {
    print("The session in \(opened) cannot be opened: \(error)")
    exit(1)
  }
  report("Katana inspector at \(inspector.url) (read-only: \(opened); Ctrl-C stops)")
  while true { try? await Task.sleep(for: .seconds(3_600)) }
}

let recorder = StoreRecorder<DemoState>(capacity: capacity)
let store = DemoStore(initialState: DemoState())
try recorder.attach(to: store)
let inspector: Inspector
do {
  // With the registry, the page can download the session as a log.
  inspector = try await Inspector.start(
    store: store, recorder: recorder, registry: demoRegistry,
    configuration: .init(binding: .loopback(port: port), travelTimeout: travelTimeout))
} catch {
  print("The inspector did not start: \(error)")
  exit(1)
}

if scripted {
  try await runScriptedSession(store)
  try await reportStates(store, recorder: recorder, url: inspector.url)
} else {
  report("Katana inspector at \(inspector.url) (a development tool; Ctrl-C stops)")
  await runLoopingSession(store, recorder: recorder, commitsPerSecond: rate)
}
