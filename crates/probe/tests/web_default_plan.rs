//! The default plan, in headless Chromium on SwiftShader: an odd target's
//! ceiling lands exactly, in 256 MiB chunks. Its own test binary (see
//! `web.rs`).
#![cfg(all(target_arch = "wasm32", feature = "webgpu"))]

mod common;

use common::{run, MIB};
use vramfit_core::units::GIB;
use vramfit_core::Bytes;
use vramfit_probe::{Outcome, ProbeConfig};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn the_default_plan_lands_on_the_ceiling_exactly() {
    // An odd target: ceiling = target + 1 GiB, chunks of 256 MiB (SwiftShader
    // allows 1 GiB), the last one shorter.
    let target = Bytes(100 * MIB + 12);
    let c = ProbeConfig::for_target(target, GIB);
    assert_eq!(c.chunk, Bytes(256 * MIB));
    let r = run(c).await;
    assert_eq!(r.outcome, Outcome::Ceiling);
    assert_eq!(r.allocated, Bytes(GIB + 100 * MIB + 12));
    assert_eq!(r.chunks, 5);
}
