//! What a training run does: precision, optimizer, batch and sequence,
//! checkpointing, attention, LoRA and a quantized base, data parallelism.
//! Every value here has passed the codec's checks (bounded numbers, closed
//! choices): the estimator takes it without re-validating.

pub use super::stack::{Trainer, Transformers};
use crate::choice::{bounded, choice_enum};
use crate::inputs::{Attn, Batch, Overhead, View};
pub use crate::lora::{LoraRank, Targets};
use crate::model::{Architecture, ExpertLayout, Module};
use serde::Serialize;

choice_enum! {
    /// How parameters, gradients and optimizer state are stored, and what
    /// precision the forward pass computes in.
    pub enum Dtype {
        /// Everything in float32.
        Fp32 = "fp32", "fp32 (full precision)",
        /// Parameters, gradients and optimizer state all bfloat16.
        Bf16 = "bf16", "pure bf16",
        /// Parameters, gradients and optimizer state all float16.
        Fp16 = "fp16", "pure fp16",
        /// fp32 weights, gradients and state; forward and loss under
        /// `torch.autocast(bfloat16)` (PyTorch AMP, the Trainer's `bf16=True`).
        AmpBf16 = "amp_bf16", "mixed precision: fp32 weights + bf16 autocast",
        /// As `amp_bf16` with float16 autocast (and a GradScaler).
        AmpFp16 = "amp_fp16", "mixed precision: fp32 weights + fp16 autocast",
        /// bf16 weights and gradients; the optimizer keeps fp32 master
        /// weights, fp32 gradients and its state (DeepSpeed / Megatron style).
        MixedBf16 = "mixed_bf16", "bf16 weights + fp32 master copy (DeepSpeed)",
        /// bf16 weights, gradients and state, the forward under
        /// `torch.autocast(bfloat16)`: the Trainer's `bf16=True` on a model
        /// loaded in bf16 (accelerate's autocast, the outputs copied to
        /// fp32). As `bf16` but for LoRA's fp32 adapters cast to bf16 in
        /// every forward and CUDA autocast's fp32 LayerNorm.
        Bf16Autocast = "bf16_autocast", "bf16 weights + bf16 autocast (Trainer bf16=True)",
    }
}

impl Dtype {
    /// Bytes per stored parameter.
    pub fn param_bytes(self) -> u64 {
        match self {
            Dtype::Fp32 | Dtype::AmpBf16 | Dtype::AmpFp16 => 4,
            Dtype::Bf16 | Dtype::Fp16 | Dtype::MixedBf16 | Dtype::Bf16Autocast => 2,
        }
    }

    /// fp32 weights under `torch.autocast` (mixed precision).
    pub fn autocast(self) -> bool {
        matches!(self, Dtype::AmpBf16 | Dtype::AmpFp16)
    }

    /// Half weights under `torch.autocast` (`bf16_autocast`).
    pub fn autocast_half(self) -> bool {
        self == Dtype::Bf16Autocast
    }
}

choice_enum! {
    /// The optimizer and its implementation.
    pub enum Optimizer {
        /// `torch.optim.AdamW(foreach=True)`: the CUDA default.
        AdamW = "adamw", "AdamW (foreach, PyTorch default)",
        /// `torch.optim.AdamW(foreach=False)`: one tensor at a time.
        AdamWForLoop = "adamw_forloop", "AdamW (for-loop)",
        /// `torch.optim.AdamW(fused=True)`.
        AdamWFused = "adamw_fused", "AdamW (fused)",
        /// bitsandbytes `AdamW8bit`: blockwise 8-bit moments.
        AdamW8bit = "adamw8bit", "AdamW 8-bit (bitsandbytes)",
        /// Lion (lucidrains' `lion-pytorch`): one momentum buffer.
        Lion = "lion", "Lion",
        /// transformers' `Adafactor` (relative step, factored second moments).
        Adafactor = "adafactor", "Adafactor",
        /// `torch.optim.SGD` with momentum 0.9.
        SgdMomentum = "sgd_mom", "SGD with momentum",
        /// `torch.optim.SGD` without momentum.
        Sgd = "sgd", "SGD",
        /// bitsandbytes `PagedAdamW` (32-bit state in CUDA unified memory,
        /// paged to host memory when the GPU runs short).
        PagedAdamW = "paged_adamw", "paged AdamW 32-bit (bitsandbytes)",
        /// bitsandbytes `PagedAdamW8bit`.
        PagedAdamW8bit = "paged_adamw_8bit", "paged AdamW 8-bit (bitsandbytes)",
    }
}

choice_enum! {
    /// Gradient checkpointing (`gradient_checkpointing_enable()`).
    pub enum Ckpt {
        Off = "false", "off",
        /// Each layer's input kept; the layer recomputed in backward: the
        /// release's default (non-reentrant in transformers 5, reentrant in
        /// 4.x; [`Training::ckpt`] resolves it). Once resolved, `On` is
        /// non-reentrant.
        On = "true", "on (the release's default)",
        /// Non-reentrant whatever the release (`use_reentrant=False`).
        NonReentrant = "non_reentrant", "on, non-reentrant",
        /// The reentrant implementation (`use_reentrant=True`), which
        /// `prepare_model_for_kbit_training` selects unless told otherwise:
        /// its forward runs without grad, and the recomputed layer's output
        /// lives through the layer's backward.
        Reentrant = "reentrant", "on, reentrant",
        /// As `On`, with the kept inputs in host memory
        /// (`torch.autograd.graph.save_on_cpu`; Unsloth's and Axolotl's
        /// offloaded checkpointing).
        Offload = "offload", "on, layer inputs in host memory",
    }
}

impl Ckpt {
    pub fn on(self) -> bool {
        match self {
            Ckpt::Off => false,
            Ckpt::On | Ckpt::NonReentrant | Ckpt::Reentrant | Ckpt::Offload => true,
        }
    }
}

choice_enum! {
    /// What ZeRO (DeepSpeed) or FSDP keeps in host memory.
    pub enum Offload {
        None = "none", "nothing",
        /// ZeRO-Offload / FSDP CPU offload of the optimizer: fp32 master
        /// weights, gradients and state in host memory, the step on the CPU.
        Optimizer = "optimizer", "optimizer state and master weights",
        /// ZeRO-3 `offload_param` too: parameters in host memory, gathered
        /// layer by layer.
        Params = "params", "parameters and optimizer",
    }
}

choice_enum! {
    /// Frozen base weights quantized by bitsandbytes (transformers'
    /// `BitsAndBytesConfig`).
    pub enum Quant {
        None = "none", "none",
        /// 4-bit NormalFloat, blocks of 64 (QLoRA).
        Nf4 = "nf4", "4-bit NormalFloat (QLoRA)",
        /// 4-bit float, blocks of 64.
        Fp4 = "fp4", "4-bit float",
        /// LLM.int8(): int8 weights with one fp32 scale per row.
        Int8 = "int8", "8-bit (LLM.int8)",
    }
}

choice_enum! {
    /// Which library shards the model over the GPUs, with `zero` saying
    /// what is sharded.
    pub enum Shard {
        /// ZeRO's stages as the paper describes them (no particular
        /// library): stage 3 gathers the largest module with its gradient.
        Generic = "generic", "ZeRO stages (no particular library)",
        /// PyTorch's FSDP1 (`FullyShardedDataParallel`) as accelerate's
        /// FSDP plugin and the Trainer set it up: full sharding (zero=3),
        /// flat parameters per unit, the root unsharded through forward and
        /// backward, one decoder layer at a time in forward and two in
        /// backward (prefetch).
        Fsdp1 = "fsdp1", "FSDP1 (accelerate's FSDP plugin)",
        /// PyTorch's FSDP2 (`fully_shard`) as accelerate 1.15's
        /// `fsdp_version: 2` sets it up (transformers 5): the decoder layers
        /// as FSDP1 gathers them, the embedding and the tail (final norm
        /// and head) as units of their own, and the all-gather and
        /// reduce-scatter buffers FSDP2 keeps beside them.
        Fsdp2 = "fsdp2", "FSDP2 (fully_shard, accelerate's fsdp_version 2)",
        /// DeepSpeed 0.19's ZeRO-3 as accelerate and the Trainer set it up
        /// (bf16: fp32 master partitions): its partitions and reduce bucket
        /// from `deepspeed.initialize`, and from the second step the
        /// parameters its prefetcher keeps gathered (`breakdown/deepspeed.rs`).
        Deepspeed = "deepspeed", "DeepSpeed ZeRO-3 (0.19)",
    }
}

choice_enum! {
    /// The order a pipeline rank runs its micro-batches' forwards and
    /// backwards in (torch 2.15 `torch/distributed/pipelining/schedules.py`).
    pub enum PpSchedule {
        /// 1F1B (`Schedule1F1B`, torchtitan's default): rank r runs
        /// min(m, pp − r) forwards, then one backward and one forward in
        /// turn, then the remaining backwards.
        OneFOneB = "1f1b", "1F1B (one forward, one backward)",
        /// GPipe (`ScheduleGPipe`): every micro-batch's forward, then every
        /// backward.
        Gpipe = "gpipe", "GPipe (all forwards, then all backwards)",
        /// Interleaved 1F1B (`ScheduleInterleaved1F1B`, Megatron's virtual
        /// pipeline): `vpp` stages per rank, rank r holding stages r,
        /// r + pp, …; warm-up forwards, then a forward and a backward in
        /// turn, each on the stage the round says.
        Interleaved = "interleaved_1f1b", "Interleaved 1F1B (several stages a rank)",
    }
}

choice_enum! {
    /// How the decoder layers are cut into a pipeline's `pp × vpp` stages
    /// ([`crate::train::pipeline::split`]).
    pub enum PpSplit {
        /// transformers 5.23's `layer_range_for_rank`: layers ÷ stages each,
        /// the last stage the remainder.
        Transformers = "transformers", "layers ÷ stages each (transformers)",
        /// torchtitan's `generate_llm_fqn_per_model_part`: the embedding
        /// and the head count as layers ([`EndWeights`]: 1 each by
        /// default), so the first and last stages take that many fewer.
        Torchtitan = "torchtitan", "the ends counted as layers (torchtitan)",
    }
}

choice_enum! {
    /// Where DeepSpeed's ZeRO-3 bucket sizes come from.
    pub enum DsBuckets {
        /// DeepSpeed's own defaults, as `accelerate config` leaves them:
        /// `reduce_bucket_size` 5e8, `stage3_param_persistence_threshold` 1e5.
        Default = "default", "DeepSpeed's defaults (accelerate config)",
        /// transformers' fill-ins for `"auto"` in a ds_config.json
        /// (`integrations/deepspeed.py`): reduce bucket h², persistence
        /// threshold 10·h.
        Auto = "auto", "transformers' \"auto\" (a Trainer ds_config.json)",
    }
}

/// `stage3_max_live_parameters`' default: DeepSpeed's prefetcher gathers
/// ahead until this many elements are gathered (DeepSpeed `config.py`);
/// a model larger than this is never whole on a GPU under ZeRO-3.
pub const DS_MAX_LIVE: u128 = 1_000_000_000;

impl Shard {
    /// The library's short name, for messages.
    pub const fn short(self) -> &'static str {
        match self {
            Shard::Generic => "ZeRO",
            Shard::Fsdp1 => "FSDP1",
            Shard::Fsdp2 => "FSDP2",
            Shard::Deepspeed => "DeepSpeed",
        }
    }

    /// Whether PyTorch's FSDP (either version) gathers the units.
    pub const fn fsdp(self) -> bool {
        match self {
            Shard::Fsdp1 | Shard::Fsdp2 => true,
            Shard::Generic | Shard::Deepspeed => false,
        }
    }
}

bounded!(
    /// Tokens per sequence.
    SeqLen(u32),
    1,
    4_194_304
);
bounded!(
    /// Micro-batches whose gradients are summed before one optimizer step.
    GradAccum(u32),
    1,
    4096
);
bounded!(
    /// GPUs in all: data parallelism runs over `gpus / tp`.
    Gpus(u32),
    1,
    65_536
);
bounded!(
    /// Tensor-parallel GPUs: each layer's projections split over `tp`
    /// GPUs, as transformers 5.23's `DistributedConfig(tp_size)` applies
    /// the family's `base_model_tp_plan`.
    TpGroup(u32),
    1,
    1024
);
bounded!(
    /// Pipeline stages: the decoder layers cut into `pp` contiguous
    /// stages, one per GPU, as torch's `torch.distributed.pipelining`
    /// runs them (torchtitan's `pipeline_llm`).
    PpStages(u32),
    1,
    256
);
bounded!(
    /// Pipeline stages per rank (`vpp`, virtual stages) under interleaved
    /// 1F1B: `pp × vpp` stages of `layers / (pp × vpp)` layers.
    VirtualStages(u32),
    1,
    64
);
bounded!(
    /// Layers one end of the model counts as under torchtitan's cut
    /// (`pipeline_parallel_first_stage_less_layers`,
    /// `pipeline_parallel_last_stage_less_layers`; 1 by default).
    EndWeight(u32),
    0,
    64
);
bounded!(
    /// Micro-batches a pipeline's step runs: the batch is split into
    /// `micro_batches` of `batch / micro_batches` sequences each.
    MicroBatches(u32),
    1,
    4096
);
bounded!(
    /// ZeRO stage: 0 none (DDP), 1 optimizer state, 2 + gradients,
    /// 3 + parameters (FSDP FULL_SHARD).
    ZeroStage(u8),
    0,
    3
);
bounded!(@define
    /// A dropout probability in ten-thousandths (1000 = 0.1).
    Prob(u16),
    0,
    9999,
);

impl Serialize for Prob {
    /// As the probability itself (0.1), not ten-thousandths.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(f64::from(self.0) / 10_000.0)
    }
}

/// What the training loop does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Training {
    pub dtype: Dtype,
    pub optim: Optimizer,
    pub batch: Batch,
    pub seq: SeqLen,
    pub grad_accum: GradAccum,
    /// `model.gradient_checkpointing_enable()` (non-reentrant).
    pub grad_ckpt: Ckpt,
    pub attn: Attn,
    /// LoRA's rank (fp32 adapters, as peft keeps them over a half base);
    /// `None` is full fine-tuning.
    pub lora_r: Option<LoraRank>,
    /// The projections LoRA adapts (peft's `target_modules`); all of them
    /// by default ("all-linear": every linear layer but the head).
    pub lora_targets: Targets,
    /// peft's `lora_dropout` before `lora_A` (0: none).
    pub lora_dropout: Prob,
    /// peft's `use_dora`: weight-decomposed LoRA.
    pub dora: bool,
    /// The frozen base's weights quantized (QLoRA and kin).
    pub quant: Quant,
    /// bitsandbytes' nested quantization of the 4-bit scales
    /// (`bnb_4bit_use_double_quant`).
    pub double_quant: bool,
    /// `bnb_4bit_compute_dtype` is fp32 (`BitsAndBytesConfig`'s default)
    /// rather than bf16 (what QLoRA recipes set).
    pub compute_fp32: bool,
    /// peft's `prepare_model_for_kbit_training` (TRL's SFTTrainer calls it
    /// for a quantized model): unquantized weights upcast to fp32.
    pub kbit_prep: bool,
    /// The output object (and its logits) is kept alive through backward.
    pub keep_outputs: bool,
    /// A mixture-of-experts model computes its load-balancing loss
    /// (`output_router_logits`): every MoE layer's router logits are kept.
    pub aux_loss: bool,
    /// Dropout probability replacing the model's own; `None` keeps the model's.
    pub dropout: Option<Prob>,
    /// CUDA kernels (1-byte dropout masks, SDPA keeps its fused path with
    /// dropout); `false` models PyTorch's CPU kernels.
    pub cuda_like: bool,
    /// The model's `use_cache` (config.json's; the Trainer leaves it on):
    /// GPTBigCode keeps caches with it (see [`crate::model::family::Spec`]).
    pub use_cache: bool,
    /// The transformers release the model runs on.
    pub transformers: Transformers,
    /// The training loop.
    pub trainer: Trainer,
}

/// How the GPUs split the work: tensor parallelism inside each layer, data
/// parallelism (with ZeRO or FSDP sharding) over what is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Parallel {
    pub gpus: Gpus,
    /// Tensor parallelism (1: none).
    pub tp: TpGroup,
    /// Pipeline parallelism (1: none), its schedule and its micro-batches.
    pub pp: PpStages,
    pub pp_schedule: PpSchedule,
    pub vpp: VirtualStages,
    pub pp_split: PpSplit,
    /// What the embedding and the head count as under torchtitan's cut.
    pub pp_first_less: EndWeight,
    pub pp_last_less: EndWeight,
    pub micro_batches: MicroBatches,
    pub zero: ZeroStage,
    /// What ZeRO / FSDP keeps in host memory.
    pub offload: Offload,
    /// Which library shards.
    pub shard: Shard,
    /// FSDP1's `backward_prefetch=BACKWARD_PRE` (accelerate's default
    /// answer) rather than none.
    pub backward_prefetch: bool,
    /// DeepSpeed's bucket sizes (`shard=deepspeed`).
    pub ds_buckets: DsBuckets,
}

/// What LoRA adapts: see [`Targets`] (peft's "all-linear" is every
/// projection; the output head is never one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lora {
    pub r: u64,
    pub targets: Targets,
    /// DoRA: a trainable magnitude per output row of each adapted layer.
    pub dora: bool,
}

impl Lora {
    /// Whether module `m` gets an adapter.
    pub fn adapts(&self, m: Module) -> bool {
        self.targets.adapts(m)
    }
}

/// What a training estimate reads, as the scenario hands it over
/// (`Scenario::train_run`): the model's architecture (none for a parameter
/// count alone), its parameters, the run, the memory beside its tensors and
/// the page's view (the GPU held to, the steps chart's settings, a dataset
/// kept on the GPU).
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    pub arch: Option<&'a Architecture>,
    /// A parameter count given alone, without an architecture (0 for
    /// neither): [`Run::params`] reads it.
    pub params_given: u128,
    pub train: &'a Training,
    pub parallel: &'a Parallel,
    pub overhead: &'a Overhead,
    pub view: &'a View,
    /// The pipeline stage a breakdown sizes (`None`: no pipeline, or the
    /// estimate of every rank, [`super::estimate`], which sets it for each
    /// rank's stages).
    pub stage: Option<&'a Stage>,
}

impl Run<'_> {
    /// Total parameter count N (LoRA adapters not included): the
    /// architecture's (a walk over its tensors, made only where it is read:
    /// the seed formula), else the count given.
    pub fn params(&self) -> u128 {
        self.arch.map_or(self.params_given, Architecture::params)
    }
}

impl Training {
    /// What the transformers release does.
    pub fn stack(&self) -> super::stack::StackSpec {
        self.transformers.spec()
    }

    /// The checkpointing that runs: `true` is the release's default
    /// (reentrant in 4.x, non-reentrant from 5.0).
    pub fn ckpt(&self) -> Ckpt {
        match self.grad_ckpt {
            Ckpt::On if self.stack().default_reentrant => Ckpt::Reentrant,
            Ckpt::NonReentrant => Ckpt::On,
            other => other,
        }
    }

    /// TRL puts the embeddings and the head back in bf16 after k-bit
    /// preparation ([`super::stack::Trainer::recasts_embeddings`]): a
    /// prepared quantized base trained under bf16 autocast.
    pub fn recasts_embeddings(&self) -> bool {
        let bf16 = matches!(self.dtype, Dtype::AmpBf16 | Dtype::Bf16Autocast);
        self.trainer.recasts_embeddings() && self.quant != Quant::None && self.kbit_prep && bf16
    }

    /// How the release holds a mixture of experts' routed experts:
    /// transformers 4's per-expert `nn.Linear`s (the tensor walk keeps a
    /// family's experts stacked where its 4.x layout is not described,
    /// [`crate::model::family::Legacy::expert_linears`]), transformers 5's
    /// stacked 3-D parameters.
    pub fn expert_layout(&self) -> ExpertLayout {
        if self.stack().experts_linear {
            ExpertLayout::Linears
        } else {
            ExpertLayout::Stacked
        }
    }

    /// The adapters this run trains, if any.
    pub fn lora(&self) -> Option<Lora> {
        self.lora_r.map(|r| Lora {
            r: u64::from(r.get()),
            targets: self.lora_targets,
            dora: self.dora,
        })
    }
}

impl Default for Training {
    fn default() -> Self {
        Training {
            dtype: Dtype::Bf16,
            optim: Optimizer::AdamW,
            batch: Batch::TRAIN_DEFAULT,
            seq: SeqLen(2048),
            grad_accum: GradAccum(1),
            grad_ckpt: Ckpt::Off,
            attn: Attn::Sdpa,
            lora_r: None,
            lora_targets: Targets::ALL,
            lora_dropout: Prob(0),
            dora: false,
            quant: Quant::None,
            double_quant: false,
            compute_fp32: false,
            kbit_prep: true,
            keep_outputs: false,
            aux_loss: false,
            dropout: None,
            cuda_like: true,
            use_cache: true,
            transformers: Transformers::V5,
            trainer: Trainer::Hf,
        }
    }
}

impl Parallel {
    /// The pipeline, as `crate::train::pipeline` reads it.
    pub fn pipeline(&self) -> Plan {
        Plan {
            pp: self.pp.get(),
            vpp: self.vpp.get(),
            schedule: self.pp_schedule,
            micro_batches: self.micro_batches.get(),
            split: self.pp_split,
            ends: EndWeights {
                first: self.pp_first_less.get(),
                last: self.pp_last_less.get(),
            },
        }
    }

    /// The data-parallel ranks: the GPUs over the tensor-parallel group
    /// and the pipeline (the codec holds `gpus` a multiple of `tp × pp`).
    pub fn data_ranks(&self) -> u32 {
        (self.gpus.get() / self.tp.get() / self.pp.get()).max(1)
    }
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel {
            gpus: Gpus(1),
            tp: TpGroup(1),
            pp: PpStages(1),
            pp_schedule: PpSchedule::OneFOneB,
            pp_split: PpSplit::Transformers,
            pp_first_less: EndWeight(1),
            pp_last_less: EndWeight(1),
            vpp: VirtualStages(1),
            micro_batches: MicroBatches(1),
            zero: ZeroStage(0),
            offload: Offload::None,
            shard: Shard::Generic,
            backward_prefetch: true,
            ds_buckets: DsBuckets::Default,
        }
    }
}

/// What is alive beside a forward's or a backward's own tensors: other
/// micro-batches' saved activations, and on the last stage the outputs
/// kept and the inputs of the micro-batches already through backward.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Beside {
    /// Micro-batches whose activations wait for their backward.
    pub waiting: u32,
    /// Outputs the last stage keeps (`output_chunks`).
    pub kept: u32,
    /// Micro-batches through backward whose received inputs the last
    /// stage still holds: each kept output's autograd graph ends at the
    /// stage's input, a leaf its `AccumulateGrad` node holds, so the input
    /// lives as long as the output (measured: `raw/pp523.jsonl`, the last
    /// ranks keep one hidden state per micro-batch until the next step,
    /// the middle ranks, whose outputs go, none).
    pub done: u32,
    /// Under interleaved 1F1B, the rank's stages of the other kind (the
    /// first or the last stage beside plain ones): their micro-batches
    /// waiting for their backward.
    pub others: u32,
    /// The rank's other stages whose gradients exist (each stage's are
    /// made by its first backward): of the kind of the moment's own stage,
    /// and of the other kind.
    pub grads_alike: u32,
    pub grads_other: u32,
}

/// The kinds of moment a rank's schedule has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A forward before any backward of the step: no gradients yet.
    Forward,
    /// A forward after a backward: the gradients exist.
    ForwardGrads,
    /// The step's first backward, which makes the gradients.
    BackwardFirst,
    /// A later backward: the gradients exist and accumulate.
    Backward,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Forward,
        Kind::ForwardGrads,
        Kind::BackwardFirst,
        Kind::Backward,
    ];

    /// Its place in [`Kind::ALL`].
    pub fn index(self) -> usize {
        match self {
            Kind::Forward => 0,
            Kind::ForwardGrads => 1,
            Kind::BackwardFirst => 2,
            Kind::Backward => 3,
        }
    }
}

/// One pipeline rank's stage of the model and the moments of its
/// schedule that run it. Under interleaved 1F1B a rank holds `vpp` stages,
/// of at most two kinds (plain ones, and the first or the last stage of
/// the model): one `Stage` per kind, each with the moments that run a
/// stage of that kind, and [`Stage::rank_layers`] what the rank holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    pub rank: u32,
    /// Its decoder layers.
    pub layers: u32,
    /// It holds the embedding (the model's first stage) / the final norm,
    /// head and loss (the last).
    pub first: bool,
    pub last: bool,
    /// Stages of this kind on the rank, and of the other kind (0: none).
    pub alike: u32,
    pub other: u32,
    /// The decoder layers of every stage the rank holds.
    pub rank_layers: u32,
    /// The other kind's sizes (zero: no other kind, or not sized yet).
    pub other_sizes: Sizes,
    /// Micro-batches per step, and sequences in each.
    pub micro_batches: u32,
    pub micro_batch: u32,
    /// Every moment of its schedule, in order.
    pub moments: Vec<(Kind, Beside)>,
}

/// What a breakdown reads of its stage (`breakdown::breakdown`): its
/// layers, which ends of the model it holds, the micro-batches and their
/// sequences. The rank, the schedule's moments and the other kind's sizes
/// are read by `breakdown::beside` alone, which sets them again on a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageShape {
    layers: u32,
    first: bool,
    last: bool,
    micro_batches: u32,
    micro_batch: u32,
}

impl Stage {
    /// What its breakdown is built from ([`StageShape`]).
    pub fn shape(&self) -> StageShape {
        StageShape {
            layers: self.layers,
            first: self.first,
            last: self.last,
            micro_batches: self.micro_batches,
            micro_batch: self.micro_batch,
        }
    }

    /// Whether its schedule has a moment of `kind`.
    pub fn has(&self, kind: Kind) -> bool {
        self.moments.iter().any(|(k, _)| *k == kind)
    }
}

/// What one stage of a kind holds, from its breakdown: what one
/// micro-batch's forward leaves for its backward, and its gradients.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    pub saved: u128,
    pub grads: u128,
}

/// What the model's ends count as under torchtitan's cut, in layers: the
/// embedding on the first stage (`pipeline_parallel_first_stage_less_layers`,
/// its `input_weight`) and norm and output on the last
/// (`pipeline_parallel_last_stage_less_layers`, `output_weight`); 1 each
/// by default (torchtitan v0.2.2 `config/job_config.py`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndWeights {
    pub first: u32,
    pub last: u32,
}

impl EndWeights {
    /// torchtitan's defaults.
    pub const DEFAULT: EndWeights = EndWeights { first: 1, last: 1 };

    /// Why torchtitan refuses to cut `layers` into `stages` with these
    /// weights, in its words (`generate_llm_fqn_per_model_part`'s checks),
    /// or a stage its cut would leave without a decoder layer (vramfit does
    /// not model one). `None`: the cut runs. Where torchtitan accepts, the
    /// stages take every layer between them, the first `per + (extra > 0)
    /// − first` and the last `per − last`
    /// ([`crate::train::pipeline::split`]; a test holds the two together).
    pub fn torchtitan_refusal(self, layers: u32, stages: u32) -> Option<String> {
        if stages <= 1 {
            return None;
        }
        let eff = layers.saturating_add(self.first).saturating_add(self.last);
        if stages > eff {
            return Some(format!(
                "torchtitan refuses the cut: number of stages ({stages}) cannot be greater than effective layers ({eff}: {layers} layers + the embedding's {} + the head's {})",
                self.first, self.last
            ));
        }
        let (per, extra) = (eff / stages, eff % stages);
        for (what, key, w) in [
            ("input_weight", "pp_first_less", self.first),
            ("output_weight", "pp_last_less", self.last),
        ] {
            if w > per {
                return Some(format!(
                    "torchtitan refuses the cut: {what} ({w}, {key}) exceeds minimum layers per stage ({per})"
                ));
            }
        }
        let first = per + u32::from(extra > 0) - self.first;
        let last = per - self.last;
        (first == 0 || last == 0).then(|| {
            format!(
                "torchtitan's cut of {layers} layers into {stages} stages leaves a stage without a decoder layer: not modelled"
            )
        })
    }
}

/// A pipeline as the run sets it up (`crate::train::run::Parallel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub pp: u32,
    /// Stages per rank (1 but under interleaved 1F1B).
    pub vpp: u32,
    pub schedule: PpSchedule,
    pub micro_batches: u32,
    pub split: PpSplit,
    /// torchtitan's end weights (read under its cut only).
    pub ends: EndWeights,
}
