//! One entry per query key ([`FIELDS`]): how it is read into a [`Draft`],
//! written back from a scenario, labelled and explained.

use super::notice::{echo, FieldError};
use super::{Key, MAX_VALUE_LEN};
use crate::infer::engine::{ContextBy, WeightsKind};
use crate::infer::local::{FileName, ReadFile};
use crate::infer::run::{
    BlockSize, CacheType, Count, Engine, Flash, GpuIndex, GroupSize, Inference, KvBits, KvDtype,
    Layers, LlamaArgs, LlamaBuild, MambaDtype, MaxLen, MinNew, MlxArgs, MlxWeights, OllamaArgs,
    ParallelSize, Share, SpecTokens, SplitMode, TensorOverrides, TensorParallel, TensorSplit,
    Tokens,
};
use crate::inputs::Attn;
use crate::inputs::Batch;
use crate::inputs::Capacity;
use crate::inputs::Iters;
use crate::inputs::Leak;
use crate::inputs::Overhead;
use crate::inputs::View;
use crate::lora::{AdapterType, LoraRank, Targets};
use crate::model::gguf::FileType;
use crate::model::presets;
use crate::model::ArchOverrides;
use crate::model::WeightFormat;
use crate::model::{ArchNum, Family};
use crate::scenario::{ModelSpec, ParamCount, Scenario, Task};
use crate::text::HubId;
use crate::text::ShortText;
use crate::train::run::Ckpt;
use crate::train::run::DsBuckets;
use crate::train::run::Dtype;
use crate::train::run::GradAccum;
use crate::train::run::Offload;
use crate::train::run::Optimizer;
use crate::train::run::Parallel;
use crate::train::run::Prob;
use crate::train::run::Quant;
use crate::train::run::SeqLen;
use crate::train::run::Shard;
use crate::train::run::Trainer;
use crate::train::run::Training;
use crate::train::run::Transformers;
use crate::train::run::ZeroStage;
use crate::train::run::{
    EndWeight, Gpus, MicroBatches, PpSchedule, PpSplit, PpStages, TpGroup, VirtualStages,
};
use crate::units::{Bytes, Decimal, DisplayUnit, NotCount, GIB};

/// How a field is entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A whole number in `min..=max`, typed (a text box).
    Count { min: u64, max: u64 },
    /// A decimal number in `min..=max` (as typed), typed.
    Decimal {
        min: &'static str,
        max: &'static str,
    },
    /// One of a closed list: `(query value, label)`.
    Choice(&'static [(&'static str, &'static str)]),
    /// `true` / `false`.
    Toggle,
    /// A preset id (see [`crate::model::presets::PRESETS`]).
    Model,
    /// A GPU id (see [`crate::gpus::GPUS`]), `custom` or `probe`.
    Gpu,
    /// Free text (short).
    Text,
}

/// Which part of the form a field belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Model,
    Architecture,
    Run,
    /// The software the run uses (transformers release, trainer).
    Stack,
    Parallel,
    Overhead,
    /// The GPU to fit on.
    Fit,
    /// What is run: the engine, the weights, the sequences.
    Infer,
    /// vLLM's engine arguments.
    Engine,
    /// llama-server's arguments.
    LlamaCpp,
    /// Ollama's settings.
    Ollama,
    /// mlx-lm's arguments.
    Mlx,
    /// Display and the over-iterations chart.
    View,
}

/// The workloads a key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tasks {
    /// The model, the GPU, the display: every workload.
    Both,
    /// A training key.
    Train,
    /// An inference key.
    Infer,
}

impl Tasks {
    /// Whether a scenario of `task` reads it.
    pub fn include(self, task: Task) -> bool {
        match (self, task) {
            (Tasks::Both, _) | (Tasks::Train, Task::Train) | (Tasks::Infer, Task::Infer) => true,
            (Tasks::Train, Task::Infer) | (Tasks::Infer, Task::Train) => false,
        }
    }
}

/// Everything the query sets, before the model is resolved and checked.
#[derive(Clone, Copy, Debug, Default)]
pub struct Draft {
    pub task: Task,
    pub model: Option<&'static str>,
    pub params: Option<ParamCount>,
    pub overrides: ArchOverrides,
    pub train: Training,
    pub parallel: Parallel,
    pub infer: Inference,
    pub overhead: Overhead,
    pub view: View,
    /// `gpu=custom` / `gpu=probe` wait for their sizes.
    pub capacity_typed: Option<Bytes>,
    pub probe_bytes: Option<Bytes>,
    pub probe_adapter: Option<ShortText>,
    pub gpu: Option<GpuKey>,
    /// `like_llama`: the model_type of a config read as Llama-like.
    pub like_llama: Option<ShortText>,
    /// `hub`: the model id whose config.json set the architecture.
    pub hub: Option<HubId>,
    /// `multimodal`: the checkpoint also holds a vision or audio encoder.
    pub multimodal: bool,
}

/// The `gpu` key: a listed GPU, or where the size comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuKey {
    Listed(&'static str),
    Custom,
    Probe,
}

/// One query key: how to read it into a draft and write it back.
pub struct Field {
    pub key: Key,
    pub kind: FieldKind,
    pub group: Group,
    /// The workloads that read it.
    pub tasks: Tasks,
    /// Form label.
    pub label: &'static str,
    /// One plain-words sentence for tooltips and `--help`.
    pub help: &'static str,
    pub(super) apply: fn(&mut Draft, &str) -> Result<(), FieldError>,
    /// The canonical text for a scenario; `None` leaves the key out.
    write: fn(&Scenario) -> Option<String>,
    /// What a left-out key means for a scenario (architecture numbers show
    /// the resolved architecture; the others their default).
    implied: fn(&Scenario) -> String,
}

impl Field {
    /// Checks one value on its own, as the form does while the user types.
    pub fn validate(&self, value: &str) -> Result<(), FieldError> {
        (self.apply)(&mut Draft::default(), value)
    }

    /// The canonical text of this field for `s` (`None`: left out).
    pub fn value_of(&self, s: &Scenario) -> Option<String> {
        (self.write)(s)
    }

    /// The text the form shows for `s`: the canonical value, or what the
    /// scenario implies when the key is left out.
    pub fn shown_value(&self, s: &Scenario) -> String {
        self.value_of(s).unwrap_or_else(|| (self.implied)(s))
    }
}

/// Architecture fields only: written when they differ from the preset.
fn arch_override(s: &Scenario, get: fn(&ArchOverrides) -> Option<String>) -> Option<String> {
    match &s.model {
        ModelSpec::Preset { overrides, .. } => get(overrides),
        ModelSpec::ParamsOnly { .. } => None,
    }
}

macro_rules! arch_number {
    ($num:expr) => {
        Field {
            key: Key::Arch($num),
            kind: FieldKind::Count {
                min: $num.min() as u64,
                max: $num.max() as u64,
            },
            group: Group::Architecture,
            tasks: Tasks::Both,
            label: $num.label(),
            help: $num.help(),
            implied: |s| s.arch.map(|a| $num.get(&a).to_string()).unwrap_or_default(),
            apply: |d, v| {
                d.overrides
                    .set($num, Some(count(v, $num.min(), $num.max(), Some)?));
                Ok(())
            },
            write: |s| arch_override(s, |o| o.get($num).map(|n| n.to_string())),
        }
    };
}

/// Every key the codec knows, in form order.
pub static FIELDS: &[Field] = &[
    Field {
        key: Key::Task,
        kind: FieldKind::Choice(Task::OPTIONS),
        group: Group::Model,
        tasks: Tasks::Both,
        label: "What to do",
        help: "Train or fine-tune the model, or run it (generate text): each has its own settings below.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.task = choice(v, Task::from_key, Task::keys_joined)?;
            Ok(())
        },
        write: |s| (s.task != Task::Train).then(|| s.task.key().to_string()),
    },
    Field {
        key: Key::Model,
        kind: FieldKind::Model,
        group: Group::Model,
        tasks: Tasks::Both,
        label: "Model",
        help: "A preset model; architecture fields below change it.",
        implied: |_| String::new(),
        apply: |d, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err(FieldError::Empty);
            }
            let p = presets::preset(&v.to_ascii_lowercase()).ok_or(FieldError::UnknownModel)?;
            d.model = Some(p.id);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::Preset { id, .. } => Some(id.to_string()),
            ModelSpec::ParamsOnly { .. } => None,
        },
    },
    Field {
        key: Key::Params,
        kind: FieldKind::Count { min: ParamCount::MIN, max: ParamCount::MAX },
        group: Group::Model,
        tasks: Tasks::Both,
        label: "Parameters (N)",
        help: "Parameter count alone (seed formula only), e.g. 1.5e9, 1.5B or 124M.",
        implied: |s| s.params().to_string(),
        apply: |d, v| {
            let n = parse_count(v, true, ParamCount::MIN, ParamCount::MAX)?;
            d.params = Some(ParamCount::new(n).ok_or(FieldError::NotANumber)?);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::ParamsOnly { params } => Some(params.get().to_string()),
            ModelSpec::Preset { .. } => None,
        },
    },
    Field {
        key: Key::LikeLlama,
        kind: FieldKind::Text,
        group: Group::Model,
        tasks: Tasks::Both,
        label: "Read as Llama-like",
        help: "The model_type of a config.json vramfit does not know, estimated as a Llama-like decoder by your choice.",
        implied: |_| String::new(),
        apply: |d, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err(FieldError::Empty);
            }
            d.like_llama = Some(ShortText::new(v)?);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::Preset {
                like_llama: Some(t),
                ..
            } => Some(t.as_str().to_string()),
            ModelSpec::Preset { .. } | ModelSpec::ParamsOnly { .. } => None,
        },
    },
    Field {
        key: Key::Hub,
        kind: FieldKind::Text,
        group: Group::Model,
        tasks: Tasks::Both,
        label: "Hugging Face model id",
        help: "A model id on the Hugging Face Hub (owner/name): the page loads its config.json and the link reloads it; the CLI reads it from --config.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.hub = Some(HubId::new(v.trim())?);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::Preset { hub: Some(h), .. } => Some(h.as_str().to_string()),
            ModelSpec::Preset { .. } | ModelSpec::ParamsOnly { .. } => None,
        },
    },
    Field {
        key: Key::Multimodal,
        kind: FieldKind::Toggle,
        group: Group::Model,
        tasks: Tasks::Both,
        label: "Multimodal checkpoint",
        help: "The checkpoint also holds a vision or audio encoder (its config.json nests the language model under text_config): vramfit estimates the language model on text only, without the encoder's weights, its activations or vLLM's encoder cache.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.multimodal = boolean(v)?;
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::Preset { multimodal: true, .. } => Some("true".into()),
            ModelSpec::Preset { .. } | ModelSpec::ParamsOnly { .. } => None,
        },
    },
    Field {
        key: Key::Family,
        kind: FieldKind::Choice(Family::OPTIONS),
        group: Group::Architecture,
        tasks: Tasks::Both,
        label: "Family",
        help: "How the layers are built (norms, MLP, biases, positions).",
        implied: |s| s.arch.map(|a| a.family.key().to_string()).unwrap_or_default(),
        apply: |d, v| {
            d.overrides.family = Some(choice(v, Family::from_key, Family::keys_joined)?);
            Ok(())
        },
        write: |s| arch_override(s, |o| o.family.map(|f| f.key().to_string())),
    },
    arch_number!(ArchNum::Hidden),
    arch_number!(ArchNum::Layers),
    arch_number!(ArchNum::Heads),
    arch_number!(ArchNum::KvHeads),
    arch_number!(ArchNum::HeadDim),
    arch_number!(ArchNum::Ffn),
    arch_number!(ArchNum::Vocab),
    Field {
        key: Key::Tied,
        kind: FieldKind::Toggle,
        group: Group::Architecture,
        tasks: Tasks::Both,
        label: "Tied embeddings",
        help: "The output head shares the input embedding matrix.",
        implied: |s| s.arch.map(|a| a.tied.to_string()).unwrap_or_default(),
        apply: |d, v| {
            d.overrides.tied = Some(boolean(v)?);
            Ok(())
        },
        write: |s| arch_override(s, |o| o.tied.map(|t| t.to_string())),
    },
    arch_number!(ArchNum::Positions),
    arch_number!(ArchNum::Experts),
    arch_number!(ArchNum::ExpertsPerToken),
    arch_number!(ArchNum::MoeFfn),
    arch_number!(ArchNum::SharedExperts),
    arch_number!(ArchNum::DenseLayers),
    arch_number!(ArchNum::MoeStep),
    arch_number!(ArchNum::QLoraRank),
    arch_number!(ArchNum::KvLoraRank),
    arch_number!(ArchNum::RopeDim),
    arch_number!(ArchNum::VHeadDim),
    arch_number!(ArchNum::SlidingWindow),
    arch_number!(ArchNum::SlidingLayers),
    arch_number!(ArchNum::LinearLayers),
    arch_number!(ArchNum::LinearKHeads),
    arch_number!(ArchNum::LinearVHeads),
    arch_number!(ArchNum::LinearKDim),
    arch_number!(ArchNum::LinearVDim),
    arch_number!(ArchNum::LinearConv),
    arch_number!(ArchNum::FfnLayers),
    arch_number!(ArchNum::SlidingPeriod),
    arch_number!(ArchNum::GlobalHeadDim),
    arch_number!(ArchNum::GlobalKvHeads),
    arch_number!(ArchNum::KEqV),
    arch_number!(ArchNum::KvSharedLayers),
    arch_number!(ArchNum::DoubleWide),
    arch_number!(ArchNum::PleDim),
    arch_number!(ArchNum::PleVocab),
    arch_number!(ArchNum::QkNorm),
    arch_number!(ArchNum::IndexHeads),
    arch_number!(ArchNum::IndexHeadDim),
    arch_number!(ArchNum::IndexTopk),
    Field {
        key: Key::Dtype,
        kind: FieldKind::Choice(Dtype::OPTIONS),
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Precision",
        help: "How weights, gradients and optimizer state are stored, and what forward computes in.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.dtype = choice(v, Dtype::from_key, Dtype::keys_joined)?;
            Ok(())
        },
        write: |s| Some(s.train.dtype.key().to_string()),
    },
    Field {
        key: Key::Optim,
        kind: FieldKind::Choice(Optimizer::OPTIONS),
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Optimizer",
        help: "The optimizer and its implementation: it decides the state and the step's temporaries.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.optim = choice(v, Optimizer::from_key, Optimizer::keys_joined)?;
            Ok(())
        },
        write: |s| Some(s.train.optim.key().to_string()),
    },
    Field {
        key: Key::Batch,
        kind: FieldKind::Count { min: Batch::MIN as u64, max: Batch::MAX as u64 },
        group: Group::Run,
        tasks: Tasks::Both,
        label: "Batch size",
        help: "Training: sequences in one forward/backward pass, per GPU and micro-step. Inference: sequences generated at once.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.batch = count(v, Batch::MIN, Batch::MAX, Batch::new)?;
            d.infer.batch = d.train.batch;
            Ok(())
        },
        write: |s| Some(match s.task {
            Task::Train => s.train.batch,
            Task::Infer => s.infer.batch,
        }.get().to_string()),
    },
    Field {
        key: Key::Seq,
        kind: FieldKind::Count { min: SeqLen::MIN as u64, max: SeqLen::MAX as u64 },
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Sequence length",
        help: "Tokens per sequence.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.seq = count(v, SeqLen::MIN, SeqLen::MAX, SeqLen::new)?;
            Ok(())
        },
        write: |s| Some(s.train.seq.get().to_string()),
    },
    Field {
        key: Key::GradAccum,
        kind: FieldKind::Count { min: GradAccum::MIN as u64, max: GradAccum::MAX as u64 },
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Gradient accumulation",
        help: "Micro-batches summed before each optimizer step (gradients stay alive between them).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.grad_accum = count(v, GradAccum::MIN, GradAccum::MAX, GradAccum::new)?;
            Ok(())
        },
        write: |s| Some(s.train.grad_accum.get().to_string()),
    },
    Field {
        key: Key::GradCkpt,
        kind: FieldKind::Choice(Ckpt::OPTIONS),
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Gradient checkpointing",
        help: "Keep only each layer's input and recompute the layer in backward (true: the release's default, non-reentrant in transformers 5 and reentrant in 4.x; non_reentrant or reentrant whatever the release; reentrant is also what prepare_model_for_kbit_training selects unless told otherwise); offload keeps those inputs in host memory.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.grad_ckpt = match v.trim().to_ascii_lowercase().as_str() {
                "offload" => Ckpt::Offload,
                "reentrant" => Ckpt::Reentrant,
                "non_reentrant" => Ckpt::NonReentrant,
                _ => {
                    if boolean(v).map_err(|_| FieldError::UnknownChoice {
                        choices: Ckpt::keys_joined(),
                    })? {
                        Ckpt::On
                    } else {
                        Ckpt::Off
                    }
                }
            };
            Ok(())
        },
        write: |s| Some(s.train.grad_ckpt.key().to_string()),
    },
    Field {
        key: Key::Attn,
        kind: FieldKind::Choice(Attn::OPTIONS),
        group: Group::Run,
        tasks: Tasks::Both,
        label: "Attention",
        help: "SDPA (PyTorch's flash / memory-efficient kernels), eager attention (stores seq² scores) or flash-attn's FlashAttention-2 (keeps grouped keys as they are and never a mask).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.attn = choice(v, Attn::from_key, Attn::keys_joined)?;
            d.infer.attn = d.train.attn;
            Ok(())
        },
        write: |s| Some(match s.task {
            Task::Train => s.train.attn,
            Task::Infer => s.infer.attn,
        }.key().to_string()),
    },
    Field {
        key: Key::LoraR,
        kind: FieldKind::Count { min: 0, max: LoraRank::MAX as u64 },
        group: Group::Run,
        tasks: Tasks::Both,
        label: "LoRA rank",
        help: "Training: LoRA adapters of this rank on every linear layer (0: full fine-tuning). Running: an adapter of this rank loaded beside the model (llama.cpp's --lora, Ollama's ADAPTER; 0: none).",
        implied: |_| String::new(),
        apply: |d, v| {
            let r = count(v, 0, LoraRank::MAX, Some)?;
            d.train.lora_r = LoraRank::new(r);
            d.infer.lora.r = d.train.lora_r;
            Ok(())
        },
        write: |s| match s.task {
            Task::Train => Some(s.train.lora_r.map_or(0, LoraRank::get).to_string()),
            Task::Infer => s.infer.lora.r.map(|r| r.get().to_string()),
        },
    },
    Field {
        key: Key::LoraTargets,
        kind: FieldKind::Text,
        group: Group::Run,
        tasks: Tasks::Both,
        label: "LoRA targets",
        help: "Which modules get adapters: all (every linear layer but the head, peft's all-linear), attn (q, k, v, o), or a list of projections (q,v or gate,up,down) or of the model's module names as in peft's target_modules (q_proj,v_proj; qkv_proj; c_attn; Mixtral's experts w1,w2,w3); lm_head adds the output layer (llama.cpp and Ollama).",
        implied: |_| "all".into(),
        apply: |d, v| {
            d.train.lora_targets = Targets::parse(v).map_err(|word| FieldError::UnknownChoice {
                choices: format!(
                    "all, attn, or a comma list of q, k, v, o, gate, up, down, lm_head or module names such as q_proj (`{}` is neither)",
                    echo(&word)
                ),
            })?;
            d.infer.lora.targets = d.train.lora_targets;
            Ok(())
        },
        write: |s| {
            let t = match s.task {
                Task::Train => s.train.lora_targets,
                Task::Infer => s.infer.lora.targets,
            };
            (t != Targets::ALL).then(|| t.text())
        },
    },
    Field {
        key: Key::LoraType,
        kind: FieldKind::Choice(AdapterType::OPTIONS),
        group: Group::Run,
        tasks: Tasks::Infer,
        label: "LoRA adapter type",
        help: "The type of the adapter's GGUF: convert_lora_to_gguf.py --outtype (f32 unless told), f16 from Ollama's own conversion, q8_0 (rows not a multiple of 32 stay f16).",
        implied: |s| s.infer.engine.spec().adapter_type.map_or_else(String::new, |t| t.key().to_string()),
        apply: |d, v| {
            d.infer.lora.ty = Some(choice(v, AdapterType::from_key, AdapterType::keys_joined)?);
            Ok(())
        },
        write: |s| s.infer.lora.ty.map(|t| t.key().to_string()),
    },
    Field {
        key: Key::LoraDropout,
        kind: FieldKind::Decimal {
            min: "0",
            max: "0.9999",
        },
        group: Group::Run,
        tasks: Tasks::Train,
        label: "LoRA dropout",
        help: "peft's lora_dropout before each adapter: a mask and a dropped copy of the input are kept for backward.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.train.lora_dropout = probability(v)?;
            Ok(())
        },
        write: |s| (s.train.lora_dropout.get() > 0).then(|| format_prob(s.train.lora_dropout)),
    },
    Field {
        key: Key::Dora,
        kind: FieldKind::Toggle,
        group: Group::Run,
        tasks: Tasks::Train,
        label: "DoRA",
        help: "peft's use_dora: weight-decomposed LoRA, which also computes the norm of each adapted weight with its update in every forward.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.dora = boolean(v)?;
            Ok(())
        },
        write: |s| s.train.dora.then(|| "true".to_string()),
    },
    Field {
        key: Key::Quant,
        kind: FieldKind::Choice(Quant::OPTIONS),
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Quantized base",
        help: "The frozen base's linear weights quantized by bitsandbytes (load_in_4bit / load_in_8bit): nf4 or fp4 in blocks of 64 (QLoRA), or int8. Needs LoRA. A mixture of experts on transformers 5 keeps its experts in 16 bits (3-D parameters bitsandbytes does not quantize; k-bit preparation casts them to fp32); on transformers 4 it is refused (per-expert linear layers, not modelled).",
        implied: |_| "none".into(),
        apply: |d, v| {
            d.train.quant = choice(v, Quant::from_key, Quant::keys_joined)?;
            Ok(())
        },
        write: |s| (s.train.quant != Quant::None).then(|| s.train.quant.key().to_string()),
    },
    Field {
        key: Key::DoubleQuant,
        kind: FieldKind::Toggle,
        group: Group::Run,
        tasks: Tasks::Both,
        label: "Double quantization",
        help: "bnb_4bit_use_double_quant: the 4-bit blocks' fp32 scales quantized again to 8 bits (QLoRA's recipe; off in BitsAndBytesConfig by default).",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.double_quant = boolean(v)?;
            d.infer.double_quant = d.train.double_quant;
            Ok(())
        },
        write: |s| match s.task {
            Task::Train => s.train.double_quant,
            Task::Infer => s.infer.double_quant,
        }
        .then(|| "true".to_string()),
    },
    Field {
        key: Key::BnbCompute,
        kind: FieldKind::Choice(&[
            ("bf16", "bf16 (QLoRA recipes)"),
            ("fp32", "fp32 (BitsAndBytesConfig's default)"),
        ]),
        group: Group::Run,
        tasks: Tasks::Both,
        label: "4-bit compute dtype",
        help: "bnb_4bit_compute_dtype: the dtype 4-bit weights are dequantized to for each matmul. QLoRA recipes set bf16; BitsAndBytesConfig's default is fp32.",
        implied: |_| "bf16".into(),
        apply: |d, v| {
            d.train.compute_fp32 = match v.trim().to_ascii_lowercase().as_str() {
                "bf16" | "bfloat16" => false,
                "fp32" | "float32" => true,
                _ => {
                    return Err(FieldError::UnknownChoice {
                        choices: "bf16, fp32".into(),
                    })
                }
            };
            d.infer.compute_fp32 = d.train.compute_fp32;
            Ok(())
        },
        write: |s| match s.task {
            Task::Train => s.train.compute_fp32,
            Task::Infer => s.infer.compute_fp32,
        }
        .then(|| "fp32".to_string()),
    },
    Field {
        key: Key::KbitPrep,
        kind: FieldKind::Toggle,
        group: Group::Run,
        tasks: Tasks::Train,
        label: "prepare_model_for_kbit_training",
        help: "peft's prepare_model_for_kbit_training, which TRL's SFTTrainer and most QLoRA scripts call: the weights left unquantized (embeddings, head, norms) are upcast to fp32.",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.train.kbit_prep = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.train.kbit_prep).then(|| "false".to_string()),
    },
    Field {
        key: Key::KeepOutputs,
        kind: FieldKind::Toggle,
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Keep outputs through backward",
        help: "`out = model(x); out.loss.backward()` keeps the logits alive until backward ends.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.keep_outputs = boolean(v)?;
            Ok(())
        },
        write: |s| s.train.keep_outputs.then(|| "true".to_string()),
    },
    Field {
        key: Key::AuxLoss,
        kind: FieldKind::Toggle,
        group: Group::Run,
        tasks: Tasks::Train,
        label: "MoE auxiliary loss",
        help: "A mixture-of-experts model's load-balancing loss (transformers' output_router_logits): every MoE layer's router logits (tokens × experts) are kept for it through the loss.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.aux_loss = boolean(v)?;
            Ok(())
        },
        write: |s| s.train.aux_loss.then(|| "true".to_string()),
    },
    Field {
        key: Key::Dropout,
        kind: FieldKind::Decimal { min: "0", max: "0.9999" },
        group: Group::Run,
        tasks: Tasks::Train,
        label: "Dropout",
        help: "Dropout probability replacing the model's own (GPT-2 uses 0.1, Llama-like 0).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.dropout = Some(probability(v)?);
            Ok(())
        },
        write: |s| s.train.dropout.map(format_prob),
    },
    Field {
        key: Key::CudaLike,
        kind: FieldKind::Toggle,
        group: Group::Run,
        tasks: Tasks::Train,
        label: "CUDA kernels",
        help: "CUDA's kernels (1-byte dropout masks, fused SDPA with dropout); false models PyTorch's CPU kernels.",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.train.cuda_like = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.train.cuda_like).then(|| "false".to_string()),
    },
    Field {
        key: Key::UseCache,
        kind: FieldKind::Toggle,
        group: Group::Stack,
        tasks: Tasks::Train,
        label: "use_cache",
        help: "The model's use_cache as its config.json sets it (the Hub's are on and the Trainer leaves it; TRL's SFTTrainer turns it off under checkpointing when it loads the model itself). Only GPTBigCode keeps memory for it: every layer's cache under checkpointing through transformers 4.52, and copies of its keys and values without checkpointing in transformers 5.",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.train.use_cache = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.train.use_cache).then(|| "false".to_string()),
    },
    Field {
        key: Key::Transformers,
        kind: FieldKind::Choice(Transformers::OPTIONS),
        group: Group::Stack,
        tasks: Tasks::Train,
        label: "transformers version",
        help: "The transformers release the model runs on: 5 (5.0 and later), 4.57 (4.54 to 4.57, the last 4.x) or 4.48 (4.46 to 4.48). They differ in the loss (4.46 to 4.48 copy the shifted logits in fp32), checkpointing (reentrant by default in 4.x), SDPA (4.48 repeats grouped keys and keeps a mask in the model's dtype), mixture-of-experts experts (linear layers in 4.x: bitsandbytes quantizes them, LoRA adapts them) and GPTBigCode (its own loss through 4.48.2, its cache under checkpointing through 4.52, checkpointing ignored in 4.54 to 4.57). 4.49 to 4.53 fall between two values.",
        implied: |_| "5".into(),
        apply: |d, v| {
            d.train.transformers = choice(v, Transformers::from_key, Transformers::keys_joined)?;
            Ok(())
        },
        write: |s| (s.train.transformers != Transformers::V5).then(|| s.train.transformers.key().to_string()),
    },
    Field {
        key: Key::Trainer,
        kind: FieldKind::Choice(Trainer::OPTIONS),
        group: Group::Stack,
        tasks: Tasks::Train,
        label: "Trainer",
        help: "The training loop: the Hugging Face Trainer, or TRL's SFTTrainer, which after preparing a 4-bit model (prepare_model_for_kbit_training) puts its embeddings and head back in bf16 when training in bf16; otherwise they keep the same memory.",
        implied: |_| "hf".into(),
        apply: |d, v| {
            d.train.trainer = choice(v, Trainer::from_key, Trainer::keys_joined)?;
            Ok(())
        },
        write: |s| (s.train.trainer != Trainer::Hf).then(|| s.train.trainer.key().to_string()),
    },
    Field {
        key: Key::Engine,
        kind: FieldKind::Choice(Engine::OPTIONS),
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "Engine",
        help: "The program that runs the model, at the version vramfit models: transformers' generate, or vLLM's server.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.engine = choice(v, Engine::from_key, Engine::keys_joined)?;
            Ok(())
        },
        write: |s| Some(s.infer.engine.key().to_string()),
    },
    Field {
        key: Key::Weights,
        kind: FieldKind::Choice(WeightFormat::OPTIONS),
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "Weights",
        help: "The format the weights are in. transformers and vLLM: 16 or 32 bits, fp8 with block scales, bitsandbytes 8 or 4 bits, or GPTQ / AWQ 4-bit (norms, embeddings and the head keep 16 bits); vLLM also MXFP4 (gpt-oss's experts), W8A8 int8 and FP8_DYNAMIC (compressed-tensors). llama.cpp and Ollama: a GGUF file type (q4_k_m, q8_0, ...). MLX: bf16, fp16 or N-bit (4bit, 8bit, ...).",
        implied: |_| String::new(),
        apply: |d, v| {
            let WeightsValue { checkpoint, gguf, mlx } = weights_of(v)?;
            if let Some(w) = checkpoint {
                d.infer.weights = w;
            }
            if let Some(f) = gguf {
                d.infer.gguf = f;
            }
            if let Some(m) = mlx {
                d.infer.mlx_weights = m;
            }
            Ok(())
        },
        write: |s| Some(match s.infer.engine.spec().weights {
            WeightsKind::Checkpoint => s.infer.weights.key(),
            WeightsKind::Gguf => s.infer.gguf.key(),
            WeightsKind::Mlx => s.infer.mlx_weights.key(),
        }.to_string()),
    },
    Field {
        key: Key::GroupSize,
        kind: FieldKind::Count { min: GroupSize::MIN as u64, max: GroupSize::MAX as u64 },
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "Group size (GPTQ / AWQ)",
        help: "Input columns sharing one scale and zero (quantization_config.group_size; 0 for -1: one group over the whole row).",
        implied: |_| "128".into(),
        apply: |d, v| {
            d.infer.group_size = count(v, GroupSize::MIN, GroupSize::MAX, GroupSize::new)?;
            Ok(())
        },
        write: |s| {
            (s.infer.group_size != Inference::default().group_size)
                .then(|| s.infer.group_size.get().to_string())
        },
    },
    Field {
        key: Key::Prompt,
        kind: FieldKind::Count { min: Tokens::MIN as u64, max: Tokens::MAX as u64 },
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "Prompt tokens",
        help: "Tokens of each prompt (transformers).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.prompt = count(v, Tokens::MIN, Tokens::MAX, Tokens::new)?;
            Ok(())
        },
        write: |s| Some(s.infer.prompt.get().to_string()),
    },
    Field {
        key: Key::New,
        kind: FieldKind::Count { min: Tokens::MIN as u64, max: Tokens::MAX as u64 },
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "New tokens",
        help: "Tokens generated per sequence: generate's max_new_tokens (transformers).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.new = count(v, Tokens::MIN, Tokens::MAX, Tokens::new)?;
            Ok(())
        },
        write: |s| Some(s.infer.new.get().to_string()),
    },
    Field {
        key: Key::MinNew,
        kind: FieldKind::Count { min: MinNew::MIN as u64, max: MinNew::MAX as u64 },
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "Minimum new tokens",
        help: "generate's min_new_tokens (0: none). Above 0, and with an end-of-sequence token, two logits processors copy the vocabulary-sized scores each step.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.infer.min_new = count(v, MinNew::MIN, MinNew::MAX, MinNew::new)?;
            Ok(())
        },
        write: |s| (s.infer.min_new.get() > 0).then(|| s.infer.min_new.get().to_string()),
    },
    Field {
        key: Key::Ctx,
        kind: FieldKind::Text,
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "Context (ctx)",
        help: "Tokens of context, prompt and generated together. vLLM: max_model_len per request (`auto`: the longest the cache holds; left out, the model's). llama.cpp: -c, shared by its sequences (left out or `auto`, the model's, which --fit may lower). Ollama: num_ctx per request (left out or `auto`, by the GPU's memory).",
        // Said, not estimated: what the engine picks is its estimate's.
        implied: |s| match s.infer.engine.spec().context {
            ContextBy::Request => s.infer.prompt.get().saturating_add(s.infer.new.get()).to_string(),
            ContextBy::Model => s.arch.map_or(0, |a| a.positions).to_string(),
            ContextBy::Engine => "auto".into(),
        },
        apply: |d, v| {
            d.infer.ctx = match v.trim().to_ascii_lowercase().as_str() {
                "auto" | "-1" => MaxLen::Auto,
                _ => MaxLen::Tokens(count(v, Tokens::MIN, Tokens::MAX, Tokens::new)?),
            };
            Ok(())
        },
        write: |s| match s.infer.ctx {
            MaxLen::Model => None,
            MaxLen::Auto => Some("auto".into()),
            MaxLen::Tokens(n) => Some(n.get().to_string()),
        },
    },
    Field {
        key: Key::KvDtype,
        kind: FieldKind::Choice(KvDtype::OPTIONS),
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "KV cache dtype",
        help: "The key/value cache's dtype: the model's (auto) or fp8 (vLLM's kv_cache_dtype).",
        implied: |_| "auto".into(),
        apply: |d, v| {
            d.infer.kv_dtype = choice(v, KvDtype::from_key, KvDtype::keys_joined)?;
            Ok(())
        },
        write: |s| (s.infer.kv_dtype != KvDtype::Auto).then(|| s.infer.kv_dtype.key().to_string()),
    },
    Field {
        key: Key::GpuMemoryUtilization,
        kind: FieldKind::Decimal { min: "0.0001", max: "1" },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "gpu_memory_utilization",
        help: "The share of the GPU's total memory vLLM takes (weights, activations and the key/value pool); 0.92 by default in vLLM 0.33.",
        implied: |_| "0.92".into(),
        apply: |d, v| {
            d.infer.vllm.gpu_memory_utilization = share(v)?;
            Ok(())
        },
        write: |s| {
            let u = s.infer.vllm.gpu_memory_utilization;
            (u != Inference::default().vllm.gpu_memory_utilization)
                .then(|| ten_thousandths_text(u.get()))
        },
    },
    Field {
        key: Key::MaxNumSeqs,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "max_num_seqs",
        help: "Most sequences vLLM runs at once (left out: vLLM's default for the GPU, 256 or 1024).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.vllm.max_num_seqs = Some(count(v, Count::MIN, Count::MAX, Count::new)?);
            Ok(())
        },
        write: |s| s.infer.vllm.max_num_seqs.map(|n| n.get().to_string()),
    },
    Field {
        key: Key::MaxNumBatchedTokens,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "max_num_batched_tokens",
        help: "Most tokens vLLM puts in one step, and the size of its profiling run (left out: vLLM's default for the GPU).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.vllm.max_num_batched_tokens = Some(count(v, Count::MIN, Count::MAX, Count::new)?);
            Ok(())
        },
        write: |s| s.infer.vllm.max_num_batched_tokens.map(|n| n.get().to_string()),
    },
    Field {
        key: Key::BlockSize,
        kind: FieldKind::Count { min: BlockSize::MIN as u64, max: BlockSize::MAX as u64 },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "block_size",
        help: "Tokens per key/value block (vLLM's default 16).",
        implied: |_| "16".into(),
        apply: |d, v| {
            d.infer.vllm.block_size = count(v, BlockSize::MIN, BlockSize::MAX, BlockSize::new)?;
            Ok(())
        },
        write: |s| {
            (s.infer.vllm.block_size != Inference::default().vllm.block_size)
                .then(|| s.infer.vllm.block_size.get().to_string())
        },
    },
    Field {
        key: Key::EnforceEager,
        kind: FieldKind::Toggle,
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "enforce_eager",
        help: "No CUDA graphs: vLLM then sets no memory aside for them.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.infer.vllm.enforce_eager = boolean(v)?;
            Ok(())
        },
        write: |s| s.infer.vllm.enforce_eager.then(|| "true".to_string()),
    },
    Field {
        key: Key::TensorParallelSize,
        kind: FieldKind::Count { min: TensorParallel::MIN as u64, max: TensorParallel::MAX as u64 },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "tensor_parallel_size",
        help: "GPUs the model is split over (each holds its share of the weights and of the key/value heads; the estimate is per GPU).",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.infer.vllm.tensor_parallel_size =
                count(v, TensorParallel::MIN, TensorParallel::MAX, TensorParallel::new)?;
            Ok(())
        },
        write: |s| {
            let tp = s.infer.vllm.tensor_parallel_size;
            (tp.get() > 1).then(|| tp.get().to_string())
        },
    },
    Field {
        key: Key::KvCacheMemory,
        kind: FieldKind::Decimal { min: "0.001", max: "65536" },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "kv_cache_memory (GiB)",
        help: "vLLM's kv_cache_memory_bytes, in GiB: the pool's size given, instead of what the profiling run leaves.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.vllm.kv_cache_memory = Some(gib_value(v)?);
            Ok(())
        },
        write: |s| s.infer.vllm.kv_cache_memory.map(format_gib),
    },
    Field {
        key: Key::PipelineParallelSize,
        kind: FieldKind::Count { min: ParallelSize::MIN as u64, max: ParallelSize::MAX as u64 },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "pipeline_parallel_size",
        help: "Pipeline stages the layers are split into, each on its own GPUs (tensor_parallel_size of them): the first stage also holds the embedding, the last the output head; the estimate shows the fullest GPU.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.infer.vllm.pipeline_parallel_size =
                count(v, ParallelSize::MIN, ParallelSize::MAX, ParallelSize::new)?;
            Ok(())
        },
        write: |s| {
            let pp = s.infer.vllm.pipeline_parallel_size;
            (pp.get() > 1).then(|| pp.get().to_string())
        },
    },
    Field {
        key: Key::DataParallelSize,
        kind: FieldKind::Count { min: ParallelSize::MIN as u64, max: ParallelSize::MAX as u64 },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "data_parallel_size",
        help: "Replicas of the model, each on its own GPUs: a GPU holds what it would alone, except a mixture of experts' routed experts, which vLLM splits over every replica's GPUs.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.infer.vllm.data_parallel_size =
                count(v, ParallelSize::MIN, ParallelSize::MAX, ParallelSize::new)?;
            Ok(())
        },
        write: |s| {
            let dp = s.infer.vllm.data_parallel_size;
            (dp.get() > 1).then(|| dp.get().to_string())
        },
    },
    Field {
        key: Key::EnableExpertParallel,
        kind: FieldKind::Toggle,
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "enable_expert_parallel",
        help: "A mixture of experts' routed experts placed whole, split over the tensor × data parallel GPUs, instead of each expert sharded over them.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.infer.vllm.enable_expert_parallel = boolean(v)?;
            Ok(())
        },
        write: |s| s.infer.vllm.enable_expert_parallel.then(|| "true".to_string()),
    },
    Field {
        key: Key::EnablePrefixCaching,
        kind: FieldKind::Toggle,
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "enable_prefix_caching",
        help: "Prefix caching, on by default. It changes memory only for a hybrid (Gated DeltaNet: Qwen3.5, 3.6, Qwen3-Next; Mamba-2: Granite 4.0-H, Nemotron-H; LFM2's short convolutions): on, each request keeps two state blocks per group (three with FlashInfer's DeltaNet prefill and with Mamba-2's checkpoint block); off, one.",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.infer.vllm.enable_prefix_caching = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.infer.vllm.enable_prefix_caching).then(|| "false".to_string()),
    },
    Field {
        key: Key::MambaCacheDtype,
        kind: FieldKind::Choice(MambaDtype::OPTIONS),
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "mamba_cache_dtype",
        help: "A hybrid's (Gated DeltaNet, Mamba-2, LFM2) convolution state dtype (auto: the model's); it changes the state's page, so the block size and the pool.",
        implied: |_| "auto".into(),
        apply: |d, v| {
            d.infer.vllm.mamba_cache_dtype = choice(v, MambaDtype::from_key, MambaDtype::keys_joined)?;
            Ok(())
        },
        write: |s| {
            let t = s.infer.vllm.mamba_cache_dtype;
            (t != MambaDtype::Auto).then(|| t.key().to_string())
        },
    },
    Field {
        key: Key::MambaSsmCacheDtype,
        kind: FieldKind::Choice(MambaDtype::OPTIONS),
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "mamba_ssm_cache_dtype",
        help: "A hybrid's (Gated DeltaNet, Mamba-2) recurrent state dtype (auto: the config's mamba_ssm_dtype, float32 on Qwen3.5 and 3.6; float32 on Nemotron-H, vLLM's default for it; else the convolution state's).",
        implied: |_| "auto".into(),
        apply: |d, v| {
            d.infer.vllm.mamba_ssm_cache_dtype =
                choice(v, MambaDtype::from_key, MambaDtype::keys_joined)?;
            Ok(())
        },
        write: |s| {
            let t = s.infer.vllm.mamba_ssm_cache_dtype;
            (t != MambaDtype::Auto).then(|| t.key().to_string())
        },
    },
    Field {
        key: Key::NumSpeculativeTokens,
        kind: FieldKind::Count { min: SpecTokens::MIN as u64, max: SpecTokens::MAX as u64 },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "num_speculative_tokens (MTP)",
        help: "Multi-token prediction: --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":K}'. The checkpoint's MTP layer is loaded as the drafter, its attention joins the cache, and each Gated DeltaNet state keeps K more convolution steps and K more blocks a request; 0: off.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.infer.vllm.num_speculative_tokens = count(v, SpecTokens::MIN, SpecTokens::MAX, SpecTokens::new)?;
            Ok(())
        },
        write: |s| {
            let k = s.infer.vllm.num_speculative_tokens.get();
            (k > 0).then(|| k.to_string())
        },
    },
    Field {
        key: Key::CpuOffloadGb,
        kind: FieldKind::Decimal { min: "0", max: "65536" },
        group: Group::Engine,
        tasks: Tasks::Infer,
        label: "cpu_offload_gb (GiB)",
        help: "GiB of each GPU's weights vLLM holds in host memory and reads over UVA at every forward (its decoder layers' parameters, in order, at most all of them); 0: none.",
        implied: |_| "0".into(),
        apply: |d, v| {
            // vLLM's default 0 is no offload (`config/offload.py:23`).
            let t = v.trim();
            let zero = t.contains('0')
                && t.bytes().all(|c| c == b'0' || c == b'.')
                && t.bytes().filter(|&c| c == b'.').count() <= 1;
            d.infer.vllm.cpu_offload = if zero { None } else { Some(gib_value(v)?) };
            Ok(())
        },
        write: |s| s.infer.vllm.cpu_offload.map(format_gib),
    },
    Field {
        key: Key::NParallel,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "n_parallel (-np)",
        help: "Sequences served at once, each with its share of the context (left out: llama-server's automatic 4 slots over one cache).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.llama.n_parallel = Some(count(v, Count::MIN, Count::MAX, Count::new)?);
            Ok(())
        },
        write: |s| s.infer.llama.n_parallel.map(|n| n.get().to_string()),
    },
    Field {
        key: Key::NBatch,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "n_batch (-b)",
        help: "Tokens one decode call takes (llama.cpp's default 2048).",
        implied: |_| "2048".into(),
        apply: |d, v| {
            d.infer.llama.n_batch = count(v, Count::MIN, Count::MAX, Count::new)?;
            Ok(())
        },
        write: |s| (s.infer.llama.n_batch != LlamaArgs::default().n_batch).then(|| s.infer.llama.n_batch.get().to_string()),
    },
    Field {
        key: Key::NUbatch,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "n_ubatch (-ub)",
        help: "Tokens one graph computes at once: the compute buffer's size (llama.cpp's default 512).",
        implied: |_| "512".into(),
        apply: |d, v| {
            d.infer.llama.n_ubatch = count(v, Count::MIN, Count::MAX, Count::new)?;
            Ok(())
        },
        write: |s| (s.infer.llama.n_ubatch != LlamaArgs::default().n_ubatch).then(|| s.infer.llama.n_ubatch.get().to_string()),
    },
    Field {
        key: Key::CacheTypeK,
        kind: FieldKind::Choice(CacheType::OPTIONS),
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "cache_type_k (-ctk)",
        help: "The keys' type in the cache: f16, or a quantized block (q8_0: 34 bytes per 32 values).",
        implied: |_| "f16".into(),
        apply: |d, v| {
            d.infer.llama.cache_type_k = choice(v, CacheType::from_name, CacheType::names_joined)?;
            Ok(())
        },
        write: |s| (s.infer.llama.cache_type_k != CacheType::F16).then(|| s.infer.llama.cache_type_k.name().to_string()),
    },
    Field {
        key: Key::CacheTypeV,
        kind: FieldKind::Choice(CacheType::OPTIONS),
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "cache_type_v (-ctv)",
        help: "The values' type in the cache: a quantized V needs flash attention.",
        implied: |_| "f16".into(),
        apply: |d, v| {
            d.infer.llama.cache_type_v = choice(v, CacheType::from_name, CacheType::names_joined)?;
            Ok(())
        },
        write: |s| (s.infer.llama.cache_type_v != CacheType::F16).then(|| s.infer.llama.cache_type_v.name().to_string()),
    },
    Field {
        key: Key::FlashAttn,
        kind: FieldKind::Choice(Flash::OPTIONS),
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "flash_attn (-fa)",
        help: "Flash attention: no attention scores in the compute buffer (auto: on where the GPU has the kernel).",
        implied: |_| "auto".into(),
        apply: |d, v| {
            d.infer.llama.flash_attn = choice(v, Flash::from_key, Flash::keys_joined)?;
            Ok(())
        },
        write: |s| (s.infer.llama.flash_attn != Flash::Auto).then(|| s.infer.llama.flash_attn.key().to_string()),
    },
    Field {
        key: Key::NGpuLayers,
        kind: FieldKind::Count { min: Layers::MIN as u64, max: Layers::MAX as u64 },
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "n_gpu_layers (-ngl)",
        help: "Layers on the GPU, from the last (the output layer counts as one); the rest stay in host memory. Left out: all, which --fit may lower.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.llama.n_gpu_layers = Some(count(v, Layers::MIN, Layers::MAX, Layers::new)?);
            Ok(())
        },
        write: |s| s.infer.llama.n_gpu_layers.map(|n| n.get().to_string()),
    },
    Field {
        key: Key::NCpuMoe,
        kind: FieldKind::Count { min: Layers::MIN as u64, max: Layers::MAX as u64 },
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "n_cpu_moe (--n-cpu-moe)",
        help: "The routed experts of the first N layers stay in host memory (--cpu-moe: a number of layers or more); the rest of each layer stays where -ngl puts it. Any N turns --fit's layer placement off, as llama.cpp does.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.infer.llama.n_cpu_moe = count(v, Layers::MIN, Layers::MAX, Layers::new)?;
            Ok(())
        },
        write: |s| (s.infer.llama.n_cpu_moe.get() > 0).then(|| s.infer.llama.n_cpu_moe.get().to_string()),
    },
    Field {
        key: Key::KvUnified,
        kind: FieldKind::Toggle,
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "kv_unified (-kvu)",
        help: "One key/value stream shared by the -np sequences, n_ctx cells in all; without it each sequence has its own n_ctx / -np. llama-server's automatic 4 slots share one stream either way.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.infer.llama.kv_unified = boolean(v)?;
            Ok(())
        },
        write: |s| s.infer.llama.kv_unified.then(|| "true".to_string()),
    },
    Field {
        key: Key::SwaFull,
        kind: FieldKind::Toggle,
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "swa_full (--swa-full)",
        help: "Sliding-window layers keep a cache of the whole context instead of their window (Gemma, gpt-oss, Mistral's sliding layers).",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.infer.llama.swa_full = boolean(v)?;
            Ok(())
        },
        write: |s| s.infer.llama.swa_full.then(|| "true".to_string()),
    },
    Field {
        key: Key::LlamaBuild,
        kind: FieldKind::Text,
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "build (llama.cpp release)",
        help: "The llama.cpp build you run (b6123, as its releases are named; llama-server --version prints it): the rules that changed between builds follow it. From b4400; a newer build than b10488 is estimated with b10488's rules, and says so.",
        implied: |_| format!("b{}", LlamaArgs::default().build.get()),
        apply: |d, v| {
            d.infer.llama.build = llama_build(v)?;
            Ok(())
        },
        write: |s| {
            (s.infer.llama.build != LlamaArgs::default().build).then(|| format!("b{}", s.infer.llama.build.get()))
        },
    },
    Field {
        key: Key::TensorSplit,
        kind: FieldKind::Text,
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "tensor_split (-ts)",
        help: "Several GPUs, each the GPU chosen below: one proportion per GPU (3,1: three quarters of the layers on the first). All 0: split by each GPU's free memory. Left out: one GPU.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.llama.tensor_split = Some(tensor_split(v)?);
            Ok(())
        },
        write: |s| s.infer.llama.tensor_split.map(|t| t.to_string()),
    },
    Field {
        key: Key::OverrideTensor,
        kind: FieldKind::Text,
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "override_tensor (-ot)",
        help: "Tensors moved to host memory by name, as PATTERN=CPU (comma-separated; the pattern an ECMAScript regular expression searched in each tensor's name, e.g. .ffn_.*_exps.=CPU). vramfit models the routed experts of a run of layers; any override turns --fit's layer placement off.",
        implied: |_| String::new(),
        apply: |d, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err(FieldError::Empty);
            }
            TensorOverrides::patterns(v).map_err(FieldError::Form)?;
            d.infer.llama.override_tensor = Some(TensorOverrides {
                text: ShortText::new(v)?,
                host_experts: (0, 0),
            });
            Ok(())
        },
        write: |s| s.infer.llama.override_tensor.map(|o| o.text.as_str().to_string()),
    },
    Field {
        key: Key::SplitMode,
        kind: FieldKind::Choice(SplitMode::OPTIONS),
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "split_mode (-sm)",
        help: "How layers go over several GPUs: layer (whole layers and their cache per GPU) or none (main_gpu only). row and tensor are not modelled.",
        implied: |_| "layer".into(),
        apply: |d, v| {
            if matches!(v.trim().to_ascii_lowercase().as_str(), "row" | "tensor") {
                return Err(FieldError::Form(
                    "not modelled by vramfit (llama.cpp's row and tensor splits): use layer or none".into(),
                ));
            }
            d.infer.llama.split_mode = choice(v, SplitMode::from_key, SplitMode::keys_joined)?;
            Ok(())
        },
        write: |s| (s.infer.llama.split_mode != SplitMode::Layer).then(|| s.infer.llama.split_mode.key().to_string()),
    },
    Field {
        key: Key::MainGpu,
        kind: FieldKind::Count { min: GpuIndex::MIN as u64, max: GpuIndex::MAX as u64 },
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "main_gpu (-mg)",
        help: "With split_mode=none, the one GPU that holds the model (counted from 0).",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.infer.llama.main_gpu = count(v, GpuIndex::MIN, GpuIndex::MAX, GpuIndex::new)?;
            Ok(())
        },
        write: |s| (s.infer.llama.main_gpu.get() > 0).then(|| s.infer.llama.main_gpu.get().to_string()),
    },
    Field {
        key: Key::Fit,
        kind: FieldKind::Toggle,
        group: Group::LlamaCpp,
        tasks: Tasks::Infer,
        label: "fit (--fit)",
        help: "llama-server's --fit (on by default): shortens the context, then moves layers to the CPU, until the load fits the GPU with 1 GiB to spare.",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.infer.llama.fit = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.infer.llama.fit).then(|| "false".to_string()),
    },
    Field {
        key: Key::NumParallel,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::Ollama,
        tasks: Tasks::Infer,
        label: "OLLAMA_NUM_PARALLEL",
        help: "Requests Ollama serves at once: its context is num_ctx times this.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.infer.ollama.num_parallel = count(v, Count::MIN, Count::MAX, Count::new)?;
            Ok(())
        },
        write: |s| (s.infer.ollama.num_parallel != OllamaArgs::default().num_parallel).then(|| s.infer.ollama.num_parallel.get().to_string()),
    },
    Field {
        key: Key::NumGpu,
        kind: FieldKind::Count { min: Layers::MIN as u64, max: Layers::MAX as u64 },
        group: Group::Ollama,
        tasks: Tasks::Infer,
        label: "num_gpu",
        help: "Layers Ollama puts on the GPU (left out: llama-server's --fit decides).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.ollama.num_gpu = Some(count(v, Layers::MIN, Layers::MAX, Layers::new)?);
            Ok(())
        },
        write: |s| s.infer.ollama.num_gpu.map(|n| n.get().to_string()),
    },
    Field {
        key: Key::KvCacheType,
        kind: FieldKind::Choice(CacheType::OPTIONS),
        group: Group::Ollama,
        tasks: Tasks::Infer,
        label: "OLLAMA_KV_CACHE_TYPE",
        help: "The cache's type for keys and values (f16, q8_0, q4_0); a quantized cache needs flash attention.",
        implied: |_| "f16".into(),
        apply: |d, v| {
            d.infer.ollama.kv_cache_type = choice(v, CacheType::from_name, CacheType::names_joined)?;
            Ok(())
        },
        write: |s| (s.infer.ollama.kv_cache_type != CacheType::F16).then(|| s.infer.ollama.kv_cache_type.name().to_string()),
    },
    Field {
        key: Key::FlashAttention,
        kind: FieldKind::Toggle,
        group: Group::Ollama,
        tasks: Tasks::Infer,
        label: "OLLAMA_FLASH_ATTENTION",
        help: "Flash attention on or off (left out: Ollama's choice by model and GPU).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.ollama.flash_attention = Some(boolean(v)?);
            Ok(())
        },
        write: |s| s.infer.ollama.flash_attention.map(|b| b.to_string()),
    },
    Field {
        key: Key::KvBits,
        kind: FieldKind::Count { min: KvBits::MIN as u64, max: KvBits::MAX as u64 },
        group: Group::Mlx,
        tasks: Tasks::Infer,
        label: "kv_bits",
        help: "Bits of a quantized cache (mlx-lm's --kv-bits; left out: the model's dtype).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.mlx.kv_bits = Some(count(v, KvBits::MIN, KvBits::MAX, KvBits::new)?);
            Ok(())
        },
        write: |s| s.infer.mlx.kv_bits.map(|n| n.get().to_string()),
    },
    Field {
        key: Key::KvGroupSize,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::Mlx,
        tasks: Tasks::Infer,
        label: "kv_group_size",
        help: "Values per scale and bias of a quantized cache (64).",
        implied: |_| "64".into(),
        apply: |d, v| {
            d.infer.mlx.kv_group_size = count(v, Count::MIN, Count::MAX, Count::new)?;
            Ok(())
        },
        write: |s| (s.infer.mlx.kv_group_size != MlxArgs::default().kv_group_size).then(|| s.infer.mlx.kv_group_size.get().to_string()),
    },
    Field {
        key: Key::PrefillStepSize,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::Mlx,
        tasks: Tasks::Infer,
        label: "prefill_step_size",
        help: "Prompt tokens per prefill chunk (2048).",
        implied: |_| "2048".into(),
        apply: |d, v| {
            d.infer.mlx.prefill_step_size = count(v, Count::MIN, Count::MAX, Count::new)?;
            Ok(())
        },
        write: |s| (s.infer.mlx.prefill_step_size != MlxArgs::default().prefill_step_size).then(|| s.infer.mlx.prefill_step_size.get().to_string()),
    },
    Field {
        key: Key::MaxKvSize,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::Mlx,
        tasks: Tasks::Infer,
        label: "max_kv_size",
        help: "A rotating cache of this many tokens per layer (left out: the whole context).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.mlx.max_kv_size = Some(count(v, Count::MIN, Count::MAX, Count::new)?);
            Ok(())
        },
        write: |s| s.infer.mlx.max_kv_size.map(|n| n.get().to_string()),
    },
    Field {
        key: Key::File,
        kind: FieldKind::Text,
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "GGUF file",
        help: "The GGUF file whose header was read: hf:owner/repo/path.gguf for a Hub repository's file, or a file's name picked from disk (read in the browser, nothing uploaded).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.file = Some(FileName::new(v).map_err(FieldError::Form)?);
            Ok(())
        },
        write: |s| s.infer.file.map(|f| f.as_str().to_string()),
    },
    Field {
        key: Key::FileBytes,
        kind: FieldKind::Text,
        group: Group::Infer,
        tasks: Tasks::Infer,
        label: "The file's bytes",
        help: "The read file's tensors as llama.cpp places them (written by the page or `vramfit gguf`): they replace the prediction for the file type.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.infer.file_bytes = Some(ReadFile::parse(v).map_err(|e| FieldError::Form(e.to_string()))?);
            Ok(())
        },
        write: |s| s.infer.file_bytes.map(|f| f.to_string()),
    },
    Field {
        key: Key::QGroupSize,
        kind: FieldKind::Count { min: Count::MIN as u64, max: Count::MAX as u64 },
        group: Group::Mlx,
        tasks: Tasks::Infer,
        label: "q_group_size",
        help: "Weights per scale and bias of the quantized weights (mlx_lm.convert --q-group-size, 64).",
        implied: |_| "64".into(),
        apply: |d, v| {
            d.infer.mlx.q_group_size = count(v, Count::MIN, Count::MAX, Count::new)?;
            Ok(())
        },
        write: |s| (s.infer.mlx.q_group_size != MlxArgs::default().q_group_size).then(|| s.infer.mlx.q_group_size.get().to_string()),
    },
    Field {
        key: Key::Gpus,
        kind: FieldKind::Count { min: Gpus::MIN as u64, max: Gpus::MAX as u64 },
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "GPUs",
        help: "GPUs in all; the estimate is per GPU. Data parallelism (and ZeRO's or FSDP's sharding) runs over gpus / tp.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.parallel.gpus = count(v, Gpus::MIN, Gpus::MAX, Gpus::new)?;
            Ok(())
        },
        write: |s| Some(s.parallel.gpus.get().to_string()),
    },
    Field {
        key: Key::Tp,
        kind: FieldKind::Count { min: TpGroup::MIN as u64, max: TpGroup::MAX as u64 },
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Tensor parallel (tp)",
        help: "GPUs each layer is split over, as transformers 5.23's DistributedConfig(tp_size) applies the family's tensor-parallel plan: q, k, v, gate and up split by columns, o and down by rows, the embedding and the head by vocabulary. gpus must be a multiple of tp; FSDP2 (shard=fsdp2) shards over the rest.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.parallel.tp = count(v, TpGroup::MIN, TpGroup::MAX, TpGroup::new)?;
            Ok(())
        },
        write: |s| (s.parallel.tp.get() > 1).then(|| s.parallel.tp.get().to_string()),
    },
    Field {
        key: Key::Pp,
        kind: FieldKind::Count { min: PpStages::MIN as u64, max: PpStages::MAX as u64 },
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Pipeline stages (pp)",
        help: "Pipeline stages, one GPU each, as torch.distributed.pipelining runs them (torchtitan): layers / pp per stage (the last takes the rest), the embedding on the first, the head and the loss on the last. The estimate is the fullest rank; the first, middle and last are listed.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.parallel.pp = count(v, PpStages::MIN, PpStages::MAX, PpStages::new)?;
            Ok(())
        },
        write: |s| (s.parallel.pp.get() > 1).then(|| s.parallel.pp.get().to_string()),
    },
    Field {
        key: Key::PpSchedule,
        kind: FieldKind::Choice(PpSchedule::OPTIONS),
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Pipeline schedule",
        help: "The order each rank runs its micro-batches in (torch 2.15): 1F1B keeps at most pp − rank in flight, GPipe all; interleaved 1F1B runs vpp stages a rank.",
        implied: |_| "1f1b".into(),
        apply: |d, v| {
            d.parallel.pp_schedule = choice(v, PpSchedule::from_key, PpSchedule::keys_joined)?;
            Ok(())
        },
        write: |s| (s.parallel.pp_schedule != PpSchedule::OneFOneB).then(|| s.parallel.pp_schedule.key().to_string()),
    },
    Field {
        key: Key::Vpp,
        kind: FieldKind::Count { min: VirtualStages::MIN as u64, max: VirtualStages::MAX as u64 },
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Stages per rank (vpp)",
        help: "Interleaved 1F1B's stages per rank (virtual stages): the layers are cut into pp × vpp stages, as the split says.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.parallel.vpp = count(v, VirtualStages::MIN, VirtualStages::MAX, VirtualStages::new)?;
            Ok(())
        },
        write: |s| (s.parallel.vpp.get() > 1).then(|| s.parallel.vpp.get().to_string()),
    },
    Field {
        key: Key::PpSplit,
        kind: FieldKind::Choice(PpSplit::OPTIONS),
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Layers per stage",
        help: "How the layers are cut into the pp × vpp stages: transformers gives each layers / stages, the last the rest; torchtitan counts the embedding and the head as layers (one each by default).",
        implied: |_| "transformers".into(),
        apply: |d, v| {
            d.parallel.pp_split = choice(v, PpSplit::from_key, PpSplit::keys_joined)?;
            Ok(())
        },
        write: |s| (s.parallel.pp_split != PpSplit::Transformers).then(|| s.parallel.pp_split.key().to_string()),
    },
    Field {
        key: Key::PpFirstLess,
        kind: FieldKind::Count { min: EndWeight::MIN as u64, max: EndWeight::MAX as u64 },
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Embedding counts as layers",
        help: "torchtitan's cut: how many layers the embedding counts as on the first stage (pipeline_parallel_first_stage_less_layers), so it takes that many fewer.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.parallel.pp_first_less = count(v, EndWeight::MIN, EndWeight::MAX, EndWeight::new)?;
            Ok(())
        },
        write: |s| (s.parallel.pp_first_less.get() != 1).then(|| s.parallel.pp_first_less.get().to_string()),
    },
    Field {
        key: Key::PpLastLess,
        kind: FieldKind::Count { min: EndWeight::MIN as u64, max: EndWeight::MAX as u64 },
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Head counts as layers",
        help: "torchtitan's cut: how many layers the final norm and the head count as on the last stage (pipeline_parallel_last_stage_less_layers).",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.parallel.pp_last_less = count(v, EndWeight::MIN, EndWeight::MAX, EndWeight::new)?;
            Ok(())
        },
        write: |s| (s.parallel.pp_last_less.get() != 1).then(|| s.parallel.pp_last_less.get().to_string()),
    },
    Field {
        key: Key::MicroBatches,
        kind: FieldKind::Count { min: MicroBatches::MIN as u64, max: MicroBatches::MAX as u64 },
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Micro-batches per step",
        help: "The pipeline's micro-batches (n_microbatches), each of batch / micro_batches sequences.",
        implied: |_| "1".into(),
        apply: |d, v| {
            d.parallel.micro_batches = count(v, MicroBatches::MIN, MicroBatches::MAX, MicroBatches::new)?;
            Ok(())
        },
        write: |s| (s.parallel.micro_batches.get() > 1).then(|| s.parallel.micro_batches.get().to_string()),
    },
    Field {
        key: Key::Zero,
        kind: FieldKind::Choice(&[
            ("0", "0: none (DDP)"),
            ("1", "1: optimizer state"),
            ("2", "2: + gradients (FSDP SHARD_GRAD_OP)"),
            ("3", "3: + parameters (FSDP FULL_SHARD)"),
        ]),
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "ZeRO stage",
        help: "What is partitioned across the GPUs.",
        implied: |_| String::new(),
        apply: |d, v| {
            let z = count(v, 0, 3, |n| u8::try_from(n).ok())?;
            d.parallel.zero = ZeroStage::new(z).ok_or(FieldError::NotANumber)?;
            Ok(())
        },
        write: |s| Some(s.parallel.zero.get().to_string()),
    },
    Field {
        key: Key::Offload,
        kind: FieldKind::Choice(Offload::OPTIONS),
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Offload to host memory",
        help: "ZeRO-Offload / FSDP CPU offload: the optimizer (fp32 master weights, gradients, state; the step runs on the CPU), or the parameters too (ZeRO-3). Needs ZeRO.",
        implied: |_| "none".into(),
        apply: |d, v| {
            d.parallel.offload = choice(v, Offload::from_key, Offload::keys_joined)?;
            Ok(())
        },
        write: |s| (s.parallel.offload != Offload::None).then(|| s.parallel.offload.key().to_string()),
    },
    Field {
        key: Key::Shard,
        kind: FieldKind::Choice(Shard::OPTIONS),
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "Sharding library",
        help: "Who shards over the GPUs: ZeRO's stages as the paper describes them (no particular library), PyTorch's FSDP1 or FSDP2 (fully_shard) as accelerate's FSDP plugin sets it up (full sharding: zero=3; whole decoder layers and, under LoRA, each adapter as units; FSDP2 also keeps all-gather and reduce-scatter buffers, measured on transformers 5), or DeepSpeed's ZeRO-3 in bf16 (zero=3, dtype=mixed_bf16: its reduce bucket, and from the second step the parameters its prefetcher keeps gathered).",
        implied: |_| "generic".into(),
        apply: |d, v| {
            d.parallel.shard = choice(v, Shard::from_key, Shard::keys_joined)?;
            Ok(())
        },
        write: |s| (s.parallel.shard != Shard::Generic).then(|| s.parallel.shard.key().to_string()),
    },
    Field {
        key: Key::BackwardPrefetch,
        kind: FieldKind::Toggle,
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "FSDP backward prefetch",
        help: "FSDP1's backward_prefetch: BACKWARD_PRE (on, accelerate's default answer) gathers the next layer while one runs backward, two layers at once; off is NONE (FullyShardedDataParallel's own default).",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.parallel.backward_prefetch = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.parallel.backward_prefetch).then(|| "false".to_string()),
    },
    Field {
        key: Key::DsBuckets,
        kind: FieldKind::Choice(DsBuckets::OPTIONS),
        group: Group::Parallel,
        tasks: Tasks::Train,
        label: "DeepSpeed bucket sizes",
        help: "Where DeepSpeed's ZeRO-3 sizes come from (shard=deepspeed): its own defaults, as accelerate config leaves them (a 5e8-element reduce bucket, 1 GB in bf16; parameters under 1e5 elements kept whole), or transformers' fill-ins for \"auto\" in a ds_config.json (reduce bucket hidden², under 10·hidden kept whole).",
        implied: |_| "default".into(),
        apply: |d, v| {
            d.parallel.ds_buckets = choice(v, DsBuckets::from_key, DsBuckets::keys_joined)?;
            Ok(())
        },
        write: |s| (s.parallel.ds_buckets != DsBuckets::Default).then(|| s.parallel.ds_buckets.key().to_string()),
    },
    Field {
        key: Key::CtxMib,
        kind: FieldKind::Count { min: 0, max: 65_536 },
        group: Group::Overhead,
        tasks: Tasks::Both,
        label: "CUDA context (MiB)",
        help: "The CUDA context and loaded kernels beside the tensors. Left out: 767 for PyTorch (measured: H200, torch 2.11), else 512 (assumed).",
        implied: |s| s.overhead.context(s.context_default()).to_string(),
        apply: |d, v| {
            d.overhead.cuda_ctx_mib = Some(count(v, 0, 65_536, Some)?);
            Ok(())
        },
        write: |s| s.overhead.cuda_ctx_mib.map(|m| m.to_string()),
    },
    Field {
        key: Key::ReservePct,
        kind: FieldKind::Count { min: 0, max: 100 },
        group: Group::Overhead,
        tasks: Tasks::Both,
        label: "Allocator reserve (%)",
        help: "What PyTorch's caching allocator needs above the live tensors at the peak, in percent. Left out: 5, near the median of fourteen training runs replayed through its rules (1.2 to 23%), or 2 with expandable segments (every run within 1.9%).",
        implied: |s| s.overhead.reserve().to_string(),
        apply: |d, v| {
            d.overhead.reserve_pct = Some(count(v, 0, 100, |n| u8::try_from(n).ok())?);
            Ok(())
        },
        write: |s| s.overhead.reserve_pct.map(|p| p.to_string()),
    },
    Field {
        key: Key::ExpandableSegments,
        kind: FieldKind::Toggle,
        group: Group::Overhead,
        tasks: Tasks::Both,
        label: "expandable_segments (PYTORCH_CUDA_ALLOC_CONF)",
        help: "PyTorch's caching allocator grows its segments in place instead of cutting new ones: less memory lost between blocks (the reserve's default falls from 5% to 2%).",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.overhead.expandable_segments = boolean(v)?;
            Ok(())
        },
        write: |s| s.overhead.expandable_segments.then(|| "true".to_string()),
    },
    Field {
        key: Key::Gpu,
        kind: FieldKind::Gpu,
        group: Group::Fit,
        tasks: Tasks::Both,
        label: "GPU",
        help: "The GPU to fit on; custom: type its memory; probe: use what this browser measured.",
        implied: |s| match s.view.capacity {
            Capacity::Gpu { id } => id.to_string(),
            Capacity::Typed { .. } => "custom".into(),
            Capacity::Probed { .. } => "probe".into(),
        },
        apply: |d, v| {
            let v = v.trim().to_ascii_lowercase();
            d.gpu = Some(match v.as_str() {
                "" => return Err(FieldError::Empty),
                "custom" => GpuKey::Custom,
                "probe" => GpuKey::Probe,
                id => GpuKey::Listed(crate::gpus::gpu(id).ok_or(FieldError::UnknownGpu)?.id),
            });
            Ok(())
        },
        write: |s| match s.view.capacity {
            c if c == View::default().capacity => None,
            Capacity::Gpu { id } => Some(id.to_string()),
            Capacity::Typed { .. } => Some("custom".into()),
            Capacity::Probed { .. } => Some("probe".into()),
        },
    },
    Field {
        key: Key::CapacityGib,
        kind: FieldKind::Decimal { min: "0.001", max: "65536" },
        group: Group::Fit,
        tasks: Tasks::Both,
        label: "GPU memory (GiB)",
        help: "Your GPU's memory in GiB (2^30 bytes), as nvidia-smi shows it; decimals allowed.",
        implied: |s| format_gib(s.view.capacity.bytes()),
        apply: |d, v| {
            d.capacity_typed = Some(gib_value(v)?);
            Ok(())
        },
        write: |s| match s.view.capacity {
            Capacity::Typed { bytes } => Some(format_gib(bytes)),
            _ => None,
        },
    },
    Field {
        key: Key::ProbeBytes,
        kind: FieldKind::Count { min: 1, max: 1 << 50 },
        group: Group::Fit,
        tasks: Tasks::Both,
        label: "Measured (bytes)",
        help: "What the in-page probe could allocate: a lower bound of the GPU's memory.",
        implied: |_| String::new(),
        apply: |d, v| {
            let n = parse_count(v, false, 1, 1 << 50)?;
            d.probe_bytes = Some(Bytes(n));
            Ok(())
        },
        write: |s| match s.view.capacity {
            Capacity::Probed { bytes, .. } => Some(bytes.get().to_string()),
            _ => None,
        },
    },
    Field {
        key: Key::ProbeAdapter,
        kind: FieldKind::Text,
        group: Group::Fit,
        tasks: Tasks::Both,
        label: "Measured on",
        help: "The adapter the probe ran on.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.probe_adapter = Some(ShortText::new(v)?);
            Ok(())
        },
        write: |s| match s.view.capacity {
            Capacity::Probed { adapter, .. } if !adapter.as_str().is_empty() => Some(adapter.as_str().to_string()),
            _ => None,
        },
    },
    Field {
        key: Key::Unit,
        kind: FieldKind::Choice(&[("gib", "GiB (2^30 bytes)"), ("gb", "GB (10^9 bytes)")]),
        group: Group::View,
        tasks: Tasks::Both,
        label: "Units",
        help: "GiB as nvidia-smi and PyTorch count, or GB as GPU boxes are labelled.",
        implied: |_| "gib".into(),
        apply: |d, v| {
            d.view.unit = match v.trim().to_ascii_lowercase().as_str() {
                "" => return Err(FieldError::Empty),
                "gib" => DisplayUnit::Gib,
                "gb" => DisplayUnit::Gb,
                _ => return Err(FieldError::UnknownChoice { choices: "gib, gb".into() }),
            };
            Ok(())
        },
        write: |s| (s.view.unit == DisplayUnit::Gb).then(|| "gb".to_string()),
    },
    Field {
        key: Key::Iters,
        kind: FieldKind::Count { min: Iters::MIN as u64, max: Iters::MAX as u64 },
        group: Group::View,
        tasks: Tasks::Train,
        label: "Steps shown",
        help: "Training steps drawn in the memory-over-steps chart.",
        implied: |_| View::default().iters.get().to_string(),
        apply: |d, v| {
            d.view.iters = count(v, Iters::MIN, Iters::MAX, Iters::new)?;
            Ok(())
        },
        write: |s| (s.view.iters != View::default().iters).then(|| s.view.iters.get().to_string()),
    },
    Field {
        key: Key::Leak,
        kind: FieldKind::Choice(Leak::OPTIONS),
        group: Group::View,
        tasks: Tasks::Train,
        label: "Leak",
        help: "Memory the loop keeps every step by mistake, e.g. appending the outputs to a list.",
        implied: |_| "none".into(),
        apply: |d, v| {
            d.view.leak = choice(v, Leak::from_key, Leak::keys_joined)?;
            Ok(())
        },
        write: |s| (s.view.leak != Leak::None).then(|| s.view.leak.key().to_string()),
    },
    Field {
        key: Key::LeakMib,
        kind: FieldKind::Count { min: 0, max: 1 << 24 },
        group: Group::View,
        tasks: Tasks::Train,
        label: "Leak per step (MiB)",
        help: "MiB kept every step when the leak is custom.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.view.leak_mib = count(v, 0, 1 << 24, Some)?;
            Ok(())
        },
        write: |s| (s.view.leak_mib != 0).then(|| s.view.leak_mib.to_string()),
    },
    Field {
        key: Key::DatasetMib,
        kind: FieldKind::Count { min: 0, max: 1 << 24 },
        group: Group::View,
        tasks: Tasks::Train,
        label: "Data on the GPU (MiB)",
        help: "A dataset or other tensors put on the GPU once; counted in every phase.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.view.dataset_mib = count(v, 0, 1 << 24, Some)?;
            Ok(())
        },
        write: |s| (s.view.dataset_mib != 0).then(|| s.view.dataset_mib.to_string()),
    },
];

/// The field for `key`.
pub fn field(key: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.key.text() == key)
}

/// A plain count (no suffixes) in `min..=max`, converted by `new`.
fn count<T>(v: &str, min: u32, max: u32, new: fn(u32) -> Option<T>) -> Result<T, FieldError> {
    let n = parse_count(v, false, min.into(), max.into())?;
    u32::try_from(n)
        .ok()
        .and_then(new)
        .ok_or(FieldError::NotANumber)
}

/// One `weights` value as each family of engines reads it.
pub(super) struct WeightsValue {
    pub checkpoint: Option<WeightFormat>,
    pub gguf: Option<FileType>,
    pub mlx: Option<MlxWeights>,
}

/// The `weights` value as each family of engines reads it: a checkpoint
/// format (transformers, vLLM), a GGUF file type (llama.cpp, Ollama; the
/// checkpoint names of 16 and 32 bits too), MLX weights; an error when
/// none reads it.
pub(super) fn weights_of(v: &str) -> Result<WeightsValue, FieldError> {
    let v = v.trim().to_ascii_lowercase();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    let gguf = match v.as_str() {
        "fp16" => Some(FileType::F16),
        "fp32" => Some(FileType::F32),
        other => FileType::from_key(other),
    };
    let found = WeightsValue {
        checkpoint: WeightFormat::from_key(&v),
        gguf,
        mlx: MlxWeights::from_key(&v),
    };
    match found {
        WeightsValue {
            checkpoint: None,
            gguf: None,
            mlx: None,
        } => Err(FieldError::UnknownChoice {
            choices: format!(
                "{}; a GGUF file type: {}; MLX: {}",
                WeightFormat::keys_joined(),
                FileType::keys_joined(),
                MlxWeights::keys_joined()
            ),
        }),
        found => Ok(found),
    }
}

fn choice<T>(v: &str, from: fn(&str) -> Option<T>, all: fn() -> String) -> Result<T, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    from(&v.to_ascii_lowercase()).ok_or_else(|| FieldError::UnknownChoice { choices: all() })
}

/// A llama.cpp build as its releases are named (`b6123`), or its number.
fn llama_build(v: &str) -> Result<LlamaBuild, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    let digits = v.strip_prefix(['b', 'B']).unwrap_or(v);
    let n = parse_count(digits, false, 0, u64::from(LlamaBuild::MAX))?;
    u32::try_from(n)
        .ok()
        .and_then(LlamaBuild::new)
        .ok_or_else(|| FieldError::TooSmall {
            min: format!(
                "b{} (the oldest build whose start-up vramfit is held to)",
                LlamaBuild::MIN
            ),
        })
}

/// `-ts`'s proportions: split at `,` or `/` (`common/arg.cpp`, b10488),
/// each a plain decimal number (`std::stof` would also read `3abc` as 3;
/// vramfit refuses it).
fn tensor_split(v: &str) -> Result<TensorSplit, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    let mut parts = Vec::new();
    for part in v.split([',', '/']).map(str::trim) {
        let p = proportion(part).ok_or_else(|| {
            FieldError::Form(format!(
                "not one proportion per GPU (`{}` is not a number): write 3,1 or 0.6,0.4",
                echo(part)
            ))
        })?;
        parts.push(p);
    }
    TensorSplit::new(&parts).ok_or_else(|| {
        FieldError::Form(format!(
            "{} entries long: llama.cpp takes at most {} GPUs",
            parts.len(),
            TensorSplit::MAX
        ))
    })
}

/// A plain decimal number (digits, at most one point; at most 15 digits)
/// as the `float` `std::stof` reads: the quotient of two integers exact
/// in `f64`, then rounded to `f32` (without the standard library's float
/// parser and its tables, which would weigh on the page).
fn proportion(part: &str) -> Option<f32> {
    let (int, frac) = part.split_once('.').unwrap_or((part, ""));
    let digits = int.len() + frac.len();
    let plain = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if digits == 0 || digits > 15 || !plain(int) || !plain(frac) {
        return None;
    }
    let mantissa = format!("{int}{frac}").parse::<u64>().ok()?;
    let scale = 10u64.checked_pow(u32::try_from(frac.len()).ok()?)?;
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    Some((mantissa as f64 / scale as f64) as f32)
}

/// `true`/`false`, also `1`/`0`, `yes`/`no`, `on`/`off`.
fn boolean(v: &str) -> Result<bool, FieldError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" => Err(FieldError::Empty),
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(FieldError::UnknownChoice {
            choices: "true, false".into(),
        }),
    }
}

/// A decimal in ten-thousandths (at most four decimals), at most `max`.
fn ten_thousandths(v: &str, max: u16, max_text: &str) -> Result<u16, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if !int.bytes().all(|c| c.is_ascii_digit()) || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return Err(FieldError::NotANumber);
    }
    if frac.len() > 4 {
        return Err(FieldError::Conflict("use at most 4 decimals".into()));
    }
    let too_large = || FieldError::TooLarge {
        max: max_text.into(),
    };
    let int: u32 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_large())?
    };
    let frac_n: u32 = format!("{frac:0<4}").parse().unwrap_or(0);
    let n = int.saturating_mul(10_000).saturating_add(frac_n);
    u16::try_from(n)
        .ok()
        .filter(|n| *n <= max)
        .ok_or_else(too_large)
}

/// A probability in [0, 1) with at most four decimals, as ten-thousandths.
fn probability(v: &str) -> Result<Prob, FieldError> {
    let n = ten_thousandths(v, 9999, "0.9999")?;
    Prob::new(n).ok_or(FieldError::TooLarge {
        max: "0.9999".into(),
    })
}

/// A share of the GPU's memory in (0, 1], as ten-thousandths.
fn share(v: &str) -> Result<Share, FieldError> {
    let n = ten_thousandths(v, 10_000, "1")?;
    Share::new(n).ok_or(FieldError::TooSmall {
        min: "0.0001".into(),
    })
}

/// GiB with up to three decimals (`23.5`), as exact bytes (rounded to
/// whole bytes).
fn gib_value(v: &str) -> Result<Bytes, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return Err(FieldError::NotANumber);
    }
    if frac.len() > 3 {
        return Err(FieldError::Conflict("use at most 3 decimals".into()));
    }
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| FieldError::TooLarge {
            max: "65536".into(),
        })?
    };
    let milli = whole
        .saturating_mul(1000)
        .saturating_add(format!("{frac:0<3}").parse::<u64>().unwrap_or(0));
    if milli == 0 {
        return Err(FieldError::TooSmall {
            min: "0.001".into(),
        });
    }
    if milli > 65_536_000 {
        return Err(FieldError::TooLarge {
            max: "65536".into(),
        });
    }
    Ok(Bytes(milli * GIB / 1000))
}

/// Bytes as GiB with at most three decimals, trailing zeros dropped.
fn format_gib(b: Bytes) -> String {
    let milli = (u128::from(b.get()) * 1000 + u128::from(GIB) / 2) / u128::from(GIB);
    let s = format!("{}.{:03}", milli / 1000, milli % 1000);
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s).to_string()
}

/// `1000` → `0.1`.
fn format_prob(p: Prob) -> String {
    ten_thousandths_text(p.get())
}

/// Ten-thousandths as a decimal: `9200` → `0.92`, `10000` → `1`.
fn ten_thousandths_text(n: u16) -> String {
    let s = format!("{}.{:04}", n / 10_000, n % 10_000);
    let s = s.trim_end_matches('0');
    s.strip_suffix('.')
        .map(|i| i.to_string())
        .unwrap_or_else(|| s.to_string())
}

/// Reads a whole count in `min..=max`.
///
/// Plain counts (`suffixes == false`: batch, seq, layers, ...) are digits
/// only: `8`, `2048`. A sign, decimals or an exponent are refused with a
/// reason (`+8`, `-0`, `2.048e3`), never read silently. Parameter counts
/// (`suffixes == true`) also take `1.5e9` and `124M`, `1.5B`, `7b`, `2T`
/// (k/M/B/T = 10^3/10^6/10^9/10^12), still without a sign.
pub fn parse_count(v: &str, suffixes: bool, min: u64, max: u64) -> Result<u64, FieldError> {
    let too_small = || FieldError::TooSmall {
        min: min.to_string(),
    };
    let too_large = || FieldError::TooLarge {
        max: max.to_string(),
    };
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    if v.len() > MAX_VALUE_LEN {
        return Err(FieldError::TooLong);
    }
    let n = if v.bytes().all(|c| c.is_ascii_digit()) {
        v.parse::<u64>().map_err(|_| too_large())?
    } else {
        let (num, shift) = match v.char_indices().last() {
            Some((i, c)) if suffixes && c.is_ascii_alphabetic() => {
                let shift = match c.to_ascii_lowercase() {
                    'k' => 3,
                    'm' => 6,
                    'b' | 'g' => 9,
                    't' => 12,
                    _ => return Err(FieldError::NotANumber),
                };
                (&v[..i], shift)
            }
            _ => (v, 0),
        };
        // Plain decimal syntax only (no "inf", "nan" or hex), read exactly.
        let x = Decimal::parse(num).ok_or(FieldError::NotANumber)?;
        if x.negative && !x.is_zero() {
            return Err(too_small());
        }
        let n = x.count(shift).map_err(|e| match e {
            NotCount::NotWhole => FieldError::NotWhole,
            NotCount::TooLarge => too_large(),
        });
        if matches!(n, Err(FieldError::NotWhole)) {
            return n;
        }
        if num.starts_with(['+', '-']) {
            // `+8`, `-0`: a sign on a count is a typo, not a value.
            return Err(FieldError::Signed);
        }
        if !suffixes {
            return Err(FieldError::DigitsOnly);
        }
        n?
    };
    if n < min {
        Err(too_small())
    } else if n > max {
        Err(too_large())
    } else {
        Ok(n)
    }
}

/// The keys that describe the model: an import replaces all of them.
pub fn model_keys() -> impl Iterator<Item = Key> {
    FIELDS
        .iter()
        .filter(|f| matches!(f.group, Group::Model | Group::Architecture))
        .map(|f| f.key)
        // What is done with the model is not the model.
        .filter(|k| *k != Key::Task)
        .chain([
            Key::Dropout,
            Key::AuxLoss,
            Key::Quant,
            Key::DoubleQuant,
            Key::BnbCompute,
        ])
}
