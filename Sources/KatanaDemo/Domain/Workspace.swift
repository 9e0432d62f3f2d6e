import Katana

// Two features of a small workspace app, each written against its own state only, and the app state that
// holds them. The features' code never mentions `WorkspaceState`: the app mounts them with `store.scope`.

// MARK: - Feature: the user's profile

/// The profile feature's state.
struct ProfileState: State, Equatable {
  var name = ""
}

/// Renames the user: a state updater of the profile feature.
struct RenameUser: StateUpdater {
  let name: String
  func updateState(_ state: inout ProfileState) {
    state.name = name
  }
}

// MARK: - Feature: one to-do list (the app shows several, one feature per list)

/// The list feature's state: one element of the app's identified collection of lists.
struct TodoListState: State, Equatable, Identifiable {
  var id = 0
  var title = ""
  var items: [String] = []
}

/// Adds an item to the list: a state updater of the list feature.
struct AddListItem: StateUpdater {
  let text: String
  func updateState(_ state: inout TodoListState) {
    state.items.append(text)
  }
}

// MARK: - The app

/// The app's state: the profile, and the lists.
struct WorkspaceState: State, Equatable {
  var profile = ProfileState()
  var lists: [TodoListState] = []
}

/// The app removes a list (the user deleted it): a state updater of the app.
struct DeleteList: StateUpdater {
  let id: Int
  func updateState(_ state: inout WorkspaceState) {
    state.lists.removeAll { $0.id == id }
  }
}

/// The app's dependencies: one container per feature (these features need none of their own).
final class WorkspaceDependencies: SideEffectDependencyContainer {
  let profile = EmptySideEffectDependencyContainer()
  let list = EmptySideEffectDependencyContainer()

  init() {}

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}
