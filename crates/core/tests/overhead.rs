//! The default CUDA context against published readings of it
//! (`fixtures/cuda_context.jsonl`): at least every context with lazy module
//! loading (PyTorch's default since 1.13) read before a workload's kernels
//! load. Those are lower bounds for a training or `generate` process, whose
//! cuBLAS, attention and optimizer kernels load into the context as they
//! first run (not measured here: no GPU was lent).

use vramfit_core::caching;
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

#[test]
fn the_default_context_covers_published_lazy_contexts() {
    let text = include_str!("fixtures/cuda_context.jsonl");
    let ctx = u64::from(Scenario::default().overhead.cuda_ctx_mib) << 20;
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
