import Foundation
import HummingbirdWebSocket
import Katana
import NIOConcurrencyHelpers

/// One page's WebSocket: a poller that sends what the recorder holds that the page has not seen, in batches the
/// page acknowledges, and a reader that answers the page's requests, one at a time.
///
/// Both write to the socket themselves (NIO's outbound writer takes frames from several tasks, one whole frame
/// at a time) and wait for each write: a page that stops reading stops the poller and the reader, and nothing
/// piles up in memory.
///
/// A page that moves the store in time owns the move: when it disconnects, or when
/// ``InspectorConfiguration/travelTimeout`` passes without another move, the connection brings the store back to
/// live, so that a closed tab cannot leave an app refusing every dispatch.
struct InspectorConnection<Source: InspectorSource>: Sendable {
  let source: Source
  let configuration: InspectorConfiguration
  /// Whether the inspector serves the session as a log file (``Inspector/start(store:recorder:registry:configuration:logger:)``).
  let canExport: Bool

  /// The largest message the page may send.
  static var maximumRequestSize: Int { 16 * 1024 }

  func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
    let credits = CreditGate(credits: configuration.batchesInFlight)
    let move = MoveGuard()
    await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        try await outbound.write(
          .text(
            ServerMessage.hello(
              capacity: source.capacity, live: !source.isAwayFromLive, travelTimeout: configuration.travelTimeout,
              canTravel: source.canTravel, canExport: canExport)))
        try await poll(outbound, credits: credits, move: move)
      }
      group.addTask {
        try await returnWhenMoveTimesOut(move, outbound)
      }
      // The page closing its end (or the server stopping) ends the connection's work.
      do {
        try await read(inbound, outbound, credits: credits, move: move)
      } catch {
        // A message over the size limit, or a broken connection: stop serving this page.
      }
      credits.cancel()
      group.cancelAll()
      // The poller ends with CancellationError, or with the error of a write to a closed connection.
      while await group.nextResult() != nil {}
    }
    // A page that leaves the store away from live brings it back as it goes.
    if move.end() {
      try? await source.returnToLive()
    }
  }

  /// Brings the store back to live when the page's last move is older than the travel timeout, and tells the page.
  private func returnWhenMoveTimesOut(_ move: MoveGuard, _ outbound: WebSocketOutboundWriter) async throws {
    for await (generation, instant) in move.moves {
      try await Task.sleep(until: instant.advanced(by: configuration.travelTimeout), clock: .continuous)
      // A later move (or a return to live) since: that one's own deadline counts (it is the next element).
      guard move.expire(generation) else { continue }
      try? await source.returnToLive()
      try await outbound.write(
        .text(
          ServerMessage.reply(
            "live", sequence: nil, live: true, reason: "timeout", refused: source.refusedWhileAway,
            answer: move.answered())))
    }
  }

  /// Sends batches while the page keeps up; waits for its acknowledgements when it does not.
  private func poll(_ outbound: WebSocketOutboundWriter, credits: CreditGate, move: MoveGuard) async throws {
    var feed = InspectorFeed(maximumBatch: configuration.maximumBatch)
    var (wasLive, wasRefused) = (!source.isAwayFromLive, source.refusedWhileAway)
    while !Task.isCancelled {
      try await credits.acquire()
      while true {
        // The answers to moves so far first, then whether the store is live: a batch that says so from before a
        // move's answer names an older answer, and the page keeps the answer (see ``MoveGuard/answered()``).
        let answers = move.answers
        let (live, refused) = (!source.isAwayFromLive, source.refusedWhileAway)
        if let batch = feed.next(from: source) ?? (live != wasLive || refused != wasRefused ? FeedBatch() : nil) {
          (wasLive, wasRefused) = (live, refused)
          var batch = batch
          if batch.lastSequence == 0 { batch.lastSequence = feed.lastSequence ?? 0 }
          try await outbound.write(.text(ServerMessage.batch(batch, live: live, refused: refused, answers: answers)))
          // More than one batch's worth waiting: go on at once (subject to the page's credits).
          if !feed.hasMore {
            try await Task.sleep(for: configuration.pollInterval)
          }
          break
        }
        try await Task.sleep(for: configuration.pollInterval)
      }
    }
  }

  /// Answers the page's requests, one at a time; a bad one gets an error message, never ends the connection.
  private func read(
    _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, credits: CreditGate, move: MoveGuard
  ) async throws {
    for try await message in inbound.messages(maxSize: Self.maximumRequestSize) {
      guard case .text(let text) = message else {
        try await outbound.write(
          .text(ServerMessage.error("The inspector takes JSON text messages, not binary ones.", request: nil)))
        continue
      }
      guard let request = try? JSONDecoder().decode(PageRequest.self, from: Data(text.utf8)) else {
        try await outbound.write(
          .text(
            ServerMessage.error(
              "Not a request: send a JSON object with a \"type\" (ack, state, effect, travel, live or test).",
              request: nil)))
        continue
      }
      if let reply = await answer(request, credits: credits, move: move) {
        try await outbound.write(.text(reply))
      }
    }
  }

  /// The reply to one request (nil for an acknowledgement, which has none).
  private func answer(_ request: PageRequest, credits: CreditGate, move: MoveGuard) async -> String? {
    switch (request.type, request.sequence) {
    case ("ack", _):
      credits.release()
      return nil
    case ("state", let sequence?):
      return stateMessage(at: sequence, skipping: Set(request.skipped ?? []))
    case ("travel", let sequence?):
      do {
        try await source.travel(to: sequence)
        move.begin()
        return ServerMessage.reply(
          "travelled", sequence: sequence, live: false, reason: nil, refused: source.refusedWhileAway,
          answer: move.answered())
      } catch {
        return ServerMessage.error("Could not travel to commit \(sequence): \(error)", request: "travel")
      }
    case ("live", _):
      do {
        _ = move.end()
        try await source.returnToLive()
        return ServerMessage.reply(
          "live", sequence: nil, live: true, reason: nil, refused: source.refusedWhileAway, answer: move.answered())
      } catch {
        return ServerMessage.error("Could not return to live: \(error)", request: "live")
      }
    case ("effect", _):
      guard let id = request.id else {
        return ServerMessage.error("An effect request needs an \"id\" (a side effect's number).", request: "effect")
      }
      return effectMessage(id)
    case ("test", _):
      guard let from = request.from, let to = request.to else {
        return ServerMessage.error("A test request needs \"from\" and \"to\" (commit numbers).", request: "test")
      }
      do {
        return ServerMessage.test(
          from: from, to: to, source: try SessionTest.source(from: from, to: to, of: source.recording()))
      } catch {
        return ServerMessage.error(error.description, request: "test")
      }
    case ("state", nil), ("travel", nil):
      return ServerMessage.error(
        "A \(request.type) request needs a \"sequence\" (a commit number).", request: request.type)
    default:
      return ServerMessage.error(
        "Unknown request type \"\(request.type.prefix(40))\": use ack, state, effect, travel, live or test.",
        request: nil)
    }
  }

  private func stateMessage(at sequence: Int, skipping skipped: Set<Int>) -> String {
    let recording = source.recording()
    let states: (S, S?)
    do {
      states = try CommitStates.states(at: sequence, in: recording, skipping: skipped)
    } catch {
      return ServerMessage.error(error.description, request: "state")
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    do {
      let state = try encoder.encode(states.0)
      let previous = try states.1.map { try encoder.encode($0) }
      let first = recording.commits.first?.sequence ?? 0
      let commit = sequence >= first ? recording.commits[sequence - first] : nil
      return ServerMessage.state(
        sequence: sequence, state: state, previous: previous, payload: commit.map { Payload(of: $0.base) },
        skipped: skipped.filter { $0 <= sequence }.sorted())
    } catch {
      return ServerMessage.error("The state after commit \(sequence) cannot be encoded: \(error)", request: "state")
    }
  }

  /// A side effect's payload (its `Encodable` fields, or its description), as the page shows it when one is selected.
  private func effectMessage(_ id: Int) -> String {
    guard let effect = source.recording().effects.first(where: { $0.id == id }) else {
      return ServerMessage.error("Side effect \(id) is not in the recorder's window.", request: "effect")
    }
    let scoped = effect.sideEffect as? any ScopedDispatchable
    return ServerMessage.effect(id: id, payload: Payload(of: scoped?.base ?? effect.sideEffect))
  }

  typealias S = Source.S
}

/// Whether a page's connection has moved the store in time and not brought it back: the connection brings it back
/// when the page leaves, or when the move's timeout passes with no later move. A state decided under a lock; the
/// caller acts (returns the store to live) after it.
final class MoveGuard: Sendable {
  private struct Phase {
    /// Counts moves and returns: a timeout acts only if nothing happened since its move.
    var generation = 0
    var moved = false
    /// Counts the answers to the page's moves and returns (and to timeouts), each taken once the move is done.
    var answers = 0
  }

  private let phase = NIOLockedValueBox(Phase())
  private let continuation: AsyncStream<(generation: Int, at: ContinuousClock.Instant)>.Continuation
  /// Each move, with when it was made; only the latest matters to a timer that fell behind.
  let moves: AsyncStream<(generation: Int, at: ContinuousClock.Instant)>

  init() {
    (moves, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
  }

  deinit {
    continuation.finish()
  }

  /// The page moved the store.
  func begin() {
    let generation = phase.withLockedValue { phase in
      phase.generation += 1
      phase.moved = true
      return phase.generation
    }
    continuation.yield((generation, .now))
  }

  /// The page returns the store to live, or leaves: whether the store is the page's to bring back.
  func end() -> Bool {
    phase.withLockedValue { phase in
      defer {
        phase.moved = false
        phase.generation += 1
      }
      return phase.moved
    }
  }

  /// The answers given so far: a batch carries the number it read before reading whether the store is live.
  var answers: Int {
    phase.withLockedValue { $0.answers }
  }

  /// Numbers an answer to a move or a return, once it is done: whether the store is live, read after this, is
  /// at least as new as the answer. The page applies a batch's `live` only if the batch's number is not below
  /// the last answer's, so a batch that read `live` before a move was done cannot undo the move's answer.
  func answered() -> Int {
    phase.withLockedValue { phase in
      phase.answers += 1
      return phase.answers
    }
  }

  /// The timeout of move `generation` passed: whether it is still the page's last move, to bring back.
  func expire(_ generation: Int) -> Bool {
    phase.withLockedValue { phase in
      guard phase.moved, phase.generation == generation else { return false }
      phase.moved = false
      return true
    }
  }
}
