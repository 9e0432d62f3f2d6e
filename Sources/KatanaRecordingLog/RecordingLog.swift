import Foundation
import Katana

/// A `Recording` as text: JSON Lines, one JSON object per line, versioned.
///
/// ```swift
/// var registry = ReplayRegistry<AppState>()
/// registry.register(AddTodo.self, as: "todos.add")
/// let text = try RecordingLog.encode(recorder.recording(), registry: registry)
/// // ... attach `text` to a bug report; later, anywhere:
/// let recording = try RecordingLog.decode(text, registry: registry)
/// let state = try recording.replayedState()
/// ```
///
/// The lines, in order (fields not listed are absent or `null`):
/// 1. The header: `{"format": "katana.recording", "version": 2, "stateType": "MyApp.AppState", "initialState":
///    {...}}`. `stateType` is the registry's ``ReplayRegistry/stateType``, a stable name for the state type (by
///    default its module-qualified name), checked when the log is read; `initialState` the state before the first
///    commit. A log that continues another one (written with `continuing: true`, for a sink that appends drained
///    recordings) has `"continues": 41` instead of `initialState`: a pointer to the state after commit 41, which the
///    log it continues ends with; the reader passes that state in.
/// 2. One line per commit, in commit order: `{"commit": 12, "time": 0.25, "type": "todos.add", "scope": null,
///    "updater": {...}, "cause": 3}`. `commit` is the sequence number (from 1, consecutive; in a continuing log the
///    first is the one after `continues`); `time` the seconds on the store's clock since the recorder was attached;
///    `type` the registered name, or the Swift type name if the updater was not registered (then `updater` is
///    absent and `"registered": false`); `scope` where the updater applies, as registered (`"AppState.cart"`,
///    `"AppState.rooms[id: _]"` for any element of a collection), or the scope's own description for an
///    unregistered one, null for the root; `element` the element's id, for a scope on an element; `updater` the
///    updater's own encoding; `cause` the number of the side effect that dispatched it.
/// 3. Checks, right after the commit they name: `{"checkpoint": 12, "state": {...}}`, or, in a log written with a
///    `digest` function, `{"checkpoint": 12, "digest": "..."}`: the function's value for that state, which replay
///    checks with the same function. There is one after each commit the recorder kept a checkpoint at, and always
///    one after the last commit (computed by replay when the recorder kept none there): nothing at the end of a log
///    is unchecked.
/// 4. A line per side effect, after the commits and their checks: `{"effect": 3, "type": "MyApp.LoadUser",
///    "scope": null, "cause": null, "start": 0.1, "end": 0.3, "outcome": "completed"}`; `outcome` is `completed`,
///    `failed` (with `"error"`, the error's description), `cancelled`, or `running`.
///
/// ## Reading untrusted logs
///
/// A log is untrusted input (a bug report's attachment, a row of a database): whatever its bytes, reading it
/// returns a recording or throws a ``RecordingLogError``; it never traps, and takes time and memory in proportion
/// to its size. Reading checks everything and applies nothing. It refuses, naming the line:
/// - a newer version, another state type, a first line that is not a header, a second header;
/// - a line that is not one JSON object (Foundation's decoder refuses nesting deeper than 512 levels), lacks a
///   field, has a field of the wrong type, or has more than one kind (`commit`, `checkpoint`, `effect`);
/// - a number out of range: a `time`, `start` or `end` that is negative or beyond 10^15 seconds, a `commit`,
///   `effect` or `cause` below 1, `continues` below 0 or at `Int.max`, an `outcome` not listed above;
/// - a line out of place: a commit that is not the one after the previous commit (or after `continues`), a check
///   that does not follow the commit it names, a commit or check after a side effect;
/// - a log whose last commit has no check after it (``RecordingLogError/unverifiedEnd(lastCommit:)``), and a
///   digest line read without the digest function (``RecordingLogError/missingDigestFunction(line:)``): either
///   would leave commits that nothing checks;
/// - a last line cut off (without its newline) mid-object.
///
/// Lines are split on the byte `\n`; a `\r` before it is dropped (CRLF line ends read as LF ones), as is a UTF-8
/// byte order mark at the start; an empty line is refused. Replay then checks every state the log gives
/// (`Recording.replayedState()`): a log that was changed reads, and replays only up to the first check that
/// disagrees (`Recording.replay(into:)` checks none: replay a log from outside with `replayedState()` first). An
/// updater of a type the registry does not know is read as a stand-in at which replay stops with
/// `ReplayError/unknownType(sequence:typeName:)`. What a registered updater's own `Decodable` accepts, and what it
/// does when replayed, is the app's code.
///
/// ## Versions
///
/// This package writes version 2 and reads versions 1 and 2, with the same checks. Version 2 names the state type
/// by the registry's stable name, and always ends with a check. Version 1 named it by its short name
/// (`String(describing:)`), which is what a version-1 log is compared with: two state types of the same short
/// name in different modules or namespaces cannot be told apart there, and only the log's checks can refuse the
/// other one. Most version-1 logs do not end with a check (only when the recorder kept a checkpoint at the last
/// commit), and are refused with ``RecordingLogError/unverifiedEnd(lastCommit:)``: write them again from their
/// recordings with this version.
public enum RecordingLog {
  /// The version this package writes, and the newest it reads (it reads every version from 1 up).
  public static let version = 2
  /// The header's `format` field.
  public static let format = "katana.recording"

  /// Writes `recording` as JSON Lines (each line ends with a newline).
  ///
  /// The log ends with a check of the state after the last commit: the recording's checkpoint there if it keeps
  /// one, or else the state replayed from its last checkpoint (or its initial state). The recording's own
  /// `Recording.digests` (a log read with digests, written again) are written as they are, after their commits.
  ///
  /// - Parameters:
  ///   - recording: What to write.
  ///   - registry: The replayable updaters' names, and the state type's (``ReplayRegistry/stateType``).
  ///   - continuing: Write a pointer to the initial state (the state after the commit before the first one)
  ///     instead of the state itself: for a log that continues another one, such as the recordings a sink drains
  ///     one after the other (`StoreRecorder.drain(_:)`). Reading it takes that state.
  ///   - digest: Write each checkpoint as this function's value for its state instead of the state: a log that
  ///     stays small however big the state is, and that replay still checks. Use a function with the same value
  ///     on every machine and run (a hash of the state's encoding with a fixed algorithm, say; not `hashValue`,
  ///     which changes from one run to the next), and one that covers every field: replay checks no more than it.
  /// - Throws: ``RecordingLogError/encodingFailed(sequence:typeName:underlying:)`` if an updater's or the state's
  ///   own encoding throws; ``RecordingLogError/invalidRecording(reason:)`` for a recording a log cannot hold (a
  ///   hand-built one whose commits are not numbered consecutively from 1 up, or with a negative time);
  ///   ``RecordingLogError/finalStateNotReplayable(lastCommit:error:)`` if the recording keeps no checkpoint at its
  ///   last commit and cannot be replayed up to it (an updater read from a log as a stand-in, say).
  public static func encode<S: State & Codable>(
    _ recording: Recording<S>, registry: ReplayRegistry<S>, continuing: Bool = false,
    digest: ((S) -> String)? = nil
  ) throws(RecordingLogError) -> String {
    var writer = LogWriter(registry: registry, continuing: continuing, digest: digest)
    return try writer.write(recording)
  }

  /// Reads a log written by ``encode(_:registry:continuing:digest:)`` (this version or an older one).
  ///
  /// - Parameters:
  ///   - text: The log.
  ///   - registry: The replayable updaters' names, and the state type's (``ReplayRegistry/stateType``).
  ///   - initialState: The state a continuing log starts from (the state the log it continues ends with); a log
  ///     that carries its initial state ignores it.
  ///   - digest: The function the log's digest checkpoints were written with: the recording checks the replayed
  ///     states with it. A log with digests is refused without it (nothing would check it).
  /// - Throws: `RecordingLogError`; nothing is returned from a log with any bad line (see "Reading untrusted
  ///   logs" above).
  public static func decode<S: State & Codable>(
    _ text: String, registry: ReplayRegistry<S>, initialState: S? = nil, digest: (@Sendable (S) -> String)? = nil
  ) throws(RecordingLogError) -> Recording<S> {
    try decode(Data(text.utf8), registry: registry, initialState: initialState, digest: digest)
  }

  /// Reads a log from its bytes (a file's contents, say), as decoding its text does. Bytes that are not UTF-8 make
  /// their line malformed.
  public static func decode<S: State & Codable>(
    _ data: Data, registry: ReplayRegistry<S>, initialState: S? = nil, digest: (@Sendable (S) -> String)? = nil
  ) throws(RecordingLogError) -> Recording<S> {
    try LogReader(registry: registry, initialState: initialState, digest: digest).read(data)
  }
}
