// Katana 6's promise-style API (Hydra's `Promise`, `Hydra.await`) on locks and Swift concurrency, so that a
// Katana 6 app migrates one file at a time. The module re-exports Katana, so that `import KatanaPromises`
// keeps everything visible.
@_exported import Katana
