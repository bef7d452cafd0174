//! The estimator held to measured PyTorch memory: every row of the
//! measured fixture files (see fixtures/README.md for their provenance):
//!
//! - `pytorch_training_memory.jsonl`: the shared ground truth (64 rows of
//!   Llama, Qwen2, GPT-2, Phi-3 and Gemma presets);
//! - `families.jsonl`: every family vramfit describes, on published configs
//!   (and tiny mixture-of-experts configs run on real tensors too);
//! - `lora_rows.jsonl`: LoRA targets, dropout, and mixed precision with
//!   checkpointing;
//! - `moe_aux_rows.jsonl`: the load-balancing loss on tiny MoE configs,
//!   with and without it;
//! - `quant_rows.jsonl`: bitsandbytes 4-bit and 8-bit bases under LoRA
//!   (QLoRA), DoRA, prepare_model_for_kbit_training, with the repo's own
//!   measurement (`scripts/measure/quant.py`);
//! - `t4_rows.jsonl`, `fsdp1_rows.jsonl` and `fsdp2_rows.jsonl`: the
//!   stacks (transformers 4.48.1, 4.57.6 and 5.23.0, TRL's SFTTrainer,
//!   flash-attn 2, FSDP1 and FSDP2 rank 0 of 2), `scripts/measure/t4/`; a
//!   row's stack fields become its query keys ([`stack_keys`]);
//! - `deepspeed_rows.jsonl`: DeepSpeed 0.19.8's ZeRO-3, rank 0 of 2 on
//!   the CPU (`scripts/measure/deepspeed/`);
//! - `long_rows.jsonl`: every family and recipe at 16k, 32k and 64k tokens
//!   per step (transformers 5.23, fake tensors), `scripts/measure/long/`;
//! - `hybrid_train_rows.jsonl`: shrunk Qwen3.5 hybrids (Gated DeltaNet),
//!   transformers 5.23's torch fallbacks, `scripts/measure/hybrid/`.
//!
//! Budget (issue 10): overall peak (allocated bytes) within 1% on every
//! row, each phase peak of both iterations within 3%. Run with
//! `--nocapture` to see the table.

mod common;

use serde_json::Value;
use vramfit_core::import;
use vramfit_core::model::presets::preset;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::train::estimate;
use vramfit_core::{Estimate, Phase};

const OVERALL_BUDGET_PCT: f64 = 1.0;
const PHASE_BUDGET_PCT: f64 = 3.0;

/// What is not modelled yet, and where it shows (held here so that a
/// change that widens a gap fails):
///
/// - without checkpointing, backward's peak of a mixture-of-experts model
///   can fall inside a MoE layer's backward at a moment vramfit does not
///   model (its experts' weight gradients made while the layer's saved
///   tensors and a few token-sized gradient temporaries are alive; vramfit
///   has the last layer's and layer 0's, entering the experts and at their
///   MLP). It decides the peak only where every other tensor is small: the
///   tiny configs (hidden 256, vocabulary 1024), up to 7.1% low in
///   backward (with checkpointing these rows are within 2.2%);
/// - under checkpointing, tiny DeepSeek-V3 (CPU math attention) is 8% low
///   at the loss, with 2 MB of activations alive at that moment that are
///   not identified (published DeepSeek configs are exact there).
///
/// - QLoRA on the shrunk hybrids with reentrant checkpointing (peft's
///   `prepare_model_for_kbit_training`): up to 2.1% high overall, the
///   measured backward peak inside an earlier layer (some adapters'
///   gradients made) below the last layer's moment vramfit takes;
/// - the shrunk MoE hybrids (Qwen3.5-MoE's and Qwen3-Next's layers,
///   hidden 256, vocabulary 1024): backward up to 4.2% low with
///   checkpointing or in fp32 (their overall peaks are the optimizer
///   step's, exact), the MoE layer's backward moment above.
///
/// - Gemma 4's shrunk configs (hidden 256) with checkpointing: up to 4.1%
///   high in backward and 3.4% overall (31B's at 192 tokens), the moment
///   vramfit takes inside the recomputed layer's last norm not their peak
///   (said in a caveat); E2B's and E4B's published configs are exact.
///
/// On published configs the overall peak of every one of these rows is
/// exact or within 1%, and every phase within 0.2%.
fn known_gap(label: &str, phase: &str, err_pct: f64) -> bool {
    let tiny = label.starts_with("tiny-");
    if label.starts_with("g4-") && label.contains(" nf4") {
        return gemma4_qlora_gap(label, phase, err_pct);
    }
    // Gemma 4's shrunk configs under LoRA with reentrant checkpointing:
    // backward up to 6.4% high (E4B's), the shrunk configs' backward
    // moment as with non-reentrant checkpointing.
    if label.starts_with("g4-") && label.contains(" reentrant") {
        return matches!(phase, "overall" | "peak_bwd") && (0.0..6.4).contains(&err_pct);
    }
    if label.starts_with("g4-") && label.contains(" ckpt") {
        return matches!(phase, "overall" | "peak_bwd") && (0.0..4.1).contains(&err_pct);
    }
    if label.starts_with("tiny-llama4") && label.contains(" ckpt lora") {
        // Llama 4's shrunk configs (hidden 512, 4 experts; on every layer
        // or every other) under LoRA with non-reentrant checkpointing: the
        // recomputed MoE block's moment at its shared expert, up to 3.7%
        // low in bf16 and 1.4% under autocast (an E·T·h `clone` and peft's
        // fp32 casts of the shared expert's input are alive there, not
        // identified further; `scripts/measure/families/llama4/dense/
        // NOTES.md`). Scout's and Maverick's published configs: within
        // 0.3%.
        return matches!(phase, "overall" | "peak_bwd") && (-3.7..0.0).contains(&err_pct);
    }
    if label.starts_with("tiny-llama4") && label.contains(" lora") {
        // Llama 4's shrunk configs (hidden 512, 4 experts) under LoRA on
        // named modules: the overall peak up to 1.6% low (forward 2.0%),
        // not identified (its attention is modelled and full fine-tuning's
        // forward is exact: `scripts/measure/families/llama4/attn/`);
        // Scout's published config under the same LoRA is exact.
        return matches!(phase, "overall" | "peak_fwd") && (-1.7..0.0).contains(&err_pct);
    }
    if label.starts_with("lfm2-c1 ") && label.contains(" ckpt") {
        // LFM2 shrunk to one short-convolution layer (hidden 256, MLP 512),
        // checkpointed: that layer is both layer 0 and the last, and
        // backward's measured peak is inside its MLP's norm backward
        // (the RMSNorm's fp32 temporaries), a moment vramfit does not
        // take; vramfit's backward is up to 14.2% high (under autocast),
        // the overall peak up to 2.9% (bf16). Two such layers are within
        // 1.7%, the eight-layer config within 0.9% and the published
        // 350M and 1.2B configs exact.
        return match phase {
            "peak_bwd" => (0.0..14.2).contains(&err_pct),
            "overall" => (0.0..2.91).contains(&err_pct),
            _ => false,
        };
    }
    if label.starts_with("lfm2moe-") && label.contains("amp_bf16") {
        // LFM2-MoE shrunk (hidden 256, 8 experts of 128) under autocast:
        // backward's peak inside a MoE layer's backward (the tiny MoE
        // configs' moment below), up to 3.1% low; LFM2-8B-A1B's published
        // config is exact.
        return phase == "peak_bwd" && (-3.1..0.0).contains(&err_pct);
    }
    let hybrid = ["l2 ", "mixed4 ", "moe4 ", "next4 "]
        .iter()
        .any(|m| label.starts_with(m));
    if hybrid && label.contains(" nf4") && label.contains(" reentrant") {
        // QLoRA with reentrant checkpointing: backward's peak is inside an
        // earlier layer, where vramfit takes the last layer's moment.
        return matches!(phase, "overall" | "peak_bwd") && (0.0..2.1).contains(&err_pct);
    }
    if hybrid && label.contains(" fsdp2") {
        // FSDP2 on the shrunk hybrids (units of 1 MB beside 14 MB of
        // activations), tp 1 or 2: a Gated DeltaNet layer's backward is
        // taken with its unit and the prefetched one gathered and its
        // whole gradient made at its largest transient, and passes the
        // head's moment, the measured peak (up to 5.8% high); under
        // non-reentrant checkpointing the recomputed layer's moment is
        // up to 5.7% low and forward's 5.0% high. On Qwen3.6-27B's shape
        // (tp 1 to 4, FSDP2 over 2 to 8 GPUs) every phase is within 0.12%.
        let ckpt = label.contains(" ckpt");
        return match phase {
            "overall" | "peak_bwd" if !ckpt => (0.0..5.8).contains(&err_pct),
            "overall" | "peak_bwd" => (-5.8..0.0).contains(&err_pct),
            "peak_fwd" => ckpt && (0.0..5.1).contains(&err_pct),
            _ => false,
        };
    }
    if ["moe4 ", "next4 "].iter().any(|m| label.starts_with(m)) {
        return phase == "peak_bwd" && (-4.2..0.0).contains(&err_pct);
    }
    // LLM.int8 measured on the CPU: `MatMul8bitFp` dequantizes each weight
    // to the input's dtype in forward; vramfit models CUDA's `MatMul8bitLt`,
    // which multiplies in int8 (no such copy): the Mistral-7B layers' int8
    // forward is 8.9% below its CPU measurement.
    if label.contains(" int8") && phase == "peak_fwd" && (-9.0..0.0).contains(&err_pct) {
        return true;
    }
    match phase {
        "peak_bwd" => tiny && (-7.1..0.0).contains(&err_pct),
        "peak_fwd" => {
            label.starts_with("tiny-deepseek")
                && label.contains(" ckpt")
                && (-8.0..0.0).contains(&err_pct)
        }
        _ => false,
    }
}

/// Gemma 4's shrunk configs (hidden 256, vocabulary 1024) on a quantized
/// base, where no logits hide the layers' own moments (E2B's published
/// config at 512 tokens is exact, checkpointed, with and without
/// autocast):
/// - with checkpointing, forward up to 9.4% low on E2B's: its peak is
///   inside the last layer's double-wide MLP after the LoRA-adapted
///   quantized `up_proj` (peft's `Linear4bit` clones the base output,
///   beside the adapter's output and their sum, in the fp32 stream kbit
///   preparation leaves), a moment vramfit does not take; backward up to
///   8.8% high (31B's), the shrunk configs' backward moment above (see
///   the unquantized rows) with fewer parameter bytes beside it;
/// - under autocast without checkpointing, up to 2.7% high (E4B's).
fn gemma4_qlora_gap(label: &str, phase: &str, err_pct: f64) -> bool {
    if label.contains(" ckpt") {
        return match phase {
            "peak_fwd" => (-9.4..0.0).contains(&err_pct),
            "peak_bwd" | "overall" => (0.0..8.8).contains(&err_pct),
            _ => false,
        };
    }
    label.contains("amp_bf16")
        && matches!(phase, "peak_fwd" | "peak_bwd" | "overall")
        && (0.0..2.7).contains(&err_pct)
}

const FILES: [(&str, &str); 16] = [
    (
        "pytorch_training_memory",
        include_str!("fixtures/pytorch_training_memory.jsonl"),
    ),
    ("families", include_str!("fixtures/families.jsonl")),
    ("lora_rows", include_str!("fixtures/lora_rows.jsonl")),
    ("moe_aux_rows", include_str!("fixtures/moe_aux_rows.jsonl")),
    ("quant_rows", include_str!("fixtures/quant_rows.jsonl")),
    ("t4_rows", include_str!("fixtures/t4_rows.jsonl")),
    ("fsdp1_rows", include_str!("fixtures/fsdp1_rows.jsonl")),
    ("fsdp2_rows", include_str!("fixtures/fsdp2_rows.jsonl")),
    ("tp_rows", include_str!("fixtures/tp_rows.jsonl")),
    (
        "deepspeed_rows",
        include_str!("fixtures/deepspeed_rows.jsonl"),
    ),
    ("long_rows", include_str!("fixtures/long_rows.jsonl")),
    (
        "hybrid_train_rows",
        include_str!("fixtures/hybrid_train_rows.jsonl"),
    ),
    (
        "gemma4_train_rows",
        include_str!("fixtures/gemma4_train_rows.jsonl"),
    ),
    (
        "gemma4_qlora_rows",
        include_str!("fixtures/gemma4_qlora_rows.jsonl"),
    ),
    (
        "gemma4_reentrant_rows",
        include_str!("fixtures/gemma4_reentrant_rows.jsonl"),
    ),
    (
        "lfm2_train_rows",
        include_str!("fixtures/lfm2_train_rows.jsonl"),
    ),
];

struct Row {
    label: String,
    query: String,
    /// The measurement as CUDA would allocate it, at its lowest (see
    /// [`cuda_measured`]).
    measured: Value,
    /// The measurement as it ran: the highest CUDA could allocate.
    raw: Value,
}

/// The model keys of a row: its preset, the config it carries, or its
/// config.json as imported.
fn model_keys(model: &str, inline: &Value) -> Result<String, String> {
    if preset(model).is_some() {
        return Ok(format!("model={model}"));
    }
    let text = match inline {
        Value::Object(_) => inline.to_string(),
        _ => common::hf_fixture_if_any(model)
            .ok_or_else(|| format!("{model}: no preset, no config"))?,
    };
    let imported = import::parse(&text).map_err(|e| format!("{model}: {e}"))?;
    let mut raw = RawQuery::default();
    for (k, v) in imported.changes() {
        raw.set(k, &v);
    }
    Ok(raw.to_query_string())
}

/// The row's model: its preset's architecture, or its config's.
fn row_arch(model: &str, inline: &Value) -> Option<vramfit_core::model::Architecture> {
    if let Some(p) = preset(model) {
        return Some(p.arch);
    }
    let text = match inline {
        Value::Object(_) => inline.to_string(),
        _ => common::hf_fixture_if_any(model)?,
    };
    import::parse(&text).ok().map(|i| i.arch)
}

/// The query that describes a row's run.
///
/// Latent attention (DeepSeek, GLM-4.7-Flash) under SDPA whose q/k and v
/// head widths differ ran PyTorch's CPU math kernel (the CPU flash kernel
/// refuses unequal widths; GLM-4.7-Flash's 256 and 256 ran it): those rows
/// are estimated with `cuda_like=false`, which selects that kernel. Eager attention runs as on CUDA, and the harness's dropout keeps
/// CUDA's 1-byte masks (the key's other effect), so those rows keep
/// `cuda_like`; so do flash-attn 2 rows (its CUDA allocations emulated).
fn query(r: &Value) -> Result<String, String> {
    let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
    let b = |k: &str| r[k].as_bool().unwrap_or(false);
    let math_kernel = s("attn") == "sdpa"
        && row_arch(&s("model"), &r["config"]).is_some_and(|a| {
            a.family.spec().qkv == vramfit_core::model::family::Qkv::Latent
                && a.head_dim != a.v_head_dim
        });
    let mut q = format!(
        "{}&dtype={}&optim={}&batch={}&seq={}&grad_ckpt={}&attn={}&keep_outputs={}&cuda_like={}",
        model_keys(&s("model"), &r["config"])?,
        s("dtype"),
        optim(&s("optim")),
        r["batch"],
        r["seq"],
        b("grad_ckpt"),
        s("attn"),
        b("keep_outputs"),
        b("cuda_like") && !math_kernel,
    );
    if b("lora") {
        q.push_str(&format!("&lora_r={}", r["lora_r"]));
        if let Some(t) = r["lora_targets"].as_str() {
            q.push_str(&format!("&lora_targets={t}"));
        }
        if let Some(p) = r["lora_dropout"].as_f64().filter(|p| *p > 0.0) {
            q.push_str(&format!("&lora_dropout={p}"));
        }
    }
    if b("dropout0") {
        q.push_str("&dropout=0");
    }
    // bitsandbytes bases (quant_rows.jsonl).
    if let Some(quant) = r["quant"].as_str() {
        q.push_str(&format!("&quant={quant}"));
        if b("double_quant") {
            q.push_str("&double_quant=true");
        }
        if !b("kbit_prep") {
            q.push_str("&kbit_prep=false");
        }
        if r["compute_dtype"].as_str() == Some("fp32") {
            q.push_str("&bnb_compute=fp32");
        }
    }
    if b("dora") {
        q.push_str("&dora=true");
    }
    match r["gc_reentrant"].as_bool() {
        Some(true) if b("grad_ckpt") => q = q.replace("grad_ckpt=true", "grad_ckpt=reentrant"),
        Some(false) if b("grad_ckpt") => q = q.replace("grad_ckpt=true", "grad_ckpt=non_reentrant"),
        _ => {}
    }
    q.push_str(&stack_keys(r)?);
    if s("dtype") == "bf16" && b("autocast") {
        q = q.replace("dtype=bf16&", "dtype=bf16_autocast&");
    }
    Ok(q)
}

/// A row's software stack as query keys (t4_rows.jsonl, fsdp1_rows.jsonl;
/// the older files ran transformers 5.23 with `use_cache` off, the shared
/// harness's setting).
///
/// - `bf16` with `autocast` is the Trainer's `bf16=True` on a bf16 model:
///   `bf16_autocast`;
/// - a 4.48.1 row with 5.x's loss swapped in (`loss: v5`, an experiment
///   that equals 5.23.0 to the byte) is estimated as transformers 5.
fn stack_keys(r: &Value) -> Result<String, String> {
    let s = |k: &str| r[k].as_str().unwrap_or_default();
    let mut q = String::new();
    let v5_loss = s("loss") == "v5";
    match s("transformers") {
        "" => {}
        v if v.starts_with("5.") || v5_loss => {}
        v if v.starts_with("4.48.") => q.push_str("&transformers=4.48"),
        v if v.starts_with("4.57.") => q.push_str("&transformers=4.57"),
        v => return Err(format!("transformers {v}: no value describes it")),
    }
    if r["use_cache"].as_bool() != Some(true) {
        q.push_str("&use_cache=false");
    }
    if s("trainer") == "trl" {
        q.push_str("&trainer=trl");
    }
    if let Some(tp) = r["tp"].as_u64().filter(|tp| *tp > 1) {
        q.push_str(&format!("&tp={tp}"));
        if s("shard") == "none" {
            q.push_str(&format!("&gpus={}", r["gpus"]));
        }
    }
    if let shard @ ("fsdp1" | "fsdp2" | "deepspeed") = s("shard") {
        q.push_str(&format!("&shard={shard}&gpus={}&zero=3", r["gpus"]));
        if s("ds_buckets") == "auto" {
            q.push_str("&ds_buckets=auto");
        }
        if r["fsdp"]["backward_prefetch"] == "NONE" {
            q.push_str("&backward_prefetch=false");
        }
    }
    Ok(q)
}

/// The HF Trainer's optimizer names as vramfit's.
fn optim(name: &str) -> &str {
    match name {
        "adamw_bnb_8bit" => "adamw8bit",
        other => other,
    }
}

fn label(r: &Value) -> String {
    let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
    let b = |k: &str| r[k].as_bool().unwrap_or(false);
    let mut l = format!(
        "{} {} {} b{} s{}",
        s("model"),
        s("dtype"),
        s("optim"),
        r["batch"],
        r["seq"]
    );
    for (on, word) in [
        (b("grad_ckpt"), " ckpt".to_string()),
        (s("attn") == "eager", " eager".into()),
        (b("lora"), format!(" lora{}", r["lora_r"])),
        (
            b("lora")
                && r["lora_targets"]
                    .as_str()
                    .is_some_and(|t| t != "all-linear"),
            format!(" {}", s("lora_targets")),
        ),
        (
            r["lora_dropout"].as_f64().is_some_and(|p| p > 0.0),
            format!(" d{}", r["lora_dropout"]),
        ),
        (b("keep_outputs"), " keep".into()),
        (!b("cuda_like"), " cpu".into()),
        (r["quant"].is_string(), format!(" {}", s("quant"))),
        (b("double_quant"), " dq".into()),
        (r["quant"].is_string() && b("kbit_prep"), " kbit".into()),
        (b("dora"), " dora".into()),
        (s("mode") == "real", " real".into()),
        (b("autocast") && s("dtype") == "bf16", " autocast".into()),
        (
            b("grad_ckpt") && r["gc_reentrant"].is_boolean(),
            if b("gc_reentrant") {
                " reentrant"
            } else {
                " nonreentrant"
            }
            .into(),
        ),
        (s("attn") == "flash_attention_2", " fa2".into()),
        (b("use_cache"), " cache".into()),
        (
            s("trainer") == "trl" && r["quant"].is_string(),
            " trl".into(),
        ),
        (s("shard") == "fsdp1", " fsdp1".into()),
        (s("shard") == "fsdp2", " fsdp2".into()),
        (
            r["tp"].as_u64().is_some_and(|tp| tp > 1),
            format!(" tp{}", r["tp"]),
        ),
        (s("shard") == "deepspeed", " deepspeed".into()),
        (s("ds_buckets") == "auto", " auto".into()),
        (r["fsdp"]["use_orig_params"] == false, " orig0".into()),
        (
            r["fsdp"]["backward_prefetch"] == "NONE",
            " noprefetch".into(),
        ),
        (
            r["transformers"].is_string(),
            format!(" t{}", s("transformers")),
        ),
    ] {
        if on {
            l.push_str(&word);
        }
    }
    l
}

/// Rows a file holds that vramfit refuses to estimate, with the key whose
/// notice says why: transformers' per-expert `eager` loop (data-dependent,
/// kept apart from the default `grouped_mm`; its config is refused by the
/// importer, never read as grouped_mm silently); DoRA over a quantized base
/// (refused as the issue asks, though measured).
fn refused(r: &Value) -> Option<&'static str> {
    let eager_experts = r["model"]
        .as_str()
        .is_some_and(|m| m.ends_with("-eager-experts"));
    let quantized_dora = r["quant"].is_string() && r["dora"].as_bool() == Some(true);
    if eager_experts {
        Some("config")
    } else if quantized_dora {
        Some("dora")
    } else {
        None
    }
}

/// A row's measurement as CUDA would allocate it, at its lowest:
/// bitsandbytes 0.47.0's CPU `dequantize_4bit` holds buffers CUDA's kernel
/// does not (an int32 index and two intermediates per weight,
/// `backends/default/ops.py`); the rows measured with it carry their bytes
/// at each phase's peak (`bnb_cpu_dequant_excess`, t4_rows.jsonl), taken
/// away here. Without those buffers the peak may move to a moment the
/// measurement could not see (below the one with them), so such a phase's
/// CUDA peak lies between this and the measurement as it ran: the estimate
/// is held to that interval ([`err_within`]).
fn cuda_measured(r: &Value) -> Value {
    let mut m = r["measured"].clone();
    let excess = &r["bnb_cpu_dequant_excess"];
    if !excess.is_object() {
        return m;
    }
    for it in ["iter1", "iter2"] {
        for ph in ["peak_fwd", "peak_bwd", "peak_step"] {
            let x = excess[it][ph].as_u64().unwrap_or(0);
            if let Some(v) = m[it][ph].as_u64() {
                m[it][ph] = Value::from(v - x);
            }
        }
    }
    // The overall peak is the largest phase peak without the excess.
    let overall = ["iter1", "iter2"]
        .iter()
        .flat_map(|it| {
            ["peak_fwd", "peak_bwd", "peak_step", "peak_zero_grad"]
                .map(|ph| m[it][ph].as_u64().unwrap_or(0))
        })
        .max()
        .unwrap_or(0);
    m["peak_overall"] = Value::from(overall);
    m
}

fn rows(file: &str) -> Vec<Row> {
    let (_, text) = FILES
        .iter()
        .find(|(name, _)| *name == file)
        .expect("fixture file");
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("json row"))
        .filter(|r| r["status"].as_str().is_none_or(|s| s == "ok") && refused(r).is_none())
        .map(|r| Row {
            label: label(&r),
            query: query(&r).unwrap_or_else(|e| panic!("{}: {e}", label(&r))),
            measured: cuda_measured(&r),
            raw: r["measured"].clone(),
        })
        .collect()
}

fn est(q: &str) -> Estimate {
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    estimate(&s.train_run()).expect("estimate")
}

/// CUDA's own allocations in a phase (cuBLAS's workspaces), which the
/// rows (CPU kernels, fake tensors) do not hold: left out of the
/// comparison. They are allocated bytes on a GPU (`src/train/breakdown/cuda.rs`).
fn cuda_only(e: &Estimate, p: &vramfit_core::PhaseReport) -> u64 {
    use vramfit_core::terms::TermId;
    if p.terms.contains(TermId::CublasWorkspaces) {
        u64::try_from(e.terms.bytes(TermId::CublasWorkspaces)).unwrap_or(0)
    } else {
        0
    }
}

/// Our allocated peak without CUDA-only allocations.
fn peak_allocated(e: &Estimate) -> u64 {
    e.phases
        .iter()
        .map(|p| p.components.allocated().get() - cuda_only(e, p))
        .max()
        .unwrap_or(0)
}

/// Our allocated peak for a ground-truth phase name (`peak_fwd`, ...),
/// without CUDA-only allocations.
fn phase_peak(e: &Estimate, iteration: u32, name: &str) -> Option<u64> {
    let phase = match name {
        "peak_fwd" => Phase::Forward,
        "peak_bwd" => Phase::Backward,
        "peak_step" => Phase::OptimizerStep,
        "peak_zero_grad" => Phase::ZeroGrad,
        _ => return None,
    };
    e.phases
        .iter()
        .filter(|p| p.iteration == iteration && p.phase == phase)
        .map(|p| p.components.allocated().get() - cuda_only(e, p))
        .max()
}

fn err(est: u64, meas: u64) -> f64 {
    (est as f64 - meas as f64) / meas as f64 * 100.0
}

/// The error against an interval `[low, high]` of what was measured: 0
/// inside, else against the nearer end (a plain error when they are one).
fn err_within(est: u64, low: u64, high: u64) -> f64 {
    if est < low {
        err(est, low)
    } else if est > high {
        err(est, high)
    } else {
        0.0
    }
}

/// Checks every row of `file` against the budget; prints the table.
fn check_file(file: &str, expected_rows: usize) {
    let rows = rows(file);
    assert_eq!(rows.len(), expected_rows, "{file}: rows");
    let mut overall = Vec::new();
    let mut failures = Vec::new();
    println!(
        "\n{file}\n{:<64} {:>16} {:>16} {:>8}  {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "configuration",
        "measured peak",
        "estimated",
        "err %",
        "fwd1",
        "bwd1",
        "step1",
        "fwd2",
        "bwd2",
        "step2"
    );
    for r in &rows {
        let e = est(&r.query);
        let meas = r.measured["peak_overall"].as_u64().expect("peak_overall");
        let high = r.raw["peak_overall"].as_u64().expect("peak_overall");
        let ours = peak_allocated(&e);
        let e_all = err_within(ours, meas, high);
        overall.push(e_all);
        if e_all.abs() > OVERALL_BUDGET_PCT && !known_gap(&r.label, "overall", e_all) {
            failures.push(format!("{}: overall {e_all:+.2}%", r.label));
        }
        let mut cells = Vec::new();
        for (it, key) in [(1, "iter1"), (2, "iter2")] {
            for ph in ["peak_fwd", "peak_bwd", "peak_step", "peak_zero_grad"] {
                // DeepSpeed's step zeroes the gradients itself: its rows
                // have no zero_grad phase.
                if ph == "peak_zero_grad" && r.measured[key][ph].is_null() {
                    continue;
                }
                let m = r.measured[key][ph].as_u64().expect("phase");
                let high = r.raw[key][ph].as_u64().expect("phase");
                let o = phase_peak(&e, it, ph).expect("our phase");
                let pe = err_within(o, m, high);
                if pe.abs() > PHASE_BUDGET_PCT && !known_gap(&r.label, ph, pe) {
                    failures.push(format!("{}: {key} {ph} {pe:+.2}%", r.label));
                }
                if ph != "peak_zero_grad" {
                    cells.push(format!("{pe:+7.2}"));
                }
            }
        }
        println!(
            "{:<64} {:>16} {:>16} {:>+8.3}  {}",
            r.label,
            meas,
            ours,
            e_all,
            cells.join(" ")
        );
    }
    let mut abs: Vec<f64> = overall.iter().map(|e| e.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let median = abs[abs.len() / 2];
    let max = abs[abs.len() - 1];
    println!(
        "{file}: overall peak error over {} rows: median |err| {median:.3}%, max |err| {max:.3}%",
        abs.len()
    );
    assert!(
        failures.is_empty(),
        "outside budget:\n{}",
        failures.join("\n")
    );
}

#[test]
fn shared_ground_truth_within_budget() {
    check_file("pytorch_training_memory", 64);
}

#[test]
fn every_family_within_budget() {
    check_file("families", 302);
}

#[test]
fn lora_targets_dropout_and_checkpointing_within_budget() {
    check_file("lora_rows", 40);
}

/// Shrunk Qwen3.5 hybrids (Gated DeltaNet and gated full-attention
/// layers, dense and MoE) as transformers 5.23's torch fallbacks run them:
/// `scripts/measure/hybrid/`.
#[test]
fn gated_deltanet_hybrids_within_budget() {
    check_file("hybrid_train_rows", 86);
}

/// Shrunk LFM2 configs (short-convolution and attention layers) as
/// transformers 5.23's torch fallback runs them:
/// `scripts/measure/families/lfm2/train/`.
#[test]
fn lfm2_short_convolutions_within_budget() {
    check_file("lfm2_train_rows", 43);
    counts_as_measured("lfm2_train_rows", 43);
}

/// The hybrids' parameters and LoRA's adapters, the DeltaNet's
/// projections' included, as peft 0.21 and transformers 5.23 count them
/// (`n_params`, `n_trainable` of each row).
#[test]
fn hybrid_parameters_and_adapters_as_counted() {
    counts_as_measured("hybrid_train_rows", 86);
}

/// Every row of `file` estimates the parameters and trainable parameters
/// transformers and peft counted (`n_params`, `n_trainable`).
fn counts_as_measured(file: &str, expected_rows: usize) {
    let (_, text) = FILES
        .iter()
        .find(|(name, _)| *name == file)
        .expect("fixture file");
    let mut n = 0;
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).expect("json row");
        let e = est(&query(&r).expect("query"));
        let count = |k: &str| r[k].as_u64().expect(k);
        assert_eq!(
            (e.params, e.trainable_params),
            (count("n_params"), count("n_trainable")),
            "{}",
            label(&r)
        );
        n += 1;
    }
    assert_eq!(n, expected_rows, "{file}: rows");
}

/// Shrunk Gemma 4 text configs (E2B's, E4B's, 12B's, 26B-A4B's and 31B's, in their own
/// layer patterns: global layers, layers reusing keys and values,
/// per-layer inputs, keys as values), full fine-tuning and LoRA, bf16,
/// fp32 and autocast, SDPA and eager, with and without (non-reentrant)
/// checkpointing: `scripts/measure/gemma4/train_shrunk.sh`,
/// `train_shrunk_more.sh`; and E2B's and E4B's published text configs,
/// full fine-tuning with and without checkpointing and LoRA with it at 512
/// tokens (`train.sh`).
#[test]
fn gemma4_within_budget() {
    check_file("gemma4_train_rows", 54);
}

/// Gemma 4's parameters and LoRA's adapters (peft's all-linear adapts
/// the per-layer inputs' gate and projection in each layer and the
/// embeddings' projection), as transformers 5.23 and peft 0.21 count them.
#[test]
fn gemma4_parameters_and_adapters_as_counted() {
    counts_as_measured("gemma4_train_rows", 54);
}

/// Gemma 4 on a quantized base (QLoRA): bitsandbytes 0.50 bases under
/// peft 0.21 with real CPU tensors (`scripts/measure/gemma4/qlora.sh`):
/// E2B's published text config at 512 tokens with non-reentrant
/// checkpointing, with and without autocast, and with reentrant
/// checkpointing (peft's default after kbit preparation); the shrunk
/// configs in nf4 (with and without checkpointing, reentrant and not,
/// dropout, nested quantization, kbit preparation, autocast) and LLM.int8.
#[test]
fn gemma4_qlora_within_budget() {
    check_file("gemma4_qlora_rows", 24);
}

/// Gemma 4 under LoRA with reentrant checkpointing on a bf16 base (no
/// kbit preparation; transformers makes the inputs require gradients):
/// the shrunk configs, real CPU tensors (`scripts/measure/gemma4/qlora.sh`).
#[test]
fn gemma4_reentrant_within_budget() {
    check_file("gemma4_reentrant_rows", 5);
}

#[test]
fn moe_auxiliary_loss_within_budget() {
    check_file("moe_aux_rows", 24);
}

#[test]
fn quantized_bases_and_dora_within_budget() {
    check_file("quant_rows", 36);
}

/// What vramfit refuses is refused next to its field, never estimated as
/// something else: DoRA over a quantized base (the eager-experts configs
/// are refused by the importer: the next test).
#[test]
fn refused_rows_are_refused_next_to_their_field() {
    let mut n = std::collections::BTreeMap::<&str, usize>::new();
    for (_, text) in FILES {
        for line in text.lines() {
            let r: Value = serde_json::from_str(line).expect("json row");
            let Some(key) = refused(&r).filter(|k| *k != "config") else {
                continue;
            };
            let q = query(&r).expect("query");
            let err = decode_strict(&RawQuery::parse(&q)).expect_err(&q);
            assert!(err.iter().any(|e| e.key() == Some(key)), "{q}: {err:?}");
            *n.entry(key).or_default() += 1;
        }
    }
    assert_eq!(n.into_iter().collect::<Vec<_>>(), [("dora", 6)]);
}

/// Every family vramfit describes has at least six measured rows.
#[test]
fn every_family_is_measured() {
    use vramfit_core::model::Family;
    let mut count = std::collections::HashMap::<String, usize>::new();
    for (_, text) in FILES {
        for line in text.lines() {
            let r: Value = serde_json::from_str(line).expect("json row");
            let model = r["model"].as_str().unwrap_or_default();
            let family = match preset(model) {
                Some(p) => p.arch.family.key().to_string(),
                None => r["family"].as_str().unwrap_or_default().to_string(),
            };
            *count.entry(family).or_default() += 1;
        }
    }
    // Training Qwen3-Next (fused DeltaNet projections) and Gemma 4 is not
    // measured yet, and refused (`tests/estimate.rs`,
    // `presets_all_estimate`; `tests/gemma4.rs`). The MoE Qwen3.5 hybrid
    // has 2 rows: its DeltaNet and attention layers are the dense
    // hybrid's, its experts Qwen3-MoE's, each measured on its own.
    // Training LFM2 (its short convolutions, `Recurrence::ShortConv`) and
    // DeepSeek Sparse Attention (`Spec::indexer`: DeepSeek-V3.2, GLM-5) is
    // refused, not measured.
    for f in Family::ALL.iter().filter(|f| {
        !f.spec().varies_by_layer()
            && !f
                .spec()
                .linear
                .is_some_and(|r| r.fused_in_proj || !r.delta_net())
            && !f.spec().indexer
    }) {
        let n = count.get(f.key()).copied().unwrap_or(0);
        let least = if f.spec().linear.is_some() && f.spec().moe.is_some() {
            2
        } else {
            6
        };
        assert!(n >= least, "{}: {n} measured rows", f.key());
    }
}

/// The per-expert eager loop's configs are refused by the importer, naming
/// the field, rather than estimated as `grouped_mm`.
#[test]
fn eager_experts_configs_are_refused_not_misread() {
    for model in [
        "tiny-mixtral-eager-experts",
        "tiny-qwen3_moe-eager-experts",
        "tiny-gpt_oss-eager-experts",
    ] {
        let e = import::parse(&common::hf_fixture(model)).expect_err(model);
        assert!(e.to_string().contains("experts_implementation"), "{e}");
    }
}

/// Iteration 2 sits above iteration 1 by exactly the optimizer state before
/// the step (state appears in the first `step()`).
#[test]
fn iteration_two_adds_exactly_the_optimizer_state() {
    for r in rows("pytorch_training_memory") {
        let e = est(&r.query);
        let it = |i: u32, ph: Phase| {
            e.phases
                .iter()
                .find(|p| p.iteration == i && p.phase == ph)
                .expect("phase")
        };
        let state = it(2, Phase::Forward)
            .components
            .get(vramfit_core::Component::OptimizerState);
        for ph in [Phase::Forward, Phase::Backward] {
            assert_eq!(
                it(2, ph).components.allocated().get(),
                it(1, ph).components.allocated().get() + state.get(),
                "{} {ph:?}",
                r.label
            );
        }
    }
}

/// Layer 0's backward under checkpointing holds only its own checkpointed
/// input: the later layers' were released by their backward (issue 16).
/// Counting all of them put Mistral-7B full fine-tuning at 8 × 4096 7.4 GB
/// (+11%) above the measured backward. Each case: a query and the measured
/// row it must match, by tag and transformers version (t4_rows.jsonl,
/// `scripts/measure/t4/measure48.py`, fake tensors; flash-attention 2 as
/// flash-attn 2.7.3 allocates).
#[test]
fn layer_zero_backward_holds_one_checkpointed_input() {
    let check = |q: &str, tag: &str, version: &str| {
        let row = include_str!("fixtures/t4_rows.jsonl")
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("json row"))
            .find(|r| r["tag"] == tag && r["transformers"] == version)
            .unwrap_or_else(|| panic!("no row {tag} {version}"));
        let e = est(q);
        let m = &row["measured"];
        let overall = err(
            peak_allocated(&e),
            m["peak_overall"].as_u64().expect("peak"),
        );
        assert!(
            overall.abs() <= OVERALL_BUDGET_PCT,
            "{q}: overall {overall:+.2}%"
        );
        for (it, key) in [(1, "iter1"), (2, "iter2")] {
            let meas = m[key]["peak_bwd"].as_u64().expect("peak_bwd");
            let ours = phase_peak(&e, it, "peak_bwd").expect("backward");
            let pe = err(ours, meas);
            assert!(
                pe.abs() <= PHASE_BUDGET_PCT,
                "{q}: {key} backward {pe:+.2}%"
            );
        }
    };
    check(
        "model=mistral-7b&dtype=bf16_autocast&optim=adamw&batch=8&seq=4096&grad_ckpt=reentrant\
         &attn=flash_attention_2&use_cache=false",
        "fullft:mistral-7b:full:bf16+amp:reentrant:fa2emu:b8s4096",
        "5.23.0",
    );
}

#[test]
fn transformers_4_stacks_within_budget() {
    check_file("t4_rows", 98);
}

#[test]
fn fsdp1_within_budget() {
    check_file("fsdp1_rows", 36);
}

/// DeepSpeed 0.19.8's ZeRO-3 (rank 0 of 2, real CPU tensors, transformers
/// 5.23; `scripts/measure/deepspeed/`): the partitions and reduce bucket
/// from `deepspeed.initialize`, both bucket configurations, the first step
/// (a module gathered at a time) and the second (the model kept gathered,
/// the flat buffers of a coalesced prefetch), full fine-tuning and LoRA.
/// Rows left out (`status`, fixtures/README.md): non-default live and reuse
/// caps (not a key), and LoRA without checkpointing measured with
/// `enable_input_require_grads` (what no trainer does without it).
#[test]
fn deepspeed_within_budget() {
    check_file("deepspeed_rows", 13);
}

/// FSDP2 (`fully_shard` as accelerate 1.15 wraps it, torch 2.15,
/// transformers 5.23): FSDP1's layer moments, the embedding and the tail
/// as units of their own, FSDP2's all-gather and reduce-scatter buffers.
/// Estimated as `shard=fsdp1`, these rows were up to 5.4% high in backward
/// (Mistral-7B LoRA at 4 × 2048: the root and a prefetched layer at the
/// logits' gradient, where FSDP2 holds only the tail).
#[test]
fn fsdp2_within_budget() {
    check_file("fsdp2_rows", 15);
}

/// Tensor parallelism as transformers 5.23's `DistributedConfig(tp_size,
/// fsdp_size)` sets it up (torch 2.15's fake process group, rank 0,
/// `scripts/measure/parallel/tp.py`): Llama 3.1 8B at tp 2 and 4, with
/// either checkpointing and without, and under FSDP2 over 2 data-parallel
/// ranks at tp 2 and 4; Qwen3 8B (q/k norms), Qwen2.5 7B (q/k/v biases,
/// under FSDP2), Mistral 7B (sliding window), Mistral-Nemo 12B (a head
/// width of its own) and Qwen3 32B at tp 8.
#[test]
fn tensor_parallel_within_budget() {
    check_file("tp_rows", 33);
}

#[test]
fn long_sequences_within_budget() {
    check_file("long_rows", 500);
}

/// The solver's longest sequence that fits rests on the terms that grow
/// with the sequence (issue 17): given what a measured long row allocated
/// (plus vramfit's overhead and CUDA-only allocations, which the row does
/// not hold), the longest sequence that fits is the row's, within 2.5%
/// (a peak within the 1% budget moves the sequence more where weights
/// are most of the peak: Mixtral's 93 GB, 0.4% high, gives 2% shorter).
/// Each case is a row of long_rows.jsonl (`scripts/measure/long/`, fake
/// tensors, transformers 5.23) whose peak is a layer's recompute: the
/// sliding-window mask and SDPA's masked K/V (Mistral, Gemma 3), the
/// experts in the recomputed layer (Mixtral). Before the masks were
/// modelled, Mistral-7B LoRA at 2 × 16384 was 4.7% low: the longest
/// sequence found for its measured peak was 17,738 tokens, 8.3% too long.
#[test]
fn longest_sequence_that_fits_is_the_measured_one() {
    let long = rows("long_rows");
    for label in [
        "mistral-7b bf16 adamw b2 s16384 ckpt lora16",
        "mistral-7b bf16 adamw b1 s32768 ckpt lora16",
        "mixtral-8x7b bf16 adamw b1 s32768 ckpt lora16",
        "mixtral-8x7b bf16 adamw b2 s32768 ckpt lora16",
        "gemma3-1b bf16 adamw b1 s32768 ckpt lora16",
    ] {
        let r = long
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("no row {label}"));
        let s = decode_strict(&RawQuery::parse(&r.query)).expect("query");
        let e = estimate(&s.train_run()).expect("estimate");
        let beside = e.needed().get() - peak_allocated(&e);
        let measured = r.measured["peak_overall"].as_u64().expect("peak");
        let capacity = vramfit_core::Bytes(measured + beside);
        let longest = vramfit_core::solve::max_seq(&s, capacity).expect("fits");
        let seq = f64::from(s.train.seq.get());
        let off = (f64::from(longest) - seq) / seq * 100.0;
        println!("{label}: longest {longest} tokens ({off:+.2}%)");
        assert!(off.abs() <= 2.5, "{label}: longest {longest} ({off:+.2}%)");
    }
}

/// Pipeline ranks (`pp_rows.jsonl`: `scripts/measure/parallel/pp.py`,
/// torch 2.15's GPipe, 1F1B and interleaved 1F1B schedules over stages of
/// transformers 5.23's models, fake process group; first, middle and last
/// ranks): the 11 rows the model was built on (Llama-3.1-8B, Qwen3-8B), 9
/// measured after it to check it (Mistral-7B, Qwen2.5-7B's biases, 32
/// layers cut in 10, 10 and 12, checkpointed middle ranks:
/// `raw/pp523_check.jsonl`, every phase within 0.3% when first run), and
/// 13 interleaved ranks (2 and 4 ranks, 2 and 3 stages a rank,
/// checkpointing, Qwen3-8B: `raw/pp523.jsonl`, `raw/pp523_interleaved.jsonl`;
/// the first ranks 2.2% low until a later backward's new embedding
/// gradient was modelled), and 8 cut as torchtitan cuts them
/// (`pp_split=torchtitan`: 32 layers over 4 ranks as 8, 9, 8 and 7, over
/// 2 ranks of 2 stages, 36 over 3 as 12, 13 and 11:
/// `raw/pp523_torchtitan.jsonl`, measured after the cut was modelled).
/// Each rank's estimate against
/// its own measurement, the
/// schedule's whole step (`peak_pipeline`: forwards and backwards
/// interleaved) against the higher of vramfit's forward and backward.
#[test]
fn pipeline_ranks_within_budget() {
    use vramfit_core::train::estimate_rank;
    let text = include_str!("fixtures/pp_rows.jsonl");
    let mut failures = Vec::new();
    let mut worst = 0f64;
    let mut n = 0;
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).expect("row");
        let gc = if r["gc"] == "off" {
            "false"
        } else {
            "non_reentrant"
        };
        // torchtitan's end weights, where the row is not at its defaults.
        let weights = match (r["first_less"].as_u64(), r["last_less"].as_u64()) {
            (Some(f), Some(l)) => format!("&pp_first_less={f}&pp_last_less={l}"),
            _ => String::new(),
        };
        // A preset, or the config the row carries (the hybrids' shrunk and
        // text-model configs).
        let model = model_keys(r["model"].as_str().expect("model"), &r["config"])
            .unwrap_or_else(|e| panic!("{e}"));
        let q = format!(
            "{model}&dtype=bf16&optim=adamw&batch={}&seq={}&grad_ckpt={gc}&attn=sdpa&use_cache=false&pp={}&gpus={}&pp_schedule={}&vpp={}&micro_batches={}&pp_split={}{weights}",
            r["batch"],
            r["seq"],
            r["pp"],
            r["pp"],
            r["schedule"].as_str().expect("schedule"),
            r["vpp"],
            r["micro_batches"],
            r["split"].as_str().unwrap_or("transformers"),
        );
        let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|e| panic!("{q}: {e:?}"));
        let rank = u32::try_from(r["rank"].as_u64().expect("rank")).expect("rank");
        let e = estimate_rank(&s.train_run(), rank).expect("estimate");
        let tag = r["tag"].as_str().unwrap_or_default();
        let m = &r["measured"];
        let overall = err(
            peak_allocated(&e),
            m["peak_overall"].as_u64().expect("peak"),
        );
        worst = worst.max(overall.abs());
        if overall.abs() > OVERALL_BUDGET_PCT {
            failures.push(format!("{tag}: overall {overall:+.3}%"));
        }
        let mut cells = Vec::new();
        for it in [1u32, 2] {
            let key = format!("iter{it}");
            let ours = |ph: &str| phase_peak(&e, it, ph).expect("phase");
            for (name, est) in [
                ("peak_pipeline", ours("peak_fwd").max(ours("peak_bwd"))),
                ("peak_step", ours("peak_step")),
                ("peak_zero_grad", ours("peak_zero_grad")),
            ] {
                let pe = err(est, m[&key][name].as_u64().expect("phase"));
                cells.push(format!("{pe:+.3}"));
                if pe.abs() > PHASE_BUDGET_PCT {
                    failures.push(format!("{tag}: {key} {name} {pe:+.3}%"));
                }
            }
        }
        println!("{tag:<48} {overall:+.3}%  {}", cells.join(" "));
        n += 1;
    }
    assert_eq!(n, 62, "pp_rows");
    println!("pp_rows: max |overall err| {worst:.3}%");
    assert!(
        failures.is_empty(),
        "outside budget:\n{}",
        failures.join("\n")
    );
}
