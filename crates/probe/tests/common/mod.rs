//! Helpers shared by the browser suites (`web*.rs`).
#![allow(dead_code)] // each suite uses a part

use vramfit_core::Bytes;
use vramfit_probe::{probe, ProbeConfig, ProbeResult};

pub const MIB: u64 = 1 << 20;

/// A probe to `ceiling` in chunks of `chunk`, otherwise the defaults.
pub fn cfg(ceiling: u64, chunk: u64) -> ProbeConfig {
    ProbeConfig {
        ceiling: Bytes(ceiling),
        chunk: Bytes(chunk),
        ..ProbeConfig::new(Bytes(ceiling), u64::MAX)
    }
}

/// Runs a probe (judging the adapter as it reports itself) and logs it.
pub async fn run(c: ProbeConfig) -> ProbeResult {
    let r = probe(c, |_| {}, || false).await;
    log(&format!(
        "probe ceiling {} MiB chunk {} MiB: {} bytes, {}, {} chunks, {} ms",
        c.ceiling.get() / MIB,
        c.chunk.get() / MIB,
        r.allocated.get(),
        r.outcome.key(),
        r.chunks,
        r.elapsed_ms
    ));
    r
}

/// A line in the browser's console (shown with `--nocapture` or on failure).
pub fn log(s: &str) {
    wasm_bindgen_test::console_log!("{s}");
}
