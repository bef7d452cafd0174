//! Issue 30's families on llama.cpp b10488, held to llama-server's own
//! key/value and model-buffer lines on tiny files made for them
//! (`scripts/measure/families/`: `*_gguf.py` writes the file,
//! `run_llamacpp.sh` starts llama-server on the CPU and keeps its log in
//! `raw/`), and on mlx-lm (`scripts/measure/mlx/`).

mod common;

use common::{fixture_rows, infer_estimate, served};

/// llama.cpp's key/value cache for `q`, in bytes.
fn kv(q: &str) -> u64 {
    served(q).kv_cache_bytes.get()
}

/// A row's `kv_bits` as a link's key (nothing without one).
fn kv_bits(r: &serde_json::Value) -> String {
    r["kv_bits"]
        .as_u64()
        .map_or_else(String::new, |b| format!("&kv_bits={b}"))
}

/// The link of an mlx-lm row's run of `model`: its prompt and new tokens,
/// its weights (`bits`, or bf16), groups of 64, its `kv_bits`.
fn mlx_link(model: &str, r: &serde_json::Value, prompt: u64, new: u64) -> String {
    let weights = r["bits"]
        .as_u64()
        .map_or_else(|| "bf16".to_string(), |b| format!("{b}bit"));
    format!(
        "task=infer&engine=mlx&{model}&prompt={prompt}&new={new}&weights={weights}&q_group_size=64{}",
        kv_bits(r)
    )
}

fn check(q: &str, expected: u64) {
    assert_eq!(kv(q), expected, "{q}");
}

/// A hybrid's cache at `-c 16384` with 1, 4 and 64 slots: the attention
/// layers' `kv` bytes whatever the slots, and a recurrent `state` per slot.
fn check_slots(q: &str, kv: u64, state: u64) {
    for np in [1, 4, 64] {
        check(&format!("{q}&ctx=16384&n_parallel={np}"), kv + np * state);
    }
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

/// Llama 4 as `llama4_gguf.py` writes it (8 layers chunked by 8192 on all
/// but every 4th, 2 key/value heads of 64, 8 experts and a shared one), at
/// `-c 16384`.
const LLAMA4: &str = "task=infer&engine=llamacpp&family=llama4_text&hidden=512&layers=8&heads=8&kv_heads=2&head_dim=64&ffn=1024&vocab=1024&tied=false&positions=65536&experts=8&experts_per_token=1&moe_ffn=512&shared_experts=1&sliding_window=8192&sliding_layers=6&weights=f16&ctx=16384&gpu=rtx-4090";

/// Source: `raw/llama4-c16384-np1.log` (`-np 1`): "size = 16.00 MiB (16384
/// cells, 2 layers)" and the chunked layers' cache "size = 25.50 MiB (8704
/// cells, 6 layers)": the chunk plus a batch, as a sliding window's;
/// `raw/llama4-c16384-npauto.log` (4 automatic slots, one unified cache):
/// 16.00 and 48.00 MiB (16384 cells: four chunks and a batch are more than
/// the context). The file's tensors: "CPU_Mapped model buffer size =
/// 120.16 MiB", 125,995,136 bytes by gguf-py; the converter writes
/// `rope_freqs` (128 bytes) only for a config's llama3 rope scaling, which
/// a link does not carry.
#[test]
fn llama4_caches_its_chunks_as_llama_cpp_does() {
    check(&format!("{LLAMA4}&n_parallel=1"), (16 << 20) + (51 << 19));
    check(LLAMA4, (16 + 48) << 20);
    assert_eq!(served(LLAMA4).weights_bytes.get(), 125_995_136 - 128);
    // Maverick's interleaving (`STEP=2 llama4_gguf.py`: experts on layers
    // 1, 3, 5, 7, a dense MLP of 1024 on the others),
    // `raw/llama4-step2-c16384-np1.log`: the same caches, "CPU_Mapped model
    // buffer size = 78.10 MiB", 81,889,408 bytes of tensors by gguf-py.
    let q = format!("{LLAMA4}&moe_step=2&n_parallel=1");
    check(&q, (16 << 20) + (51 << 19));
    assert_eq!(served(&q).weights_bytes.get(), 81_889_408 - 128);
}

/// LFM2 as `lfm2_gguf.py` writes it (8 layers of 512, attention on 2
/// and 5 with 2 key/value heads of 64, short convolutions of 3 on the
/// other 6, f16 matrices).
const LFM2: &str = "task=infer&engine=llamacpp&family=lfm2&hidden=512&layers=8&heads=8&kv_heads=2&head_dim=64&ffn=1024&vocab=1024&positions=65536&linear_layers=6&linear_conv=3&weights=f16&gpu=rtx-4090";

/// Source: `raw/lfm2-c16384-np1.log`: the two attention layers' "size =
/// 16.00 MiB (16384 cells, 2 layers)" and the convolutions' "RS buffer
/// size = 0.02 MiB" (one cell: 6 layers × 512 × (3 − 1) f32 rows, 24,576
/// bytes, `n_embd_r` of `src/llama-hparams.cpp`); `-np 4` and `-np 64`:
/// the same 16 MiB split among the slots, and 0.09 and 1.50 MiB of state
/// (a cell per sequence); `raw/lfm2-c4096-np1-q8_0-fa.log`: a q8_0 cache
/// of 2.12 MiB (34 bytes per 32 values) beside the f32 state. The file's
/// tensors: "CPU_Mapped model buffer size = 39.57 MiB", 41,491,456 bytes
/// by gguf-py (`shortconv.conv` kept F32).
#[test]
fn lfm2_caches_and_loads_as_llama_cpp_does() {
    let state = 6 * 512 * 2 * 4;
    for (np, cells) in [(1, 1), (4, 4), (64, 64)] {
        check(
            &format!("{LFM2}&ctx=16384&n_parallel={np}"),
            (16 << 20) + cells * state,
        );
    }
    let q8 =
        format!("{LFM2}&ctx=4096&n_parallel=1&cache_type_k=q8_0&cache_type_v=q8_0&flash_attn=on");
    check(&q8, 4096 * 2 * 2 * 128 / 32 * 34 + state);
    let one = format!("{LFM2}&ctx=16384&n_parallel=1");
    assert_eq!(served(&one).weights_bytes.get(), 41_491_456);
}

/// Granite 4.0-H as `granitehybrid_gguf.py` writes it (6 layers of 256,
/// attention on 1 and 4 with 2 key/value heads of 64, Mamba-2 on the other
/// 4: 8 heads of 64, 2 groups, a state of 16, kernel 4; a dense MLP of 512).
const GRANITE: &str = "task=infer&engine=llamacpp&family=granitemoehybrid&hidden=256&layers=6&heads=4&kv_heads=2&head_dim=64&ffn=512&vocab=1024&positions=131072&linear_layers=4&linear_k_heads=2&linear_v_heads=8&linear_k_dim=16&linear_v_dim=64&linear_conv=4&gpu=rtx-4090";

/// Source: `raw/granitehybrid-dense-c16384-np1.log`: the two attention
/// layers' "size = 16.00 MiB (16384 cells, 2 layers)" and "RS buffer size
/// = 0.15 MiB" (one cell: 4 layers × (`n_embd_r` 3 × (512 + 2·2·16) +
/// `n_embd_s` 16 × 512) f32, 158,720 bytes, `src/llama-hparams.cpp`);
/// `-np 4` and `-np 64`: the same 16 MiB, 0.61 and 9.69 MiB of state (a cell
/// per sequence, R 1.69 and S 8.00 MiB at 64); `-c 4096 -ctk q8_0 -ctv q8_0
/// -fa on`: 2.12 MiB of keys and values beside the f32 state. The files'
/// tensors by gguf-py (`granite_hybrid/llamacpp.txt`): 9,390,464 bytes
/// ("CPU_Mapped model buffer size = 8.96 MiB"), 2,833,536 after
/// llama-quantize Q4_K_M; with 8 experts of 128 (2 used) and the shared
/// MLP of 256 as `ffn_*_shexp`, 16,517,504 and 5,306,240.
#[test]
fn granite_hybrid_caches_and_loads_as_llama_cpp_does() {
    let state = 4 * (3 * 576 + 16 * 512) * 4;
    let f16 = format!("{GRANITE}&weights=f16");
    check_slots(&f16, 16 << 20, state);
    let q8 =
        format!("{f16}&ctx=4096&n_parallel=1&cache_type_k=q8_0&cache_type_v=q8_0&flash_attn=on");
    check(&q8, 4096 * 2 * 2 * 128 / 32 * 34 + state);
    let one = "&ctx=16384&n_parallel=1";
    assert_eq!(
        served(&format!("{f16}{one}")).weights_bytes.get(),
        9_390_464
    );
    let q4 = format!("{GRANITE}&weights=q4_k_m{one}");
    assert_eq!(served(&q4).weights_bytes.get(), 2_833_536);
    let moe = GRANITE.replace("ffn=512", "ffn=128")
        + "&experts=8&experts_per_token=2&moe_ffn=128&shared_experts=2";
    check(&format!("{moe}&weights=f16{one}"), (16 << 20) + state);
    check(
        &format!("{moe}&weights=f16&ctx=16384&n_parallel=4"),
        (16 << 20) + 4 * state,
    );
    let m16 = served(&format!("{moe}&weights=f16{one}"));
    assert_eq!(m16.weights_bytes.get(), 16_517_504);
    let m4 = served(&format!("{moe}&weights=q4_k_m{one}"));
    assert_eq!(m4.weights_bytes.get(), 5_306_240);
}

/// Nemotron-H as `nemotron_h/nemotronh_gguf.py` writes it (10 layers of
/// 512, `M-M*-M-M*-`: 4 Mamba-2 of 16 heads of 48, 4 groups, a state of 32,
/// kernel 4; 2 attention layers of 8 heads and 2 key/value heads of 128; 4
/// squared-ReLU MLPs of 1024), and its MoE file (`MEM*EMEM*E`, Mamba-2 of 16
/// heads of 64, 4 MoE layers of 16 experts of 256, 4 used, a shared expert
/// of 512; `nemotron_h_moe`).
const NEMOTRON_H: &str = "task=infer&engine=llamacpp&family=nemotron_h&hidden=512&layers=10&heads=8&kv_heads=2&head_dim=128&ffn=1024&vocab=1024&positions=1048576&linear_layers=4&ffn_layers=4&linear_k_heads=4&linear_v_heads=16&linear_k_dim=32&linear_v_dim=48&linear_conv=4&tied=false&gpu=rtx-4090";

/// Source: `nemotron_h/raw/nemotronh-dense-c16384-np1.log`: the two
/// attention layers' "size = 32.00 MiB (16384 cells, 2 layers)", nothing
/// for the MLPs, "RS buffer size = 0.42 MiB" (one cell: 4 Mamba-2 layers ×
/// (`n_embd_r` 3 × (768 + 2·4·32) + `n_embd_s` 32 × 768) f32, 442,368
/// bytes); `-np 4` and `-np 64`: the same 32 MiB, 1.69 and 27.00 MiB of
/// state; `-c 4096 -ctk q8_0 -ctv q8_0 -fa on`: 4.25 MiB of keys and values
/// beside the f32 state. The MoE file: 0.56 and 35.75 MiB of state (4 ×
/// (3 × 1280 + 32 × 1024) × 4 a sequence). The files' tensors by gguf-py
/// (`nemotron_h/llamacpp.txt`): 26,397,440 and 59,059,200 bytes ("CPU_Mapped
/// model buffer size = 25.17 MiB", "56.32 MiB"); after llama-quantize
/// Q4_K_M 7,948,032 and 18,192,384. The MoE file's quantized experts are
/// predicted 608,256 bytes short: llama-quantize gives the `ffn_down_exps`
/// and `ffn_down_shexp` of layers 6 and 9 (`use_more_bits` of the block's
/// index) q6_K, where vramfit's order puts the MoE layers at 4 to 7 (one
/// pair), the difference of one pair from q4_K to q6_K (540,672 + 67,584);
/// the dense file's ffn_down tensors are counted by a running index, which
/// the order does not move.
#[test]
fn nemotron_h_caches_and_loads_as_llama_cpp_does() {
    let state = 4 * (3 * 1024 + 32 * 768) * 4;
    let f16 = format!("{NEMOTRON_H}&weights=f16");
    check_slots(&f16, 32 << 20, state);
    let q8 =
        format!("{f16}&ctx=4096&n_parallel=1&cache_type_k=q8_0&cache_type_v=q8_0&flash_attn=on");
    check(&q8, 4096 * 2 * 2 * 256 / 32 * 34 + state);
    let one = "&ctx=16384&n_parallel=1";
    assert_eq!(
        served(&format!("{f16}{one}")).weights_bytes.get(),
        26_397_440
    );
    let q4 = format!("{NEMOTRON_H}&weights=q4_k_m{one}");
    assert_eq!(served(&q4).weights_bytes.get(), 7_948_032);
    let moe = NEMOTRON_H
        .replace("ffn=1024", "ffn=256")
        .replace("linear_v_dim=48", "linear_v_dim=64")
        + "&experts=16&experts_per_token=4&moe_ffn=256&shared_experts=2";
    let moe_state = 4 * (3 * 1280 + 32 * 1024) * 4;
    check_slots(&format!("{moe}&weights=f16"), 32 << 20, moe_state);
    let m16 = served(&format!("{moe}&weights=f16{one}"));
    assert_eq!(m16.weights_bytes.get(), 59_059_200);
    let m4 = served(&format!("{moe}&weights=q4_k_m{one}"));
    assert_eq!(m4.weights_bytes.get(), 18_192_384 - 608_256);
}

/// LFM2-MoE as `lfm2moe_gguf.py` writes it: LFM2's tiny layers with the
/// first 2 dense (1024) and 8 experts of 256 (2 used) behind an F32 router
/// and expert bias in the others.
/// Source: `raw/lfm2moe-c16384-np1.log` and `-np4.log`: the same 16 MiB of
/// keys and values, 0.02 and 0.09 MiB of state, "CPU_Mapped model buffer
/// size = 57.66 MiB", 60,464,320 bytes of tensors by gguf-py
/// (`scripts/measure/families/lfm2/moe_llamacpp.txt`).
#[test]
fn lfm2_moe_caches_and_loads_as_llama_cpp_does() {
    let q = "task=infer&engine=llamacpp&family=lfm2_moe&hidden=512&layers=8&heads=8&kv_heads=2&head_dim=64&ffn=1024&vocab=1024&positions=128000&linear_layers=6&linear_conv=3&experts=8&experts_per_token=2&moe_ffn=256&dense_layers=2&weights=f16&ctx=16384&gpu=rtx-4090";
    let state = 6 * 512 * 2 * 4;
    check(&format!("{q}&n_parallel=1"), (16 << 20) + state);
    check(&format!("{q}&n_parallel=4"), (16 << 20) + 4 * state);
    let one = format!("{q}&n_parallel=1");
    assert_eq!(served(&one).weights_bytes.get(), 60_464_320);
}

/// mlx-lm generating with LFM2 (`tests/fixtures/mlx_lfm2_rows.jsonl`:
/// mlx-cpu 0.32.4, mlx-lm d78bf58e `models/lfm2.py`,
/// `scripts/measure/mlx/lfm2.sh`): a shrunk LFM2 (8 layers of 256,
/// attention on 2 and 5) in bf16 and 4 bits, prompts of 100 to 3000 with
/// 20 new tokens, 8- and 4-bit caches: the weights (the convolutions never
/// quantized) and what dropping the cache frees (each convolution layer's
/// state a view of its last step's `L_cache` tokens, held whole; the
/// attention layers' `KVCache`), to the byte; LFM2-350M's own config too.
/// Rows in float32 (not an MLX conversion) and of one forward over the
/// prompt (`new` 0) are not generations.
#[test]
fn lfm2_on_mlx_as_measured() {
    let rows = fixture_rows("mlx_lfm2_rows.jsonl");
    let mut held = 0;
    for r in &rows {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        if r["dtype"] != "bf16" || n("new") == 0 {
            continue;
        }
        let model = if r["config"] == "lfm2-shrunk.json" {
            "family=lfm2&hidden=256&layers=8&heads=4&kv_heads=2&head_dim=64&ffn=512&vocab=1024&positions=128000&linear_layers=6&linear_conv=3"
        } else {
            "model=lfm2-350m"
        };
        let q = mlx_link(model, r, n("prompt"), n("new"));
        let served = served(&q);
        assert_eq!(served.weights_bytes.get(), n("weights_bytes"), "{q}");
        let freed = n("conv_held_bytes") + n("attn_held_bytes");
        assert_eq!(served.kv_cache_bytes.get(), freed, "{q}");
        held += 1;
    }
    assert_eq!(held, 7);
}

/// mlx-lm with LFM2-MoE (`tests/fixtures/mlx_lfm2moe_rows.jsonl`: mlx-cpu
/// 0.32.4, mlx-lm d78bf58e `models/lfm2_moe.py`,
/// `scripts/measure/mlx/lfm2moe.sh`): a shrunk LFM2-MoE (8 layers of 256,
/// attention on 2 and 5, 2 dense layers, 8 experts of 128) in 4 and 8
/// bits, and LFM2-8B-A1B's own config in bf16, 4 and 8 bits (weights
/// only): the weights (the router at 8 bits in groups of 64, the expert
/// bias in fp32, the convolutions unquantized) and, for the generations,
/// what dropping the cache frees, to the byte. An unquantized bf16 model
/// does not run on mlx-cpu (`GatherMM` takes float32 only; its weights
/// are held), and float32 is not an MLX conversion.
#[test]
fn lfm2_moe_on_mlx_as_measured() {
    let rows = fixture_rows("mlx_lfm2moe_rows.jsonl");
    let (mut weights_held, mut caches_held) = (0, 0);
    for r in &rows {
        if r["dtype"] != "bf16" {
            continue;
        }
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        let model = if r["config"] == "lfm2moe-shrunk.json" {
            "family=lfm2_moe&hidden=256&layers=8&heads=4&kv_heads=2&head_dim=64&ffn=512&vocab=1024&positions=128000&linear_layers=6&linear_conv=3&experts=8&experts_per_token=2&moe_ffn=128&dense_layers=2"
        } else {
            "model=lfm2-8b-a1b"
        };
        let generated = r["new"].as_u64().filter(|&n| n > 0).is_some() && r["error"].is_null();
        let (prompt, new) = if generated {
            (n("prompt"), n("new"))
        } else {
            (100, 1)
        };
        let q = mlx_link(model, r, prompt, new);
        let served = served(&q);
        assert_eq!(served.weights_bytes.get(), n("weights_bytes"), "{q}");
        weights_held += 1;
        if generated {
            let freed = n("conv_held_bytes") + n("attn_held_bytes");
            assert_eq!(served.kv_cache_bytes.get(), freed, "{q}");
            caches_held += 1;
        }
    }
    assert_eq!((weights_held, caches_held), (9, 4));
}

/// mlx-lm with Granite 4.0-H (`tests/fixtures/mlx_granite_rows.jsonl`:
/// mlx-cpu 0.32.4, mlx-lm d78bf58e `models/granitemoehybrid.py`,
/// `scripts/measure/mlx/granite.sh`): a shrunk Granite (8 layers of 256,
/// attention on 2 and 5, Mamba-2 of 8 heads of 64, a state of 32, one or
/// two groups, kernel 4), dense and with 4 experts of 128 beside a shared
/// MLP of 256, in bf16, 4 and 8 bits, prompts of 100 to 3000 with 20 new
/// tokens, an 8-bit cache; Micro's and Tiny's sizes (weights only): the
/// weights (the router at 8 bits, the convolution and the SSM's vectors
/// unquantized) and what dropping the cache frees (the convolution's state
/// a view holding its last step's `K` tokens, the SSM state fp32, the
/// `KVCache`s), to the byte. Not generations: float32 (not an MLX
/// conversion), one forward over the prompt (`new` 0), an unquantized MoE
/// (mlx-cpu's `GatherMM` takes float32 only).
#[test]
fn granite_hybrid_on_mlx_as_measured() {
    const SHRUNK: &str = "family=granitemoehybrid&hidden=256&layers=8&heads=4&kv_heads=2&head_dim=64&ffn=512&vocab=1024&positions=131072&linear_layers=6&linear_k_heads=1&linear_v_heads=8&linear_k_dim=32&linear_v_dim=64&linear_conv=4";
    let rows = fixture_rows("mlx_granite_rows.jsonl");
    let (mut weights_held, mut caches_held) = (0, 0);
    for r in &rows {
        if r["dtype"] != "bf16" || !r["error"].is_null() {
            continue;
        }
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        let moe = r["config"] == "granite-moe-shrunk.json";
        let model = match r["override"]["hidden_size"].as_u64() {
            Some(2048) => "model=granite-4.0-h-micro".to_string(),
            Some(_) => "model=granite-4.0-h-tiny".to_string(),
            None => {
                let groups = r["override"]["mamba_n_groups"].as_u64().unwrap_or(1);
                let m = SHRUNK.replace("linear_k_heads=1", &format!("linear_k_heads={groups}"));
                if moe {
                    m.replace("ffn=512", "ffn=128")
                        + "&experts=4&experts_per_token=2&moe_ffn=128&shared_experts=2"
                } else {
                    m
                }
            }
        };
        let generated = r["new"].as_i64().is_some_and(|n| n > 0);
        let (prompt, new) = if generated {
            (n("prompt"), n("new"))
        } else {
            (100, 1)
        };
        let q = mlx_link(&model, r, prompt, new);
        let served = served(&q);
        assert_eq!(served.weights_bytes.get(), n("weights_bytes"), "{q}");
        weights_held += 1;
        if generated {
            let freed = n("conv_state_held_bytes") + n("ssm_state_held_bytes") + n("kv_held_bytes");
            assert_eq!(served.kv_cache_bytes.get(), freed, "{q}");
            caches_held += 1;
        }
    }
    assert_eq!((weights_held, caches_held), (23, 12));
}

/// mlx-lm with Nemotron-H (`tests/fixtures/mlx_nemotron_h_rows.jsonl`:
/// mlx-cpu 0.32.4, mlx-lm d78bf58e `models/nemotron_h.py`,
/// `scripts/measure/mlx/nemotron_h.sh`): a shrunk Nemotron Nano 2 (10
/// layers of 256, `M-M*-MM-*M`: 5 Mamba-2 of 8 heads of 64, a state of 32
/// or 64, one or two groups, kernel 4; 3 MLPs of 512; 2 attention layers of
/// 4 heads of 128) and a shrunk Nemotron 3 Nano (`MEM*EMEM*E`: 4 MoE
/// layers of 8 experts of 128, 2 a token, a shared expert of 256), 4-layer
/// stand-ins with the published Mamba-2 and attention shapes, and the 9B's
/// and 30B-A3B's sizes (weights only), in bf16, 4 and 8 bits, prompts of
/// 100 to 3000 with 20 new tokens, an 8-bit cache: the weights (`A_log`
/// and the correction bias fp32 by `cast_predicate`; the router an array,
/// never quantized; the convolution, norms and the SSM's vectors
/// unquantized) and what dropping the cache frees, to the byte. Not
/// generations: float32 (not an MLX conversion), one forward over the
/// prompt (`new` 0), an unquantized MoE (mlx-cpu's `GatherMM` takes float32
/// only).
#[test]
fn nemotron_h_on_mlx_as_measured() {
    const SHRUNK: &str = "family=nemotron_h&hidden=256&layers=10&heads=4&kv_heads=2&head_dim=128&ffn=512&vocab=1024&positions=131072&linear_layers=5&ffn_layers=3&linear_k_heads=1&linear_v_heads=8&linear_k_dim=32&linear_v_dim=64&linear_conv=4&tied=false";
    const MOE: &str =
        "linear_layers=4&ffn_layers=4&experts=8&experts_per_token=2&moe_ffn=128&shared_experts=2";
    // `q` with each of `keys`' values in place of its own.
    let set = |q: &str, keys: &str| {
        let mut pairs: Vec<String> = q.split('&').map(str::to_string).collect();
        for kv in keys.split('&') {
            let key = kv.split('=').next().unwrap_or_default();
            match pairs.iter_mut().find(|p| p.split('=').next() == Some(key)) {
                Some(p) => *p = kv.to_string(),
                None => pairs.push(kv.to_string()),
            }
        }
        pairs.join("&")
    };
    let rows = fixture_rows("mlx_nemotron_h_rows.jsonl");
    let (mut weights_held, mut caches_held) = (0, 0);
    for r in &rows {
        if r["dtype"] != "bf16" || !r["error"].is_null() {
            continue;
        }
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        let o = &r["override"];
        let moe = r["config"] == "nemotron_h-moe-shrunk.json";
        let groups = o["n_groups"].as_u64().unwrap_or(1);
        let state = o["ssm_state_size"].as_u64().unwrap_or(32);
        let shrunk = set(
            SHRUNK,
            &format!("linear_k_heads={groups}&linear_k_dim={state}"),
        );
        let model = match (
            o["hidden_size"].as_u64(),
            o["hybrid_override_pattern"].as_str(),
        ) {
            (Some(_), _) if moe => "model=nemotron-3-nano-30b-a3b".to_string(),
            (Some(_), _) => "model=nemotron-nano-9b-v2".to_string(),
            // The stand-ins: `M-*M` and `ME*M` with the published Mamba-2
            // and attention shapes.
            (None, Some(p)) => {
                let heads = o["num_attention_heads"].as_u64().unwrap_or(4);
                let kv = o["num_key_value_heads"].as_u64().unwrap_or(2);
                let v_heads = o["mamba_num_heads"].as_u64().unwrap_or(8);
                let v_dim = if moe { 64 } else { 80 };
                let base = set(
                    &shrunk,
                    &format!("layers=4&heads={heads}&kv_heads={kv}&linear_v_heads={v_heads}&linear_v_dim={v_dim}"),
                );
                assert_eq!(p.len(), 4, "{p}");
                let base = set(&base, "linear_layers=2&ffn_layers=1");
                if moe {
                    set(
                        &base,
                        "experts=8&experts_per_token=2&moe_ffn=128&shared_experts=2",
                    )
                } else {
                    base
                }
            }
            (None, None) if moe => set(&shrunk, MOE),
            (None, None) => shrunk,
        };
        let generated = r["new"].as_i64().is_some_and(|n| n > 0);
        let (prompt, new) = if generated {
            (n("prompt"), n("new"))
        } else {
            (100, 1)
        };
        let q = mlx_link(&model, r, prompt, new);
        let served = served(&q);
        assert_eq!(served.weights_bytes.get(), n("weights_bytes"), "{q}");
        weights_held += 1;
        if generated {
            let freed = n("conv_state_held_bytes") + n("ssm_state_held_bytes") + n("kv_held_bytes");
            assert_eq!(served.kv_cache_bytes.get(), freed, "{q}");
            caches_held += 1;
        }
    }
    assert_eq!((weights_held, caches_held), (26, 15));
    // mlx-lm takes its masks from the first attention and the first
    // Mamba-2 layer's caches (`nemotron_h.py:467-490`): without either it
    // fails, so the estimate is refused.
    let refusals: Vec<String> = [
        "linear_layers=5&ffn_layers=5",
        "linear_layers=0&ffn_layers=3",
    ]
    .iter()
    .map(|keys| {
        let q = set(
            &format!("task=infer&engine=mlx&{SHRUNK}&prompt=100&new=1"),
            keys,
        );
        infer_estimate(&q).expect_err(&q)
    })
    .collect();
    insta::assert_snapshot!(refusals.join("\n"), @r"
    mlx-lm reads its masks from the first attention layer's cache, which this model does not have (it fails with an IndexError)
    mlx-lm reads its masks from the first recurrent layer's cache, which this model does not have (it fails with an IndexError)
    ");
}

/// mlx-lm with DeepSeek Sparse Attention (`tests/fixtures/mlx_dsa_rows.jsonl`:
/// mlx-cpu 0.32.4, mlx-lm d78bf58e `models/deepseek_v32.py`, which
/// `glm_moe_dsa.py` reuses; `scripts/measure/families/dsa/mlx/dsa.sh`):
/// DeepSeek-V3.2's and GLM-5.1's configs shrunk to 3 layers of 256 (4
/// heads of 64 + 16, a q latent of 128, a kv latent of 64, values of 64, 8
/// experts of 64, 2 a token, after 1 or 3 dense layers, an indexer of 4
/// heads of 32), in bf16, 4 and 8 bits, prompts of 40 and 300 with 4 or
/// 300 new tokens, top-k 32 and 512, an 8-bit cache: the weights (every
/// indexer projection quantized, its LayerNorm not) and the bytes freed
/// when the latent's and the indexer's caches are dropped, to the byte
/// (top-k and `kv_bits` change neither: a `CacheList` has no
/// `to_quantized`). The unquantized bf16 mixture does not generate on
/// mlx-cpu (`GatherMM` takes float32 only): its weights alone. The
/// router is mlx-lm's `MoEGate`, a bare array never quantized, and its
/// correction bias a parameter kept fp32. Then the published configs'
/// weights, to the byte.
#[test]
fn sparse_attention_on_mlx_as_measured() {
    let rows = fixture_rows("mlx_dsa_rows.jsonl");
    let (mut weights_held, mut caches_held) = (0, 0);
    for r in &rows {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        let o = &r["override"];
        let on = |k: &str| o[k].as_u64().unwrap_or_else(|| panic!("{k} in {o}"));
        let family = r["model_type"].as_str().expect("model_type");
        let model = format!(
            "family={family}&hidden={}&layers={}&heads={}&kv_heads={}&head_dim={}&ffn={}&vocab={}&positions=163840&experts={}&experts_per_token={}&moe_ffn={}&shared_experts=1&dense_layers={}&q_lora_rank={}&kv_lora_rank={}&rope_dim={}&v_head_dim={}&index_heads={}&index_head_dim={}&index_topk={}&tied=false",
            on("hidden_size"),
            on("num_hidden_layers"),
            on("num_attention_heads"),
            on("num_key_value_heads"),
            on("qk_nope_head_dim") + on("qk_rope_head_dim"),
            on("intermediate_size"),
            on("vocab_size"),
            on("n_routed_experts"),
            on("num_experts_per_tok"),
            on("moe_intermediate_size"),
            on("first_k_dense_replace"),
            on("q_lora_rank"),
            on("kv_lora_rank"),
            on("qk_rope_head_dim"),
            on("v_head_dim"),
            on("index_n_heads"),
            on("index_head_dim"),
            on("index_topk"),
        );
        let q = format!(
            "{}&prefill_step_size={}",
            mlx_link(&model, r, n("prompt"), n("new")),
            n("prefill_step_size")
        );
        let served = served(&q);
        assert_eq!(served.weights_bytes.get(), n("weights_bytes"), "{q}");
        weights_held += 1;
        if r["error"].is_null() {
            let freed = n("latent_held_bytes") + n("indexer_held_bytes");
            assert_eq!(served.kv_cache_bytes.get(), freed, "{q}");
            caches_held += 1;
        }
    }
    assert_eq!((weights_held, caches_held), (20, 18));
    // The published configs' weights (`mlx_dsa_real_weights.jsonl`: the
    // models built lazily, never evaluated) in bf16, 4 and 8 bits.
    for r in fixture_rows("mlx_dsa_real_weights.jsonl") {
        let model = match r["model_type"].as_str() {
            Some("deepseek_v32") => "model=deepseek-v3.2",
            _ => "model=glm-5.1",
        };
        let q = mlx_link(model, &r, 1, 1);
        let want = r["weights_bytes"].as_u64().expect("weights_bytes");
        assert_eq!(served(&q).weights_bytes.get(), want, "{q}");
        weights_held += 1;
    }
    assert_eq!(weights_held, 26);
}

/// DeepSeek-V3.2 as `dsa/llamacpp/tiny_gguf.py` writes it (4 layers of
/// 512, the first dense; latent attention of 4 heads of 128 + 64, q and kv
/// latents of 256, values of 128; 16 experts of 256, 2 a token, a shared
/// one; an indexer of 4 heads of 128; and the MTP block the converter
/// appends, which llama.cpp does not load).
const DSA: &str = "task=infer&engine=llamacpp&family=deepseek_v32&hidden=512&layers=4&heads=4&kv_heads=4&head_dim=192&ffn=512&vocab=1024&positions=163840&experts=16&experts_per_token=2&moe_ffn=256&shared_experts=1&dense_layers=1&q_lora_rank=256&kv_lora_rank=256&rope_dim=64&v_head_dim=128&index_heads=4&index_head_dim=128&index_topk=2048&tied=false&gpu=rtx-4090";

/// Source: `scripts/measure/families/dsa/llamacpp/raw/deepseek32-c4096-np1.log`
/// (b10488, CPU): `llama_kv_cache_dsa` makes two caches, "size = 10.00
/// MiB (4096 cells, 4 layers, 1/1 seqs), K (f16): 10.00 MiB" (the latent,
/// 256 + 64 a cell) and "size = 4.00 MiB ... K (f16): 4.00 MiB" (the
/// indexer's keys, 128 a cell); `-c 16384`: 40 and 16 MiB; `-c 4096 -np
/// 4`: 1024 cells in 4 streams, the same bytes; `-ctk q8_0 -ctv q8_0 -fa
/// on`: 5.31 and 2.12 MiB (both caches take the K type). GLM-5's
/// `glm-dsa` (`glmdsa-*.log`) the same. The f16 file's tensors but the
/// MTP block (`deepseek32-f16-tensors.txt`): 53,639,360 bytes (llama.cpp
/// also loads that block's `exp_probs_b.bias`, 64 bytes, which vramfit
/// does not count: its loaded tensors are 53,639,424); llama-quantize's
/// Q4_K_M of it (`deepseek32-Q4_K_M-tensors.txt`, the MTP block counted as
/// a layer: layers 2 and 4 get a q6_K `ffn_down`, not 3): 15,949,504.
#[test]
fn sparse_attention_caches_as_llama_cpp_does() {
    let (latent, index) = (4 * 320 * 2, 4 * 128 * 2);
    for family in ["deepseek_v32", "glm_moe_dsa"] {
        let q = DSA.replace("deepseek_v32", family) + "&weights=f16";
        check(
            &format!("{q}&ctx=4096&n_parallel=1"),
            4096 * (latent + index),
        );
        check(
            &format!("{q}&ctx=16384&n_parallel=1"),
            16384 * (latent + index),
        );
        check(
            &format!("{q}&ctx=4096&n_parallel=4"),
            4096 * (latent + index),
        );
        let q8 =
            format!("{q}&ctx=4096&n_parallel=1&cache_type_k=q8_0&cache_type_v=q8_0&flash_attn=on");
        check(&q8, 4096 * 4 * (320 + 128) / 32 * 34);
        let one = format!("{q}&ctx=4096&n_parallel=1");
        assert_eq!(served(&one).weights_bytes.get(), 53_639_360, "{one}");
        let q4 = one.replace("weights=f16", "weights=q4_k_m");
        assert_eq!(served(&q4).weights_bytes.get(), 15_949_504, "{q4}");
    }
}

/// GPT-NeoX as `gptneox_gguf.py` writes it (4 layers of 512, 8 heads of
/// 64 with 16 rotated, f16 matrices and f32 norms and biases), at `-c 2048
/// -np 1` and at `-c 4096` with the automatic 4 slots.
const GPTNEOX: &str = "task=infer&engine=llamacpp&model=pythia-410m&hidden=512&layers=4&heads=8&kv_heads=8&head_dim=64&rope_dim=16&ffn=2048&vocab=1024&positions=2048&weights=f16&gpu=rtx-4090";

/// Source: `raw/gptneox-c2048-np1.log`: "CPU KV buffer size = 16.00 MiB",
/// "CPU_Mapped model buffer size = 26.11 MiB" (the file's tensors);
/// `raw/gptneox-c4096-npauto.log`: "CPU KV buffer size = 32.00 MiB". The
/// file's tensors, and llama-quantize b10488's files made of it, as
/// gguf-py reads them (`raw/gptneox_quantized.txt`, `gptneox_quantize.sh`;
/// the type each tensor got in `raw/gptneox-quantize-*.log`).
#[test]
fn gpt_neox_caches_and_loads_as_llama_cpp_does() {
    check(&format!("{GPTNEOX}&ctx=2048&n_parallel=1"), 16 << 20);
    check(&format!("{GPTNEOX}&ctx=4096"), 32 << 20);
    for (weights, bytes) in [
        ("f16", 27_373_568),
        ("q4_k_m", 8_859_648),
        ("q5_k_m", 10_039_296),
        ("q6_k", 11_292_672),
        ("q8_0", 14_594_048),
    ] {
        let q = format!("{GPTNEOX}&ctx=2048&n_parallel=1")
            .replace("weights=f16", &format!("weights={weights}"));
        assert_eq!(served(&q).weights_bytes.get(), bytes, "{q}");
    }
}

/// mlx-lm generating with Pythia-1B cut to 3 layers
/// (`tests/fixtures/mlx_gpt_neox_rows.jsonl`: mlx-cpu 0.32.4, mlx-lm
/// d78bf58e `models/gpt_neox.py`, `scripts/measure/mlx/neox.sh`): the
/// weights as `mlx_lm.convert` leaves them (bf16, 4 and 8 bits, biases and
/// norms unquantized) and the `KVCache` arrays at the end (256-token steps;
/// 8-bit with `kv_bits`), to the byte.
#[test]
fn gpt_neox_on_mlx_as_measured() {
    let rows = fixture_rows("mlx_gpt_neox_rows.jsonl");
    for r in &rows {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        let q = mlx_link("model=pythia-1b&layers=3", r, n("prompt"), n("new"));
        let served = served(&q);
        assert_eq!(served.weights_bytes.get(), n("weights_bytes"), "{q}");
        assert_eq!(served.kv_cache_bytes.get(), n("kv_bytes"), "{q}");
    }
    assert_eq!(rows.len(), 4);
}

/// mlx-lm generating with Llama 4 Scout shrunk to 8 layers of 256 (4 heads
/// of 64, 2 key/value heads, 4 experts of 128 and a shared one)
/// (`tests/fixtures/mlx_chunked_rows.jsonl`: mlx-cpu 0.32.4, mlx-lm
/// d78bf58e `models/llama4.py`, `scripts/measure/mlx/chunked.sh`): the
/// weights at 4 bits and the cache at the end, `KVCache` on every 4th
/// layer and `ChunkedKVCache` on the others (chunks of 512 and 300; a
/// prefill step of 100 once; `kv_bits` 8 and 4, which quantize the
/// `KVCache`s only; experts on every 2nd layer once, as Maverick's), to
/// the byte.
#[test]
fn llama4_on_mlx_as_measured() {
    let rows = fixture_rows("mlx_chunked_rows.jsonl");
    for r in &rows {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        let step = r["override"]["text_config"]["interleave_moe_layer_step"]
            .as_u64()
            .map_or_else(String::new, |s| format!("&moe_step={s}"));
        let q = format!(
            "task=infer&engine=mlx&model=llama4-scout&hidden=256&layers=8&heads=4&kv_heads=2&head_dim=64&ffn=256&vocab=512&experts=4&moe_ffn=128&sliding_window={}&sliding_layers=6&prompt={}&new={}&prefill_step_size={}&weights=4bit&q_group_size=64{}{step}",
            n("chunk"),
            n("prompt"),
            n("new"),
            n("prefill_step_size"),
            kv_bits(r),
        );
        let served = served(&q);
        assert_eq!(served.weights_bytes.get(), n("weights_bytes"), "{q}");
        let cache = n("chunked_nbytes") + n("full_nbytes");
        assert_eq!(served.kv_cache_bytes.get(), cache, "{q}");
    }
    assert_eq!(rows.len(), 11);
}

/// Every hybrid with short convolutions or Mamba-2 layers is estimated on
/// transformers' `generate` (LFM2 and LFM2-MoE: `infer/layer/short_conv.rs`;
/// Granite 4.0-H and Nemotron-H, Nemotron 3's experts too:
/// `infer/layer/mamba2.rs`) and on vLLM (R32, R33: its state pages), never
/// refused as a kind of layer vramfit does not know.
#[test]
fn recurrent_hybrids_estimate_on_transformers_and_vllm() {
    let mut n = 0;
    for p in vramfit_core::model::PRESETS {
        let spec = p.arch.family.spec();
        if !spec.short_conv() && !spec.mamba2() {
            continue;
        }
        for engine in ["transformers", "vllm"] {
            let q = format!("task=infer&engine={engine}&model={}&gpu=h100-sxm-80", p.id);
            assert!(infer_estimate(&q).is_ok(), "{q}");
        }
        n += 1;
    }
    assert_eq!(n, 13);
}
