//! Mistral Small 4 and Mistral Large 3 (`mistral4`, issue 30) held to
//! their measurements (`scripts/measure/families/mistral4/`): transformers
//! 5.23's parameter counts (the presets, through `arch.rs`), its training
//! step (`families.jsonl`, `ground_truth.rs`) and `generate`
//! (`infer_transformers.jsonl`), and llama.cpp b10488's own lines on tiny
//! `mistral4` files (`llamacpp/tiny_gguf.py`, `llamacpp/raw/`).

mod common;

use common::{
    check, fixture_bytes, header_tensors, hf_fixture, infer_estimate, norms_as_converter,
    predicted_tensors, preset_arch, served,
};
use vramfit_core::model::hf_config;

/// The tiny `mistral4` file (`llamacpp/tiny_gguf.py`, the converter's own
/// tensors): 512 wide, 4 layers, 4 heads of 64 + 64 rotary with values of
/// 128, q and kv latents of 256, 16 experts of 256 (4 a token) and a shared
/// one in every layer, a vocabulary of 1024, untied.
const TINY: &str = "task=infer&engine=llamacpp&family=mistral4&hidden=512&layers=4&heads=4&kv_heads=4&head_dim=128&ffn=512&vocab=1024&tied=false&positions=8192&experts=16&experts_per_token=4&moe_ffn=256&shared_experts=1&q_lora_rank=256&kv_lora_rank=256&rope_dim=64&v_head_dim=128&gpu=rtx-4090";

/// Source: `llamacpp/raw/table.md` (`mistral4-conv-*.log`): the latent's
/// K-only cache (`kv_lora + rope` = 320 f16 a token and layer, no V:
/// 10.00 MiB at `-c 4096`, 40.00 at 16384 with 1 or 2 slots; q8_0 with
/// flash attention 340 bytes a token and layer, 5.31 MiB), the f16 file's
/// 62,810,112 bytes (the fused `ffn_gate_up_exps`, no `exp_probs_b`) and
/// llama-quantize's Q4_K_M, 19,095,552 (`attn_k_b` Q5_0 for its 64-wide
/// rows, `ffn_down_exps` Q6_K on layers 2 and 3).
#[test]
fn the_tiny_file_caches_and_loads_as_llama_cpp_does() {
    let cases: Vec<(String, (u64, u64))> = [
        (
            "weights=f16&ctx=4096&n_parallel=1",
            (62_810_112, 10_485_760),
        ),
        (
            "weights=f16&ctx=16384&n_parallel=1",
            (62_810_112, 41_943_040),
        ),
        (
            "weights=f16&ctx=16384&n_parallel=2",
            (62_810_112, 41_943_040),
        ),
        (
            "weights=f16&ctx=4096&n_parallel=1&flash_attn=on&cache_type_k=q8_0&cache_type_v=q8_0",
            (62_810_112, 5_570_560),
        ),
        (
            "weights=q4_k_m&ctx=4096&n_parallel=1",
            (19_095_552, 10_485_760),
        ),
    ]
    .into_iter()
    .map(|(args, want)| (format!("{TINY}&{args}"), want))
    .collect();
    check(&cases, |q| {
        let s = served(q);
        (s.weights_bytes.get(), s.kv_cache_bytes.get())
    });
}

/// Mistral Small 4's published numbers (`hf_configs/mistral-small-4.json`,
/// its text config) under the `mistral3` wrapper the checkpoint declares
/// read as the preset when the wrapper says its head is untied; without
/// the wrapper's flag `Mistral3Config`'s default ties it, whatever the text
/// config says (measured on the tiny config: `params_out.txt`, "tie
/// check"), one vocabulary × hidden matrix fewer. Mistral Large 3's
/// `params.json` as transformers' `mistral4`
/// (`hf_configs/mistral-large-3.json`) reads as its preset.
#[test]
fn the_configs_read_as_the_presets() {
    let text: serde_json::Value =
        serde_json::from_str(&hf_fixture("mistral-small-4")).expect("json");
    let wrapped = |top: serde_json::Value| {
        let mut w = serde_json::json!({
            "architectures": ["Mistral3ForConditionalGeneration"],
            "model_type": "mistral3",
            "text_config": text.clone(),
            "vision_config": {"model_type": "pixtral"},
        });
        if let (Some(w), Some(top)) = (w.as_object_mut(), top.as_object()) {
            w.extend(top.clone());
        }
        hf_config::read(&w.to_string()).expect("reads").arch
    };
    let small = preset_arch("mistral-small-4");
    assert_eq!(
        wrapped(serde_json::json!({"tie_word_embeddings": false})),
        small
    );
    let tied = wrapped(serde_json::json!({}));
    assert!(tied.tied);
    assert_eq!(
        small.params() - tied.params(),
        u128::from(small.vocab) * u128::from(small.hidden)
    );
    let large = hf_config::read(&hf_fixture("mistral-large-3")).expect("reads");
    assert_eq!(large.arch, preset_arch("mistral-large-3"));
}

/// Each engine on Mistral Small 4: llama.cpp's cache is the latent's 640
/// bytes a token and layer (36 layers); mlx-lm has no `mistral4` model and
/// MLX is refused by name.
#[test]
fn each_engine_on_small_4() {
    let kv = served("task=infer&engine=llamacpp&model=mistral-small-4&ctx=32768&gpu=h200-141")
        .kv_cache_bytes
        .get();
    assert_eq!(kv, 32_768 * 640 * 36);
    let mlx = infer_estimate("task=infer&engine=mlx&model=mistral-small-4&prompt=100&new=1")
        .expect_err("refused");
    insta::assert_snapshot!(mlx, @"mlx-lm has no model of this family (no module of its model_type in mlx_lm/models), so MLX cannot run it: use engine=llamacpp, ollama, vllm or transformers");
}

/// The tiny file's header (`fixtures/gguf/tiny-mistral4.header.gguf`:
/// `tiny_gguf.py`'s f16 file cut where its tensor data starts, whose
/// tensors are the converter's) reads to the model of [`TINY`] (with the
/// published context length), and the
/// file vramfit predicts has its tensors, each of the same elements; the
/// converter's file quantized by llama-quantize
/// (`tiny-mistral4-q.header.gguf`) reads to the same model.
#[test]
fn the_tiny_header_reads_to_its_model_and_is_predicted() {
    use vramfit_core::model::gguf::{architecture_of, read_gguf, FileType};
    let want = common::scenario(&format!("{TINY}&weights=f16"))
        .arch
        .expect("an architecture");
    let mut file = Vec::new();
    for name in ["tiny-mistral4", "tiny-mistral4-q"] {
        let bytes = fixture_bytes(&format!("gguf/{name}.header.gguf"));
        let h = read_gguf(&bytes).expect("header");
        let a = architecture_of(&h).expect("architecture");
        // The files' context length is the published model's.
        assert_eq!(
            a,
            vramfit_core::model::Architecture {
                positions: 1_048_576,
                ..want
            },
            "{name}"
        );
        if file.is_empty() {
            file = norms_as_converter(header_tensors(&h));
        }
    }
    let got = predicted_tensors(&want, FileType::F16).expect("predicted");
    assert_eq!(norms_as_converter(got), file);
}
