// Swift Testing helpers for Katana stores. Built in its own issue; for now the module only re-exports
// Katana.
@_exported import Katana
