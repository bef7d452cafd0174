//! The probe against a real WebGPU adapter: headless Chromium with
//! `--enable-unsafe-webgpu`, which offers SwiftShader (a software adapter
//! whose "GPU memory" is this machine's RAM). Ceilings stay at 2 GiB or less.
//!
//! No assertion here depends on how fast the machine is (issue 9: with the
//! CPU busy, SwiftShader's chunks slow down, which once read as swapping).
//! SwiftShader is a software adapter, where the swap rule does not apply;
//! the hardware rule's controls are driven with `probe_as` and thresholds
//! that make its verdict certain. wasm-bindgen-test-runner gives each test
//! binary 20 s (`WASM_BINDGEN_TEST_TIMEOUT`), so the two probes that
//! allocate gigabytes have a binary each (`web_ceiling.rs`,
//! `web_default_plan.rs`), and the probes here are small.
#![cfg(all(target_arch = "wasm32", feature = "webgpu"))]

mod common;

use common::{cfg, log as web_sys_log, run, MIB};
use std::cell::Cell;
use std::rc::Rc;
use vramfit_core::units::GIB;
use vramfit_core::Bytes;
use vramfit_probe::{probe, probe_as, report, AdapterKind, Outcome, ProbeConfig};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

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

#[wasm_bindgen_test]
async fn the_hardware_rule_times_a_control_after_each_baseline_chunk() {
    // On SwiftShader judged as hardware, with an infinite slowdown threshold:
    // the three baseline chunks are each followed by a control (re-touching
    // the chunk just made), no chunk is ever a suspect, and the probe lands
    // on its ceiling however busy the machine is.
    let calls = Rc::new(Cell::new(0u32));
    let c = Rc::clone(&calls);
    // Small chunks: the rule's steps, not SwiftShader's memory, are tested.
    let cfg = ProbeConfig {
        swap_slowdown: f64::INFINITY,
        ..cfg(64 * MIB, 16 * MIB)
    };
    let r = probe_as(
        AdapterKind::Hardware,
        cfg,
        move |_| c.set(c.get() + 1),
        || false,
    )
    .await;
    web_sys_log(&format!("hardware rule, no suspect: {r:?}"));
    assert_eq!(
        (r.outcome, r.allocated, r.chunks),
        (Outcome::Ceiling, Bytes(64 * MIB), 4)
    );
    // Once at the start, then after each of the 4 chunks and 3 controls.
    assert_eq!(calls.get(), 1 + 4 + 3);
}

#[wasm_bindgen_test]
async fn a_suspect_chunk_is_judged_by_a_control_and_freed_when_it_is_swap() {
    // Every chunk after the baseline is a suspect (no floor) and any
    // slowdown is too much (threshold 0): the 4th chunk is allocated, its
    // control runs, and the probe stops with swap without counting it.
    let cfg = ProbeConfig {
        swap_slowdown: 0.0,
        swap_floor_ms: 0.0,
        ..cfg(64 * MIB, 16 * MIB)
    };
    let r = probe_as(AdapterKind::Hardware, cfg, |_| {}, || false).await;
    web_sys_log(&format!("hardware rule, every chunk a suspect: {r:?}"));
    assert_eq!(
        (r.outcome, r.allocated, r.chunks),
        (Outcome::Swap, Bytes(48 * MIB), 3)
    );
    // The same thresholds on the software adapter SwiftShader is: no swap
    // rule, so it reaches the ceiling; and everything was freed.
    let r = run(cfg).await;
    assert_eq!(
        (r.outcome, r.allocated, r.chunks),
        (Outcome::Ceiling, Bytes(64 * MIB), 4)
    );
}
