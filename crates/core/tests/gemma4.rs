//! Gemma 4 (text): its description (sliding and global layers, the global
//! layers' own head width and key/value heads, keys as values, the last
//! layers reusing keys and values, per-layer embeddings, the 26B-A4B's
//! experts beside the dense MLP), its import, and what each workload does
//! with it. Each number with its source.

use vramfit_core::model::{hf_config, Family};
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::{infer, train, EstimateError};

mod common;
use common::{hf_fixture as fixture, preset_arch as arch};

/// Gemma 4 E2B by hand from transformers 5.23's modules
/// (`Gemma4TextAttention.__init__`, `Gemma4TextMLP.__init__`,
/// `Gemma4TextDecoderLayer.__init__`, `Gemma4TextModel.__init__`):
/// sliding layers q `h × 8·256`, k and v `h × 1·256`, o, q/k norms of 256;
/// global layers the same at 512; the 20 last layers have no k, v or k
/// norm and an MLP of 2 × 6144; every layer 4 norms, a per-layer gate `h ×
/// 256`, projection `256 × h` and norm; the model the embedding, the
/// final norm, the per-layer table `262144 × 35·256`, its projection `h ×
/// 35·256` and norm of 256.
#[test]
fn e2b_by_hand() {
    let (h, v, p, l) = (1536u128, 262_144u128, 256u128, 35u128);
    let attn = |hd: u128, kv: bool| {
        let q = 8 * hd;
        let own = if kv { 2 * h * hd + hd } else { 0 };
        h * q + hd + own + q * h
    };
    let mlp = |f: u128| 3 * h * f;
    let rest = 4 * h + 2 * h * p + h;
    // Layers 0..15 keep their keys: 12 sliding, 3 global (4, 9, 14).
    let own = 12 * (attn(256, true) + mlp(6144)) + 3 * (attn(512, true) + mlp(6144));
    // Layers 15..35 reuse them: 16 sliding, 4 global, double-wide MLPs.
    let shared = 16 * (attn(256, false) + mlp(12288)) + 4 * (attn(512, false) + mlp(12288));
    let total = v * h + own + shared + l * rest + h + v * l * p + h * l * p + p;
    let a = arch("gemma4-e2b");
    assert_eq!(a.params(), total);
    // transformers 5.23 `Gemma4ForCausalLM(text_config).num_parameters()`
    // on the meta device (`scripts/measure/gemma4/params.txt`).
    assert_eq!(total, 4_628_569_344);
    assert_eq!(a.stats().tensors, 505);
}

/// Every preset's tensor count as transformers 5.23 builds it
/// (`scripts/measure/gemma4/params.txt`: 505, 623, 618, 627 and 772
/// tensors; the 12B as `Gemma4UnifiedForCausalLM`),
/// and its parameters (held by `every_published_config_imports_to_its_preset`
/// too).
#[test]
fn tensor_counts_are_transformers() {
    for (id, params, tensors) in [
        ("gemma4-e2b", 4_628_569_344u128, 505u128),
        ("gemma4-e4b", 7_463_013_376, 623),
        ("gemma4-12b", 11_907_350_272, 618),
        ("gemma4-26b-a4b", 25_233_141_760, 627),
        ("gemma4-31b", 30_697_345_280, 772),
    ] {
        let st = arch(id).stats();
        assert_eq!((st.params, st.tensors), (params, tensors), "{id}");
    }
}

/// The 31B's global layers: 4 key/value heads of 512, keys as values (no
/// `v_proj`); its sliding layers 16 of 256. By hand: sliding attention `h
/// × 32·256 + 2·h × 16·256 + 32·256 × h + 2·256`, global `h × 32·512 + h ×
/// 4·512 + 32·512 × h + 2·512`.
#[test]
fn the_31b_global_layers_have_keys_as_values() {
    let a = arch("gemma4-31b");
    let h = 5376u128;
    let sliding = h * 8192 + 2 * h * 4096 + 8192 * h + 512;
    let global = h * 16384 + h * 2048 + 16384 * h + 1024;
    let mlp = 3 * h * 21504;
    let layer = 4 * h + mlp;
    let total = 262_144 * h + 50 * sliding + 10 * global + 60 * layer + h;
    assert_eq!(a.params(), total);
    assert_eq!(total, 30_697_345_280);
    let g = a.attention_at(5);
    assert_eq!((g.head_dim, g.kv_heads, g.v_proj), (512, 4, false));
    let s = a.attention_at(4);
    assert_eq!((s.head_dim, s.kv_heads, s.v_proj), (256, 16, true));
}

/// The 26B-A4B: a dense MLP of 2112 beside 128 experts of 704 in every
/// layer, Gemma 4's router (`scale` h, `per_expert_scale` E, `proj` E ×
/// h) and three more norms; 8 experts of 128 a token.
#[test]
fn the_26b_keeps_its_dense_mlp_beside_the_experts() {
    let a = arch("gemma4-26b-a4b");
    let h = 2816u128;
    let sliding = h * 4096 + 2 * h * 2048 + 4096 * h + 512;
    let global = h * 8192 + h * 1024 + 8192 * h + 1024;
    let moe = 3 * h * 2112 + (h + 128 + 128 * h) + 128 * (2 * 704 * h + h * 704) + 3 * h;
    let layer = 4 * h + moe;
    let total = 262_144 * h + 25 * sliding + 5 * global + 30 * layer + h;
    assert_eq!(a.params(), total);
    assert_eq!(total, 25_233_141_760);
    // Active: all but 120 of every 128 experts.
    let experts = 30 * 128 * 3 * 704 * h;
    assert_eq!(a.active_params(), total - experts / 128 * 120);
}

/// The layer pattern: five sliding layers to a global one, four to one on
/// E2B (`layer_types`), the last `num_kv_shared_layers` reusing keys and
/// values.
#[test]
fn the_pattern_and_the_shared_layers() {
    let e2b = arch("gemma4-e2b");
    let global: Vec<u32> = (0..35).filter(|&l| e2b.global_at(l)).collect();
    assert_eq!(global, vec![4, 9, 14, 19, 24, 29, 34]);
    let shared: Vec<u32> = (0..35).filter(|&l| e2b.kv_shared_at(l)).collect();
    assert_eq!(shared, (15..35).collect::<Vec<_>>());
    assert_eq!((e2b.ffn_at(14), e2b.ffn_at(15)), (6144, 12288));
    let e4b = arch("gemma4-e4b");
    let global: Vec<u32> = (0..42).filter(|&l| e4b.global_at(l)).collect();
    assert_eq!(global, vec![5, 11, 17, 23, 29, 35, 41]);
    assert_eq!(e4b.ffn_at(41), 10240);
}

/// The published configs import to the presets; a config without
/// `text_config.model_type` is read by its wrapper's (`gemma4`), and
/// transformers' defaults fill what a config leaves out
/// (`Gemma4TextConfig`: `global_head_dim` 512, `hidden_size_per_layer_input`
/// 256 over `vocab_size_per_layer_input` 262144).
#[test]
fn configs_import() {
    for id in [
        "gemma4-e2b",
        "gemma4-e4b",
        "gemma4-12b",
        "gemma4-26b-a4b",
        "gemma4-31b",
    ] {
        let got = hf_config::read(&fixture(id)).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(got.arch, arch(id), "{id}");
    }
    let mut v: serde_json::Value = serde_json::from_str(&fixture("gemma4-e4b")).expect("json");
    let text = v["text_config"].as_object_mut().expect("text_config");
    for k in [
        "model_type",
        "global_head_dim",
        "hidden_size_per_layer_input",
        "vocab_size_per_layer_input",
        "layer_types",
    ] {
        text.remove(k);
    }
    let got = hf_config::read(&v.to_string()).expect("trimmed");
    assert_eq!(got.arch.family, Family::Gemma4Text);
    assert_eq!(got.arch, arch("gemma4-e4b"));
    // `hidden_size_per_layer_input: null` is no per-layer embedding.
    v["text_config"]["hidden_size_per_layer_input"] = serde_json::Value::Null;
    let got = hf_config::read(&v.to_string()).expect("null");
    assert_eq!((got.arch.ple_dim, got.arch.ple_vocab), (0, 0));
}

/// A Gemma 4 field another family does not model is refused by name.
#[test]
fn another_family_refuses_gemma4_fields() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture("gemma3-1b")).expect("json");
    v["num_kv_shared_layers"] = serde_json::json!(4);
    let e = hf_config::read(&v.to_string()).expect_err("refused");
    assert!(e.to_string().contains("num_kv_shared_layers"), "{e}");
}

fn refusal(q: &str) -> String {
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    let e = if q.contains("task=infer") {
        infer::estimate(&s.infer_run()).expect_err(q)
    } else {
        train::estimate(&s.train_run()).expect_err(q)
    };
    match e {
        EstimateError::NotModelled(m) => m.to_string(),
        EstimateError::Engine(m) => m,
        other => panic!("{q}: {other}"),
    }
}

/// What is not modelled yet is refused by name, never estimated as
/// something else: vLLM over pipeline stages; reentrant checkpointing in
/// full fine-tuning, offloaded checkpointing, several GPUs but plain data
/// parallelism. What vLLM's estimate leaves out it says: the encoders, and
/// Blackwell's 128-token blocks.
#[test]
fn what_is_not_modelled_is_refused() {
    for id in [
        "gemma4-e2b",
        "gemma4-e4b",
        "gemma4-12b",
        "gemma4-26b-a4b",
        "gemma4-31b",
    ] {
        let train = format!("model={id}&dtype=amp_bf16&optim=adamw&batch=1&seq=512");
        let s =
            decode_strict(&RawQuery::parse(&train)).unwrap_or_else(|n| panic!("{train}: {n:?}"));
        train::estimate(&s.train_run()).unwrap_or_else(|e| panic!("{train}: {e}"));
        let why = refusal(&format!("{train}&grad_ckpt=reentrant"));
        assert!(
            why.contains("reentrant checkpointing in full"),
            "{id}: {why}"
        );
        let why = refusal(&format!("{train}&grad_ckpt=offload&lora_r=8"));
        assert!(why.contains("Gemma 4 with offloaded"), "{id}: {why}");
        // Data parallelism adds its gradient buckets, whatever the layers;
        // sharded or split it is refused.
        let ddp = format!("{train}&gpus=2");
        let s = decode_strict(&RawQuery::parse(&ddp)).unwrap_or_else(|n| panic!("{ddp}: {n:?}"));
        let (one, two) = (
            train::estimate(
                &decode_strict(&RawQuery::parse(&train))
                    .expect("one")
                    .train_run(),
            ),
            train::estimate(&s.train_run()),
        );
        let peak = |e: Result<vramfit_core::report::Estimate, EstimateError>| {
            e.map(|e| e.peak_allocated_bytes.get())
                .unwrap_or_else(|e| panic!("{ddp}: {e}"))
        };
        assert!(peak(two) > peak(one), "{ddp}: DDP's buckets");
        let why = refusal(&format!("{train}&gpus=2&zero=3&shard=fsdp2"));
        assert!(why.contains("sharded"), "{id}: {why}");
        // vLLM estimates the language model and says what it leaves out;
        // over pipeline stages it refuses.
        let q = format!("task=infer&engine=vllm&model={id}&gpu=h100-sxm-80");
        let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
        let e = infer::estimate(&s.infer_run()).unwrap_or_else(|e| panic!("{q}: {e}"));
        let said = |what: &str| e.caveats.iter().any(|c| c.contains(what));
        assert!(said("text only: vLLM loads"), "{q}: {:?}", e.caveats);
        assert!(said("128-token blocks"), "{q}: {:?}", e.caveats);
        // At 8 ranks the 31B's pages are alike (one key/value head of each
        // kind a rank); the kernel's blocks are still said.
        let q8 = format!("{q}&tensor_parallel_size=8");
        let s = decode_strict(&RawQuery::parse(&q8)).unwrap_or_else(|n| panic!("{q8}: {n:?}"));
        let e = infer::estimate(&s.infer_run()).unwrap_or_else(|e| panic!("{q8}: {e}"));
        let said = e.caveats.iter().any(|c| c.contains("128-token blocks"));
        assert!(said, "{q8}: {:?}", e.caveats);
        let why = refusal(&format!("{q}&pipeline_parallel_size=2"));
        assert!(why.contains("Gemma 4"), "{id} vllm pp: {why}");
        let q = format!("task=infer&engine=transformers&model={id}");
        let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
        infer::estimate(&s.infer_run()).unwrap_or_else(|e| panic!("{q}: {e}"));
        // llama.cpp and Ollama estimate it: the cache from the description
        // (`tests/infer_local.rs`), the file predicted (or read); the E
        // models' estimate says their per-layer inputs are not in the
        // compute buffer.
        for engine in ["llamacpp", "ollama"] {
            let q = format!("task=infer&engine={engine}&model={id}&ctx=8192");
            let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
            let e = infer::estimate(&s.infer_run()).unwrap_or_else(|e| panic!("{q}: {e}"));
            let said = e.caveats.iter().any(|c| c.contains("per-layer inputs"));
            assert_eq!(said, id.contains("-e"), "{q}: {:?}", e.caveats);
        }
    }
}

fn made(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/gguf/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The tiny Gemma 4 files written with llama.cpp b10488's gguf-py
/// (`scripts/measure/gemma4/tiny_gguf.py`, their headers kept in
/// `fixtures/gguf/`) read to the architecture their config.json imports
/// to: `key_length` the global head and `key_length_swa` the sliding one,
/// the per-layer `head_count_kv` list the global layers' heads, no
/// `attn_v` on a global layer keys as values, the per-layer
/// `feed_forward_length` list a double-wide MLP, `shared_kv_layers`, the
/// per-layer embedding's width and rows, the sliding pattern's period.
#[test]
fn made_ggufs_read_to_their_configs() {
    use vramfit_core::model::gguf::{architecture_of, read_gguf};
    for name in ["gemma4-tiny-e", "gemma4-tiny-kv"] {
        let h = read_gguf(&made(&format!("{name}.header.gguf"))).expect("header");
        let from_gguf = architecture_of(&h).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = String::from_utf8(made(&format!("{name}.config.json"))).expect("utf-8");
        let from_config = hf_config::read(&text).expect("config").arch;
        // The GGUF has no trained context: the config's 4096 is the
        // converter's `context_length` too.
        assert_eq!(from_gguf, from_config, "{name}");
    }
    let h = read_gguf(&made("gemma4-tiny-e.header.gguf")).expect("header");
    let a = architecture_of(&h).expect("arch");
    assert_eq!(
        (
            a.sliding_period,
            a.kv_shared_layers,
            a.double_wide,
            a.ple_dim
        ),
        (5, 5, 1, 8)
    );
    let h = read_gguf(&made("gemma4-tiny-kv.header.gguf")).expect("header");
    let a = architecture_of(&h).expect("arch");
    assert_eq!(
        (
            a.global_kv_heads,
            a.k_eq_v,
            a.experts,
            a.head_dim,
            a.global_head_dim
        ),
        (2, 1, 2, 16, 32)
    );
}

/// The GGUF predicted for a Gemma 4 (`model/gguf/layout.rs`: the
/// converter's tensors, `Gemma4Model`) has the tensors of the files made
/// with every tensor `src/models/gemma4.cpp` loads, layer by layer, each
/// of the same size: at F32 every tensor is F32 but `per_layer_model_proj`,
/// which `llama-quantize` never quantizes and so keeps the converter's
/// bf16 (its elements compared).
#[test]
fn predicted_files_have_the_made_files_tensors() {
    use vramfit_core::model::gguf::{architecture_of, read_gguf, FileType};
    for name in ["gemma4-tiny-e", "gemma4-tiny-kv"] {
        let h = read_gguf(&made(&format!("{name}.header.gguf"))).expect("header");
        let a = architecture_of(&h).expect("arch");
        let got =
            common::predicted_tensors(&a, FileType::F32).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, common::header_tensors(&h), "{name}");
    }
}

/// The 12B (`gemma4_unified`) by hand: 40 sliding layers of 16 heads and 8
/// key/value heads of 256, 8 global ones of 16 heads of 512 over one
/// key/value head that is also the value (no `v_proj`), an MLP of 15360,
/// no per-layer embeddings (transformers 5.23 `Gemma4UnifiedTextAttention`,
/// `Gemma4UnifiedTextDecoderLayer`); llama.cpp caches it as the published
/// start-up of a Gemma 4 12B shows (`llamacpp_logs.jsonl`: 8 layers of 1
/// head × 512, 40 of 8 × 256).
#[test]
fn the_12b_is_gemma4_without_per_layer_inputs() {
    let a = arch("gemma4-12b");
    let h = 3840u128;
    let sliding = 2 * h * 4096 + 2 * h * 2048 + 512;
    let global = 2 * h * 8192 + h * 512 + 1024;
    let layer = 3 * h * 15360 + 4 * h;
    let total = 262_144 * h + 40 * sliding + 8 * global + 48 * layer + h;
    assert_eq!(a.params(), total);
    assert_eq!(total, 11_907_350_272);
    let m = vramfit_core::infer::local::model::LocalModel::of(
        &a,
        vramfit_core::infer::local::model::MlaKeys::Present,
    );
    assert_eq!(m.cache.counts(), (8, 40));
    assert_eq!((m.cache.full.k, m.cache.swa.k), (512, 2048));
}

/// mlx-lm (d78bf58e `gemma4_text.py`): a cache for the layers with their
/// own keys only (`make_cache`: `KVCache` on a global layer,
/// `RotatingKVCache(sliding_window)` on a sliding one), the global rows of
/// their own width; the weights as the walk has them (the shared layers'
/// k/v dropped by `sanitize`), each layer's `layer_scalar`, the router at 8
/// bits in groups of 64 (`quant_predicate`). E2B, 1000 + 200 tokens: 3
/// global layers of 1 × 512 (K and V) and 12 sliding of 1 × 256.
#[test]
fn mlx_caches_the_layers_with_their_own_keys() {
    use vramfit_core::infer::local::estimate::mlx_weights;
    use vramfit_core::infer::local::mlx::{mlx, Mlx};
    let a = arch("gemma4-e2b");
    let r = mlx(&a, &Mlx::defaults(1000, 200)).expect("mlx");
    let full = 3 * u128::from(r.capacity) * (512 + 512) * 2;
    let sliding = 12 * u128::from(r.window_capacity) * (256 + 256) * 2;
    assert_eq!(r.kv, full + sliding);
    assert_eq!((r.capacity, r.window_capacity), (1280, 512));
    // bf16: every parameter and a layer_scalar per layer.
    assert_eq!(mlx_weights(&a, None, 64, 2), 2 * a.params() + 2 * 35);
    // 4-bit in groups of 64: every matrix at 4 bits (a scale and a bias per
    // group, 2 bytes each) but the 26B's routers (128 × 2816 in each of 30
    // layers) at 8 bits; vectors and norms in bf16.
    use vramfit_core::model::{Place, Role};
    let moe = arch("gemma4-26b-a4b");
    let mut want = 2 * 30u128;
    moe.for_each_tensor(|at: Place, t| {
        let n = u128::from(t.stack) * u128::from(t.rows) * u128::from(t.cols);
        let matrix = t.cols > 1 && t.role != Role::Norm;
        let bytes = match (matrix, t.role == Role::Router) {
            (true, true) => n + n / 64 * 4,
            (true, false) => n / 2 + n / 64 * 4,
            (false, _) => 2 * n,
        };
        want += at.copies() * bytes;
    });
    assert_eq!(
        mlx_weights(
            &moe,
            vramfit_core::infer::run::MlxWeights::Q4.quant(),
            64,
            2
        ),
        want
    );
    let router = 30u128 * 128 * 2816;
    assert!(want > router / 2);
}
