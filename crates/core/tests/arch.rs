//! Architectures: exact parameter counts for every preset, the config.json
//! importer on real files (both transformers layouts), and its messages.

mod common;

use common::hf_fixture;
use vramfit_core::import::{self as hf_config};
use vramfit_core::model::hf_config::{ConfigError, Reading};
use vramfit_core::model::presets::{preset, PRESETS};
use vramfit_core::model::{Architecture, Family};
use vramfit_core::query::Key;

#[test]
fn every_preset_matches_its_published_parameter_count() {
    assert!(PRESETS.len() >= 25, "{} presets", PRESETS.len());
    for p in PRESETS {
        assert_eq!(p.arch.validate(), Ok(()), "{}", p.id);
        assert_eq!(p.arch.params(), u128::from(p.published_params), "{}", p.id);
    }
    let mut ids: Vec<&str> = PRESETS.iter().map(|p| p.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), PRESETS.len(), "ids are unique");
}

/// Source: the ground truth's `n_params` (a model built by transformers 5
/// from these configs), the models' cards for the published figure.
fn check_params(id: &str, expected: u64) {
    let p = preset(id).unwrap_or_else(|| panic!("no preset {id}"));
    assert_eq!(p.arch.params(), u128::from(expected), "{id}");
}

#[test]
fn parameter_counts_by_hand() {
    // GPT-2: V h + P h + L (12 h² + 13 h) + 2 h, tied.
    check_params(
        "gpt2-124m",
        50257 * 768 + 1024 * 768 + 12 * (12 * 768 * 768 + 13 * 768) + 2 * 768,
    );
    // Llama 3.2 1B, tied: V h + L (2h + h q + 2 h kv + q h + 3 h f) + h.
    check_params(
        "llama3.2-1b",
        128256 * 2048 + 16 * (2 * 2048 + 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 8192) + 2048,
    );
    // Qwen2.5 0.5B adds q/k/v biases (896 + 2 × 128 per layer).
    check_params("qwen2.5-0.5b", 494_032_768);
    check_params("llama3.1-8b", 8_030_261_248);
    check_params("llama3.1-70b", 70_553_706_496);
}

/// Issue 10: every preset whose published config.json is in the fixtures
/// imports to exactly its architecture, and so to its parameter count.
#[test]
fn every_published_config_imports_to_its_preset() {
    let mut seen = 0;
    let mut families = std::collections::BTreeSet::new();
    for p in PRESETS {
        let path = format!(
            "{}/tests/fixtures/hf_configs/{}.json",
            env!("CARGO_MANIFEST_DIR"),
            p.id
        );
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let got = hf_config::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.id));
        assert_eq!(got.arch, p.arch, "{}", p.id);
        assert_eq!(
            got.arch.params(),
            u128::from(p.published_params),
            "{}",
            p.id
        );
        families.insert(p.arch.family.key());
        seen += 1;
    }
    assert!(seen >= 45, "{seen} configs");
    assert_eq!(
        families.len(),
        Family::ALL.len(),
        "a published config for every family: {families:?}"
    );
}

/// Issue 10: a Mixtral 8x7B config is 46.7 B parameters (it was read as a
/// 7.2 B Mistral), 12.9 B of them active per token.
#[test]
fn mixtral_is_46_7_billion_parameters() {
    let got = hf_config::parse(&hf_fixture("mixtral-8x7b")).expect("parses");
    assert_eq!(got.arch.family, Family::Mixtral);
    assert_eq!(got.arch.params(), 46_702_792_704);
    // Source: Mistral AI's announcement, "12.9B active parameters per token".
    assert_eq!(got.arch.active_params(), 12_879_925_248);
}

#[test]
fn imports_every_ground_truth_config_in_both_layouts() {
    for id in [
        "gpt2-124m",
        "llama-20m",
        "llama3.1-8b",
        "llama3.2-1b",
        "qwen2.5-0.5b",
        "qwen2.5-1.5b",
        "smollm2-135m",
    ] {
        let expected = preset(id).expect("preset").arch;
        for layout in ["", "transformers4/"] {
            let got = hf_config::parse(&hf_fixture(&format!("{layout}{id}"))).expect("parses");
            assert_eq!(got.arch, expected, "{layout}{id}");
            assert_eq!(got.assumed, None);
        }
    }
}

/// Issue 10: an unknown model_type was read as a Llama silently. It is an
/// error that names it; reading it as Llama-like is an explicit choice the
/// result carries.
#[test]
fn unknown_model_types_are_refused_unless_read_as_llama_by_choice() {
    let text = r#"{"model_type": "olmoe", "hidden_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 16, "intermediate_size": 1024, "vocab_size": 50304,
        "num_experts": 64, "num_experts_per_tok": 8, "tie_word_embeddings": false}"#;
    let e = hf_config::parse(text).expect_err("unknown");
    assert!(e.can_read_as_llama());
    assert_eq!(
        e,
        ConfigError::UnknownModelType {
            model_type: "olmoe".into(),
            not_understood: vec!["num_experts".into(), "num_experts_per_tok".into()],
        }
    );
    let got = hf_config::parse_as(text, Reading::AsLlama).expect("as Llama");
    assert_eq!(
        got.assumed.map(|t| t.as_str().to_string()),
        Some("olmoe".into())
    );
    assert_eq!(
        got.arch,
        Architecture {
            family: Family::Llama,
            hidden: 2048,
            layers: 16,
            heads: 16,
            kv_heads: 16,
            head_dim: 128,
            ffn: 1024,
            vocab: 50304,
            tied: false,
            positions: 0,
            ..Architecture::BLANK
        }
    );
}

#[test]
fn multimodal_configs_use_their_text_config() {
    let text = r#"{"model_type": "llava", "text_config": {"model_type": "llama",
        "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}}"#;
    let got = hf_config::parse(text).expect("parses");
    assert_eq!(got.arch.family, Family::Llama);
    assert_eq!(got.arch.params(), 8_030_261_248);
    // Issue 31: the checkpoint is multimodal, and a flat config is not
    // (unless it names an encoder's config).
    let mm = |i: &vramfit_core::import::Imported| {
        i.keys
            .iter()
            .any(|(k, v)| *k == Key::Multimodal && v == "true")
    };
    assert!(mm(&got));
    let flat = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
        "vocab_size": 128256}"#;
    assert!(!mm(&hf_config::parse(flat).expect("parses")));
    let with_vision = flat.replace("\"vocab_size\"", "\"vision_config\": {}, \"vocab_size\"");
    assert!(mm(&hf_config::parse(&with_vision).expect("parses")));
}

/// Issue 30: Kimi K2.5 and K2.6 wrap Kimi K2's text model (`model_type`
/// `kimi_k2`, DeepSeek-V3's architecture) in a `kimi_k25` vision-language
/// config: the text model is read as DeepSeek-V3, at K2's count, and the
/// checkpoint is multimodal.
/// Source: the K2.5 `text_config` values as copied in public test fixtures
/// (61 layers, 384 experts, q/kv LoRA ranks 1536/512), the same numbers
/// as `kimi-k2.json`; the count is transformers 5.23's DeepseekV3ForCausalLM
/// on the meta device.
#[test]
fn kimi_k25_reads_its_text_config_as_deepseek_v3() {
    let k2 = hf_fixture("kimi-k2");
    let text = format!(
        r#"{{"model_type": "kimi_k25", "architectures": ["KimiK25ForConditionalGeneration"],
        "vision_config": {{"vt_num_hidden_layers": 27}}, "text_config": {k2}}}"#
    );
    let got = hf_config::parse(&text).expect("parses");
    assert_eq!(got.arch.family, Family::DeepseekV3);
    assert_eq!(got.arch.params(), 1_026_408_209_408);
    assert!(got
        .keys
        .iter()
        .any(|(k, v)| *k == Key::Multimodal && v == "true"));
}

/// Every message a broken config.json can produce, word for word.
#[test]
fn broken_configs_say_which_field_is_wrong() {
    let cases = [
        "not json",
        "[1, 2]",
        r#"{"model_type": "falcon", "hidden_size": 4544}"#,
        r#"{"model_type": "gpt2", "n_embd": 768}"#,
        r#"{"model_type": "llama", "hidden_size": -5, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 8}"#,
        r#"{"model_type": "llama", "hidden_size": 10, "num_hidden_layers": 2, "num_attention_heads": 3, "intermediate_size": 8, "vocab_size": 8}"#,
        r#"{"model_type": "llama", "hidden_size": 12, "num_hidden_layers": 0, "num_attention_heads": 3, "intermediate_size": 8, "vocab_size": 8}"#,
        r#"{"model_type": "llama", "hidden_size": 12, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 8, "vocab_size": 8}"#,
        r#"{"model_type": "llama", "hidden_size": 12, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, "tie_word_embeddings": "yes"}"#,
        r#"{"model_type": "llama", "hidden_size": 1e30, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8}"#,
        // Issue 9, finding 6: the codec's bounds hold for config.json too
        // (every field up to 2^32 - 1 was accepted), and messages quote a
        // short, clean prefix of what the file holds.
        r#"{"model_type": "llama", "hidden_size": 4194304, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8}"#,
        r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 65536, "num_attention_heads": 32, "intermediate_size": 8, "vocab_size": 8}"#,
        r#"{"model_type": "llama", "hidden_size": 12, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, "tie_word_embeddings": "yesyesyesyesyesyesyesyesyesyesyesyesyesyesyesyesyes\u0000"}"#,
        r#"{"model_type": "mixtral\u0000xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "hidden_size": 12}"#,
        r#"{"model_type": 7}"#,
        r#"{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, "attention_bias": true}"#,
        r#"{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 8, "n_positions": 64, "resid_pdrop": 0.1, "attn_pdrop": 0.0}"#,
        // Issue 10: not a causal LM (its head is not over the vocabulary),
        // and mixture-of-experts numbers that do not make a router.
        r#"{"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 768}"#,
        r#"{"model_type": "llama", "architectures": ["LlamaForSequenceClassification"], "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8}"#,
        r#"{"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, "num_local_experts": 0, "num_experts_per_tok": 2}"#,
        r#"{"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 8, "num_local_experts": 4, "num_experts_per_tok": 5}"#,
        r#"{"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "moe_intermediate_size": -8, "vocab_size": 8, "num_experts": 4, "num_experts_per_tok": 2}"#,
        // Issue 30: GLM-4.5 without its q/k/v biases (transformers' default
        // when the field is left out) is not the family vramfit models,
        // and the rotary fraction must be one.
        r#"{"model_type": "glm4_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "moe_intermediate_size": 8, "vocab_size": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1}"#,
        r#"{"model_type": "glm4_moe", "attention_bias": true, "partial_rotary_factor": 2, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 8, "moe_intermediate_size": 8, "vocab_size": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1}"#,
        // GPT-NeoX without its parallel residual or its attention biases is
        // another build; its rotary fraction is `rotary_pct`; its hidden
        // and attention dropouts are one probability.
        r#"{"model_type": "gpt_neox", "use_parallel_residual": false, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 8}"#,
        r#"{"model_type": "gpt_neox", "attention_bias": false, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 8}"#,
        r#"{"model_type": "gpt_neox", "rotary_pct": 1.5, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 8}"#,
        r#"{"model_type": "gpt_neox", "hidden_dropout": 0.1, "attention_dropout": 0.0, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 8}"#,
        // DeepSeek Sparse Attention: GLM-5.2's layers reusing the previous
        // layer's indexer, an indexer without the query's latent, an
        // indexer in a family without one.
        r#"{"model_type": "glm_moe_dsa", "index_topk_freq": 4, "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 8, "moe_intermediate_size": 8, "vocab_size": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "q_lora_rank": 16, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8, "index_n_heads": 2, "index_head_dim": 16, "index_topk": 8}"#,
        r#"{"model_type": "deepseek_v32", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 8, "moe_intermediate_size": 8, "vocab_size": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8, "index_n_heads": 2, "index_head_dim": 16, "index_topk": 8}"#,
        r#"{"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 8, "moe_intermediate_size": 8, "vocab_size": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8, "index_n_heads": 2, "index_head_dim": 16}"#,
        // Granite 4.0-H's Mamba-2 scan in chunks other than the published
        // 256 (transformers' generate would hold other tensors).
        r#"{"model_type": "granitemoehybrid", "hidden_size": 64, "num_hidden_layers": 2, "layer_types": ["mamba", "attention"], "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 8, "shared_intermediate_size": 8, "vocab_size": 8, "num_local_experts": 0, "mamba_n_heads": 2, "mamba_d_head": 64, "mamba_d_state": 16, "mamba_chunk_size": 128}"#,
        // A recurrent state vLLM would keep in bfloat16 (vramfit models the
        // published float32).
        r#"{"model_type": "nemotron_h", "hidden_size": 64, "hybrid_override_pattern": "M*", "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 8, "vocab_size": 8, "mamba_num_heads": 2, "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 1, "mamba_ssm_cache_dtype": "bfloat16"}"#,
    ];
    let mut out = String::new();
    for c in cases {
        let e: ConfigError = hf_config::parse(c).expect_err("broken");
        out.push_str(&format!("{c}\n  {e}\n"));
    }
    insta::assert_snapshot!(out);
}

/// Issue 9, finding 6: a 5 MB model_type gives a short message, and a
/// config nested 10 000 levels deep an error, never a stack overflow.
#[test]
fn hostile_configs_give_short_messages() {
    let huge = format!(r#"{{"model_type": "{}"}}"#, "x".repeat(5 << 20));
    let e = hf_config::parse(&huge).expect_err("unknown");
    assert!(e.to_string().len() < 2048, "{} bytes", e.to_string().len());
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let e = hf_config::parse(&deep).expect_err("too deep");
    assert!(e.to_string().contains("recursion limit"), "{e}");
}

/// Mirrors of what the importer reads: every imported key is one the codec
/// accepts as it is.
#[test]
fn imported_keys_are_valid_query_keys() {
    let got = hf_config::parse(&hf_fixture("llama3.1-8b")).expect("parses");
    for (k, v) in &got.keys {
        let f = k.field().unwrap_or_else(|| panic!("no key {k}"));
        assert_eq!(f.validate(v), Ok(()), "{k}={v}");
    }
}

/// A config that asks for router logits turns the auxiliary loss on; the
/// same config without it does not.
#[test]
fn output_router_logits_turns_the_auxiliary_loss_on() {
    let with = hf_config::parse(&hf_fixture("tiny-mixtral-aux")).expect("aux");
    assert!(with.changes().contains(&(Key::AuxLoss, "true".to_string())));
    let without = hf_config::parse(&hf_fixture("tiny-mixtral")).expect("plain");
    assert!(without.changes().iter().all(|(k, _)| *k != Key::AuxLoss));
}

/// A checkpoint saved already quantized by bitsandbytes loads as such
/// (unsloth's `*-bnb-4bit` repositories carry this `quantization_config`).
#[test]
fn a_prequantized_checkpoint_imports_its_quantization() {
    let mut cfg: serde_json::Value =
        serde_json::from_str(&hf_fixture("llama3.1-8b")).expect("json");
    cfg["quantization_config"] = serde_json::json!({
        "quant_method": "bitsandbytes", "load_in_4bit": true,
        "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true,
        "bnb_4bit_compute_dtype": "bfloat16"
    });
    let changes = hf_config::parse(&cfg.to_string())
        .expect("import")
        .changes();
    assert!(
        changes.contains(&(Key::Quant, "nf4".to_string())),
        "{changes:?}"
    );
    assert!(changes.contains(&(Key::DoubleQuant, "true".to_string())));
    assert!(changes.iter().all(|(k, _)| *k != Key::BnbCompute));
    cfg["quantization_config"] = serde_json::json!({"quant_method": "fp8"});
    let changes = hf_config::parse(&cfg.to_string())
        .expect("import")
        .changes();
    assert!(changes.iter().all(|(k, _)| *k != Key::Quant), "{changes:?}");
}

/// A field a config leaves out takes transformers' default for its model
/// type (issue 16: gpt-oss without `attention_bias` was refused, although
/// `GptOssConfig` defaults it to true; Gemma 2 without softcapping fields
/// defaults to 50 and 30). Turned off explicitly, the description does not
/// hold and the config is refused.
/// Source: transformers 5.23 `GptOssConfig.__init__`, `Gemma2Config.__init__`.
#[test]
fn left_out_fields_take_the_model_types_defaults() {
    let oss = hf_fixture("gpt-oss-20b");
    let mut cfg: serde_json::Value = serde_json::from_str(&oss).expect("json");
    let with = hf_config::parse(&oss).expect("as published").arch;
    cfg.as_object_mut().map(|o| o.remove("attention_bias"));
    let without = hf_config::parse(&cfg.to_string()).expect("default attention_bias");
    assert_eq!(without.arch, with);
    cfg["attention_bias"] = serde_json::Value::Bool(false);
    let off = hf_config::parse(&cfg.to_string()).expect_err("turned off");
    assert!(off.to_string().contains("attention_bias off"), "{off}");

    let gemma = hf_fixture("gemma2-2b");
    let mut cfg: serde_json::Value = serde_json::from_str(&gemma).expect("json");
    let with = hf_config::parse(&gemma).expect("as published").arch;
    let o = cfg.as_object_mut().expect("object");
    o.remove("attn_logit_softcapping");
    o.remove("final_logit_softcapping");
    assert_eq!(
        hf_config::parse(&cfg.to_string()).expect("defaults").arch,
        with
    );
    cfg["final_logit_softcapping"] = serde_json::Value::Null;
    assert!(hf_config::parse(&cfg.to_string()).is_err());
}

/// transformers 4 holds a mixture of experts' routed experts as one
/// `nn.Linear` each, transformers 5 as 3-D parameters: the same weights,
/// so the same parameter count; more and smaller tensors, and the largest
/// one an expert's matrix rather than a stack of them.
#[test]
fn both_expert_layouts_hold_the_same_parameters() {
    use vramfit_core::model::ExpertLayout;
    for p in PRESETS {
        let (a, n) = (&p.arch, p.id);
        let (stacked, linears) = (a.stats(), a.stats_as(ExpertLayout::Linears));
        assert_eq!(linears.params, stacked.params, "{n}");
        assert_eq!(linears.embedding, stacked.embedding, "{n}");
        let described = a.family.spec().legacy.expert_linears.is_some();
        if a.experts > 1 && described {
            let (e, h, f) = (
                u128::from(a.experts),
                u128::from(a.hidden),
                u128::from(a.moe_ffn),
            );
            // Per MoE layer: E × 3 weight tensors instead of 2 stacked ones.
            let moe_layers = u128::from(a.layer_kinds()[1].1);
            assert_eq!(
                linears.tensors - stacked.tensors,
                moe_layers * (3 * e - 2),
                "{n}"
            );
            assert!(linears.largest_tensor <= stacked.largest_tensor, "{n}");
            assert!(linears.largest_tensor >= h * f, "{n}");
        } else {
            assert_eq!(linears.tensors, stacked.tensors, "{n}");
        }
    }
}

/// Issue 16: every mixture of experts describes how transformers 4 runs
/// its experts (per-expert linears, masked or sorted, or stacked experts
/// looped over), so no 4.x estimate borrows transformers 5's grouped
/// experts, or runs every token through every expert (Llama 4:
/// `Moe::dense_dispatch`, in 4.51 as in 5.23), which training refuses on
/// transformers 4 (not measured there). A family no transformers 4 release has (LFM2-MoE: not in
/// 4.57.6), or whose training is refused for its recurrent layers
/// (Granite 4.0-H's Mamba-2), has no loop to describe. Source: each family's 4.x modeling
/// code (`family.rs`, `Legacy`).
#[test]
fn every_mixture_of_experts_describes_its_transformers_4_loop() {
    for f in Family::ALL {
        let spec = f.spec();
        // Training refused on every release for the recurrent layers
        // (LFM2's, Granite 4.0-H's Mamba-2): no loop to describe.
        let trained = spec.linear.is_none_or(|l| l.delta_net());
        let in_4 = (spec.legacy.in_448 || spec.legacy.in_457) && trained;
        if let Some(moe) = spec.moe.filter(|_| in_4) {
            assert!(
                spec.legacy.expert_linears.is_some()
                    || spec.legacy.experts_looped
                    || moe.dense_dispatch,
                "{f:?}"
            );
        }
    }
}

/// GLM-4.7-Flash's dense layers as transformers 5.23 builds them
/// (`mlp_layer_types`; absent, the first layer), refused where
/// `first_k_dense_replace` (which vLLM and llama.cpp read) disagrees, or
/// where the list is not dense layers first; a partial rotary factor is a
/// memory field the reader does not understand.
#[test]
fn glm_flash_reads_its_dense_layers() {
    let base: serde_json::Value =
        serde_json::from_str(&hf_fixture("glm-4.7-flash")).expect("fixture");
    let read = |edit: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
        let mut v = base.clone();
        edit(v.as_object_mut().expect("object"));
        hf_config::parse(&v.to_string()).map(|i| i.arch.dense_layers)
    };
    let types = |dense: usize| {
        let mut t = vec!["dense"; dense];
        t.extend(vec!["sparse"; 47 - dense]);
        serde_json::json!(t)
    };
    assert_eq!(read(&|_| {}), Ok(1));
    assert_eq!(
        read(&|o| {
            o.remove("first_k_dense_replace");
        }),
        Ok(1)
    );
    assert_eq!(
        read(&|o| {
            o.insert("mlp_layer_types".into(), types(3));
            o.insert("first_k_dense_replace".into(), 3.into());
        }),
        Ok(3)
    );
    let refused = |edit: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
        assert!(
            matches!(read(edit), Err(ConfigError::NotUnderstood { .. })),
            "{:?}",
            read(edit)
        );
    };
    refused(&|o| {
        o.insert("mlp_layer_types".into(), types(3));
    });
    refused(&|o| {
        let mut t = types(1);
        t[10] = "dense".into();
        o.insert("mlp_layer_types".into(), t);
    });
    refused(&|o| {
        o.insert("partial_rotary_factor".into(), 0.5.into());
    });
}

/// LFM2's config as transformers 5.23 reads it (`Lfm2Config.__post_init__`,
/// `Lfm2MLP.__init__`), from the published LFM2-350M config with one field
/// changed: `layer_types` wins over `full_attn_idxs`, which names the
/// attention layers (all of them when absent); the MLP's `block_ff_dim`
/// (6656) is ⌊2·ff/3⌋ (4437), then with a multiplier ⌊m·ff⌋ rounded up to
/// `block_multiple_of` (256); `tie_embedding` unties; a biased convolution
/// (not in any published config) is refused by name.
#[test]
fn lfm2_configs_read_as_transformers_reads_them() {
    use serde_json::{json, Value};
    let text = hf_fixture("lfm2-350m");
    let base: Value = serde_json::from_str(&text).expect("json");
    let read = |k: &str, v: Option<Value>| {
        let mut c = base.clone();
        let o = c.as_object_mut().expect("object");
        match v {
            Some(v) => o.insert(k.into(), v),
            None => o.remove(k),
        };
        hf_config::parse(&c.to_string())
            .map(|m| m.arch)
            .map_err(|e| e.to_string())
    };
    let preset = preset("lfm2-350m").expect("preset").arch;
    let check = |k: &str, v: Option<Value>, want: Architecture| {
        assert_eq!(read(k, v.clone()), Ok(want), "{k}: {v:?}");
    };
    let types: Vec<&str> = (0..16)
        .map(|l| if l % 4 == 3 { "full_attention" } else { "conv" })
        .collect();
    check(
        "layer_types",
        Some(json!(types)),
        Architecture {
            linear_layers: 12,
            ..preset
        },
    );
    check(
        "full_attn_idxs",
        None,
        Architecture {
            linear_layers: 0,
            ..preset
        },
    );
    check(
        "block_auto_adjust_ff_dim",
        Some(json!(false)),
        Architecture {
            ffn: 6656,
            ..preset
        },
    );
    check(
        "block_ffn_dim_multiplier",
        Some(Value::Null),
        Architecture {
            ffn: 4437,
            ..preset
        },
    );
    check(
        "block_ffn_dim_multiplier",
        Some(json!(1.5)),
        Architecture {
            ffn: 6656,
            ..preset
        },
    );
    check(
        "tie_embedding",
        Some(json!(false)),
        Architecture {
            tied: false,
            ..preset
        },
    );
    check(
        "conv_L_cache",
        Some(json!(4)),
        Architecture {
            linear_conv: 4,
            ..preset
        },
    );
    let refused = [
        read("conv_bias", Some(json!(true))).unwrap_err(),
        read("full_attn_idxs", Some(json!([2, 2]))).unwrap_err(),
        read("layer_types", Some(json!(["conv"]))).unwrap_err(),
    ];
    insta::assert_snapshot!(refused.join("\n"), @r"
    model_type `lfm2`: vramfit does not model `conv_bias` (it changes memory)
    `full_attn_idxs` must list distinct layers below num_hidden_layers (16), not 2
    `layer_types` lists 1 layers, not num_hidden_layers (16)
    ");
}

/// Granite 4.0-H's config read as transformers 5.23 reads it
/// (`GraniteMoeHybridConfig.__init__`): the Mamba-2 layers from
/// `layer_types` (every layer without it), transformers' defaults where a
/// field is absent (`mamba_n_heads` 128, `mamba_d_state` 256, `mamba_d_head`
/// "auto" = expand × hidden / heads, one group, kernel 4), the shared MLP
/// as the dense model's MLP or, beside experts, in expert widths; what it
/// does not model refused by name.
#[test]
fn granite_hybrid_configs_read_as_transformers_reads_them() {
    use serde_json::{json, Value};
    let base: Value = serde_json::from_str(&hf_fixture("granite-4.0-h-micro")).expect("json");
    let read = |edits: &[(&str, Option<Value>)]| {
        let mut c = base.clone();
        let o = c.as_object_mut().expect("object");
        for (k, v) in edits {
            match v {
                Some(v) => o.insert((*k).into(), v.clone()),
                None => o.remove(*k),
            };
        }
        hf_config::parse(&c.to_string())
            .map(|m| m.arch)
            .map_err(|e| e.to_string())
    };
    let micro = preset("granite-4.0-h-micro").expect("preset").arch;
    let check = |edits: &[(&str, Option<Value>)], want: Architecture| {
        assert_eq!(read(edits), Ok(want), "{edits:?}");
    };
    check(
        &[("layer_types", None)],
        Architecture {
            linear_layers: 40,
            ..micro
        },
    );
    // As transformers 5.23 saves it: the entries renamed.
    let renamed: Vec<&str> = (0..40)
        .map(|l| {
            if l % 10 == 5 {
                "full_attention"
            } else {
                "linear_attention"
            }
        })
        .collect();
    check(&[("layer_types", Some(json!(renamed)))], micro);
    check(
        &[
            ("mamba_n_heads", None),
            ("mamba_d_head", Some(json!("auto"))),
            ("mamba_d_state", None),
            ("mamba_n_groups", Some(json!(2))),
            ("mamba_d_conv", None),
        ],
        Architecture {
            linear_v_heads: 128,
            linear_v_dim: 32,
            linear_k_dim: 256,
            linear_k_heads: 2,
            ..micro
        },
    );
    check(
        &[
            ("num_local_experts", Some(json!(8))),
            ("num_experts_per_tok", Some(json!(2))),
            ("intermediate_size", Some(json!(1024))),
        ],
        Architecture {
            ffn: 1024,
            experts: 8,
            experts_per_token: 2,
            moe_ffn: 1024,
            shared_experts: 8,
            ..micro
        },
    );
    check(&[("position_embedding_type", Value::Null.into())], micro);
    let refused = [
        read(&[("position_embedding_type", Some(json!("rope")))]),
        read(&[
            ("mamba_proj_bias", Some(json!(true))),
            ("mamba_conv_bias", Some(json!(false))),
        ]),
        read(&[("mamba_d_head", Some(json!(48)))]),
        read(&[
            ("num_local_experts", Some(json!(8))),
            ("intermediate_size", Some(json!(3000))),
        ]),
        read(&[("layer_types", Some(json!(["mamba", "conv"])))]),
        read(&[(
            "layer_types",
            Some(json!([vec!["mamba"; 39], vec!["moe"]].concat())),
        )]),
    ];
    let refused: Vec<String> = refused.into_iter().map(|r| r.unwrap_err()).collect();
    insta::assert_snapshot!(refused.join("\n"), @r#"
    model_type `granitemoehybrid`: vramfit does not model `position_embedding_type "rope"` (it changes memory)
    model_type `granitemoehybrid`: vramfit does not model `mamba_proj_bias (true: vramfit models the projections without biases)`, `mamba_conv_bias (false: vramfit models the convolution's bias)` (they change memory)
    `mamba_d_head` (48) times mamba_n_heads (64) must be mamba_expand (2) × hidden_size (2048)
    `shared_intermediate_size` (8192) must be a multiple of intermediate_size (3000): vramfit counts the shared MLP in expert widths
    `layer_types` lists 2 layers, not num_hidden_layers (40)
    model_type `granitemoehybrid`: vramfit does not model `layer_types entry "moe"` (it changes memory)
    "#);
}

/// Nemotron-H's config read as transformers 5.23 reads it
/// (`NemotronHConfig.__post_init__`): the layers from `layers_block_type`
/// (or `layer_types`) before `hybrid_override_pattern`, the legacy names
/// renamed, as many layers as listed whatever `num_hidden_layers` says,
/// transformers' defaults where a field is absent (`head_dim` 128,
/// `n_groups` 8 with `mamba_n_groups` winning), Nemotron 3's experts;
/// what it does not model refused by name.
#[test]
fn nemotron_h_configs_read_as_transformers_reads_them() {
    use serde_json::{json, Value};
    let read_from = |fixture: &str, edits: &[(&str, Option<Value>)]| {
        let mut c: Value = serde_json::from_str(&hf_fixture(fixture)).expect("json");
        let o = c.as_object_mut().expect("object");
        for (k, v) in edits {
            match v {
                Some(v) => o.insert((*k).into(), v.clone()),
                None => o.remove(*k),
            };
        }
        hf_config::parse(&c.to_string())
            .map(|m| m.arch)
            .map_err(|e| e.to_string())
    };
    let read = |edits: &[(&str, Option<Value>)]| read_from("nemotron-nano-9b-v2", edits);
    let nano = preset("nemotron-nano-9b-v2").expect("preset").arch;
    let check = |edits: &[(&str, Option<Value>)], want: Architecture| {
        assert_eq!(read(edits), Ok(want), "{edits:?}");
    };
    // As transformers 5.23 saves it: the list, legacy names or new ones.
    let pattern = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-";
    let named = |mamba: &'static str, attention: &'static str| -> Vec<&'static str> {
        pattern
            .chars()
            .map(|c| match c {
                'M' => mamba,
                '*' => attention,
                _ => "mlp",
            })
            .collect()
    };
    let listed = json!(named("linear_attention", "full_attention"));
    check(
        &[
            ("hybrid_override_pattern", None),
            ("layers_block_type", Some(listed.clone())),
        ],
        nano,
    );
    check(
        &[("layer_types", Some(json!(named("mamba", "attention"))))],
        nano,
    );
    // The list wins over the pattern; `num_hidden_layers` is not read.
    check(
        &[
            ("layers_block_type", Some(listed)),
            ("hybrid_override_pattern", Some(json!("M*"))),
            ("num_hidden_layers", Some(json!(12))),
        ],
        nano,
    );
    check(
        &[
            ("hybrid_override_pattern", Some(json!("MM-*"))),
            ("head_dim", None),
            ("mamba_n_groups", Some(json!(2))),
            ("conv_kernel", None),
            ("mamba_d_conv", Some(json!(3))),
        ],
        Architecture {
            layers: 4,
            linear_layers: 2,
            ffn_layers: 1,
            linear_k_heads: 2,
            linear_conv: 3,
            ..nano
        },
    );
    let refused = [
        read(&[("hybrid_override_pattern", Some(json!("M-*X")))]),
        read(&[("hybrid_override_pattern", Some(json!("M-*E")))]),
        read(&[("hybrid_override_pattern", Some(json!(3)))]),
        read(&[
            ("use_bias", Some(json!(true))),
            ("use_conv_bias", Some(json!(false))),
            ("num_nextn_predict_layers", Some(json!(1))),
        ]),
        read_from(
            "nemotron-3-nano-30b-a3b",
            &[("moe_latent_size", Some(json!(1024)))],
        ),
        read_from(
            "nemotron-3-nano-30b-a3b",
            &[("moe_shared_expert_intermediate_size", Some(json!(3000)))],
        ),
    ];
    let refused: Vec<String> = refused.into_iter().map(|r| r.unwrap_err()).collect();
    insta::assert_snapshot!(refused.join("\n"), @r#"
    model_type `nemotron_h`: vramfit does not model `hybrid_override_pattern entry 'X'` (it changes memory)
    model_type `nemotron_h`: vramfit does not model `hybrid_override_pattern (1 MLP and 1 MoE layers in one model are not modelled)` (it changes memory)
    `hybrid_override_pattern` must be a string of M, *, - and E, not 3
    model_type `nemotron_h`: vramfit does not model `use_bias (true: vramfit models the projections without biases)`, `use_conv_bias (false: vramfit models the convolution's bias)`, `num_nextn_predict_layers (multi-token prediction layers are not modelled)` (they change memory)
    model_type `nemotron_h`: vramfit does not model `moe_latent_size (latent experts, Nemotron 3 Super, are not modelled)` (it changes memory)
    `moe_shared_expert_intermediate_size` (3000) must be a multiple of moe_intermediate_size (1856): vramfit counts the shared expert in expert widths
    "#);
}
