//! Training configs' fields as query keys, one table for the trainers
//! whose configs people paste:
//! - transformers' `TrainingArguments` and TRL's `SFTConfig` /
//!   `ModelConfig` (`trl/trainer/sft_config.py`, `trl/trainer/model_config.py`:
//!   `use_peft`, `lora_r` 16 by default, `load_in_4bit`,
//!   `bnb_4bit_quant_type` nf4 by default, `use_bnb_nested_quant`);
//! - Axolotl (`base_model`, `micro_batch_size`, `sequence_len`, `adapter:
//!   lora|qlora`, `lora_target_linear`, `flash_attention`);
//! - LLaMA-Factory (`finetuning_type: lora`, `lora_rank` 8 by default,
//!   `lora_target: all`, `cutoff_len`, `quantization_bit`);
//! - PEFT's `adapter_config.json` (`LoraConfig.save_pretrained`,
//!   `peft/tuners/lora/config.py`: `peft_type: LORA`, `r`,
//!   `target_modules`, `base_model_name_or_path`, `use_dora`): an adapter
//!   serves or trains further, so it leaves the link's task as it is;
//!   what vramfit does not model in it (`modules_to_save`, `rank_pattern`,
//!   `layers_to_transform`, another kind of adapter) is said;
//! - DeepSpeed's `ds_config.json` (`zero_optimization.stage`,
//!   `offload_optimizer.device`, `offload_param.device`,
//!   `train_micro_batch_size_per_gpu`) and accelerate's config
//!   (`distributed_type`, `num_processes`, `deepspeed_config.*`,
//!   `fsdp_config.*`).
//!
//! A field read by no rule is listed as unknown; the ones known to change
//! nothing in memory (learning rate, logging, output) say so.

use super::yaml::{Entry, Value};
use super::{preset_for, Collector};
use crate::clip::{clip, QUOTE};
use crate::query::Key;
use std::collections::HashSet;

/// Fields that change nothing vramfit models in memory.
const NO_EFFECT: &[&str] = &[
    "output_dir",
    "overwrite_output_dir",
    "learning_rate",
    "lr",
    "lr_scheduler_type",
    "warmup_ratio",
    "warmup_steps",
    "num_train_epochs",
    "num_epochs",
    "max_steps",
    "logging_steps",
    "logging_dir",
    "save_steps",
    "save_strategy",
    "save_total_limit",
    "eval_strategy",
    "evaluation_strategy",
    "eval_steps",
    "report_to",
    "run_name",
    "seed",
    "data_seed",
    "dataset_name",
    "dataset_text_field",
    "dataset_config",
    "dataset_prepared_path",
    "val_set_size",
    "push_to_hub",
    "hub_model_id",
    "weight_decay",
    "max_grad_norm",
    "lora_alpha",
    "do_train",
    "do_eval",
    "template",
    "dataset",
    "plot_loss",
    "trust_remote_code",
    "adam_beta1",
    "adam_beta2",
    "adam_epsilon",
    "logging_first_step",
    "wandb_project",
    "wandb_entity",
    "wandb_name",
    "stage",
    "lora_model_dir",
    "save_only_model",
    "hub_strategy",
    "ddp_timeout",
    "preprocessing_num_workers",
    "dataloader_num_workers",
    "output_path",
    "log_level",
    "logging_strategy",
    "remove_unused_columns",
    "chat_template",
    // accelerate's config: where and how processes start.
    "compute_environment",
    "debug",
    "machine_rank",
    "main_training_function",
    "num_machines",
    "rdzv_backend",
    "same_network",
    "tpu_env",
    "tpu_use_cluster",
    "tpu_use_sudo",
    "use_cpu",
    "downcast_bf16",
    "enable_cpu_affinity",
    "deepspeed_config.deepspeed_multinode_launcher",
    "deepspeed_config.zero3_save_16bit_model",
    "fsdp_config.fsdp_state_dict_type",
    "fsdp_config.fsdp_cpu_ram_efficient_loading",
];

/// Every field some rule below reads (for telling a config from other
/// YAML).
const READ: &[&str] = &[
    "model_name_or_path",
    "base_model",
    "model_id",
    "pretrained_model_name_or_path",
    "per_device_train_batch_size",
    "micro_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "max_length",
    "max_seq_length",
    "sequence_len",
    "cutoff_len",
    "max_seq_len",
    "gradient_checkpointing",
    "gradient_checkpointing_kwargs.use_reentrant",
    "bf16",
    "fp16",
    "torch_dtype",
    "dtype",
    "model_init_kwargs.torch_dtype",
    "model_init_kwargs.dtype",
    "bf16.enabled",
    "fp16.enabled",
    "optim",
    "optimizer",
    "use_peft",
    "adapter",
    "finetuning_type",
    "lora_r",
    "lora_rank",
    "lora_target_modules",
    "lora_target",
    "lora_target_linear",
    "lora_dropout",
    "use_dora",
    "load_in_4bit",
    "load_in_8bit",
    "bnb_4bit_quant_type",
    "use_bnb_nested_quant",
    "bnb_4bit_use_double_quant",
    "quantization_bit",
    "attn_implementation",
    "flash_attention",
    "sdp_attention",
    "zero_optimization.stage",
    "zero_optimization.offload_optimizer.device",
    "zero_optimization.offload_param.device",
    "distributed_type",
    "num_processes",
    "deepspeed_config.zero_stage",
    "deepspeed_config.offload_optimizer_device",
    "deepspeed_config.offload_param_device",
    "fsdp_config.fsdp_version",
    "fsdp_config.fsdp_sharding_strategy",
    "fsdp_config.fsdp_offload_params",
    "fsdp",
    "deepspeed",
    "mixed_precision",
    "zero_stage",
    "deepspeed_config.gradient_accumulation_steps",
    "fsdp_config.fsdp_reshard_after_forward",
    "fsdp_config.fsdp_activation_checkpointing",
];

pub(crate) fn is_known_field(path: &str) -> bool {
    READ.contains(&path) || NO_EFFECT.contains(&path)
}

/// The entries by path, each marked when a rule reads it.
struct Fields<'a> {
    entries: &'a [Entry],
    used: HashSet<usize>,
}

impl<'a> Fields<'a> {
    /// The last entry with one of these paths, marked read.
    fn get(&mut self, paths: &[&str]) -> Option<&'a Entry> {
        let (i, e) = self
            .entries
            .iter()
            .enumerate()
            .rev()
            .find(|(_, e)| paths.contains(&e.path.as_str()))?;
        self.used.insert(i);
        Some(e)
    }

    fn text(&mut self, paths: &[&str]) -> Option<(String, String)> {
        self.get(paths).map(|e| (e.value.text(), from(e)))
    }

    fn truthy(&mut self, paths: &[&str]) -> Option<(bool, String)> {
        let (v, f) = self.text(paths)?;
        Some((
            matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "1" | "on"),
            f,
        ))
    }
}

fn from(e: &Entry) -> String {
    let v = e.value.text();
    match e.line {
        0 => format!("{}: {v}", e.path),
        n => format!("{}: {v} (line {n})", e.path),
    }
}

/// Reads a config's entries into `c`.
pub(crate) fn read(entries: &[Entry], what: &'static str, c: &mut Collector) {
    let mut f = Fields {
        entries,
        used: HashSet::new(),
    };
    let adapter = peft(&mut f, c);
    let known = entries.iter().any(|e| is_known_field(&e.path));
    if known && !adapter {
        c.found(what);
        c.set(Key::Task, "train", what);
    }
    model(&mut f, c);
    plain(&mut f, c);
    checkpointing(&mut f, c);
    dtype(&mut f, c);
    lora(&mut f, c);
    quant(&mut f, c);
    parallel(&mut f, c);
    for (i, e) in entries.iter().enumerate() {
        if f.used.contains(&i) {
            continue;
        }
        let leaf = e.path.rsplit('.').next().unwrap_or(&e.path);
        let why = if NO_EFFECT.contains(&e.path.as_str()) || NO_EFFECT.contains(&leaf) {
            "no effect on memory"
        } else {
            "not read"
        };
        c.unknown(format!("{} ({why})", from(e)));
    }
}

fn model(f: &mut Fields, c: &mut Collector) {
    let Some((name, src)) = f.text(&[
        "model_name_or_path",
        "base_model_name_or_path",
        "base_model",
        "model_id",
        "pretrained_model_name_or_path",
    ]) else {
        return;
    };
    match preset_for(&name) {
        Some(p) => c.set(Key::Model, p.id, &src),
        None => c.unknown(format!(
            "{src}: no preset vramfit knows by that name (the page reads its config.json from the Hub; the CLI takes --config FILE)"
        )),
    }
}

/// Fields whose value is the key's as written.
fn plain(f: &mut Fields, c: &mut Collector) {
    let table: &[(&[&str], Key)] = &[
        (
            &[
                "per_device_train_batch_size",
                "micro_batch_size",
                "train_micro_batch_size_per_gpu",
            ],
            Key::Batch,
        ),
        (
            &[
                "gradient_accumulation_steps",
                "deepspeed_config.gradient_accumulation_steps",
            ],
            Key::GradAccum,
        ),
        (
            &[
                "max_length",
                "max_seq_length",
                "sequence_len",
                "cutoff_len",
                "max_seq_len",
            ],
            Key::Seq,
        ),
        (&["lora_dropout"], Key::LoraDropout),
        (&["num_processes"], Key::Gpus),
    ];
    for (paths, key) in table {
        if let Some((v, src)) = f.text(paths) {
            if v == "auto" {
                c.unknown(format!(
                    "{src}: `auto`, filled in by the Trainer: give {key} in the query"
                ));
            } else {
                c.set(*key, &v, &src);
            }
        }
    }
    if let Some((v, src)) = f.text(&["optim", "optimizer"]) {
        let o = match v.to_ascii_lowercase().as_str() {
            "adamw_torch" => "adamw",
            "adamw_torch_fused" => "adamw_fused",
            "adamw_hf" => "adamw_forloop",
            "adamw_bnb_8bit" | "adamw_8bit" => "adamw8bit",
            "paged_adamw_8bit" => "paged_adamw_8bit",
            "paged_adamw_32bit" | "paged_adamw" => "paged_adamw",
            "adafactor" => "adafactor",
            "sgd" => "sgd",
            "lion_32bit" | "lion" => "lion",
            _ => return c.unknown(format!("{src}: an optimizer vramfit does not model")),
        };
        c.set(Key::Optim, o, &src);
    }
    if let Some((v, src)) = f.text(&["attn_implementation"]) {
        c.set(Key::Attn, &v.to_ascii_lowercase(), &src);
    }
    if let Some((true, src)) = f.truthy(&["flash_attention"]) {
        c.set(Key::Attn, "flash_attention_2", &src);
    }
    if let Some((true, src)) = f.truthy(&["sdp_attention"]) {
        c.set(Key::Attn, "sdpa", &src);
    }
}

fn checkpointing(f: &mut Fields, c: &mut Collector) {
    let Some((v, src)) = f.text(&["gradient_checkpointing"]) else {
        return;
    };
    let reentrant = f.truthy(&["gradient_checkpointing_kwargs.use_reentrant"]);
    let value = match (v.to_ascii_lowercase().as_str(), reentrant) {
        ("false" | "no", _) => "false",
        ("unsloth" | "offload", _) => "offload",
        ("true" | "yes", Some((true, _))) => "reentrant",
        ("true" | "yes", Some((false, _))) => "non_reentrant",
        ("true" | "yes", None) => "true",
        _ => return c.unknown(format!("{src}: not a checkpointing setting vramfit reads")),
    };
    c.set(Key::GradCkpt, value, &src);
}

/// The Trainer's `bf16`/`fp16` with the dtype the model is loaded in;
/// DeepSpeed's `bf16.enabled` keeps fp32 master weights.
fn dtype(f: &mut Fields, c: &mut Collector) {
    let load = f.text(&[
        "torch_dtype",
        "dtype",
        "model_init_kwargs.torch_dtype",
        "model_init_kwargs.dtype",
    ]);
    let load_is = |names: &[&str]| {
        load.as_ref()
            .is_some_and(|(v, _)| names.contains(&v.as_str()))
    };
    if let Some((true, src)) = f.truthy(&["bf16.enabled"]) {
        return c.set(Key::Dtype, "mixed_bf16", &src);
    }
    // accelerate's DeepSpeed plugin turns `mixed_precision: bf16` into
    // DeepSpeed's `bf16.enabled`: bf16 weights, an fp32 master copy.
    let deepspeed = f
        .entries
        .iter()
        .any(|e| e.path == "distributed_type" && e.value.text() == "DEEPSPEED");
    if deepspeed {
        if let Some(e) = f
            .entries
            .iter()
            .find(|e| e.path == "mixed_precision" && e.value.text() == "bf16")
        {
            let src = from(e);
            f.get(&["mixed_precision"]);
            return c.set(Key::Dtype, "mixed_bf16", &src);
        }
    }
    if let Some(e) = f
        .entries
        .iter()
        .find(|e| e.path == "bf16" && e.value.text() == "auto")
    {
        c.unknown(format!(
            "{}: Axolotl's choice by GPU (bf16 where it has it): give dtype in the query",
            from(e)
        ));
    }
    let bf16 = f.truthy(&["bf16"]);
    let fp16 = f.truthy(&["fp16"]);
    let mixed = f.text(&["mixed_precision"]);
    let amp = match (bf16, fp16, mixed) {
        (Some((true, src)), _, _) => Some(("bf16", src)),
        (_, Some((true, src)), _) => Some(("fp16", src)),
        (_, _, Some((m, src))) if m == "bf16" || m == "fp16" => {
            Some((if m == "bf16" { "bf16" } else { "fp16" }, src))
        }
        _ => None,
    };
    match amp {
        Some(("bf16", src)) if load_is(&["bfloat16", "auto"]) => c.set(Key::Dtype, "bf16_autocast", &src),
        Some(("bf16", src)) if load_is(&["float32"]) => c.set(Key::Dtype, "amp_bf16", &src),
        Some(("fp16", src)) => c.set(Key::Dtype, "amp_fp16", &src),
        Some((_, src)) => c.unknown(format!(
            "{src}: the dtype the model is loaded in is not in the config (torch_dtype): dtype=bf16_autocast if bf16, amp_bf16 if fp32"
        )),
        None => match load {
            Some((v, src)) if v == "bfloat16" => c.set(Key::Dtype, "bf16", &src),
            Some((v, src)) if v == "float16" => c.set(Key::Dtype, "fp16", &src),
            Some((v, src)) if v == "float32" => c.set(Key::Dtype, "fp32", &src),
            Some((_, src)) => c.unknown(format!("{src}: not a dtype vramfit reads alone")),
            None => {}
        },
    }
}

/// PEFT's fields whose value, when set, changes what an adapter holds in
/// ways vramfit does not model, and why.
const PEFT_UNMODELLED: &[(&str, &str)] = &[
    (
        "modules_to_save",
        "whole trainable copies of these modules beside the adapter, not counted",
    ),
    (
        "rank_pattern",
        "ranks per module: every module counted at r",
    ),
    (
        "layers_to_transform",
        "only these layers adapted: every layer counted",
    ),
    (
        "exclude_modules",
        "modules left out of the targets: not subtracted",
    ),
    (
        "trainable_token_indices",
        "trainable rows of the embeddings, not counted",
    ),
    ("layer_replication", "layers repeated, not counted"),
];

/// PEFT's fields that change nothing vramfit models in memory.
const PEFT_NO_EFFECT: &[&str] = &[
    "alpha_pattern",
    "auto_mapping",
    "bias",
    "corda_config",
    "eva_config",
    "fan_in_fan_out",
    "inference_mode",
    "init_lora_weights",
    "layers_pattern",
    "loftq_config",
    "lora_alpha",
    "lora_bias",
    "megatron_config",
    "megatron_core",
    "revision",
    "task_type",
    "use_rslora",
];

/// A PEFT `adapter_config.json`: its rank, targets and DoRA as the link's
/// LoRA keys (both tasks read them), or `false` when the config is not
/// one. An empty value (`null`, `{}`, `[]`) is PEFT's default.
fn peft(f: &mut Fields, c: &mut Collector) -> bool {
    let Some((ty, src)) = f.text(&["peft_type"]) else {
        return false;
    };
    c.found("a PEFT adapter_config.json");
    if ty != "LORA" {
        c.unknown(format!(
            "{src}: a PEFT adapter other than LoRA, not modelled"
        ));
        return true;
    }
    match f.text(&["r"]) {
        Some((r, s)) => c.set(Key::LoraR, &r, &s),
        None => c.set(
            Key::LoraR,
            "8",
            &format!("{src} (LoraConfig's default rank 8)"),
        ),
    }
    if let Some(e) = f.get(&["target_modules"]) {
        c.set(Key::LoraTargets, &targets_text(&e.value), &from(e));
    }
    // false is the link's default: set only a DoRA adapter.
    if let Some((true, s)) = f.truthy(&["use_dora"]) {
        c.set(Key::Dora, "true", &s);
    }
    for (path, why) in PEFT_UNMODELLED {
        if let Some((v, s)) = f.text(&[path]) {
            if !matches!(v.as_str(), "" | "false") {
                c.unknown(format!("{s}: {why}"));
            }
        }
    }
    for path in PEFT_NO_EFFECT {
        if let Some((v, s)) = f.text(&[path]) {
            if !v.is_empty() {
                c.unknown(format!("{s} (no effect on memory)"));
            }
        }
    }
    true
}

/// A target-modules field as `lora_targets`: peft's `all-linear` (and the
/// trainers' `all`, `all_linear`) as `all`, a list joined by commas.
fn targets_text(v: &Value) -> String {
    match v {
        Value::Scalar(x) if matches!(x.as_str(), "all-linear" | "all" | "all_linear") => {
            "all".to_string()
        }
        other => other.text().replace(' ', ""),
    }
}

fn lora(f: &mut Fields, c: &mut Collector) {
    // (on, its source, the trainer's default rank)
    let on = match (
        f.truthy(&["use_peft"]),
        f.text(&["adapter"]),
        f.text(&["finetuning_type"]),
    ) {
        (Some((true, src)), _, _) => Some((src, "16")),
        (_, Some((a, src)), _) if a == "lora" || a == "qlora" => Some((src, "")),
        (_, _, Some((t, src))) if t == "lora" => Some((src, "8")),
        _ => None,
    };
    let rank = f.text(&["lora_r", "lora_rank"]);
    let targets = f
        .get(&["lora_target_modules", "lora_target"])
        .map(|e| (e.value.clone(), from(e)));
    let linear = f.truthy(&["lora_target_linear"]);
    let dora = f.truthy(&["use_dora"]);
    let Some((src, default)) = on else {
        if let Some((r, s)) = rank {
            c.unknown(format!("{s}: LoRA is not turned on (use_peft / adapter / finetuning_type): rank {r} unused"));
        }
        return;
    };
    match (rank, default) {
        (Some((r, s)), _) => c.set(Key::LoraR, &r, &s),
        (None, "") => c.unknown(format!("{src}: LoRA without lora_r")),
        (None, d) => c.set(
            Key::LoraR,
            d,
            &format!("{src} (the trainer's default rank {d})"),
        ),
    }
    match (targets, linear) {
        (_, Some((true, s))) => c.set(Key::LoraTargets, "all", &s),
        (Some((v, s)), _) => c.set(Key::LoraTargets, &targets_text(&v), &s),
        (None, _) => {}
    }
    if let Some((d, s)) = dora {
        c.set(Key::Dora, if d { "true" } else { "false" }, &s);
    }
}

fn quant(f: &mut Fields, c: &mut Collector) {
    let kind = f
        .text(&["bnb_4bit_quant_type"])
        .map(|(v, _)| v.to_ascii_lowercase());
    let four =
        |c: &mut Collector, src: &str| c.set(Key::Quant, kind.as_deref().unwrap_or("nf4"), src);
    if let Some((true, src)) = f.truthy(&["load_in_4bit"]) {
        four(c, &src);
    } else if let Some((true, src)) = f.truthy(&["load_in_8bit"]) {
        c.set(Key::Quant, "int8", &src);
    } else if let Some((bits, src)) = f.text(&["quantization_bit"]) {
        match bits.as_str() {
            "4" => four(c, &src),
            "8" => c.set(Key::Quant, "int8", &src),
            _ => c.unknown(format!("{src}: not a bitsandbytes width vramfit models")),
        }
    }
    if let Some((true, src)) = f.truthy(&["use_bnb_nested_quant", "bnb_4bit_use_double_quant"]) {
        c.set(Key::DoubleQuant, "true", &src);
    }
    // Axolotl's qlora adapter loads the base in 4 bits.
    if !c.has(Key::Quant) {
        if let Some(e) = f
            .entries
            .iter()
            .rev()
            .find(|e| e.path == "adapter" && e.value.text() == "qlora")
        {
            c.set(Key::Quant, "nf4", &from(e));
        }
    }
}

/// DeepSpeed, accelerate's config and TrainingArguments' `fsdp`.
fn parallel(f: &mut Fields, c: &mut Collector) {
    if let Some((stage, src)) = f.text(&[
        "zero_optimization.stage",
        "deepspeed_config.zero_stage",
        "zero_stage",
    ]) {
        c.set(Key::Shard, "deepspeed", &src);
        c.set(Key::Zero, &stage, &src);
    }
    for (paths, value) in [
        (
            &[
                "zero_optimization.offload_optimizer.device",
                "deepspeed_config.offload_optimizer_device",
            ][..],
            "optimizer",
        ),
        (
            &[
                "zero_optimization.offload_param.device",
                "deepspeed_config.offload_param_device",
            ][..],
            "params",
        ),
    ] {
        if let Some((dev, src)) = f.text(paths) {
            if dev == "cpu" || dev == "nvme" {
                c.set(Key::Offload, value, &src);
            }
        }
    }
    let distributed = f.text(&["distributed_type"]);
    if let Some((t, src)) = &distributed {
        match t.as_str() {
            "FSDP" => {
                let v2 = f
                    .text(&["fsdp_config.fsdp_version"])
                    .is_some_and(|(v, _)| v == "2");
                c.set(Key::Shard, if v2 { "fsdp2" } else { "fsdp1" }, src);
            }
            "DEEPSPEED" => c.set(Key::Shard, "deepspeed", src),
            other => c.unknown(format!(
                "{src}: {} is not sharded (no key to set)",
                clip(other, QUOTE)
            )),
        }
    }
    if let Some((s, src)) = f.text(&["fsdp_config.fsdp_sharding_strategy"]) {
        match s.as_str() {
            "FULL_SHARD" | "1" => c.set(Key::Zero, "3", &src),
            "SHARD_GRAD_OP" | "2" => c.set(Key::Zero, "2", &src),
            _ => c.unknown(format!("{src}: a sharding strategy vramfit does not model")),
        }
    }
    // FSDP2's `reshard_after_forward`: true shards the parameters again
    // after each forward (FULL_SHARD), false keeps them (SHARD_GRAD_OP).
    if let Some((r, src)) = f.truthy(&["fsdp_config.fsdp_reshard_after_forward"]) {
        c.set(Key::Zero, if r { "3" } else { "2" }, &src);
    }
    if let Some((true, src)) = f.truthy(&["fsdp_config.fsdp_activation_checkpointing"]) {
        c.set(Key::GradCkpt, "true", &src);
    }
    if let Some((true, src)) = f.truthy(&["fsdp_config.fsdp_offload_params"]) {
        c.set(Key::Offload, "params", &src);
    }
    if let Some((s, src)) = f.text(&["fsdp"]) {
        if s.contains("full_shard") || s.contains("shard_grad_op") {
            c.set(Key::Shard, "fsdp1", &src);
            c.set(
                Key::Zero,
                if s.contains("full_shard") { "3" } else { "2" },
                &src,
            );
            if s.contains("offload") {
                c.set(Key::Offload, "params", &src);
            }
        }
    }
    if let Some((path, src)) = f.text(&["deepspeed"]) {
        c.unknown(format!(
            "{src}: paste {} itself to read its ZeRO stage",
            clip(&path, QUOTE)
        ));
    }
}
