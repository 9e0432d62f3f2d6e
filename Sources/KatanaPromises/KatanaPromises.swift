// Katana 6's promise-style API on top of Swift concurrency. Built in its own issue; for now the module only
// re-exports Katana so that `import KatanaPromises` keeps everything visible.
@_exported import Katana
