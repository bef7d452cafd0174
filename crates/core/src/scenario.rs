//! The validated description of a training run. Every value here has passed
//! the codec's checks: the estimators take it without re-validating.

pub use crate::arch::ArchOverrides;
use crate::arch::{Architecture, Targets};
use crate::choice::choice_enum;
use crate::gpus::{self, Gpu};
use crate::presets::{self, Preset};
use crate::units::{Bytes, DisplayUnit};
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
    }
}

impl Dtype {
    /// Bytes per stored parameter.
    pub fn param_bytes(self) -> u64 {
        match self {
            Dtype::Fp32 | Dtype::AmpBf16 | Dtype::AmpFp16 => 4,
            Dtype::Bf16 | Dtype::Fp16 | Dtype::MixedBf16 => 2,
        }
    }

    /// Under `torch.autocast`.
    pub fn autocast(self) -> bool {
        matches!(self, Dtype::AmpBf16 | Dtype::AmpFp16)
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

impl Optimizer {
    /// bitsandbytes' paged optimizers keep their state in CUDA unified
    /// memory: on the GPU until it runs short, then paged to host memory.
    pub fn paged(self) -> bool {
        match self {
            Optimizer::PagedAdamW | Optimizer::PagedAdamW8bit => true,
            Optimizer::AdamW
            | Optimizer::AdamWForLoop
            | Optimizer::AdamWFused
            | Optimizer::AdamW8bit
            | Optimizer::Lion
            | Optimizer::Adafactor
            | Optimizer::SgdMomentum
            | Optimizer::Sgd => false,
        }
    }
}

choice_enum! {
    /// Gradient checkpointing (`gradient_checkpointing_enable()`,
    /// non-reentrant).
    pub enum Ckpt {
        Off = "false", "off",
        /// Each layer's input kept; the layer recomputed in backward
        /// (non-reentrant: the HF Trainer's default).
        On = "true", "on",
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
            Ckpt::On | Ckpt::Reentrant | Ckpt::Offload => true,
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
    /// The attention implementation (`attn_implementation`).
    pub enum Attn {
        /// `torch.nn.functional.scaled_dot_product_attention` (flash or
        /// memory-efficient kernel): saves the output and an fp32 logsumexp.
        Sdpa = "sdpa", "SDPA (flash / memory-efficient)",
        /// Plain matmul + softmax: materialises batch × heads × seq² scores.
        Eager = "eager", "eager (materialised scores)",
    }
}

/// Declares a whole-number newtype with inclusive bounds checked by `new`.
macro_rules! bounded {
    ($(#[$meta:meta])* $name:ident($inner:ty), $min:expr, $max:expr) => {
        bounded!(@define $(#[$meta])* $name($inner), $min, $max, #[derive(Serialize)] #[serde(transparent)]);
    };
    (@define $(#[$meta:meta])* $name:ident($inner:ty), $min:expr, $max:expr, $(#[$extra:meta])*) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $(#[$extra])*
        pub struct $name($inner);

        impl $name {
            pub const MIN: $inner = $min;
            pub const MAX: $inner = $max;

            /// `None` outside `MIN..=MAX`.
            pub fn new(v: $inner) -> Option<Self> {
                (Self::MIN..=Self::MAX).contains(&v).then_some($name(v))
            }

            pub fn get(self) -> $inner {
                self.0
            }
        }
    };
}

bounded!(
    /// Total parameter count N: from a thousand to 100 trillion.
    ParamCount(u64),
    1_000,
    100_000_000_000_000
);
bounded!(
    /// Sequences per micro-batch, per GPU.
    Batch(u32),
    1,
    65_536
);
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
    /// LoRA rank r.
    LoraRank(u32),
    1,
    4096
);
bounded!(
    /// Data-parallel GPUs.
    Gpus(u32),
    1,
    65_536
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

/// Which model: a preset (possibly modified) or only a parameter count.
// The scenario stays `Copy` (it is rebuilt on every keystroke and copied by
// the solver); 64 characters of text (256 bytes) are its largest part.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelSpec {
    /// A preset with some architecture fields replaced.
    Preset {
        id: &'static str,
        overrides: ArchOverrides,
        /// A config.json's model_type read as Llama-like by choice.
        #[serde(skip_serializing_if = "Option::is_none")]
        like_llama: Option<ShortText>,
        /// The Hugging Face model id whose config.json set the architecture
        /// (the page loads it again when the link is opened).
        #[serde(skip_serializing_if = "Option::is_none")]
        hub: Option<HubId>,
    },
    /// Only N: the seed formula alone (the accurate method needs a shape).
    ParamsOnly { params: ParamCount },
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
}

/// Data parallelism.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Parallel {
    pub gpus: Gpus,
    pub zero: ZeroStage,
    /// What ZeRO / FSDP keeps in host memory.
    pub offload: Offload,
}

/// Memory that is not tensors, kept apart from allocated bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Overhead {
    /// CUDA context and kernels loaded at start-up, in MiB.
    pub cuda_ctx_mib: u32,
    /// Caching-allocator reserve and fragmentation, % of allocated bytes.
    pub reserve_pct: u8,
}

bounded!(
    /// Training steps the over-iterations chart shows.
    Iters(u32),
    1,
    1000
);

/// Short text that stays `Copy` (a probed adapter's name, a model type):
/// at most [`ShortText::MAX`] characters, none of them control characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShortText {
    bytes: [u8; ShortText::MAX_BYTES],
    len: u16,
}

impl ShortText {
    /// Most characters kept.
    pub const MAX: usize = 64;
    const MAX_BYTES: usize = 4 * ShortText::MAX;

    /// The empty text.
    pub const EMPTY: ShortText = ShortText {
        bytes: [0; ShortText::MAX_BYTES],
        len: 0,
    };

    /// `s` itself, or why it cannot be one: longer than [`ShortText::MAX`]
    /// characters, or with control characters. Nothing is cut or dropped.
    pub fn new(s: &str) -> Result<Self, crate::query::FieldError> {
        if s.chars().count() > Self::MAX {
            return Err(crate::query::FieldError::TooLong);
        }
        if s.chars().any(char::is_control) {
            return Err(crate::query::FieldError::ControlCharacters);
        }
        let mut out = ShortText::EMPTY;
        // At most 64 characters of at most 4 bytes each: always fits.
        out.bytes[..s.len()].copy_from_slice(s.as_bytes());
        out.len = s.len() as u16;
        Ok(out)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl std::fmt::Debug for ShortText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for ShortText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A Hugging Face model id, `owner/name`, as the Hub accepts it: letters,
/// digits, `-`, `_` and `.`; neither part starts or ends with `-` or `.`,
/// nor holds `--` or `..`; each part at most 96 characters.
/// Source: huggingface_hub `validate_repo_id` (REPO_ID_REGEX).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HubId {
    bytes: [u8; HubId::MAX_BYTES],
    len: u8,
}

impl HubId {
    /// Most characters in one part (owner or name).
    pub const MAX_PART: usize = 96;
    const MAX_BYTES: usize = 2 * HubId::MAX_PART + 1;

    pub fn new(s: &str) -> Result<Self, crate::query::FieldError> {
        let bad = crate::query::FieldError::NotAHubId;
        let (owner, name) = s.split_once('/').ok_or(bad.clone())?;
        let part_ok = |p: &str| {
            !p.is_empty()
                && p.len() <= Self::MAX_PART
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
                && !p.starts_with(['-', '.'])
                && !p.ends_with(['-', '.'])
                && !p.contains("--")
                && !p.contains("..")
        };
        if !part_ok(owner) || !part_ok(name) {
            return Err(bad);
        }
        let mut out = HubId {
            bytes: [0; HubId::MAX_BYTES],
            len: 0,
        };
        // Two parts of at most 96 ASCII bytes and a slash: always fits.
        out.bytes[..s.len()].copy_from_slice(s.as_bytes());
        out.len = s.len() as u8;
        Ok(out)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }

    /// Where the Hub serves the model's config.json.
    pub fn config_url(&self, base: &str) -> String {
        format!(
            "{}/{}/resolve/main/config.json",
            base.trim_end_matches('/'),
            self.as_str()
        )
    }
}

impl std::fmt::Debug for HubId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for HubId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the fit verdict compares the estimate with.
// Copy like the rest of the scenario: see `ModelSpec`.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Capacity {
    /// A GPU from the list (its usable memory).
    Gpu { id: &'static str },
    /// A size typed by the user.
    Typed { bytes: Bytes },
    /// What the in-page probe could allocate: a measured lower bound.
    Probed { bytes: Bytes, adapter: ShortText },
}

impl Capacity {
    /// Bytes available for training.
    pub fn bytes(&self) -> Bytes {
        match self {
            Capacity::Gpu { id } => gpus::gpu(id).map_or(Bytes::ZERO, |g| g.usable),
            Capacity::Typed { bytes } | Capacity::Probed { bytes, .. } => *bytes,
        }
    }

    /// The GPU, when one from the list is chosen.
    pub fn gpu(&self) -> Option<&'static Gpu> {
        match self {
            Capacity::Gpu { id } => gpus::gpu(id),
            _ => None,
        }
    }

    /// A short description, e.g. "NVIDIA GeForce RTX 4090 (24 GiB)".
    pub fn describe(&self, unit: DisplayUnit) -> String {
        match self {
            Capacity::Gpu { .. } => match self.gpu() {
                Some(g) if g.usable != g.memory => format!(
                    "{} ({} usable of {})",
                    g.name,
                    g.usable.display(unit),
                    g.memory.display(unit)
                ),
                Some(g) => format!("{} ({})", g.name, g.memory.display(unit)),
                None => "no GPU".into(),
            },
            Capacity::Typed { bytes } => format!("{} (typed)", bytes.display(unit)),
            Capacity::Probed { bytes, adapter } => format!(
                "{} measured on {} (a lower bound)",
                bytes.display(unit),
                if adapter.as_str().is_empty() {
                    "this browser's GPU"
                } else {
                    adapter.as_str()
                }
            ),
        }
    }
}

choice_enum! {
    /// Memory a training loop keeps from step to step by mistake (seeds 003, 004).
    pub enum Leak {
        /// Nothing is kept.
        None = "none", "none",
        /// The output object (its logits) is appended to a list every step.
        Logits = "logits", "the logits of every step are kept",
        /// A number of MiB per step, typed.
        Custom = "custom", "a custom amount per step",
    }
}

/// How the page shows the estimate: units, the GPU to fit on, and the
/// over-iterations chart. Estimators ignore it, except for the data kept
/// on the GPU (`dataset_mib`), which is real memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct View {
    pub unit: DisplayUnit,
    pub capacity: Capacity,
    pub iters: Iters,
    pub leak: Leak,
    /// MiB kept per step with `leak = custom`.
    pub leak_mib: u32,
    /// A dataset (or other tensors) placed on the GPU once, in MiB.
    pub dataset_mib: u32,
}

impl Default for View {
    fn default() -> Self {
        View {
            unit: DisplayUnit::Gib,
            capacity: Capacity::Gpu { id: "rtx-4090" },
            iters: Iters(12),
            leak: Leak::None,
            leak_mib: 0,
            dataset_mib: 0,
        }
    }
}

/// One training run, and how the page shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Scenario {
    pub model: ModelSpec,
    /// The resolved, validated architecture (`None` for a parameter count
    /// alone). Derived from `model`; the codec keeps them in step.
    pub arch: Option<Architecture>,
    pub train: Training,
    pub parallel: Parallel,
    pub overhead: Overhead,
    pub view: View,
}

impl Scenario {
    /// Total parameter count N (LoRA adapters not included).
    pub fn params(&self) -> u128 {
        match (&self.model, &self.arch) {
            (_, Some(a)) => a.params(),
            (ModelSpec::ParamsOnly { params }, None) => u128::from(params.get()),
            (ModelSpec::Preset { .. }, None) => 0,
        }
    }

    /// The preset the model starts from, if any.
    pub fn preset(&self) -> Option<&'static Preset> {
        match self.model {
            ModelSpec::Preset { id, .. } => presets::preset(id),
            ModelSpec::ParamsOnly { .. } => None,
        }
    }
}

impl Training {
    /// The adapters this run trains, if any.
    pub fn lora(&self) -> Option<crate::arch::Lora> {
        self.lora_r.map(|r| crate::arch::Lora {
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
            batch: Batch(8),
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
        }
    }
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel {
            gpus: Gpus(1),
            zero: ZeroStage(0),
            offload: Offload::None,
        }
    }
}

impl Default for Overhead {
    /// Assumed, not measured here: a CUDA 12 context with lazy module loading
    /// takes roughly 0.3–1 GiB; the caching allocator typically holds a few
    /// percent above the live bytes at the peak.
    fn default() -> Self {
        Overhead {
            cuda_ctx_mib: 512,
            reserve_pct: 5,
        }
    }
}

impl Default for Scenario {
    /// Qwen2.5-1.5B (the seed's example), bf16, AdamW, 8 × 2048 tokens.
    fn default() -> Self {
        let p = presets::default_preset();
        Scenario {
            model: ModelSpec::Preset {
                id: p.id,
                overrides: ArchOverrides::default(),
                like_llama: None,
                hub: None,
            },
            arch: Some(p.arch),
            train: Training::default(),
            parallel: Parallel::default(),
            overhead: Overhead::default(),
            view: View::default(),
        }
    }
}
