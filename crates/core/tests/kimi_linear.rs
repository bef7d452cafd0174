//! Kimi Linear (`kimi_linear`, issue 30) held to its measurements
//! (`scripts/measure/families/kimi_linear/`): transformers 5.23's parameter
//! count (through the preset's fixture in `arch.rs`), llama.cpp b10488's
//! own lines on tiny `kimi-linear` files (`llamacpp/tiny_gguf.py`,
//! `llamacpp/raw/`), and mlx-lm d78bf58e on mlx-cpu 0.32.4
//! (`mlx/raw/rows.jsonl`).

mod common;

use common::{fixture_bytes, fixture_rows, infer_estimate as estimate, preset_arch, served};
use vramfit_core::query::{decode_strict, RawQuery};

/// The tiny files' geometry (`tiny_gguf.py`): 512 wide, 4 heads for the
/// KDA layers (of 128) and the latent attention (a latent of 256, heads
/// of 128 + 64 rotary, values of 128, no query low rank), kernels of 4,
/// an MLP of 512 on layer 0, then 16 experts of 256 (2 a token) and a
/// shared one, a vocabulary of 1024, untied, f16.
const TINY: &str = "task=infer&engine=llamacpp&family=kimi_linear&hidden=512&heads=4&kv_heads=4&head_dim=192&ffn=512&vocab=1024&tied=false&positions=8192&experts=16&experts_per_token=2&moe_ffn=256&shared_experts=1&dense_layers=1&kv_lora_rank=256&rope_dim=64&v_head_dim=128&linear_k_heads=4&linear_v_heads=4&linear_k_dim=128&linear_v_dim=128&linear_conv=4&gpu=rtx-4090";

/// The 8-layer file (latent attention on layers 3 and 7) and the 27-layer
/// one (the published pattern: 7 latent layers), from `raw/summary.txt`
/// and `raw/*.log`: the latent's K-only cache (`kv_lora + rope` = 320 f16
/// a token and layer: 5.00 MiB at `-c 4096`, 20.00 at 16384, 17.50 for
/// 7 layers; q8_0: 340 bytes a token, 2.66 MiB) and the KDA layers' F32
/// RS state per sequence (`3·(K − 1)·H·D + D²·H` floats: 1.61 MiB for 6
/// layers, 5.35 for 20; four times with 4 slots); the files' tensors
/// (gguf-py: 117,763,616 and 420,438,976 bytes at f16) and llama-quantize's
/// Q4_K_M (35,622,176 and 127,552,960: `ssm_f_b`, `ssm_g_b` and
/// `attn_k_b` Q5_0 for their 128-wide rows, the KDA layers' `attn_v` by
/// their own count, `ffn_down` by the layer's index).
#[test]
fn the_tiny_files_cache_and_load_as_llama_cpp_does() {
    let rs_layer = 4 * (3 * 3 * 512 + 128 * 128 * 4);
    let latent = |cells: u64, layers: u64| cells * 320 * 2 * layers;
    for (layers, kda, f16, q4) in [
        (8, 6, 117_763_616, 35_622_176),
        (27, 20, 420_438_976, 127_552_960),
    ] {
        let m = format!("{TINY}&layers={layers}&linear_layers={kda}");
        let mla = layers - kda;
        for (args, kv) in [
            ("ctx=4096&n_parallel=1", latent(4096, mla) + kda * rs_layer),
            (
                "ctx=16384&n_parallel=1",
                latent(16384, mla) + kda * rs_layer,
            ),
            (
                "ctx=4096&n_parallel=4",
                latent(4096, mla) + 4 * kda * rs_layer,
            ),
            (
                "ctx=4096&n_parallel=1&flash_attn=on&cache_type_k=q8_0&cache_type_v=q8_0",
                4096 * 340 * mla + kda * rs_layer,
            ),
        ] {
            let q = format!("{m}&weights=f16&{args}");
            assert_eq!(served(&q).kv_cache_bytes.get(), kv, "{q}");
        }
        for (weights, bytes) in [("f16", f16), ("q4_k_m", q4)] {
            let q = format!("{m}&weights={weights}&ctx=4096&n_parallel=1");
            assert_eq!(served(&q).weights_bytes.get(), bytes, "{q}");
        }
    }
}

/// mlx-lm d78bf58e on mlx-cpu 0.32.4 (`tests/fixtures/mlx_kimi_linear_rows.jsonl`,
/// `scripts/measure/families/kimi_linear/mlx/kimi.py`): the published
/// config's weights (bf16, 4 and 8 bits in groups of 64: the router at 8
/// bits, the convolutions, `A_log`, `dt_bias` and the correction bias
/// unquantized, the last three fp32), and the shrunk config's (the tiny
/// files' widths, 8 layers; one with 8 heads of 1024) weights and caches
/// after `generate_step`: the latent's `KVCache` (256-cell steps) and each
/// KDA layer's `ArraysCache(4)` (the three convolutions' last 3 inputs in
/// bf16, the state fp32), to the byte. The rows mlx-cpu could not run (a
/// bf16 MoE, `GatherMM`) keep their weights; its fp32 row is not a dtype
/// vramfit's MLX takes; `kv_bits` fails in mlx-lm and is refused.
#[test]
fn mlx_weighs_and_caches_as_measured() {
    let rows = fixture_rows("mlx_kimi_linear_rows.jsonl");
    let shrunk = "task=infer&engine=mlx&family=kimi_linear&layers=8&vocab=1024&tied=false&positions=8192&head_dim=192&ffn=512&experts=16&experts_per_token=2&moe_ffn=256&shared_experts=1&kv_lora_rank=256&rope_dim=64&v_head_dim=128&linear_layers=6&linear_k_dim=128&linear_v_dim=128&linear_conv=4&q_group_size=64";
    let mut checked = 0;
    for r in &rows {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        if r["dtype"] != "bf16" {
            continue;
        }
        let weights = r["bits"]
            .as_u64()
            .map_or_else(|| "bf16".to_string(), |b| format!("{b}bit"));
        let model = if r["config"] == "config.json" {
            "model=kimi-linear-48b-a3b".to_string()
        } else {
            let o = &r["override"];
            let hidden = o["hidden_size"].as_u64().unwrap_or(512);
            let heads = o["num_attention_heads"].as_u64().unwrap_or(4);
            let dense = o["first_k_dense_replace"].as_u64().unwrap_or(1);
            format!(
                "{shrunk}&hidden={hidden}&heads={heads}&kv_heads={heads}&linear_k_heads={heads}&linear_v_heads={heads}&dense_layers={dense}"
            )
        };
        // A prefill-only row (`new` 0; -1: weights only) read as one new
        // token: its cache in the same 256-cell step (100 and 300 tokens).
        let (prompt, new) = (n("prompt").max(1), r["new"].as_u64().unwrap_or(0).max(1));
        let kv = r["kv_bits"]
            .as_u64()
            .map_or_else(String::new, |b| format!("&kv_bits={b}"));
        let q = format!(
            "{model}&weights={weights}&prompt={prompt}&new={new}&prefill_step_size={}{kv}",
            n("prefill_step_size")
        )
        .replace(
            "task=infer&engine=mlx&model=",
            "task=infer&engine=mlx&q_group_size=64&model=",
        );
        let q = if q.starts_with("model=") {
            format!("task=infer&engine=mlx&q_group_size=64&{q}")
        } else {
            q
        };
        if r["error"].as_str().is_some_and(|e| e.contains("swapaxes")) {
            assert!(estimate(&q).is_err(), "{q}");
            checked += 1;
            continue;
        }
        let s = served(&q);
        assert_eq!(s.weights_bytes.get(), n("weights_bytes"), "{q}");
        if r["mla_nbytes"].is_u64() {
            let cache = n("mla_nbytes") + n("kda_nbytes");
            assert_eq!(s.kv_cache_bytes.get(), cache, "{q}");
        }
        checked += 1;
    }
    assert_eq!(checked, 16);
}

/// The 8-layer file's header (`fixtures/gguf/tiny-kimilinear.header.gguf`,
/// `tiny_gguf.py`'s file cut where its tensor data starts; gguf 0.19.0,
/// byte-identical to the measured file's tensors) reads to the model of
/// [`TINY`], its KDA layers those with no key/value heads, and the file
/// vramfit predicts for it has the file's tensors, each of the same size.
#[test]
fn the_tiny_header_reads_to_its_model_and_is_predicted() {
    use vramfit_core::model::gguf::{architecture_of, read_gguf, FileType};
    let bytes = fixture_bytes("gguf/tiny-kimilinear.header.gguf");
    let h = read_gguf(&bytes).expect("header");
    let a = architecture_of(&h).expect("architecture");
    let q = format!("{TINY}&layers=8&linear_layers=6&weights=f16&ctx=4096&n_parallel=1");
    let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    let want = s.arch.expect("an architecture");
    assert_eq!(
        a,
        vramfit_core::model::Architecture {
            positions: 1_048_576,
            ..want
        }
    );
    let got = common::predicted_tensors(&a, FileType::F16).expect("predicted");
    // Layer by layer (the file's latent layers 3 and 7 are the pattern's).
    assert_eq!(
        common::norms_as_converter(got),
        common::norms_as_converter(common::header_tensors(&h))
    );
}

/// The family's pattern: every fourth layer and the last full attention
/// (27 layers: 7 latent, 20 KDA; 8 layers: 2 and 6), the KDA layers of the
/// published list; a config listing as many elsewhere is refused, one
/// listing another count keeps it (the order said).
#[test]
fn the_published_layer_pattern_is_the_familys() {
    use vramfit_core::model::hf_config;
    let a = preset_arch("kimi-linear-48b-a3b");
    let latent: Vec<u32> = (0..27).filter(|&l| !a.linear_at(l)).collect();
    assert_eq!(latent, [3, 7, 11, 15, 19, 23, 26]);
    let config: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/hf_configs/kimi-linear-48b-a3b.json"))
            .expect("json");
    let with = |kda: Vec<u64>| {
        let mut c = config.clone();
        c["linear_attn_config"]["kda_layers"] = kda.into();
        hf_config::read(&c.to_string()).map(|m| m.arch)
    };
    let published: Vec<u64> = (1..=27).filter(|l| l % 4 != 0 && *l != 27).collect();
    assert_eq!(
        with(published.clone()).expect("published").linear_layers,
        20
    );
    let mut moved = published.clone();
    moved[19] = 27;
    let e = with(moved).expect_err("moved").to_string();
    insta::assert_snapshot!(e, @"`kda_layers` lists the KDA layers elsewhere than every layer but each fourth and the last, which vramfit does not model");
    let fewer = with(published[..19].to_vec()).expect("fewer");
    assert!(fewer.layer_order_caveat().is_some());
}

/// transformers' `generate`, vLLM and training refuse Kimi Linear by name
/// (its KDA layers are not measured there); llama.cpp, Ollama and MLX run
/// it, the published model's layer order kept (its latent layers 4, 8,
/// ..., 24 and 27, 1-based: the family's pattern), no caveat about it.
#[test]
fn what_is_not_measured_is_refused_by_name() {
    for engine in ["transformers", "vllm"] {
        let q = format!("task=infer&engine={engine}&model=kimi-linear-48b-a3b");
        let e = estimate(&q).expect_err(&q);
        assert!(
            e.contains("Kimi Linear is modelled on llama.cpp"),
            "{q}: {e}"
        );
    }
    for engine in ["llamacpp", "ollama", "mlx"] {
        let q = format!("task=infer&engine={engine}&model=kimi-linear-48b-a3b");
        let e = estimate(&q).unwrap_or_else(|e| panic!("{q}: {e}"));
        let said = e
            .caveats
            .iter()
            .any(|c| c.contains("KDA layers are taken as the first"));
        assert!(!said, "{q}: {:?}", e.caveats);
    }
    let q = "model=kimi-linear-48b-a3b&dtype=bf16&batch=1&seq=512";
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    let e = vramfit_core::train::estimate(&s.train_run()).expect_err(q);
    assert!(e.to_string().contains("training Kimi Linear"), "{e}");
}
