//! Gemma 3n (`gemma3n_text`, issue 30) held to its measurements
//! (`scripts/measure/families/gemma3n/`): transformers 5.23's parameter
//! counts (`params.txt`, through the presets' fixtures in `arch.rs`),
//! llama.cpp b10488's own lines on a tiny `gemma3n` file (`tiny_gguf.py`,
//! `llamacpp.log`, `quantize_summary.txt`; its header in
//! `fixtures/gguf/tiny-gemma3n.header.gguf`), and mlx-lm d78bf58e on
//! mlx-cpu 0.32.4 (`mlx_tiny.txt`, `mlx_real.txt`).

mod common;

use common::{
    fixture_bytes, header_tensors, infer_estimate as estimate, predicted_tensors, served,
};
use vramfit_core::model::gguf::{architecture_of, read_gguf, FileType};
use vramfit_core::model::hf_config;
use vramfit_core::query::{decode_strict, RawQuery};

/// A file made for Gemma 3n (`tests/fixtures/gguf/NAME`).
fn made(name: &str) -> Vec<u8> {
    fixture_bytes(&format!("gguf/{name}"))
}

/// The tiny file `tiny_gguf.py` writes (every key llama.cpp b10488 reads
/// for `gemma3n`, every tensor `src/models/gemma3n.cpp` loads): 25 layers
/// of 64 (llama.cpp gives the first 20 a cache whatever the file says,
/// so the last 5 share), 2 heads of 32 over one key/value head, an MLP of
/// 128, a vocabulary of 64, a window of 16 on four layers in five,
/// per-layer embeddings of 256, F32 throughout.
const TINY: &str = "task=infer&engine=llamacpp&family=gemma3n_text&hidden=64&layers=25&heads=2&kv_heads=1&head_dim=32&ffn=128&vocab=64&positions=32768&sliding_window=16&sliding_layers=20&kv_shared_layers=5&ple_dim=256&ple_vocab=64&weights=f32&gpu=rtx-4090";

/// Source: `llamacpp.log` (runs 1 to 8): the full layers' and the sliding
/// layers' "CPU KV buffer size" lines, 4 full and 16 sliding layers of
/// the 20 with a cache (the 5 sharing layers have none): 2.00 + 1.50 MiB
/// at `-c 4096 -np 1` (768 sliding cells: 16 + 512 padded to 256), 2.00 +
/// 6.00 with 4 slots (a stream each), 2.00 + 1.50 unified, 1.06 + 0.80
/// with a q8_0 cache, 8.00 + 1.50 at `-c 16384`, 2.00 + 8.00 and 8.00 +
/// 32.00 with `--swa-full`; "CPU_Mapped model buffer size = 10.74 MiB":
/// the file's 11,266,368 bytes of tensors (gguf-py), every one loaded
/// (the shared layers' keys and values too).
#[test]
fn the_tiny_file_caches_and_loads_as_llama_cpp_does() {
    let mib = |x: f64| (x * f64::from(1 << 20)) as u64;
    for (args, full, sliding) in [
        ("ctx=4096&n_parallel=1", 2.0, 1.5),
        ("ctx=4096&n_parallel=4", 2.0, 6.0),
        ("ctx=4096&n_parallel=4&kv_unified=true", 2.0, 1.5),
        ("ctx=16384&n_parallel=1", 8.0, 1.5),
        ("ctx=4096&n_parallel=1&swa_full=true", 2.0, 8.0),
        ("ctx=16384&n_parallel=1&swa_full=true", 8.0, 32.0),
    ] {
        let q = format!("{TINY}&{args}");
        assert_eq!(
            served(&q).kv_cache_bytes.get(),
            mib(full) + mib(sliding),
            "{q}"
        );
    }
    // q8_0: 34 bytes a block of 32 (1.0625 and 0.796875 MiB).
    let q8 =
        format!("{TINY}&ctx=4096&n_parallel=1&flash_attn=on&cache_type_k=q8_0&cache_type_v=q8_0");
    let cells = 4 * 4096 + 16 * 768;
    assert_eq!(
        served(&q8).kv_cache_bytes.get(),
        cells * 2 * 32 / 32 * 34,
        "{q8}"
    );
    // The file itself, read as a user drops it on the page: every tensor
    // as written. (Predicted from a checkpoint, `weights=f32` keeps
    // AltUp's, Laurel's and `per_layer_model_proj`'s matrices at the
    // converter's bf16, as llama-quantize leaves them.)
    let bytes = made("tiny-gemma3n.header.gguf");
    let imp = vramfit_core::import::gguf(&bytes, "tiny-3n.gguf").expect("imported");
    let mut form = RawQuery::parse("task=infer&engine=llamacpp&ctx=4096&n_parallel=1&gpu=rtx-4090");
    for (k, v) in imp.model.changes().into_iter().chain(imp.file_keys.clone()) {
        form.set(k, &v);
    }
    let q = form.to_query_string();
    assert_eq!(served(&q).weights_bytes.get(), 11_266_368, "{q}");
    assert_eq!(served(&q).kv_cache_bytes.get(), mib(2.0) + mib(1.5), "{q}");
}

/// The tiny file's header reads to the config `tiny_gguf.py` wrote beside
/// it, and the file vramfit predicts for that model has the file's
/// tensors, each of the same size (AltUp's and Laurel's, the per-layer
/// table, the shared layers' keys and values).
#[test]
fn the_tiny_file_reads_to_its_config_and_is_predicted() {
    let h = read_gguf(&made("tiny-gemma3n.header.gguf")).expect("header");
    let from_gguf = architecture_of(&h).expect("architecture");
    let text = String::from_utf8(made("tiny-gemma3n.config.json")).expect("utf-8");
    let from_config = hf_config::read(&text).expect("config").arch;
    assert_eq!(from_gguf, from_config);
    assert_eq!(
        (
            from_gguf.kv_shared_layers,
            from_gguf.ple_dim,
            from_gguf.sliding_period
        ),
        (5, 256, 0)
    );
    for name in ["tiny-gemma3n", "tiny-gemma3n-q"] {
        let h = read_gguf(&made(&format!("{name}.header.gguf"))).expect("header");
        let a = architecture_of(&h).expect("arch");
        let got = predicted_tensors(&a, FileType::F32).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, header_tensors(&h), "{name}");
    }
}

/// The wider tiny file (hidden 256, heads of 128, MLP of 512, so that
/// k-quants fit its rows) quantized to Q4_K_M by llama-quantize b10488:
/// 22,782,272 bytes of tensors (`quantize_summary.txt`: F32 11,746,112,
/// Q6_K 2,096,640, Q4_K 8,939,520): the per-layer table Q6_K as the token
/// embedding, `attn_v` and `ffn_down` Q6_K on 13 of the 25 layers, and
/// AltUp's and Laurel's matrices and `per_layer_model_proj` never
/// quantized: F32 there, as the file was written F32, and half of that
/// from a checkpoint converted to bf16, which vramfit predicts
/// (11,513,664 bytes of them in F32: `altup_proj` and `altup_unembd_proj`
/// 786,432 each, `per_layer_model_proj` 6,553,600, per layer `laurel_l`
/// and `laurel_r` 65,536 each, `altup_router` 4,096, the two coefficient
/// matrices 320).
#[test]
fn the_wider_tiny_file_quantizes_as_llama_quantize_does() {
    let q = "task=infer&engine=llamacpp&family=gemma3n_text&hidden=256&layers=25&heads=2&kv_heads=1&head_dim=128&ffn=512&vocab=64&positions=32768&sliding_window=16&sliding_layers=20&kv_shared_layers=5&ple_dim=256&ple_vocab=64&ctx=4096&n_parallel=1&gpu=rtx-4090";
    let kept_f32 = 2 * 786_432 + 6_553_600 + 25 * (2 * 65_536 + 4_096 + 320);
    assert_eq!(kept_f32, 11_513_664);
    for (weights, bytes) in [("f32", 85_539_648), ("q4_k_m", 22_782_272)] {
        let q = format!("{q}&weights={weights}");
        assert_eq!(served(&q).weights_bytes.get(), bytes - kept_f32 / 2, "{q}");
    }
}

/// llama.cpp b10488 gives the first 20 layers of a `gemma3n` a cache of
/// their own whatever `num_kv_shared_layers` says
/// (`src/models/gemma3n.cpp:9`), mlx-lm the layers before the last
/// `num_kv_shared_layers` (`models/gemma3n.py`, `make_cache`): the tiny
/// file with 3 shared layers caches as with 5 on llama.cpp, and 2 more
/// sliding layers on MLX.
#[test]
fn llama_cpp_fixes_the_layers_with_a_cache_of_their_own() {
    let q = format!("{TINY}&ctx=4096&n_parallel=1");
    let three = q.replace("kv_shared_layers=5", "kv_shared_layers=3");
    let mib = 1 << 20;
    assert_eq!(
        served(&three).kv_cache_bytes.get(),
        2 * mib + 3 * mib / 2,
        "{three}"
    );
    let said = |q: &str| {
        let e = estimate(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        e.caveats.iter().any(|c| c.contains("first 20 layers"))
    };
    assert!(said(&three) && !said(&q), "{three}");
    let mlx = |q: &str| {
        let q = q
            .replace("engine=llamacpp", "engine=mlx")
            .replace("weights=f32", "weights=bf16")
            .replace("&ctx=4096&n_parallel=1", "&prompt=40&new=8");
        served(&q).kv_cache_bytes.get()
    };
    // Two more rotating caches of 16 cells, a key and a value of 32 each.
    assert_eq!(mlx(&three) - mlx(&q), 2 * 16 * 2 * 32 * 2);
    // None shared: llama.cpp still caches 20 layers, MLX all 25: 4 more
    // rotating caches of 16 cells and one more `KVCache` of 256 (48
    // tokens), a key and a value of 32 each.
    let none = q.replace("kv_shared_layers=5", "kv_shared_layers=0");
    assert_eq!(
        served(&none).kv_cache_bytes.get(),
        2 * mib + 3 * mib / 2,
        "{none}"
    );
    assert_eq!(mlx(&none) - mlx(&q), (4 * 16 + 256) * 2 * 32 * 2, "{none}");
}

/// mlx-lm's model, the shrunk one (`mlx_tiny.txt`: 10 layers of 128, the
/// last 4 sharing, 2 heads of 64 over one key/value head, a window of 16,
/// per-layer embeddings of 64 over 96 rows, MLP 256, vocabulary 128):
/// the weights as `mlx_lm.convert` leaves them (every layer's keys and
/// values, the shared layers' too; bf16, and 4 and 8 bits in groups of
/// 64: the matrices whose input is a multiple of 64, AltUp's router and
/// Laurel's two included), and the caches' arrays after `generate_step`
/// (5 `RotatingKVCache`s of 16 cells and a `KVCache` grown by 256), to
/// the byte. Its `kv_bits` fails (`RotatingKVCache Quantization NYI`):
/// refused.
#[test]
fn the_shrunk_model_on_mlx_as_measured() {
    let m = "task=infer&engine=mlx&family=gemma3n_text&hidden=128&layers=10&heads=2&kv_heads=1&head_dim=64&ffn=256&vocab=128&positions=4096&sliding_window=16&sliding_layers=8&kv_shared_layers=4&ple_dim=64&ple_vocab=96&q_group_size=64";
    for (weights, bytes) in [
        ("bf16", 4_155_840),
        ("4bit", 1_186_816),
        ("8bit", 2_219_520),
    ] {
        let q = format!("{m}&weights={weights}&prompt=10&new=4");
        assert_eq!(served(&q).weights_bytes.get(), bytes, "{q}");
    }
    for (prompt, new, buffers) in [(10, 4, 86_016), (40, 8, 86_016), (300, 4, 151_552)] {
        let q = format!("{m}&weights=bf16&prompt={prompt}&new={new}");
        assert_eq!(served(&q).kv_cache_bytes.get(), buffers, "{q}");
    }
    let q8 = format!("{m}&weights=bf16&prompt=40&new=8&kv_bits=8");
    assert!(estimate(&q8).is_err(), "{q8}");
}

/// The published E2B and E4B on mlx-lm (`mlx_real.txt`: the configs'
/// weights built lazily, never evaluated, and counted): bf16, 4 and 8
/// bits in groups of 64, to the byte.
#[test]
fn the_published_models_on_mlx_weigh_as_measured() {
    for (id, bf16, four, eight) in [
        ("gemma3n-e2b", 8_912_313_536, 2_507_323_584, 4_735_146_176),
        ("gemma3n-e4b", 13_733_393_376, 3_863_374_304, 7_296_424_416),
    ] {
        for (weights, bytes) in [("bf16", bf16), ("4bit", four), ("8bit", eight)] {
            let q = format!(
                "task=infer&engine=mlx&model={id}&weights={weights}&q_group_size=64&prompt=512&new=64"
            );
            assert_eq!(served(&q).weights_bytes.get(), bytes, "{q}");
        }
    }
}

/// transformers' `generate`, vLLM and training refuse Gemma 3n by name
/// (AltUp's streams are not measured); llama.cpp, Ollama and MLX run it.
#[test]
fn what_is_not_measured_is_refused_by_name() {
    for engine in ["transformers", "vllm"] {
        let q = format!("task=infer&engine={engine}&model=gemma3n-e2b");
        let e = estimate(&q).expect_err(&q);
        assert!(
            e.contains("Gemma 3n is modelled on llama.cpp, Ollama and MLX"),
            "{q}: {e}"
        );
    }
    for engine in ["llamacpp", "ollama", "mlx"] {
        let q = format!("task=infer&engine={engine}&model=gemma3n-e4b");
        assert!(estimate(&q).is_ok(), "{q}");
    }
    let q = "model=gemma3n-e2b&dtype=bf16&batch=1&seq=512";
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    let e = vramfit_core::train::estimate(&s.train_run()).expect_err(q);
    assert!(e.to_string().contains("training Gemma 3n"), "{e}");
}

/// A Gemma 3n config vramfit does not model says which field and why:
/// MLP widths that differ by layer, and AltUp streams or a Laurel rank
/// other than the ones llama.cpp b10488 fixes.
#[test]
fn configs_it_does_not_model_are_refused_by_field() {
    let e2b: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/hf_configs/gemma3n-e2b.json")).expect("json");
    let refused = |key: &str, v: serde_json::Value| {
        let mut c = e2b.clone();
        c[key] = v;
        hf_config::read(&c.to_string()).expect_err(key).to_string()
    };
    let mut widths = vec![serde_json::json!(8192); 30];
    widths[29] = serde_json::json!(16384);
    insta::assert_snapshot!(refused("intermediate_size", widths.into()), @"`intermediate_size` must be one whole number for every layer: vramfit models Gemma 3n's layers at one MLP width");
    insta::assert_snapshot!(refused("altup_num_inputs", 2.into()), @"`altup_num_inputs` must be 4: llama.cpp b10488 fixes it at 4 and vramfit models no other, not 2");
    insta::assert_snapshot!(refused("laurel_rank", 32.into()), @"`laurel_rank` must be 64: llama.cpp b10488 fixes it at 64 and vramfit models no other, not 32");
}
