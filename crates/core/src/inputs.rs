//! What both workloads read beside their own inputs: the attention kernel
//! and the batch (training's micro-batch, inference's sequences), the
//! memory that is not tensors (`Overhead`), the GPU the estimate is held to
//! (`Capacity`) and how the page shows it (`View`, whose steps-chart
//! settings training reads). Imports only the GPU list, short text, units
//! and the choice macros.

use crate::choice::{bounded, choice_enum};
use crate::gpus::{self, Gpu};
use crate::text::ShortText;
use crate::units::{Bytes, DisplayUnit};
use serde::Serialize;

choice_enum! {
    /// The attention implementation (`attn_implementation`).
    pub enum Attn {
        /// `torch.nn.functional.scaled_dot_product_attention` (flash or
        /// memory-efficient kernel): saves the output and an fp32 logsumexp.
        Sdpa = "sdpa", "SDPA (flash / memory-efficient)",
        /// Plain matmul + softmax: materialises batch × heads × seq² scores.
        Eager = "eager", "eager (materialised scores)",
        /// flash-attn 2 (`attn_implementation="flash_attention_2"`): saves
        /// q, k and v as they are (grouped keys not repeated), its output
        /// and an fp32 logsumexp; never a mask.
        FlashAttention2 = "flash_attention_2", "FlashAttention-2 (flash-attn)",
    }
}

bounded!(
    /// Sequences per micro-batch, per GPU.
    Batch(u32),
    1,
    65_536
);
impl Batch {
    /// One sequence.
    pub const ONE: Batch = Batch(1);
    /// Training's default micro-batch (the page's first link).
    pub const TRAIN_DEFAULT: Batch = Batch(8);
}

/// Memory that is not tensors, kept apart from allocated bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Overhead {
    /// What the process holds on the GPU outside its allocator (the CUDA
    /// context and the kernels it loads), in MiB (`None`: the engine's
    /// default, [`crate::infer::engine::EngineSpec::context_mib`], which
    /// training shares with transformers).
    pub cuda_ctx_mib: Option<u32>,
    /// Caching-allocator reserve and fragmentation, % of allocated bytes
    /// (`None`: the measured default for the allocator's settings,
    /// [`Overhead::reserve`]).
    pub reserve_pct: Option<u8>,
    /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`: segments grow
    /// in place instead of new ones being cut (`CUDACachingAllocator.cpp`,
    /// `ExpandableSegment`).
    pub expandable_segments: bool,
}

impl Overhead {
    /// What a PyTorch process holds outside its caching allocator once a
    /// training step or `generate` has loaded its kernels, measured on an
    /// H200 (torch 2.11.0+cu130, driver 580.159, lazy module loading): the
    /// context is 527 MiB; with cuBLAS's, attention's and the optimizer's
    /// kernels it is 767 MiB after a training iteration (773 at most in
    /// later runs of the process), 745 to 793 MiB through `generate`
    /// (`scripts/measure/device/README.md`, section 2). Other GPUs and CUDA
    /// releases are not measured.
    pub const CONTEXT_TORCH: u32 = 767;
    /// What an NCCL communicator adds beside the allocator: one rank's
    /// process group on an H200 (NCCL 2.28.9, torch 2.11.0+cu130), 556 MiB,
    /// almost all of it NCCL's kernels ("Init timings ... kernels 0.33 s";
    /// `scripts/measure/device/README.md`, section 2). With more ranks,
    /// NCCL also allocates buffers per channel and peer: not measured, so
    /// this is a lower bound.
    pub const NCCL_COMMUNICATOR: u32 = 556;
    /// Engines no GPU has measured here (vLLM, llama.cpp, Ollama, MLX):
    /// assumed, between published contexts at start-up (254 and 426 MiB,
    /// `tests/fixtures/cuda_context.jsonl`) and a PyTorch process's.
    pub const CONTEXT_ASSUMED: u32 = 512;

    /// The context used: as given, else the engine's `default`.
    pub const fn context(&self, default: u32) -> u32 {
        match self.cuda_ctx_mib {
            Some(m) => m,
            None => default,
        }
    }

    /// The reserve with plain segments: near the median least capacity
    /// above the allocated peak, 4.1% (1.2 to 23%), of fourteen training
    /// traces replayed through the allocator's port
    /// (`scripts/measure/allocator/NOTES.md`), and 4.2% (1.8 to 22.5%) of
    /// ten recorded by the allocator itself on an H200
    /// (`scripts/measure/device/README.md`).
    pub const RESERVE_PLAIN: u8 = 5;
    /// The reserve with expandable segments: every replayed run (fourteen
    /// training traces, 0.2 to 1.9%; `generate` at batch 1 to 16, 0.1 to
    /// 1.3%) completed within 2% above its allocated peak.
    pub const RESERVE_EXPANDABLE: u8 = 2;

    /// The reserve used: as given, else the measured one for the
    /// allocator's settings.
    pub const fn reserve(&self) -> u8 {
        match self.reserve_pct {
            Some(p) => p,
            None if self.expandable_segments => Self::RESERVE_EXPANDABLE,
            None => Self::RESERVE_PLAIN,
        }
    }
}

bounded!(
    /// Training steps the over-iterations chart shows.
    Iters(u32),
    1,
    1000
);

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
