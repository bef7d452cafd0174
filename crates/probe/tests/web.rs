//! The probe against a real WebGPU adapter: headless Chromium with
//! `--enable-unsafe-webgpu`, which offers SwiftShader (a software adapter
//! whose "GPU memory" is this machine's RAM). Ceilings stay at 2 GiB or less.
//!
//! The whole suite must finish inside wasm-bindgen-test-runner's 20 s
//! default (`WASM_BINDGEN_TEST_TIMEOUT`), so every probe here is small.
#![cfg(all(target_arch = "wasm32", feature = "webgpu"))]

use std::cell::Cell;
use std::rc::Rc;
use vramfit_core::units::GIB;
use vramfit_core::Bytes;
use vramfit_probe::{probe, report, Outcome, ProbeConfig, ProbeResult};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const MIB: u64 = 1 << 20;

fn cfg(ceiling: u64, chunk: u64) -> ProbeConfig {
    ProbeConfig {
        ceiling: Bytes(ceiling),
        chunk: Bytes(chunk),
        ..ProbeConfig::new(Bytes(ceiling), u64::MAX)
    }
}

async fn run(c: ProbeConfig) -> ProbeResult {
    let r = probe(c, |_| {}, || false).await;
    web_sys_log(&format!(
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

fn web_sys_log(s: &str) {
    wasm_bindgen_test::console_log!("{s}");
}

#[wasm_bindgen_test]
async fn report_lists_swiftshader_as_a_fallback_adapter() {
    let r = report()
        .await
        .expect("an adapter with --enable-unsafe-webgpu");
    web_sys_log(&r.to_json());
    assert!(r.fallback, "SwiftShader must be flagged as software: {r:?}");
    assert_eq!(r.backend, "webgpu");
    assert_eq!(r.architecture, "swiftshader");
    assert_eq!(r.vendor, "google");
    // The browser's own list: at least the 31 limits of WebGPU's first
    // version, with their spec names.
    for name in [
        "maxTextureDimension1D",
        "maxBindGroups",
        "maxComputeWorkgroupSizeX",
    ] {
        assert!(r.limit(name).is_some(), "{name} missing: {:?}", r.limits);
    }
    assert!(r.limits.len() >= 31, "{:?}", r.limits);
    assert!(r.features.iter().any(|f| f == "texture-compression-bc"));
    assert_eq!(r.max_buffer_size(), GIB);
    assert!(r.limit("maxStorageBufferBindingSize").unwrap_or(0) >= 128 * MIB);
    assert!(r.fallback_note().is_some());
}

#[wasm_bindgen_test]
async fn a_single_1_gib_buffer_is_refused_out_of_memory() {
    // SwiftShader's maxBufferSize is 1 GiB, but a 1 GiB buffer is refused:
    // the first chunk fails, so nothing could be allocated.
    let r = run(cfg(2 * GIB, GIB)).await;
    assert_eq!(r.outcome, Outcome::Oom);
    assert_eq!(r.allocated, Bytes::ZERO);
    assert_eq!(r.chunks, 0);
    assert!(r.message().starts_with("Nothing could be allocated"));
}

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

#[wasm_bindgen_test]
async fn cancel_stops_between_chunks_and_reports_progress() {
    let seen = Rc::new(Cell::new(0u32));
    let s = Rc::clone(&seen);
    let progress_calls = Rc::new(Cell::new(0u32));
    let p = Rc::clone(&progress_calls);
    let r = probe(
        cfg(2 * GIB, 256 * MIB),
        move |pr| {
            p.set(p.get() + 1);
            s.set(pr.chunks);
        },
        {
            let seen = Rc::clone(&seen);
            move || seen.get() >= 2
        },
    )
    .await;
    assert_eq!(r.outcome, Outcome::Cancelled);
    assert_eq!(r.chunks, 2);
    assert_eq!(r.allocated, Bytes(512 * MIB));
    // once at the start, once per chunk
    assert_eq!(progress_calls.get(), 3);
}

#[wasm_bindgen_test]
async fn the_time_limit_stops_the_probe() {
    let c = ProbeConfig {
        time_limit_ms: 0,
        ..cfg(GIB, 64 * MIB)
    };
    let r = run(c).await;
    assert_eq!(r.outcome, Outcome::Time);
    assert_eq!(r.chunks, 1, "the first chunk takes more than 0 ms");
    assert_eq!(r.allocated, Bytes(64 * MIB));
}
