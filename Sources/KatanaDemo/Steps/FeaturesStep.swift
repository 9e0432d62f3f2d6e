import Katana

let featuresStep = Step(title: "Features: two features, each written against its own state, on one store") { trace in
  let seen = Protected<[String]>([])
  let seenScopes = Protected<[ScopeID]>([])
  let audit: StoreInterceptor = { _ in
    { next in
      { item in
        if let scoped = item as? any ScopedDispatchable {
          seen.withLock { $0.append("\(scoped.scope): \(type(of: scoped.base))") }
          seenScopes.withLock { $0.append(scoped.scope) }
        } else {
          seen.withLock { $0.append("the app: \(type(of: item))") }
        }
        try await next(item)
      }
    }
  }
  let initial = WorkspaceState(lists: [TodoListState(id: 1, title: "Groceries"), TodoListState(id: 2, title: "Garden")])
  let store = Store<WorkspaceState, WorkspaceDependencies>(
    interceptors: [audit], stateInitializer: { initial }, dependenciesInitializer: { _, _ in WorkspaceDependencies() })
  trace.say("WorkspaceState holds each feature's state: profile: ProfileState, lists: [TodoListState]")
  trace.say("the features' updaters know only their own state: RenameUser (ProfileState), AddListItem (TodoListState)")

  let profile = store.scope(\.profile, dependencies: \.profile)
  let groceries = store.scope(\.lists, id: 1, dependencies: \.list)
  let garden = store.scope(\.lists, id: 2, dependencies: \.list)
  trace.say("let profile = store.scope(\\.profile, dependencies: \\.profile)   -> ScopedStore<ProfileState, ...>")
  trace.say("let garden = store.scope(\\.lists, id: 2, dependencies: \\.list)  -> one element, found by its id")

  let profileCalls = Protected<[String]>([])
  let stopListening = profile.addListener { old, new in
    profileCalls.withLock { $0.append("\(old.name.isEmpty ? "(no name)" : old.name) -> \(new.name)") }
  }
  trace.say("profile.addListener { old, new in ... }                         (the profile's screen)")

  try await profile.dispatch(RenameUser(name: "Ada"))
  try await groceries.dispatch(AddListItem(text: "Milk"))
  try await garden.dispatch(AddListItem(text: "Seeds"))
  trace.say("dispatch RenameUser(\"Ada\") through profile, AddListItem through groceries and through garden")
  try trace.expect(store.state.profile.name, "Ada", "the profile's name")
  try trace.expect(store.state.lists.map(\.items), [["Milk"], ["Seeds"]], "the lists' items")
  try trace.expect(garden.state.items, ["Seeds"], "garden.state.items")

  trace.say("the root store's interceptor saw each item as a ScopedDispatchable, with the scope it came through:")
  for line in seen.current {
    trace.say("  \(line)")
  }
  try trace.expect(
    seen.current,
    [
      "WorkspaceState.profile: RenameUser",
      "WorkspaceState.lists[id: 1]: AddListItem",
      "WorkspaceState.lists[id: 2]: AddListItem",
    ], "what the interceptor saw")
  try trace.expect(seenScopes.current, [profile.id, groceries.id, garden.id], "the scopes the interceptor saw")
  trace.say("(scoped.scope == profile.id for the first, groceries.id and garden.id for the others)")

  trace.say("the profile's listener was called once, for RenameUser (\(profileCalls.current.joined())), not for the")
  trace.say("lists' two commits, which left the profile's slice equal")
  try trace.expect(profileCalls.current, ["(no name) -> Ada"], "the profile listener's calls")
  stopListening()

  try await store.dispatch(DeleteList(id: 2))
  trace.say("try await store.dispatch(DeleteList(id: 2))                    (the app removes the garden list)")
  do {
    try await garden.dispatch(AddListItem(text: "Rake"))
    throw TourFailure(description: "dispatching to the deleted list succeeded; expected ScopeError.missingElement")
  } catch let error as ScopeError {
    trace.say("try await garden.dispatch(AddListItem(\"Rake\"))  -> throws ScopeError.missingElement(\(garden.id))")
    try trace.expect(error, .missingElement(garden.id), "the error of a dispatch to the deleted list")
  }
  try trace.expect(store.state.lists, [TodoListState(id: 1, title: "Groceries", items: ["Milk"])], "the lists")
  try trace.check(garden.stateIfPresent == nil, "garden.stateIfPresent is not nil after the list was deleted")
  trace.proves(
    "features written against their own state share one store: items dispatched through a scope apply at its "
      + "slice and reach the root's interceptors as ScopedDispatchables naming their scope; a listener on a "
      + "scope is not called for another feature's commits; dispatching to an element that is gone throws "
      + "ScopeError and applies nothing anywhere")
}
