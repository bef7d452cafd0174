//! The rules across keys (LoRA, a quantized base, offload, the model's
//! keys, the sequence against the positions) and the model's resolution:
//! each refusal a notice next to its field.

use super::fields::{Draft, GpuKey};
use super::notice::{FieldError, Note, Notice};
use super::{shown, Key};
use crate::inputs::Attn;
use crate::inputs::Capacity;
use crate::inputs::View;
use crate::model::family::AttnBias;
use crate::model::family::Positions;
use crate::model::family::{Qkv, Shared};
use crate::model::presets;
use crate::model::ArchOverrides;
use crate::model::Family;
use crate::scenario::{ModelSpec, Scenario, Task};
use crate::text::ShortText;
use crate::train::run::DsBuckets;
use crate::train::run::Dtype;
use crate::train::run::Offload;
use crate::train::run::PpSchedule;
use crate::train::run::PpSplit;
use crate::train::run::Quant;
use crate::train::run::SeqLen;
use crate::train::run::Shard;
use crate::train::run::Training;
use crate::train::run::Transformers;

/// LoRA's keys against the run and the model: without adapters they are
/// unused (said, and reset); targets must be modules the family has, whole
/// (peft adapts modules, and refuses names it does not find).
pub(super) fn check_lora(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let default = Training::default();
    let t = &mut s.train;
    if t.lora_r.is_none() {
        let because = || "lora_r is 0: full fine-tuning has no adapters".to_string();
        if t.lora_targets != default.lora_targets {
            notices.push(Notice::Unused {
                key: Key::LoraTargets,
                because: because(),
            });
            t.lora_targets = default.lora_targets;
        }
        if t.lora_dropout != default.lora_dropout {
            notices.push(Notice::Unused {
                key: Key::LoraDropout,
                because: because(),
            });
            t.lora_dropout = default.lora_dropout;
        }
        if t.dora {
            notices.push(Notice::Unused {
                key: Key::Dora,
                because: because(),
            });
            t.dora = false;
        }
        return;
    }
    let Some(a) = s.arch else {
        return;
    };
    check_misfit(t, &a, texts, notices);
}

/// The value the query gave for `key` (for a message), or the scenario's.
fn given(texts: &[(Key, &str)], key: Key, otherwise: impl FnOnce() -> String) -> String {
    texts
        .iter()
        .rev()
        .find(|(k, _)| *k == key)
        .map_or_else(otherwise, |(_, v)| v.to_string())
}

/// A refusal of `key`'s value because of the others: said next to the
/// field, and the key's default used.
pub(super) fn conflict(notices: &mut Vec<Notice>, texts: &[(Key, &str)], key: Key, why: String) {
    let default = key
        .field()
        .map(|f| f.shown_value(&Scenario::default()))
        .unwrap_or_default();
    conflict_using(notices, texts, key, why, default);
}

/// As [`conflict`], when what is used instead is not the key's default
/// (the model's own limit, the only value the model allows).
pub(super) fn conflict_using(
    notices: &mut Vec<Notice>,
    texts: &[(Key, &str)],
    key: Key,
    why: String,
    used: String,
) {
    notices.push(Notice::Invalid {
        key,
        value: given(texts, key, || used.clone()),
        error: FieldError::Conflict(why),
        default: used,
    });
}

/// A quantized base is frozen: it trains through LoRA adapters only.
/// Double quantization nests the scales of 4-bit blocks; preparing for
/// k-bit training touches a quantized model only.
pub(super) fn check_quant(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let t = &mut s.train;
    let default = Training::default();
    if t.quant != Quant::None && t.lora_r.is_none() {
        conflict(
            notices,
            texts,
            Key::Quant,
            "quantized weights are frozen: train LoRA adapters over them (set lora_r)".into(),
        );
        t.quant = Quant::None;
    }
    if t.quant != Quant::None && t.dora {
        conflict(
            notices,
            texts,
            Key::Dora,
            format!(
                "DoRA over a {} base is not estimated (peft dequantizes every weight for its norm in each forward); use LoRA, or an unquantized base",
                t.quant.key()
            ),
        );
        t.dora = false;
    }
    let four_bit = matches!(t.quant, Quant::Nf4 | Quant::Fp4);
    if t.double_quant && !four_bit {
        notices.push(Notice::Unused {
            key: Key::DoubleQuant,
            because: "only 4-bit weights (nf4, fp4) have scales to quantize again".into(),
        });
        t.double_quant = default.double_quant;
    }
    if t.compute_fp32 && !four_bit {
        notices.push(Notice::Unused {
            key: Key::BnbCompute,
            because: "only 4-bit weights (nf4, fp4) are dequantized to a compute dtype".into(),
        });
        t.compute_fp32 = default.compute_fp32;
    }
    if t.kbit_prep != default.kbit_prep && t.quant == Quant::None {
        notices.push(Notice::Unused {
            key: Key::KbitPrep,
            because: "only a quantized base is prepared for k-bit training".into(),
        });
        t.kbit_prep = default.kbit_prep;
    }
}

/// Offloading is ZeRO's (DeepSpeed) or FSDP's: the optimizer needs a ZeRO
/// stage, the parameters stage 3; the step then runs DeepSpeed's CPU Adam
/// or Lion.
pub(super) fn check_offload(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let (zero, offload) = (s.parallel.zero.get(), s.parallel.offload);
    let why = match offload {
        Offload::None => None,
        Offload::Optimizer if zero == 0 => Some(
            "offloading is done by ZeRO (DeepSpeed) or FSDP: set zero to 1, 2 or 3 (one GPU is fine)"
                .to_string(),
        ),
        Offload::Params if zero < 3 => Some(
            "offloading parameters needs ZeRO stage 3 (or FSDP full sharding): set zero=3".into(),
        ),
        Offload::Optimizer | Offload::Params if s.train.optim.spec().cpu_offload => None,
        Offload::Optimizer | Offload::Params => Some(format!(
            "the offloaded step runs DeepSpeed's CPU Adam or Lion, not {}: choose adamw or lion",
            s.train.optim.key()
        )),
    };
    if let Some(why) = why {
        conflict(notices, texts, Key::Offload, why);
        s.parallel.offload = Offload::None;
    }
}

/// The software stack against the run: a release without the model's
/// family is refused (`Legacy::in_448`, `Legacy::in_457`); FSDP1 is modelled as accelerate
/// sets it up (full sharding, no CPU offload, no quantized base);
/// flash-attn needs CUDA and has no attention sinks; the backward prefetch
/// and a checkpointing choice are read only where they apply.
pub(super) fn check_stack(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let default = Scenario::default();
    let t = s.train.transformers;
    let absent = s.arch.and_then(|a| {
        let has = a.family.spec().legacy;
        let only_5 = "transformers=5";
        let (here, later) = match t {
            Transformers::V448 if has.in_457 => (has.in_448, "transformers=4.57 or 5"),
            Transformers::V448 => (has.in_448, only_5),
            Transformers::V457 => (has.in_457, only_5),
            Transformers::V5 => (true, ""),
        };
        (!here).then_some((a, later))
    });
    if let Some((a, later)) = absent {
        conflict(
            notices,
            texts,
            Key::Transformers,
            format!(
                "transformers {} has no {} model (model_type {}): it came in a later release; use {later}",
                t.key(),
                a.family.label(),
                a.family.key()
            ),
        );
        s.train.transformers = default.train.transformers;
    }
    let unmodelled = s
        .arch
        .filter(|a| a.family.spec().legacy.v4_unmodelled && t != Transformers::V5);
    if let Some(a) = unmodelled {
        conflict(
            notices,
            texts,
            Key::Transformers,
            format!(
                "transformers {}: vramfit models {} on transformers 5 only (4.48 keeps other tensors: measured, not modelled); use transformers=5",
                t.key(),
                a.family.label()
            ),
        );
        s.train.transformers = default.train.transformers;
    }
    let shard = s.parallel.shard;
    let fsdp = shard.fsdp();
    if fsdp && s.parallel.zero.get() != 3 {
        conflict(
            notices,
            texts,
            Key::Shard,
            format!(
                "{} is modelled with full sharding (FULL_SHARD): set zero=3",
                shard.short()
            ),
        );
        s.parallel.shard = Shard::Generic;
    } else if fsdp && s.parallel.offload != Offload::None {
        conflict(
            notices,
            texts,
            Key::Offload,
            format!(
                "{}'s CPU offload is not modelled (not measured): offload needs shard=generic",
                shard.short()
            ),
        );
        s.parallel.offload = Offload::None;
    }
    if s.parallel.shard.fsdp() && s.train.quant != Quant::None {
        conflict(
            notices,
            texts,
            Key::Shard,
            format!(
                "{} over a quantized base is not modelled (not measured): use shard=generic",
                shard.short()
            ),
        );
        s.parallel.shard = Shard::Generic;
    }
    if s.parallel.shard == Shard::Fsdp2 && s.train.transformers != Transformers::V5 {
        conflict(
            notices,
            texts,
            Key::Shard,
            "FSDP2 is measured on transformers 5 only: use transformers=5, or shard=fsdp1".into(),
        );
        s.parallel.shard = Shard::Generic;
    }
    check_deepspeed(s, texts, notices);
    if s.parallel.shard != Shard::Fsdp1
        && s.parallel.backward_prefetch != default.parallel.backward_prefetch
    {
        notices.push(Notice::Unused {
            key: Key::BackwardPrefetch,
            because: "only FSDP1 (shard=fsdp1) has this option (FSDP2 always prefetches one layer)"
                .into(),
        });
        s.parallel.backward_prefetch = default.parallel.backward_prefetch;
    }
    if s.train.attn == Attn::FlashAttention2 {
        let sinks = s.arch.is_some_and(|a| a.family.spec().sinks);
        let why = if !s.train.cuda_like {
            Some("flash-attn runs on CUDA only (cuda_like=false models the CPU's kernels)")
        } else if sinks {
            Some("flash-attn 2 has no attention sinks: this model runs eager (or flash-attn 3)")
        } else {
            None
        };
        if let Some(why) = why {
            conflict(notices, texts, Key::Attn, why.into());
            s.train.attn = default.train.attn;
        }
    }
}

/// Keys that only some models read: the auxiliary loss needs experts.
pub(super) fn check_model_keys(s: &mut Scenario, notices: &mut Vec<Notice>) {
    let moe = s
        .arch
        .and_then(|a| a.family.spec().moe.map(|m| (a.family, m)));
    let because = match moe {
        None => Some("the model has no experts (no router logits)".to_string()),
        Some((f, m)) if !m.aux_loss => Some(format!(
            "{}'s transformers model has no load-balancing loss",
            f.label()
        )),
        Some(_) => None,
    };
    if let (true, Some(because)) = (s.train.aux_loss, because) {
        notices.push(Notice::Unused {
            key: Key::AuxLoss,
            because,
        });
        s.train.aux_loss = false;
    }
}

/// Training an adapter on the output layer: peft can, vramfit has not
/// measured it (the head's pair and its activations).
const HEAD_UNTRAINED: &str = "an adapter on the output layer (lm_head) is sized where llama.cpp or Ollama loads one; training it is not measured";

/// LoRA targets the family has no module for (the default used), or that
/// vramfit does not estimate on this release ([`crate::train::Lora::refusal`]:
/// attention used instead).
fn check_misfit(
    t: &mut Training,
    a: &crate::model::Architecture,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
) {
    let default = Training::default();
    let why = if t.lora_targets.head() {
        Some(HEAD_UNTRAINED.to_string())
    } else {
        t.lora_targets.misfit(a, t.expert_layout())
    };
    let Some(why) = why else {
        return;
    };
    let used = default.lora_targets;
    let value = texts
        .iter()
        .rev()
        .find(|(k, _)| *k == Key::LoraTargets)
        .map_or_else(|| t.lora_targets.text(), |(_, v)| v.to_string());
    notices.push(Notice::Invalid {
        key: Key::LoraTargets,
        value,
        error: FieldError::Conflict(why),
        default: used.text(),
    });
    t.lora_targets = used;
}

/// DeepSpeed's ZeRO-3 as measured: full sharding, its bf16 (fp32 master
/// partitions: `mixed_bf16`), nothing offloaded, no quantized base; its
/// bucket sizes only under it.
fn check_deepspeed(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let p = &s.parallel;
    if p.shard == Shard::Deepspeed && p.offload != Offload::None {
        conflict(
            notices,
            texts,
            Key::Offload,
            "DeepSpeed's offload is not modelled (not measured): offload needs shard=generic"
                .into(),
        );
        s.parallel.offload = Offload::None;
    }
    let p = &s.parallel;
    let why = if p.shard != Shard::Deepspeed {
        None
    } else if p.zero.get() != 3 {
        Some("DeepSpeed is modelled for ZeRO-3: set zero=3")
    } else if s.train.dtype != Dtype::MixedBf16 {
        Some(
            "DeepSpeed is modelled in its bf16, which keeps fp32 master partitions: set \
             dtype=mixed_bf16 (other precisions under DeepSpeed are not measured)",
        )
    } else if s.train.quant != Quant::None {
        Some("DeepSpeed over a quantized base is not modelled (not measured): use shard=generic")
    } else {
        None
    };
    if let Some(why) = why {
        conflict(notices, texts, Key::Shard, why.into());
        s.parallel.shard = Shard::Generic;
    }
    if s.parallel.shard != Shard::Deepspeed && s.parallel.ds_buckets != DsBuckets::Default {
        notices.push(Notice::Unused {
            key: Key::DsBuckets,
            because: "only DeepSpeed (shard=deepspeed) has these buckets".into(),
        });
        s.parallel.ds_buckets = DsBuckets::Default;
    }
}

/// What the estimate of a training run does not describe for this stack:
/// ZeRO-3 counted as the paper does rather than as DeepSpeed allocates
/// (measured in `scripts/measure/deepspeed/`), DeepSpeed's gathered set
/// past its live cap (an upper bound), and a pipeline's key set without a
/// pipeline.
pub(super) fn stack_notes(s: &Scenario) -> Vec<Note> {
    if s.task != Task::Train {
        return Vec::new();
    }
    let p = &s.parallel;
    let paper = (p.zero.get() == 3 && p.shard == Shard::Generic && p.offload == Offload::None)
        .then_some(Note::PaperZero3);
    let capped = (p.shard == Shard::Deepspeed
        && s.arch
            .is_some_and(|a| a.params() > crate::train::run::DS_MAX_LIVE))
    .then_some(Note::DeepspeedLiveCap);
    let unread = if p.pp.get() > 1 {
        None
    } else if p.micro_batches.get() > 1 {
        Some(Key::MicroBatches)
    } else if p.pp_schedule != Scenario::default().parallel.pp_schedule {
        Some(Key::PpSchedule)
    } else if p.vpp.get() > 1 {
        Some(Key::Vpp)
    } else if p.pp_split != Scenario::default().parallel.pp_split {
        Some(Key::PpSplit)
    } else if p.pp_first_less != Scenario::default().parallel.pp_first_less {
        Some(Key::PpFirstLess)
    } else if p.pp_last_less != Scenario::default().parallel.pp_last_less {
        Some(Key::PpLastLess)
    } else {
        None
    };
    let pipeline = unread.map(|key| Note::PipelineOnly { key });
    paper.into_iter().chain(capped).chain(pipeline).collect()
}

/// The sequence length against the model's positions: past a learned
/// table PyTorch fails at the position embedding (refused, using the
/// table's length); past a rotary model's trained context it runs (a note).
pub(super) fn check_sequence(
    s: &mut Scenario,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
) -> Vec<Note> {
    let mut notes = Vec::new();
    if let ModelSpec::Preset {
        multimodal: true, ..
    } = s.model
    {
        notes.push(Note::TextOnly);
    }
    if let ModelSpec::Preset { like_llama, .. } = &mut s.model {
        if let Some(model_type) = *like_llama {
            let family = s.arch.map(|a| a.family);
            if family == Some(Family::LLAMA_LIKE) {
                notes.push(Note::ReadAsLlama {
                    model_type: model_type.as_str().to_string(),
                });
            } else {
                notices.push(Notice::Unused {
                    key: Key::LikeLlama,
                    because: format!(
                        "the family is {}, not {}",
                        family.map_or("unknown", Family::key),
                        Family::LLAMA_LIKE.key()
                    ),
                });
                *like_llama = None;
            }
        }
    }
    // An inference run's lengths are its engine's (`tasks::model_limits`).
    let Some(a) = s.arch.filter(|_| s.task == Task::Train) else {
        return notes;
    };
    let seq = s.train.seq.get();
    if a.positions == 0 || seq <= a.positions {
        return notes;
    }
    match a.family.spec().positions {
        Positions::Rotary => notes.push(Note::BeyondTrainedContext {
            seq,
            positions: a.positions,
        }),
        Positions::Learned => {
            // The default (2048) is the table's length for a model with
            // fewer positions; a typed length is refused with the reason.
            let typed = texts.iter().rev().find(|(k, _)| *k == Key::Seq);
            if let Some((_, value)) = typed {
                notices.push(Notice::Invalid {
                    key: Key::Seq,
                    value: value.to_string(),
                    error: FieldError::Conflict(format!(
                        "{} has {} learned positions: seq must be at most {}",
                        a.family.label(),
                        a.positions,
                        a.positions
                    )),
                    default: a.positions.to_string(),
                });
            }
            if let Some(max) = SeqLen::new(a.positions) {
                s.train.seq = max;
            }
        }
    }
    notes
}

/// Turns a draft into a scenario: picks the model and checks the
/// architecture, dropping overrides that break it (each with a notice).
pub(super) fn resolve(
    mut draft: Draft,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
) -> Scenario {
    let view = View {
        capacity: capacity(&draft, notices),
        ..draft.view
    };
    let base = Scenario {
        task: draft.task,
        infer: draft.infer,
        train: draft.train,
        parallel: draft.parallel,
        overhead: draft.overhead,
        view,
        ..Scenario::default()
    };
    if let (None, true, Some(params)) = (draft.model, draft.overrides.is_empty(), draft.params) {
        if draft.like_llama.is_some() {
            notices.push(Notice::Unused {
                key: Key::LikeLlama,
                because: "a parameter count alone has no architecture".into(),
            });
        }
        if draft.hub.is_some() {
            notices.push(Notice::Unused {
                key: Key::Hub,
                because: "a parameter count alone has no architecture".into(),
            });
        }
        if draft.multimodal {
            notices.push(Notice::Unused {
                key: Key::Multimodal,
                because: "a parameter count alone has no architecture".into(),
            });
        }
        return Scenario {
            model: ModelSpec::ParamsOnly { params },
            arch: None,
            ..base
        };
    }
    if let (Some(id), None, true) = (draft.hub, draft.model, draft.overrides.is_empty()) {
        notices.push(Notice::HubNotLoaded {
            id: id.as_str().to_string(),
        });
    }
    let preset = draft
        .model
        .and_then(presets::preset)
        .unwrap_or_else(presets::default_preset);
    if draft.params.is_some() {
        notices.push(Notice::ParamsIgnored { model: preset.id });
    }
    loop {
        let arch = draft.overrides.apply(&preset.arch);
        let Err(e) = arch.validate() else {
            return Scenario {
                model: ModelSpec::Preset {
                    id: preset.id,
                    overrides: draft.overrides,
                    like_llama: draft.like_llama,
                    hub: draft.hub,
                    multimodal: draft.multimodal,
                },
                arch: Some(arch),
                ..base
            };
        };
        // Drop the override the rule names; if it was not given, every
        // override goes (the preset itself is always valid).
        let num = e.field();
        let key = Key::Arch(num);
        let value = texts
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string());
        let default = Scenario::default();
        let preset_scenario = Scenario {
            arch: Some(preset.arch),
            ..default
        };
        notices.push(Notice::Invalid {
            key,
            value: value.clone().unwrap_or_else(|| {
                shown(
                    key,
                    &Scenario {
                        arch: Some(arch),
                        ..default
                    },
                )
            }),
            error: FieldError::Conflict(e.to_string()),
            default: shown(key, &preset_scenario),
        });
        if value.is_some() && draft.overrides.clear(num) {
            continue;
        }
        draft.overrides = ArchOverrides::default();
    }
}

/// The capacity the `gpu` key (and its companions) describe. A companion
/// the chosen `gpu` does not read is reported, never dropped silently.
pub(super) fn capacity(d: &Draft, notices: &mut Vec<Notice>) -> Capacity {
    let default = View::default().capacity;
    let mut missing = |key: Key, why: &str| {
        notices.push(Notice::Invalid {
            key,
            value: String::new(),
            error: FieldError::Conflict(why.into()),
            default: "rtx-4090".into(),
        });
        default
    };
    let capacity = match (d.gpu, d.capacity_typed, d.probe_bytes) {
        (None, Some(bytes), _) | (Some(GpuKey::Custom), Some(bytes), _) => {
            Capacity::Typed { bytes }
        }
        (Some(GpuKey::Custom), None, _) => {
            missing(Key::CapacityGib, "gpu=custom needs capacity_gib")
        }
        (Some(GpuKey::Probe), _, Some(bytes)) => Capacity::Probed {
            bytes,
            adapter: d.probe_adapter.unwrap_or(ShortText::EMPTY),
        },
        (Some(GpuKey::Probe), _, None) => missing(Key::ProbeBytes, "gpu=probe needs probe_bytes"),
        (Some(GpuKey::Listed(id)), _, _) => Capacity::Gpu { id },
        (None, None, _) => default,
    };
    let (typed_used, probe_used) = match capacity {
        Capacity::Typed { .. } => (true, false),
        Capacity::Probed { .. } => (false, true),
        Capacity::Gpu { .. } => (false, false),
    };
    let because = match d.gpu {
        Some(GpuKey::Listed(id)) => format!("gpu={id} decides the capacity"),
        Some(GpuKey::Custom) | None => "only gpu=probe reads it".to_string(),
        Some(GpuKey::Probe) => "gpu=probe uses the measured bytes".to_string(),
    };
    for (key, given, used) in [
        (Key::CapacityGib, d.capacity_typed.is_some(), typed_used),
        (Key::ProbeBytes, d.probe_bytes.is_some(), probe_used),
        (Key::ProbeAdapter, d.probe_adapter.is_some(), probe_used),
    ] {
        if given && !used {
            notices.push(Notice::Unused {
                key,
                because: because.clone(),
            });
        }
    }
    capacity
}

/// The capacity keys that `gpu=value` does not read: the page drops them
/// when the GPU is chosen, so the link carries no ignored key (the decoder
/// would say each is unused, see [`capacity`]).
pub fn capacity_keys_unused_by(gpu: &str) -> &'static [Key] {
    match gpu.trim() {
        "custom" => &[Key::ProbeBytes, Key::ProbeAdapter],
        "probe" => &[Key::CapacityGib],
        _ => &[Key::CapacityGib, Key::ProbeBytes, Key::ProbeAdapter],
    }
}

/// Tensor parallelism as transformers 5.23's `DistributedConfig(tp_size,
/// fsdp_size)` sets it up (`distributed/mixin.py:
/// maybe_distribute_model`): the GPUs a multiple of `tp`, FSDP2 over the
/// data-parallel ranks, and only what was measured
/// (`scripts/measure/parallel/`: full fine-tuning of a family whose plan
/// splits the heads, untied, without routed experts). Each refusal resets
/// `tp` to 1 and says why next to the field.
pub(super) fn check_tensor_parallel(
    s: &mut Scenario,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
) {
    let tp = s.parallel.tp.get();
    if tp == 1 {
        return;
    }
    if let Some(why) = tensor_parallel_refusal(s, tp) {
        conflict(notices, texts, Key::Tp, why);
        s.parallel.tp = Scenario::default().parallel.tp;
    }
}

/// Why `tp` cannot run as asked (`None`: it can).
fn tensor_parallel_refusal(s: &Scenario, tp: u32) -> Option<String> {
    use crate::model::family::TpPlan;
    let (p, t) = (&s.parallel, &s.train);
    let gpus = p.gpus.get();
    if gpus % tp != 0 {
        return Some(format!(
            "gpus ({gpus}) is not a multiple of tp ({tp}): each tensor-parallel group takes tp GPUs"
        ));
    }
    if gpus > tp && !(p.shard == Shard::Fsdp2 && p.zero.get() == 3) {
        return Some(format!(
            "with tp, transformers' DistributedConfig shards the {} data-parallel ranks with FSDP2: set shard=fsdp2 and zero=3, or gpus={tp}",
            gpus / tp
        ));
    }
    let Some(a) = s.arch else {
        return Some("tensor parallelism splits a model's layers: choose a model".into());
    };
    let label = a.family.label();
    let not_measured = |what: &str| {
        Some(format!(
            "tensor parallelism {what} is not modelled yet: it has not been measured"
        ))
    };
    let spec = a.family.spec();
    // OLMo 2 and 3's plan gathers attention's outputs (measured:
    // `scripts/measure/parallel/raw/tp523_gathered.jsonl`); Phi-3's fused
    // projection and MiniMax-M2's experts under it are not measured.
    let gathered = spec.qkv == Qkv::Separate && spec.moe.is_none();
    match spec.tp {
        TpPlan::None => {
            return Some(format!(
                "`tp_size={tp}` was requested, but {label} has no `tp_plan` in transformers 5.23"
            ))
        }
        TpPlan::GatheredHeads if gathered => {}
        TpPlan::GatheredHeads | TpPlan::Latent | TpPlan::HeadOnly => {
            return not_measured(&format!("of {label} (its own plan)"))
        }
        TpPlan::Heads => {}
    }
    if let Some(moe) = a.moe() {
        // Measured on Qwen3-30B-A3B at tp 2 without FSDP: AdamW's foreach
        // step fails (`aten._foreach_mul_.Scalar got mixed torch.Tensor and
        // DTensor`): the router's weight is no DTensor. With FSDP2 it runs
        // (`scripts/measure/parallel/raw/tp523_moe_fsdp.jsonl`: Qwen3-30B-A3B
        // and Mixtral-8x7B, every layer routed).
        if gpus == tp {
            return Some(
                "with tp alone, transformers 5.23's plan leaves the router's weight a plain tensor beside DTensors and AdamW's foreach step fails (measured on Qwen3-30B-A3B): add data-parallel GPUs under FSDP2 (shard=fsdp2, zero=3)".into(),
            );
        }
        let plain = moe.shared == Shared::None
            && !moe.expert_bias
            && !moe.clamped_swiglu
            && !moe.dense_beside
            && a.dense_layers == 0;
        if !plain || t.aux_loss {
            return not_measured(
                "over routed experts beside shared experts, expert biases or dense layers, or with the auxiliary loss",
            );
        }
    }
    if a.family.spec().linear.is_some() && gpus == tp {
        // Measured on a Qwen3.5 text model at tp 2 without FSDP
        // (`scripts/measure/parallel/raw/tp523_hybrid.jsonl`).
        return Some(
            "with tp alone, the Gated DeltaNet's convolution weight and A_log stay plain tensors beside DTensors and AdamW's foreach step fails (measured on Qwen3.5): add data-parallel GPUs under FSDP2 (shard=fsdp2, zero=3)".into(),
        );
    }
    if a.family.spec().attn_bias != AttnBias::None && gpus == tp {
        return Some(
            "with tp alone, the split q/k/v biases and the whole norms share AdamW's no-decay group and its foreach step fails (`aten._foreach_lerp_.Scalar got mixed torch.Tensor and DTensor`, measured on Qwen2.5-7B): add data-parallel GPUs under FSDP2 (shard=fsdp2, zero=3)".into(),
        );
    }
    if a.tied {
        return Some(
            "transformers 5.23 cannot split a head tied to the embedding (apply_tensor_parallelism raises KeyError: 'lm_head.weight')".into(),
        );
    }
    if spec.tp == TpPlan::Heads && (a.heads % tp != 0 || a.kv_heads % tp != 0) {
        return Some(format!(
            "tp ({tp}) must divide the attention heads ({}) and the key/value heads ({}): each GPU computes whole heads",
            a.heads, a.kv_heads
        ));
    }
    if t.lora_r.is_some() || t.quant != Quant::None || p.offload != Offload::None {
        return not_measured("with LoRA, a quantized base or offloading");
    }
    if t.transformers != Transformers::V5 {
        return Some(
            "transformers' DistributedConfig came in transformers 5: set transformers=5".into(),
        );
    }
    None
}

/// Pipeline parallelism as `torch.distributed.pipelining` runs it
/// (`crate::train::pipeline`), only where it was measured
/// (`scripts/measure/parallel/`: full fine-tuning of a dense, untied
/// decoder with rotary positions and layers alike, on transformers 5.23,
/// one pipeline over `pp` GPUs). `micro_batches` must divide the batch
/// (reset to 1 otherwise); each refusal resets `pp` to 1 and says why next
/// to the field.
pub(super) fn check_pipeline(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let (m, batch) = (s.parallel.micro_batches.get(), s.train.batch.get());
    if batch % m != 0 {
        conflict(
            notices,
            texts,
            Key::MicroBatches,
            format!("micro_batches ({m}) must divide the batch ({batch}): each micro-batch is batch / micro_batches sequences"),
        );
        s.parallel.micro_batches = Scenario::default().parallel.micro_batches;
    }
    let pp = s.parallel.pp.get();
    if pp == 1 {
        return;
    }
    check_interleaving(s, texts, notices);
    check_end_weights(s, notices);
    if let Some(why) = pipeline_refusal(s, pp) {
        conflict(notices, texts, Key::Pp, why);
        s.parallel.pp = Scenario::default().parallel.pp;
    }
}

/// Interleaved 1F1B and its stages per rank go together: `vpp` above 1
/// needs the schedule (reset to 1 otherwise), the schedule needs `vpp`
/// of 2 or more (reset to 1F1B otherwise), and torch 2.15's
/// `ScheduleInterleaved1F1B.__init__` needs the micro-batches a multiple
/// of its rounds, `max(1, m / pp)` (reset to 1 otherwise).
fn check_interleaving(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let d = Scenario::default().parallel;
    let p = &mut s.parallel;
    let interleaved = p.pp_schedule == PpSchedule::Interleaved;
    let vpp = p.vpp.get();
    if vpp > 1 && !interleaved {
        conflict(
            notices,
            texts,
            Key::Vpp,
            format!("vpp ({vpp}) is interleaved 1F1B's stages per rank: set pp_schedule=interleaved_1f1b"),
        );
        p.vpp = d.vpp;
    } else if interleaved && vpp == 1 {
        conflict(
            notices,
            texts,
            Key::PpSchedule,
            "interleaved 1F1B runs several stages a rank: set vpp to 2 or more".into(),
        );
        p.pp_schedule = d.pp_schedule;
    }
    let (m, pp) = (p.micro_batches.get(), p.pp.get());
    let rounds = (m / pp).max(1);
    if p.pp_schedule == PpSchedule::Interleaved && m % rounds != 0 {
        conflict(
            notices,
            texts,
            Key::MicroBatches,
            format!("interleaved 1F1B runs micro-batches in rounds of about pp: micro_batches ({m}) must be a multiple of its {rounds} rounds (micro_batches / pp)"),
        );
        p.micro_batches = d.micro_batches;
    }
}

/// torchtitan's end weights are read under its cut only: set with the
/// transformers cut, they come back at their defaults with a notice.
fn check_end_weights(s: &mut Scenario, notices: &mut Vec<Notice>) {
    let d = Scenario::default().parallel;
    let p = &mut s.parallel;
    if p.pp_split == PpSplit::Torchtitan {
        return;
    }
    for (key, set) in [
        (Key::PpFirstLess, p.pp_first_less != d.pp_first_less),
        (Key::PpLastLess, p.pp_last_less != d.pp_last_less),
    ] {
        if set {
            notices.push(Notice::Unused {
                key,
                because: "only torchtitan's cut (pp_split=torchtitan) weighs the model's ends"
                    .into(),
            });
        }
    }
    p.pp_first_less = d.pp_first_less;
    p.pp_last_less = d.pp_last_less;
}

/// Why `pp` cannot run as asked (`None`: it can).
fn pipeline_refusal(s: &Scenario, pp: u32) -> Option<String> {
    let (p, t) = (&s.parallel, &s.train);
    let Some(a) = s.arch else {
        return Some(
            "pipeline parallelism cuts a model's layers into stages: choose a model".into(),
        );
    };
    let stages = pp * p.vpp.get();
    let what = if p.vpp.get() > 1 { "pp × vpp" } else { "pp" };
    match p.pp_split {
        PpSplit::Transformers if stages > a.layers => {
            return Some(format!(
                "{what} ({stages}) is more stages than the model has layers ({})",
                a.layers
            ));
        }
        PpSplit::Torchtitan => {
            let ends = s.parallel.pipeline().ends;
            if let Some(why) = ends.torchtitan_refusal(a.layers, stages) {
                return Some(why);
            }
        }
        PpSplit::Transformers => {}
    }
    let not_measured = |what: &str| {
        Some(format!(
            "pipeline parallelism {what} is not modelled yet: it has not been measured"
        ))
    };
    if p.gpus.get() != pp || p.tp.get() > 1 {
        return not_measured(&format!(
            "over more GPUs than its stages (data or tensor parallelism beside it; set gpus={pp}, tp=1)"
        ));
    }
    let spec = a.family.spec();
    let alike = a.sliding_layers == 0 || a.sliding_layers == a.layers;
    if let Some(moe) = a.moe() {
        // Measured (`scripts/measure/parallel/raw/pp523_moe.jsonl`) on
        // Qwen3-30B-A3B and Mixtral-8x7B: every layer routed, no shared
        // expert, the loss without the router's.
        if t.aux_loss {
            return not_measured("with the router's auxiliary loss (output_router_logits)");
        }
        if a.dense_layers > 0 || moe.shared != Shared::None || spec.qkv == Qkv::Latent {
            return not_measured(
                "over routed experts beside dense layers, shared experts or latent attention",
            );
        }
    }
    if spec.varies_by_layer() || !alike {
        return not_measured(&format!("of {} (layers that differ)", a.family.label()));
    }
    if let Some(rule) = spec.linear.filter(|_| a.linear_layers > 0) {
        // Measured (`scripts/measure/parallel/raw/pp523_hybrid.jsonl`) on
        // stages that are whole periods of the default pattern.
        let period = rule.full_every.max(1);
        let whole = a.layers.is_multiple_of(stages * period)
            && rule.count(a.layers) == a.linear_layers
            && p.pp_split == PpSplit::Transformers;
        if !whole {
            return not_measured(&format!(
                "of {} on stages that are not whole periods of its layers (a full-attention layer every {period}: layers a multiple of {stages} × {period}, cut evenly, pp_split=transformers)",
                a.family.label()
            ));
        }
    }
    if spec.positions != Positions::Rotary {
        return not_measured("with learned positions");
    }
    if a.tied {
        return Some(
            "a head tied to the embedding would be on the last stage and the embedding on the first: torchtitan's pipelines take untied models".into(),
        );
    }
    if t.lora_r.is_some()
        || t.quant != Quant::None
        || p.offload != Offload::None
        || p.zero.get() > 0
    {
        return not_measured("with LoRA, a quantized base, ZeRO or offloading");
    }
    if t.grad_accum.get() > 1 {
        return Some(
            "a pipeline's micro-batches are its gradient accumulation: set micro_batches instead of grad_accum".into(),
        );
    }
    if t.transformers != Transformers::V5 {
        return not_measured("on transformers 4");
    }
    None
}
