//! Issue 30's families on llama.cpp b10488, held to llama-server's own
//! key/value lines on tiny files made for them
//! (`scripts/measure/families/`: `*_gguf.py` writes the file,
//! `run_llamacpp.sh` starts llama-server on the CPU and keeps its log in
//! `raw/`).

use vramfit_core::infer;
use vramfit_core::query::{decode_strict, RawQuery};

/// llama.cpp's key/value cache for `q`, in bytes.
fn kv(q: &str) -> u64 {
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    let e = infer::estimate(&s.infer_run()).unwrap_or_else(|e| panic!("{q}: {e}"));
    e.served.map(|s| s.kv_cache_bytes.get()).unwrap_or_default()
}

fn check(q: &str, expected: u64) {
    assert_eq!(kv(q), expected, "{q}");
}

/// OLMo 3 as `olmo3_gguf.py` writes it (8 layers, a 256-token window on
/// all but every 4th, 8 heads of 64, f16 cache), at `-c 4096`.
const OLMO3: &str = "task=infer&engine=llamacpp&family=olmo3&hidden=512&layers=8&heads=8&kv_heads=8&head_dim=64&ffn=1024&vocab=1024&positions=8192&sliding_window=256&sliding_layers=6&weights=f16&ctx=4096&gpu=rtx-4090";

/// Source: `raw/olmo3-c4096-np1.log` (`-np 1`): "size = 16.00 MiB (4096
/// cells, 2 layers)" and the SWA cache "size = 9.00 MiB (768 cells, 6
/// layers)"; `raw/olmo3-c4096-npauto.log` (4 automatic slots): 16.00 and
/// 18.00 MiB.
#[test]
fn olmo3_caches_its_window_as_llama_cpp_does() {
    check(&format!("{OLMO3}&n_parallel=1"), (16 + 9) << 20);
    check(OLMO3, (16 + 18) << 20);
}

/// MiniMax-M2 as `minimax_m2_gguf.py` writes it (4 layers, 2 key/value
/// heads of 64, rotary on 32, 8 experts), at `-c 4096 -np 1`.
/// Source: `raw/minimax-m2-c4096-np1.log`: "CPU KV buffer size = 8.00 MiB".
#[test]
fn minimax_m2_caches_every_layer() {
    check(
        "task=infer&engine=llamacpp&family=minimax_m2&hidden=512&layers=4&heads=8&kv_heads=2&head_dim=64&ffn=512&vocab=1024&positions=8192&experts=8&experts_per_token=2&moe_ffn=512&rope_dim=32&weights=f16&ctx=4096&n_parallel=1&gpu=rtx-4090",
        8 << 20,
    );
}
