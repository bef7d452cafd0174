//! The default CUDA context against published readings of it
//! (`fixtures/cuda_context.jsonl`): at least every context with lazy module
//! loading (PyTorch's default since 1.13) read before a workload's kernels
//! load. Those are lower bounds for a training or `generate` process, whose
//! cuBLAS, attention and optimizer kernels load into the context as they
//! first run (not measured here: no GPU was lent).

use vramfit_core::caching;
use vramfit_core::inputs::Overhead;
use vramfit_core::Scenario;

/// The context in one published reading: the reading less the caching
/// allocator's segment for the tensor alive then (none when 0 bytes).
fn context(row: &serde_json::Value) -> u64 {
    let reading = row["reading_bytes"].as_u64().expect("reading_bytes");
    let tensor = row["tensor_bytes"].as_u64().expect("tensor_bytes");
    let segment = if tensor == 0 {
        0
    } else {
        caching::allocation_size(caching::round_size(tensor))
    };
    reading - segment
}

/// PyTorch's default context is what a training process held beside its
/// allocator on the H200 (`scripts/measure/device/raw/train.jsonl`, a
/// fresh process's first run: `measured_device_used` less
/// `measured_reserved` once its steps ran), rounded up to a MiB.
#[test]
fn the_pytorch_context_is_the_measured_one() {
    let row: serde_json::Value = serde_json::from_str(
        include_str!("../../../scripts/measure/device/raw/train.jsonl")
            .lines()
            .next()
            .expect("a row"),
    )
    .expect("json");
    let at = |k: &str| row[k]["iter2"]["end_step"].as_u64().expect(k);
    let outside = at("measured_device_used") - at("measured_reserved");
    assert_eq!(outside, 804_061_184);
    assert_eq!(
        u64::from(Overhead::CONTEXT_TORCH),
        outside.div_ceil(1 << 20)
    );
    let s = Scenario::default();
    assert_eq!(
        s.overhead.context(s.context_default()),
        Overhead::CONTEXT_TORCH
    );
}

/// Several GPUs train with a process group on every rank: NCCL's
/// communicator (`Overhead::NCCL_COMMUNICATOR`, one rank's, measured on the
/// H200) is beside the context there, and only there.
#[test]
fn nccl_is_beside_the_context_where_several_gpus_train() {
    use vramfit_core::query::{decode_strict, RawQuery};
    // What the overhead holds beyond the reserve, in MiB.
    let fixed = |q: &str| {
        let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
        let e = vramfit_core::Estimates::primary_of(&s).unwrap_or_else(|e| panic!("{q}: {e:?}"));
        let alloc = e.peak_allocated_bytes.get();
        let over = e.peak_total_bytes.get() - alloc;
        (over - alloc * u64::from(s.overhead.reserve()) / 100) >> 20
    };
    let (ctx, nccl) = (
        u64::from(Overhead::CONTEXT_TORCH),
        u64::from(Overhead::NCCL_COMMUNICATOR),
    );
    let small = "model=llama3.2-1b&dtype=bf16&batch=2&seq=1024";
    let untied = "model=llama3.1-8b&dtype=bf16&batch=1&seq=1024";
    for (q, mib) in [
        (small.to_string(), ctx),
        (format!("{small}&gpus=2"), ctx + nccl),
        (format!("{small}&gpus=8&zero=3"), ctx + nccl),
        (format!("{small}&gpus=2&ctx_mib=100"), 100 + nccl),
        (format!("{untied}&gpus=8&tp=8"), ctx + nccl),
        (format!("{untied}&gpus=4&pp=4"), ctx + nccl),
    ] {
        assert_eq!(fixed(&q), mib, "{q}");
    }
}

#[test]
fn the_default_contexts_cover_published_lazy_contexts() {
    let text = include_str!("fixtures/cuda_context.jsonl");
    let ctx = u64::from(Overhead::CONTEXT_ASSUMED.min(Overhead::CONTEXT_TORCH)) << 20;
    let lazy: Vec<(String, u64)> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .filter(|r| r["cuda"].as_str().is_some_and(|c| c.contains("lazy")))
        .map(|r| (r["id"].as_str().unwrap_or("?").to_string(), context(&r)))
        .collect();
    assert_eq!(lazy.len(), 2, "{lazy:?}");
    for (id, bytes) in &lazy {
        assert!(*bytes <= ctx, "{id}: {bytes} above the default {ctx}");
    }
    // The torch 1.13 reading: 287,047,680 bytes less the 20 MiB segment of
    // a 6.4 MB tensor (under 10 MiB: `kLargeBuffer`).
    assert_eq!(lazy[0].1, 287_047_680 - (20 << 20));
}

/// `expandable_segments`: the reserve above the allocated peak falls from
/// 5% to 2% (`Overhead::RESERVE_*`, from the replays of
/// `scripts/measure/allocator/NOTES.md`), a `reserve_pct` given wins over
/// either, and the solver offers the setting with what it saves.
#[test]
fn expandable_segments_lowers_the_reserve() {
    use vramfit_core::query::{decode_strict, RawQuery};
    let run = |q: &str| {
        let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
        let e = vramfit_core::Estimates::primary_of(&s).unwrap_or_else(|e| panic!("{q}: {e:?}"));
        (s, e)
    };
    let base = "model=llama3.1-8b&dtype=bf16&optim=adamw&batch=2&seq=2048&gpu=h100-sxm-80";
    // The overhead above the allocated peak, less the context, in
    // hundredths of a percent of the allocated peak.
    let reserve = |rest: &str| {
        let (_, e) = run(&format!("{base}{rest}"));
        let alloc = e.peak_allocated_bytes.get();
        let ctx = u64::from(Overhead::CONTEXT_TORCH) << 20;
        let over = e.peak_total_bytes.get() - alloc - ctx;
        over * 10_000 / alloc
    };
    for (rest, pct) in [
        ("", 500),
        ("&expandable_segments=true", 200),
        ("&expandable_segments=true&reserve_pct=7", 700),
        ("&reserve_pct=0", 0),
    ] {
        let r = reserve(rest);
        assert!(
            r.abs_diff(pct) <= 1,
            "{rest}: {r} hundredths of a percent, not {pct}"
        );
    }
    let (s, e) = run(base);
    let offered = vramfit_core::solve::suggestions(&s, e.peak_total_bytes)
        .into_iter()
        .find(|g| {
            g.changes
                .iter()
                .any(|(k, _)| *k == vramfit_core::query::Key::ExpandableSegments)
        })
        .expect("offered");
    assert!(offered.saves.get() > 0, "{offered:?}");
    let (s, e) = run(&format!("{base}&expandable_segments=true"));
    assert!(!vramfit_core::solve::suggestions(&s, e.peak_total_bytes)
        .iter()
        .any(|g| g
            .changes
            .iter()
            .any(|(k, _)| *k == vramfit_core::query::Key::ExpandableSegments)));
}
