//! What an estimate says: memory per component, per phase of a workload
//! (a training step's phases, an inference request's), per iteration.
//! Shared by every workload and method so the page, the chart and the CLI
//! read one shape.
//!
//! Shared at the top: imports only `component`, `terms`, `units` and
//! `error`; knows no scenario, workload, model or codec.

use crate::component::{Component, Components};
use crate::terms::{TermSet, Terms};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Live bytes per allocated component at one moment, in `u128` so no sum
/// can wrap, before the one checked conversion into [`Components`]. Both
/// methods build their phases from it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    at: [u128; 10],
}

/// The allocated components in declaration order: [`Component::ALL`]
/// but its last, `Overhead`.
const ALLOC: [Component; 10] = {
    let mut out = [Component::Parameters; 10];
    let mut i = 0;
    while i < out.len() {
        out[i] = Component::ALL[i];
        i += 1;
    }
    out
};
const _: () = assert!(matches!(Component::ALL[10], Component::Overhead));

/// A component's place in a [`Tally`]: `ALLOC` follows the declaration
/// order of [`Component`], so it is the component's own index (Overhead,
/// last, is never tallied).
fn slot(c: Component) -> usize {
    c.index().min(ALLOC.len() - 1)
}

impl Tally {
    pub(crate) fn new() -> Self {
        Tally::default()
    }

    pub(crate) fn total(&self) -> u128 {
        self.at.iter().fold(0u128, |a, b| a.saturating_add(*b))
    }

    /// Adds `bytes` to `c` (Overhead is never tallied: it is given to
    /// [`Tally::components`]).
    pub(crate) fn add(&mut self, c: Component, bytes: u128) {
        let i = slot(c);
        self.at[i] = self.at[i].saturating_add(bytes);
    }

    /// The checked conversion: an error naming what drives the largest
    /// part, in the workload's words (`drivers`), when the moment (with
    /// `overhead`) does not fit in 64 bits.
    pub(crate) fn components(
        &self,
        overhead: u128,
        drivers: &Drivers,
    ) -> Result<Components, crate::error::EstimateError> {
        // When the sum fits in 64 bits every part does.
        if self.total().saturating_add(overhead) > u128::from(u64::MAX) {
            let i = (0..ALLOC.len()).max_by_key(|&i| self.at[i]).unwrap_or(0);
            return Err(crate::error::EstimateError::TooLarge {
                field: drivers.of(ALLOC[i]),
            });
        }
        let mut out = Components::default();
        for (i, c) in ALLOC.iter().enumerate() {
            out.set(*c, Bytes(self.at[i] as u64));
        }
        out.set(Component::Overhead, Bytes(overhead as u64));
        Ok(out)
    }
}

/// The inputs that drive the components that grow with a run's tokens, in
/// one workload's (or engine's) words: what an error names when a moment
/// passes 2^64 bytes. The other components grow with the model.
pub(crate) struct Drivers {
    pub activations: &'static str,
    pub logits: &'static str,
    pub kv_cache: &'static str,
}

impl Drivers {
    fn of(&self, c: Component) -> &'static str {
        match c {
            Component::Activations => self.activations,
            Component::Logits => self.logits,
            Component::KvCache => self.kv_cache,
            Component::Parameters
            | Component::OptimizerState
            | Component::Gradients
            | Component::OptimizerTemporaries
            | Component::WeightCopies
            | Component::Retained
            | Component::Engine
            | Component::Overhead => "the model size",
        }
    }
}

/// Live bytes per component of one set of terms.
pub(crate) fn tally(terms: &Terms, set: TermSet) -> Tally {
    *Running::new(terms).tally(set)
}

/// Live bytes per component of one set of terms after another, each
/// computed from the last by walking only the terms that differ:
/// consecutive moments of a step differ by a few terms, so the phases' hot
/// loop stays short. Exact: every term is at most 2^64 (`Terms::set`), so
/// the sums never saturate and what was added can be taken away.
pub(crate) struct Running<'a> {
    terms: &'a Terms,
    set: TermSet,
    tally: Tally,
    /// The tally's total, kept beside it (no part saturates, so it is
    /// [`Tally::total`]).
    sum: u128,
}

impl<'a> Running<'a> {
    pub(crate) fn new(terms: &'a Terms) -> Self {
        Running {
            terms,
            set: TermSet::EMPTY,
            tally: Tally::new(),
            sum: 0,
        }
    }

    /// The tally of `set`.
    pub(crate) fn tally(&mut self, set: TermSet) -> &Tally {
        let Running {
            terms, tally, sum, ..
        } = self;
        terms.each(set.without(self.set), |c, b| {
            tally.at[slot(c)] += b;
            *sum += b;
        });
        terms.each(self.set.without(set), |c, b| {
            tally.at[slot(c)] -= b;
            *sum -= b;
        });
        self.set = set;
        &self.tally
    }

    /// The bytes of `set`, all components together.
    pub(crate) fn total(&mut self, set: TermSet) -> u128 {
        self.tally(set);
        self.sum
    }
}

/// The phases of one training step, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The model is built and moved to the GPU (training).
    Init,
    Forward,
    Backward,
    OptimizerStep,
    ZeroGrad,
    /// The weights are loaded (inference).
    Load,
    /// The prompt's forward pass, which fills the key/value cache.
    Prefill,
    /// The steps that generate one token each.
    Decode,
    /// vLLM's start-up profiling run: a dummy batch through the model.
    Profile,
    /// vLLM serving: the key/value pool allocated.
    Serve,
}

impl Phase {
    /// A phase of a training step (else of running a model).
    pub fn of_training(self) -> bool {
        match self {
            Phase::Init
            | Phase::Forward
            | Phase::Backward
            | Phase::OptimizerStep
            | Phase::ZeroGrad => true,
            Phase::Load | Phase::Prefill | Phase::Decode | Phase::Profile | Phase::Serve => false,
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Phase::Init => "init",
            Phase::Forward => "forward",
            Phase::Backward => "backward",
            Phase::OptimizerStep => "optimizer_step",
            Phase::ZeroGrad => "zero_grad",
            Phase::Load => "load",
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Profile => "profile",
            Phase::Serve => "serve",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Phase::Init => "model init",
            Phase::Forward => "forward",
            Phase::Backward => "backward",
            Phase::OptimizerStep => "optimizer step",
            Phase::ZeroGrad => "zero_grad",
            Phase::Load => "load",
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Profile => "profiling run",
            Phase::Serve => "serving",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Where in a phase its peak happens, for drawing the phase's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Moment {
    Start,
    Middle,
    End,
}

impl Moment {
    /// The position as a fraction of the phase's width.
    pub fn fraction(self) -> f64 {
        match self {
            Moment::Start => 0.0,
            Moment::Middle => 0.5,
            Moment::End => 1.0,
        }
    }
}

/// One phase of one iteration: its highest point and where it ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PhaseReport {
    /// 0 for model init, then 1, 2, ... (2 stands for every later step).
    pub iteration: u32,
    /// With gradient accumulation: 1 for the first micro-step of the
    /// iteration, 2 for every later one (gradients already alive).
    pub micro_step: u32,
    pub phase: Phase,
    /// Highest live bytes during the phase, overhead included.
    pub peak_bytes: Bytes,
    /// Live bytes when the phase ends, overhead included.
    pub end_bytes: Bytes,
    /// What is alive at the peak.
    pub components: Components,
    /// What is alive at the end.
    pub end_components: Components,
    /// When the peak happens within the phase.
    #[serde(skip)]
    pub peak_at: Moment,
    /// The terms alive at the peak and at the end (see [`Estimate::terms`]).
    #[serde(skip)]
    pub terms: TermSet,
    #[serde(skip)]
    pub end_terms: TermSet,
}

impl PhaseReport {
    pub fn new(
        iteration: u32,
        phase: Phase,
        peak_at: Moment,
        peak: Components,
        end: Components,
    ) -> Self {
        PhaseReport {
            iteration,
            micro_step: 1,
            phase,
            peak_bytes: peak.total(),
            end_bytes: end.total(),
            components: peak,
            end_components: end,
            peak_at,
            terms: TermSet::EMPTY,
            end_terms: TermSet::EMPTY,
        }
    }
}

/// How an estimate's `Overhead` component was made, recorded by the
/// estimator that added it and rendered by the explanation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverheadRule {
    /// None was added (the seed formula; MLX on Apple's unified memory).
    #[default]
    None,
    /// The CUDA context, NCCL's communicator where several GPUs train
    /// (`nccl_mib`, else 0), and PyTorch's caching allocator's reserve over
    /// the highest allocation so far (training, transformers).
    ContextAndReserve {
        ctx_mib: u32,
        nccl_mib: u32,
        reserve_pct: u8,
    },
    /// The CUDA context, outside the engine's budget, which holds the
    /// allocator's cache already (vLLM's `gpu_memory_utilization`).
    ContextOutsideBudget { ctx_mib: u32, engine: &'static str },
    /// The CUDA context alone: the engine allocates its own buffers
    /// (llama.cpp's ggml, Ollama).
    ContextOnly { ctx_mib: u32, engine: &'static str },
}

impl OverheadRule {
    /// What the rule adds: fixed bytes, and a percentage of the highest
    /// allocation so far.
    pub fn beside(self) -> (u128, u128) {
        match self {
            OverheadRule::None => (0, 0),
            OverheadRule::ContextAndReserve {
                ctx_mib,
                nccl_mib,
                reserve_pct,
            } => (
                (u128::from(ctx_mib) + u128::from(nccl_mib)) << 20,
                u128::from(reserve_pct),
            ),
            OverheadRule::ContextOutsideBudget { ctx_mib, .. }
            | OverheadRule::ContextOnly { ctx_mib, .. } => (u128::from(ctx_mib) << 20, 0),
        }
    }

    /// What the rule leaves out, said beside the estimate: the caching
    /// allocator's reserve is a percentage here, not a replay of this run
    /// (`caching.rs` replays measured traces: `scripts/measure/allocator/NOTES.md`).
    pub fn caveat(self) -> Option<&'static str> {
        match self {
            OverheadRule::ContextAndReserve { .. } => Some(
                "PyTorch's caching allocator is not replayed for this run: on an H200, runs needed 1.8% to 22.5% above the allocated peak (median 4.2%, reserve 5%); expandable_segments:True, 1.8% at most",
            ),
            OverheadRule::None
            | OverheadRule::ContextOutsideBudget { .. }
            | OverheadRule::ContextOnly { .. } => None,
        }
    }
}

/// The overall result of one method for one scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Estimate {
    /// Which method produced it.
    pub method: Method,
    /// Total parameter count.
    pub params: u64,
    /// Parameters that receive gradients.
    pub trainable_params: u64,
    /// Highest live tensor bytes over the step (no overhead).
    pub peak_allocated_bytes: Bytes,
    /// Highest bytes including the CUDA context and allocator reserve.
    pub peak_total_bytes: Bytes,
    pub peak_phase: Phase,
    pub peak_iteration: u32,
    /// The micro-step of the peak (2 with gradient accumulation when the
    /// gradients of earlier micro-steps are alive at the peak).
    pub peak_micro_step: u32,
    /// Host (CPU) memory the run keeps beside the GPU's: what is offloaded.
    pub host_bytes: Bytes,
    /// Bytes of the GPU peak that can page out to host memory when the GPU
    /// runs short (bitsandbytes' paged optimizer state).
    pub pageable_bytes: Bytes,
    /// Every phase in time order: init, then each iteration's phases.
    pub phases: Vec<PhaseReport>,
    /// Where the peak is in `phases`: every breakdown of the peak reads
    /// this one report, so its rows sum to the peak.
    #[serde(skip)]
    peak_index: usize,
    /// The value of every term; each phase names the ones alive.
    #[serde(skip)]
    pub terms: Terms,
    /// The terms in host memory (they make `host_bytes`).
    #[serde(skip)]
    pub host_terms: TermSet,
    /// An inference engine's own figures (none for training; boxed: a
    /// training estimate does not carry their room).
    #[serde(flatten)]
    pub served: Option<Box<Served>>,
    /// What the estimate does not model for this scenario, in words (shown
    /// beside the answer; an estimate is never silently partial).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
    /// The least memory the run needs within its budget, when the engine
    /// takes more than it needs (vLLM fills its budget with the key/value
    /// pool): what "will it fit" compares. `None`: the peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needed_bytes: Option<Bytes>,
    /// The share of the GPU the engine may take, in ten-thousandths (vLLM's
    /// `gpu_memory_utilization`; `None`: all of it).
    #[serde(skip)]
    pub budget_share: Option<u16>,
    /// How the overhead was made (the explanation says it).
    #[serde(skip)]
    pub overhead: OverheadRule,
    /// Under pipeline parallelism, the figures of the first rank, of the
    /// fullest middle one (rank 1: the others keep fewer micro-batches in
    /// flight) and of the last (the estimate is the rank that needs most);
    /// empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankPeak>,
}

/// One pipeline rank's peak: its stage, and the components at its peak.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankPeak {
    pub rank: u32,
    /// Its decoder layers, and whether it holds the embedding (the first
    /// stage) and the final norm, head and loss (the last).
    pub layers: u32,
    pub first: bool,
    pub last: bool,
    pub peak_allocated_bytes: Bytes,
    pub peak_total_bytes: Bytes,
    pub peak_phase: Phase,
    pub peak_iteration: u32,
    pub components: Components,
}

/// What an inference engine says beside the phases: the figures its users
/// read (transformers: the weights and the cache after the last token;
/// vLLM: its start-up log's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Served {
    /// The engine and the version modelled.
    pub engine: String,
    pub weights_bytes: Bytes,
    /// transformers: the cache after the last forward (keys and values,
    /// and Gated DeltaNet layers' states); vLLM: the pool of key/value
    /// blocks.
    pub kv_cache_bytes: Bytes,
    /// vLLM: the profiling run's activation peak (vLLM measures it; an
    /// estimate here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activation_peak_bytes: Option<Bytes>,
    /// vLLM: memory outside PyTorch in its budget (estimated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_torch_bytes: Option<Bytes>,
    /// vLLM: the CUDA graphs' memory (estimated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cudagraph_bytes: Option<Bytes>,
    /// vLLM: `gpu_memory_utilization` × the GPU's memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_bytes: Option<Bytes>,
    /// vLLM: key/value blocks in the pool, the tokens they hold, and how
    /// many requests of `max_model_len` tokens fit at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_blocks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<Hundredths>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u32>,
    /// vLLM: the GPUs of the deployment (tensor × pipeline × data
    /// parallel), and which one the phases show (the fullest pipeline
    /// stage's), when more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_shown: Option<String>,
    /// llama.cpp: layers on the GPU (the output layer counted, as `-ngl`
    /// counts it), the context it runs with, what `--fit` did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_gpu_layers: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_ctx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<&'static str>,
    /// llama.cpp on several GPUs (`-ts`): each GPU's buffers, side by
    /// side; the phases are the fullest GPU's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuShare>,
    /// llama.cpp, Ollama: a LoRA adapter's buffers, on every device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lora_bytes: Option<Bytes>,
    /// Ollama: what `ollama ps` (and `/api/ps`) reports of the load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ollama_ps: Option<OllamaPs>,
}

/// What `ollama ps` shows of a loaded model (Ollama HEAD `fb30760`):
/// `size` and `size_vram` as `/api/ps` returns them, from llama-server's
/// printed buffers (`llm/llama_server.go`, `MemorySize`), and `num_ctx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OllamaPs {
    pub size: Bytes,
    pub size_vram: Bytes,
    /// Key/value cache allocated but not in `size`: Ollama keeps one `KV
    /// buffer` line a device, and a model with sliding-window layers
    /// prints two (the full-attention cache's, then the sliding one's).
    pub kv_unlisted: Bytes,
    /// A LoRA adapter (`ADAPTER`) held but not in `size`: Ollama sums
    /// llama-server's buffer lines, and the adapter's is not one it reads.
    pub lora_unlisted: Bytes,
    /// CONTEXT: `num_ctx`, per sequence.
    pub context: u32,
}

impl OllamaPs {
    /// SIZE as `format.HumanBytes` prints it (`format/bytes.go`): decimal
    /// units; from 10 of a unit the whole part, below it one decimal
    /// (`%.1f`, rounded half to even on the value's binary form, as Go's
    /// and Rust's formatting both round) unless whole.
    pub fn size_text(&self) -> String {
        let b = self.size.get();
        let (unit, name) = match b {
            1_000_000_000_000.. => (1e12, "TB"),
            1_000_000_000.. => (1e9, "GB"),
            1_000_000.. => (1e6, "MB"),
            1_000.. => (1e3, "KB"),
            _ => return format!("{b} B"),
        };
        // As Go computes it: `float64(b) / GigaByte`.
        let value = b as f64 / unit;
        if value >= 10.0 || value == value.trunc() {
            let whole = value as u64;
            format!("{whole} {name}")
        } else {
            format!("{value:.1} {name}")
        }
    }

    /// PROCESSOR (`cmd/cmd.go`, `ListRunningHandler`): `100% GPU`,
    /// `100% CPU`, or the host's share of SIZE rounded to a percent
    /// (`math.Round`, half away from zero) and the GPU's the rest.
    pub fn processor(&self) -> String {
        let (size, vram) = (self.size.get(), self.size_vram.get());
        if vram == 0 {
            "100% CPU".into()
        } else if vram == size {
            "100% GPU".into()
        } else if vram > size {
            "Unknown".into()
        } else {
            // As Go computes it, in float64.
            let cpu = ((size - vram) as f64 / size as f64 * 100.0).round();
            let cpu = cpu as u64;
            format!("{cpu}%/{}% CPU/GPU", 100 - cpu)
        }
    }
}

/// One GPU's buffers in a load over several (llama.cpp's
/// `llama_memory_breakdown_print` rows, one per device).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GpuShare {
    /// The device's index, as llama.cpp numbers them.
    pub gpu: u32,
    /// Repeating layers whose tensors are here, and whether the output
    /// layer is.
    pub layers: u32,
    pub output_layer: bool,
    pub weights_bytes: Bytes,
    /// The key/value cache and a hybrid's recurrent state.
    pub kv_cache_bytes: Bytes,
    pub compute_bytes: Bytes,
    /// A LoRA adapter's tensors here (llama.cpp's `--lora`).
    #[serde(skip_serializing_if = "none")]
    pub lora_bytes: Bytes,
    /// These and the CUDA context: what the device holds.
    pub total_bytes: Bytes,
    /// The phases are this GPU's (the fullest).
    pub phases: bool,
}

/// No bytes: a field left out of the JSON.
fn none(b: &Bytes) -> bool {
    b.get() == 0
}

/// A ratio in hundredths, written as a decimal number (vLLM prints its
/// concurrency with two decimals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hundredths(pub u64);

impl Serialize for Hundredths {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0 as f64 / 100.0)
    }
}

impl Estimate {
    /// Builds the summary fields from the phase list.
    ///
    /// The peak is the first phase (in time order) whose peak is highest.
    pub fn from_phases(
        method: Method,
        params: u64,
        trainable: u64,
        phases: Vec<PhaseReport>,
        terms: Terms,
    ) -> Self {
        let top = top_phase(&phases).map(|i| (i, &phases[i]));
        let (index, peak_total, peak_alloc, phase, iteration, micro) = match top {
            Some((i, p)) => (
                i,
                p.peak_bytes,
                p.components.allocated(),
                p.phase,
                p.iteration,
                p.micro_step,
            ),
            None => (0, Bytes::ZERO, Bytes::ZERO, Phase::Init, 0, 1),
        };
        Estimate {
            method,
            params,
            trainable_params: trainable,
            peak_allocated_bytes: peak_alloc,
            peak_total_bytes: peak_total,
            peak_phase: phase,
            peak_iteration: iteration,
            peak_micro_step: micro,
            host_bytes: Bytes::ZERO,
            pageable_bytes: Bytes::ZERO,
            phases,
            peak_index: index,
            terms,
            host_terms: TermSet::EMPTY,
            served: None,
            caveats: Vec::new(),
            needed_bytes: None,
            budget_share: None,
            overhead: OverheadRule::None,
            ranks: Vec::new(),
        }
    }

    /// What must fit: the least the run needs ([`Estimate::needed_bytes`]),
    /// else its peak.
    pub fn needed(&self) -> Bytes {
        self.needed_bytes.unwrap_or(self.peak_total_bytes)
    }

    /// What a GPU of `capacity` gives the run: all of it, or vLLM's
    /// `ceil(gpu_memory_utilization × total)` (`v1/worker/utils.py:724`).
    pub fn budget(&self, capacity: Bytes) -> Bytes {
        budget(self.budget_share, capacity)
    }

    /// The phase report holding the overall peak: the same report the
    /// summary fields were read from (its components sum to the peak).
    pub fn peak(&self) -> Option<&PhaseReport> {
        self.phases.get(self.peak_index)
    }
}

/// Where the highest peak is in `phases` (the first of equals).
pub(crate) fn top_phase(phases: &[PhaseReport]) -> Option<usize> {
    phases
        .iter()
        .enumerate()
        .fold(None::<(usize, Bytes)>, |best, (i, p)| match best {
            Some((_, b)) if b >= p.peak_bytes => best,
            _ => Some((i, p.peak_bytes)),
        })
        .map(|(i, _)| i)
}

/// A parameter count as an estimate reports it: exact, or
/// [`crate::error::EstimateError::TooManyParams`].
pub(crate) fn param_count(n: u128) -> Result<u64, crate::error::EstimateError> {
    u64::try_from(n).map_err(|_| crate::error::EstimateError::TooManyParams)
}

/// What a GPU of `capacity` gives a run that may take `share`
/// ten-thousandths of it (`None`: all of it).
pub fn budget(share: Option<u16>, capacity: Bytes) -> Bytes {
    match share {
        None => capacity,
        Some(share) => {
            let b = crate::units::share_ceil(u128::from(capacity.get()), share);
            Bytes(u64::try_from(b).unwrap_or(u64::MAX))
        }
    }
}

/// An estimation method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// vramfit's own: the saved-tensor ledger, held to measured PyTorch.
    Vramfit,
    /// The formulas of the seed article, as written.
    SeedFormula,
}

impl Method {
    pub fn label(self) -> &'static str {
        match self {
            Method::Vramfit => "vramfit",
            Method::SeedFormula => "seed formula",
        }
    }
}
