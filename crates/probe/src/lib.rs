//! vramfit's GPU memory probe. Browsers expose no VRAM size, so the probe
//! measures how much the page can really allocate: buffer after buffer, each
//! written and read back, until the device refuses, a safety ceiling is
//! reached, new allocations slow down while held memory does not (swapping,
//! on a hardware adapter only), time runs out, or the user cancels.
//! Everything is freed at the end.
//!
//! - [`plan`]: the pure part (chunk plan, stop rules, outcomes), tested
//!   natively with a fake device.
//! - [`report`]: what the adapter says about itself (pure data).
//! - [`protocol`]: the messages between the page and the probe's Web Worker.
//! - `gpu` (feature `webgpu` in the browser, `native` natively): the thin
//!   wgpu driver: `report()` and `probe()`.

pub mod plan;
pub mod protocol;
pub mod report;

#[cfg(any(all(target_arch = "wasm32", feature = "webgpu"), feature = "native"))]
mod gpu;

#[cfg(any(all(target_arch = "wasm32", feature = "webgpu"), feature = "native"))]
pub use gpu::{probe, probe_as, report};
pub use plan::{
    AdapterKind, ChunkResult, Decision, Outcome, ProbeConfig, ProbeResult, Progress, Step, Tracker,
};
/// Runs a future to completion on this thread (natively, for the CLI).
#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
pub use pollster::block_on;
pub use report::{document_json, json_data_url, AdapterReport, FALLBACK_CEILING, FALLBACK_NOTE};
