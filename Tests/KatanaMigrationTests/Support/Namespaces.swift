/// Katana 6's examples after MIGRATION.md's stage 1: the packages switched, promises kept.
///
/// Each stage lives in its own namespace because both stages keep Katana 6's type names
/// (`CounterState`, `AppDependencies`, ...). MIGRATION.md shows the code between the
/// `MIGRATION-SNIPPET-BEGIN`/`END` markers without the namespace; `.ci/check-migration-snippets` checks that
/// the two stay identical.
enum Stage1 {}

/// The same examples after MIGRATION.md's stage 2: async/await, no promises.
enum Stage2 {}
