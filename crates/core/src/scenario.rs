//! The validated description of a workload on a model, and how the page
//! shows it. Every value here has passed the codec's checks: the estimators
//! take it without re-validating.
//!
//! Above the workloads: holds each workload's validated inputs
//! (`crate::train::run`, `crate::infer::run`, and what both read,
//! `crate::inputs`) beside the model, and hands each workload what it reads
//! of them. Imports the model, the workloads' inputs and short text; nothing
//! of the codec or the report.

use crate::choice::{bounded, choice_enum};
use crate::infer::run::Inference;
use crate::inputs::{Overhead, View};
use crate::model::presets::{self, Preset};
use crate::model::{ArchOverrides, Architecture};
use crate::text::{HubId, ShortText};
use crate::train::run::{Parallel, Training};
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
        /// The checkpoint also holds a vision or audio encoder: vramfit
        /// estimates its language model only (text only).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        multimodal: bool,
    },
    /// Only N: the seed formula alone (the accurate method needs a shape).
    ParamsOnly { params: ParamCount },
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
    /// What an inference estimate reads of this scenario.
    pub fn infer_run(&self) -> crate::infer::run::Run<'_> {
        crate::infer::run::Run {
            arch: self.arch.as_ref(),
            infer: &self.infer,
            overhead: &self.overhead,
            capacity: &self.view.capacity,
        }
    }

    /// What a training estimate reads of this scenario.
    pub fn train_run(&self) -> crate::train::run::Run<'_> {
        crate::train::run::Run {
            arch: self.arch.as_ref(),
            params_given: match self.model {
                ModelSpec::ParamsOnly { params } => u128::from(params.get()),
                ModelSpec::Preset { .. } => 0,
            },
            train: &self.train,
            parallel: &self.parallel,
            overhead: &self.overhead,
            view: &self.view,
            stage: None,
        }
    }

    /// The CUDA context when the link sets none: the engine's
    /// ([`crate::infer::engine::EngineSpec::context_mib`]); training runs
    /// PyTorch, as transformers does.
    pub fn context_default(&self) -> u32 {
        match self.task {
            Task::Train => Overhead::CONTEXT_TORCH,
            Task::Infer => self.infer.engine.spec().context_mib,
        }
    }

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
    /// The context is the engine's ([`Overhead::context`]). The reserve is
    /// near
    /// the median of what the caching allocator needs above the allocated
    /// peak to complete a training run: 4.1% (1.2 to 23%) over fourteen
    /// harness traces replayed through its port, plain segments
    /// (`scripts/measure/allocator/NOTES.md`); its high-water mark is 10%
    /// above in the median (2 to 42%).
    fn default() -> Self {
        Overhead {
            cuda_ctx_mib: None,
            reserve_pct: None,
            expandable_segments: false,
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
                multimodal: false,
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
