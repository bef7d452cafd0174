//! The validated description of a workload on a model, and how the page
//! shows it. Every value here has passed the codec's checks: the estimators
//! take it without re-validating.
//!
//! Shared at the top: holds each workload's validated inputs (the
//! training run: `crate::train::run`) beside the model and the view;
//! imports the model's presets, the GPU list and the codec's field errors.

use crate::choice::{bounded, choice_enum};
use crate::gpus::{self, Gpu};
pub use crate::infer::run::Inference;
use crate::model::presets::{self, Preset};
pub use crate::model::ArchOverrides;
use crate::model::Architecture;
pub use crate::train::run::{
    Attn, Batch, Ckpt, DsBuckets, Dtype, Gpus, GradAccum, LoraRank, Offload, Optimizer, Parallel,
    Prob, Quant, SeqLen, Shard, Trainer, Training, Transformers, ZeroStage,
};
use crate::units::{Bytes, DisplayUnit};
use serde::Serialize;

bounded!(
    /// Total parameter count N: from a thousand to 100 trillion.
    ParamCount(u64),
    1_000,
    100_000_000_000_000
);

choice_enum! {
    /// What is done with the model.
    pub enum Task {
        /// Training or fine-tuning it (`crate::train`).
        Train = "train", "train or fine-tune",
        /// Running it: generating text (`crate::infer`).
        Infer = "infer", "run (inference)",
    }
}

// `choice_enum!` writes the derives; training is what a link without
// `task` has always meant.
#[allow(clippy::derivable_impls)]
impl Default for Task {
    fn default() -> Self {
        Task::Train
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

    /// Whether the chosen GPU is an Apple one, whose memory is unified
    /// with the host's (the local runners' rules differ there).
    pub fn is_apple(&self) -> bool {
        self.gpu().is_some_and(|g| g.kind == gpus::GpuKind::Apple)
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

/// One workload on one model, and how the page shows it: a training run
/// (`train`, `parallel`) or an inference run (`infer`), as `task` says; the
/// other workload's inputs stay at their defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Scenario {
    pub task: Task,
    pub model: ModelSpec,
    /// The resolved, validated architecture (`None` for a parameter count
    /// alone). Derived from `model`; the codec keeps them in step.
    pub arch: Option<Architecture>,
    pub train: Training,
    pub parallel: Parallel,
    pub infer: Inference,
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
            task: Task::Train,
            model: ModelSpec::Preset {
                id: p.id,
                overrides: ArchOverrides::default(),
                like_llama: None,
                hub: None,
            },
            arch: Some(p.arch),
            train: Training::default(),
            parallel: Parallel::default(),
            infer: Inference::default(),
            overhead: Overhead::default(),
            view: View::default(),
        }
    }
}
