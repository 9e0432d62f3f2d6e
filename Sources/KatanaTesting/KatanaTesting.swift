// KatanaTesting: Swift Testing helpers for Katana stores (the test store and its configuration). The module
// re-exports Katana so that a test file needs one import.
@_exported import Katana
