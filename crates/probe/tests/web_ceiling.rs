//! The software ceiling, in headless Chromium on SwiftShader: 2 GiB in
//! chunks of 512 MiB, twice (everything is freed in between). Its own test
//! binary, so its 4 GiB of allocation get wasm-bindgen-test-runner's 20 s
//! to themselves however busy the machine is (see `web.rs`).
#![cfg(all(target_arch = "wasm32", feature = "webgpu"))]

mod common;

use common::{cfg, log as web_sys_log, run, MIB};
use std::cell::Cell;
use vramfit_core::units::GIB;
use vramfit_core::Bytes;
use vramfit_probe::{probe, Outcome};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn chunks_of_512_mib_reach_a_2_gib_ceiling_and_everything_is_freed() {
    // Per-chunk times, for the record.
    let last = Cell::new(0u64);
    let first = probe(
        cfg(2 * GIB, 512 * MIB),
        |p| {
            web_sys_log(&format!(
                "  {} chunks, {} MiB, +{} ms",
                p.chunks,
                p.allocated.get() / MIB,
                p.elapsed_ms - last.get()
            ));
            last.set(p.elapsed_ms);
        },
        || false,
    )
    .await;
    assert_eq!(first.outcome, Outcome::Ceiling);
    assert_eq!(first.allocated, Bytes(2 * GIB));
    assert_eq!(first.chunks, 4);
    // Everything was freed: a second probe finds the same.
    let second = run(cfg(2 * GIB, 512 * MIB)).await;
    assert_eq!(
        (second.allocated, second.outcome, second.chunks),
        (first.allocated, first.outcome, first.chunks)
    );
}
