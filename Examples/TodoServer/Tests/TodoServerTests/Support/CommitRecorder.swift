import Katana
import NIOConcurrencyHelpers
import TodoServer

/// Records every commit of a store's state (as a listener), to check how the store applied changes.
final class CommitRecorder: Sendable {
  /// One commit: the sequence numbers before and after, and whether the to-dos changed.
  struct Commit: Sendable, Equatable {
    let from: Int64
    let to: Int64
    let changedTodos: Bool
  }

  private let box = NIOLockedValueBox<[Commit]>([])
  private let unsubscribe: StoreUnsubscribe

  init(_ store: TodoStore) {
    let box = box
    unsubscribe = store.addListener { old, new in
      box.withLockedValue {
        $0.append(Commit(from: old.sequence, to: new.sequence, changedTodos: old.todos != new.todos))
      }
    }
  }

  deinit { unsubscribe() }

  /// The commits so far, in order.
  var commits: [Commit] { box.withLockedValue { $0 } }

  /// Whether the commits took the state's sequence number from `start` to `end` with no number skipped or
  /// applied twice: each commit starts where the previous one ended and goes forward.
  func coversEveryNumberOnce(from start: Int64, to end: Int64) -> Bool {
    var position = start
    for commit in commits {
      guard commit.from == position, commit.to > commit.from else { return false }
      position = commit.to
    }
    return position == end
  }
}
