//! Will it fit, and what would: the verdict against a capacity, the largest
//! batch and sequence length that fit, and a ranked list of changes with the
//! memory each saves.
//!
//! Every answer re-runs the estimator on a changed query, through the same
//! codec, so a suggestion applied on the page gives exactly the number shown.
//!
//! Shared at the top: the verdict and the search machinery are any
//! workload's; the changes worth trying are the workload's own
//! ([`candidates`]). Imports the codec, the scenario and the workloads.

use crate::infer::run::{self, Engine, KvDtype, Tokens};
use crate::inputs::Attn;
use crate::inputs::Batch;
use crate::model::WeightFormat;
use crate::query::{self, Key};
use crate::scenario::{Scenario, Task};
use crate::train::optim::StepTemps;
use crate::train::run::Ckpt;
use crate::train::run::Dtype;
use crate::train::run::Offload;
use crate::train::run::Quant;
use crate::train::run::SeqLen;
use crate::train::Targets;
use crate::units::{Bytes, DisplayUnit};
use crate::{Estimate, Estimates};

/// Fits or not, and by how much: the one verdict the page's answer, its
/// pinned summary and the solver's suggestions all read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Bytes the GPU offers.
    pub capacity: Bytes,
    /// The estimate's peak, overhead included.
    pub needed: Bytes,
    /// Bytes of the peak that can page out to host memory when the GPU
    /// runs short (bitsandbytes' paged optimizer state).
    pub pageable: Bytes,
}

impl Verdict {
    /// `needed` against `capacity`, nothing pageable.
    pub fn new(needed: Bytes, capacity: Bytes) -> Self {
        Verdict {
            capacity,
            needed,
            pageable: Bytes::ZERO,
        }
    }

    /// An estimate against a GPU of `capacity`: what the run needs
    /// against what the GPU gives it (vLLM: its share of the GPU).
    pub fn of(e: &Estimate, capacity: Bytes) -> Self {
        Verdict {
            pageable: e.pageable_bytes,
            ..Verdict::new(e.needed(), e.budget(capacity))
        }
    }

    /// Fits as it is, only once the pageable state pages out to host
    /// memory, or not.
    pub fn fit(&self) -> Fit {
        if self.needed <= self.capacity {
            Fit::Yes
        } else if self.short() <= self.pageable {
            Fit::Paging
        } else {
            Fit::No
        }
    }

    pub fn fits(&self) -> bool {
        self.fit() == Fit::Yes
    }

    /// Bytes to spare when it fits.
    pub fn spare(&self) -> Bytes {
        self.capacity.saturating_sub(self.needed)
    }

    /// Bytes missing when it does not (what pages out when it fits by
    /// paging).
    pub fn short(&self) -> Bytes {
        self.needed.saturating_sub(self.capacity)
    }

    /// The answer in a sentence, e.g. "Fits, with 1.20 GiB to spare".
    pub fn headline(&self, unit: DisplayUnit) -> String {
        match self.fit() {
            Fit::Yes => format!("Fits, with {} to spare", self.spare().display(unit)),
            Fit::Paging => format!(
                "Fits only by paging {} of optimizer state to host memory: slower steps",
                self.short().display(unit)
            ),
            Fit::No => format!("Does not fit: short by {}", self.short().display(unit)),
        }
    }

    /// The answer in a few words, for the pinned summary: "fits, 1.20 GiB
    /// spare", "fits by paging 0.50 GiB", "short by 3.00 GiB".
    pub fn summary(&self, unit: DisplayUnit) -> String {
        match self.fit() {
            Fit::Yes => format!("fits, {} spare", self.spare().display(unit)),
            Fit::Paging => format!("fits by paging {}", self.short().display(unit)),
            Fit::No => format!("short by {}", self.short().display(unit)),
        }
    }
}

/// What a changed query gives: its scenario and its estimate's peak
/// (overhead included), host memory and pageable bytes; `None` when the
/// change is not valid or cannot be estimated.
fn outcome(s: &Scenario, changes: &[(Key, String)]) -> Option<Outcome> {
    let t = applied(s, changes)?;
    let e = Estimates::primary_of(&t).ok()?;
    Some(Outcome {
        peak: e.needed(),
        budget_share: e.budget_share,
        host: e.host_bytes,
        pageable: e.pageable_bytes,
        scenario: t,
    })
}

/// `s` with `changes` typed in as the page types them (`query::edit`, in
/// order), when the result decodes with no notice.
pub fn applied(s: &Scenario, changes: &[(Key, String)]) -> Option<Scenario> {
    let mut form = query::encode(s);
    for (k, v) in changes {
        query::edit(&mut form, *k, v);
    }
    let d = query::decode(&form);
    d.notices.is_empty().then_some(d.scenario)
}

/// A changed scenario's numbers: what it needs (its peak, or vLLM's
/// least), and what it may take of a GPU.
#[derive(Clone)]
struct Outcome {
    scenario: Scenario,
    peak: Bytes,
    budget_share: Option<u16>,
    host: Bytes,
    pageable: Bytes,
}

impl Outcome {
    /// Fits as it is, or once the pageable state pages out to host memory.
    fn fit(&self, capacity: Bytes) -> Fit {
        Verdict {
            capacity: self.budget(capacity),
            needed: self.peak,
            pageable: self.pageable,
        }
        .fit()
    }

    /// What a GPU of `capacity` gives the run ([`Estimate::budget`]).
    fn budget(&self, capacity: Bytes) -> Bytes {
        crate::report::budget(self.budget_share, capacity)
    }
}

/// What the primary estimate needs ([`Estimate::needed`]).
pub fn peak_of(s: &Scenario) -> Option<Bytes> {
    Estimates::primary_of(s).ok().map(|e: Estimate| e.needed())
}

/// Whether `s` with `changes` fits a GPU of `capacity` as it is, by the
/// verdict the page shows for it ([`Verdict::of`]: vLLM's share of the
/// GPU and the pool one request needs).
fn fits_with(s: &Scenario, changes: &[(Key, String)], capacity: Bytes) -> bool {
    outcome(s, changes).is_some_and(|o| o.fit(capacity) == Fit::Yes)
}

/// An answer the page offers with a button: its value, and the query keys
/// that apply it. Applied as typed, the run fits by the page's verdict
/// ([`Verdict::of`]): the same keys were estimated to find it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer<T> {
    pub value: T,
    pub changes: Vec<(Key, String)>,
}

impl<T> Answer<T> {
    /// Whether `s` has this answer already: applying its keys changes
    /// nothing.
    pub fn in_effect(&self, s: &Scenario) -> bool {
        applied(s, &self.changes).is_some_and(|t| t == *s)
    }
}

/// The largest value of `key` in `lo..=hi` that fits, by bisection (needs
/// grow with batch, sequence and context lengths; property-tested).
fn largest_fitting(s: &Scenario, key: Key, lo: u32, hi: u32, capacity: Bytes) -> Option<u32> {
    let fits = |v: u32| fits_with(s, &[(key, v.to_string())], capacity);
    if !fits(lo) {
        return None;
    }
    let (mut ok, mut bad) = (lo, hi.saturating_add(1));
    if fits(hi) {
        return Some(hi);
    }
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if fits(mid) {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    Some(ok)
}

/// The largest batch size that fits, other settings unchanged.
pub fn max_batch(s: &Scenario, capacity: Bytes) -> Option<u32> {
    largest_fitting(s, Key::Batch, Batch::MIN, Batch::MAX, capacity)
}

/// The largest sequence length that fits, other settings unchanged.
pub fn max_seq(s: &Scenario, capacity: Bytes) -> Option<u32> {
    largest_fitting(s, Key::Seq, SeqLen::MIN, SeqLen::MAX, capacity)
}

/// An inference run's longest context that fits: transformers' longest
/// prompt (with `new` tokens after it), vLLM's longest `max_model_len`;
/// at most the model's positions when it has them.
pub fn max_context(s: &Scenario, capacity: Bytes) -> Option<(Key, u32)> {
    let positions = s.arch.map_or(0, |a| a.positions);
    let top = if positions > 0 {
        positions
    } else {
        Tokens::MAX
    };
    match s.infer.engine {
        Engine::Transformers | Engine::Mlx => {
            let room = top.saturating_sub(s.infer.new.get()).max(Tokens::MIN);
            largest_fitting(s, Key::Prompt, Tokens::MIN, room, capacity).map(|n| (Key::Prompt, n))
        }
        Engine::Vllm | Engine::Llamacpp | Engine::Ollama => {
            largest_fitting(s, Key::Ctx, Tokens::MIN, top, capacity).map(|n| (Key::Ctx, n))
        }
    }
}

/// The most precise checkpoint format that fits, other settings unchanged
/// (16-bit, then fp8, int8, AWQ, GPTQ, nf4), when the run's does not.
/// `None`: the engine reads no checkpoints (the local runners:
/// [`local_weights_that_fit`]), or none fits.
pub fn weights_that_fit(s: &Scenario, capacity: Bytes) -> Option<Answer<WeightFormat>> {
    match s.infer.engine {
        Engine::Transformers | Engine::Vllm => {}
        Engine::Llamacpp | Engine::Ollama | Engine::Mlx => return None,
    }
    let plain = match s.infer.weights.plain_bytes() {
        4 => WeightFormat::Fp32,
        _ => WeightFormat::Bf16,
    };
    std::iter::once(plain)
        .chain(LIGHTER.iter().map(|(w, _, _)| *w))
        .map(|w| Answer {
            value: w,
            changes: owned(&format_change(w)),
        })
        .find(|a| fits_with(s, &a.changes, capacity))
}

/// The keys that load the weights in `w` (nf4 with double quantization,
/// as QLoRA's recipe).
fn format_change(w: WeightFormat) -> Vec<(Key, &'static str)> {
    let mut ch = vec![(Key::Weights, w.key())];
    if w == WeightFormat::Nf4 {
        ch.push((Key::DoubleQuant, "true"));
    }
    ch
}

fn owned(changes: &[(Key, &str)]) -> Vec<(Key, String)> {
    changes.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

/// Whether a run fits a capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    Yes,
    /// Only once bitsandbytes pages optimizer state out to host memory.
    Paging,
    No,
}

/// One change that lowers the peak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// Plain words, e.g. "Turn on gradient checkpointing".
    pub label: String,
    /// What it costs, in a sentence.
    pub cost: String,
    /// Query keys to set, in order.
    pub changes: Vec<(Key, String)>,
    /// The peak after the change, overhead included.
    pub peak: Bytes,
    /// How much it saves.
    pub saves: Bytes,
    /// Host memory the changed run needs (offload).
    pub host: Bytes,
    /// GPUs the changed run uses.
    pub gpus: u32,
    /// Fits as it is (`peak <= capacity`).
    pub fits: bool,
    /// Fits only by paging optimizer state to host memory.
    pub fits_paging: bool,
}

/// A candidate change: label, cost, query keys.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub label: String,
    pub cost: String,
    pub changes: Vec<(Key, String)>,
}

/// Candidate changes that apply to this scenario, each with what it costs.
///
/// Sources for the costs: checkpointing recomputes each layer's forward
/// (Chen et al. 2016: one more forward pass); QLoRA (Dettmers et al. 2023)
/// dequantizes each 4-bit weight per use and reports 16-bit LoRA quality
/// with NF4 and double quantization; ZeRO-Offload (Ren et al. 2021) runs
/// the step on the CPU; paged optimizers page state over PCIe only when
/// the GPU runs short.
pub fn candidates(s: &Scenario) -> Vec<Candidate> {
    match s.task {
        Task::Train => train_candidates(s),
        Task::Infer => infer_candidates(s),
    }
}

/// A run's changes worth trying, as label, cost and query keys.
struct Changes(Vec<Candidate>);

impl Changes {
    fn add(&mut self, label: &str, cost: &str, ch: &[(Key, &str)]) {
        self.0.push(Candidate {
            label: label.to_string(),
            cost: cost.to_string(),
            changes: owned(ch),
        });
    }
}

/// Weight formats to offer, most precise first, with what each costs
/// (Dettmers et al. 2022, LLM.int8(); 2023, QLoRA's NF4; Frantar et al.
/// 2023, GPTQ; Lin et al. 2024, AWQ: 8-bit near lossless, 4-bit a small
/// quality cost).
const LIGHTER: [(WeightFormat, &str, &str); 5] = [
    (
        WeightFormat::Fp8,
        "Use fp8 weights (an FP8 checkpoint)",
        "8-bit floats with block scales: close to 16-bit quality; needs the FP8 checkpoint",
    ),
    (
        WeightFormat::Int8,
        "Load the weights in 8 bits (LLM.int8, bitsandbytes)",
        "int8 weights with outlier columns in 16 bits: close to 16-bit quality, slower matmuls",
    ),
    (
        WeightFormat::Awq,
        "Use AWQ 4-bit weights (an AWQ checkpoint)",
        "4-bit weights, group 128: a small quality cost; needs the AWQ checkpoint",
    ),
    (
        WeightFormat::Gptq,
        "Use GPTQ 4-bit weights (a GPTQ checkpoint)",
        "4-bit weights, group 128: a small quality cost; needs the GPTQ checkpoint",
    ),
    (
        WeightFormat::Nf4,
        "Load the weights in 4 bits (nf4, bitsandbytes)",
        "4-bit NormalFloat with double quantization: a small quality cost, each weight dequantized per prefill matmul",
    ),
];

/// Changes worth trying for an inference run: lighter weights, an fp8
/// cache, fewer sequences, no CUDA graphs, more GPUs (vLLM).
fn infer_candidates(s: &Scenario) -> Vec<Candidate> {
    let i = &s.infer;
    let mut c = Changes(Vec::new());
    let now = u128::from(i.weights.plain_bytes().max(1)) * 8;
    let checkpoints = matches!(i.engine, Engine::Transformers | Engine::Vllm);
    for &(w, label, cost) in LIGHTER.iter().filter(|_| checkpoints) {
        let bits = match w.plain_bytes() {
            0 if matches!(w, WeightFormat::Fp8 | WeightFormat::Int8) => 8,
            0 => 4,
            b => u128::from(b) * 8,
        };
        if bits < now && w != i.weights {
            c.add(label, cost, &format_change(w));
        }
    }
    match i.engine {
        Engine::Transformers => {
            if i.attn == Attn::Eager {
                c.add("Use SDPA attention", "none", &[(Key::Attn, "sdpa")]);
            }
            let b = i.batch.get();
            if b >= 2 {
                let half = (b / 2).to_string();
                c.add(
                    &format!("Generate {half} sequences at once"),
                    "half the sequences per call: more calls for the same work",
                    &[(Key::Batch, &half)],
                );
            }
        }
        Engine::Vllm => vllm_candidates(s, &mut c),
        Engine::Llamacpp | Engine::Ollama | Engine::Mlx => local_candidates(s, &mut c),
    }
    c.0
}

/// The GGUF file types tried, most precise first: the common ones.
const GGUF_LADDER: [&str; 8] = [
    "f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m", "q2_k",
];
/// MLX's weights tried, most precise first.
const MLX_LADDER: [&str; 6] = ["bf16", "8bit", "6bit", "4bit", "3bit", "2bit"];

/// The ladder of weights the engine reads, and the run's place on it.
fn ladder(s: &Scenario) -> (&'static [&'static str], Option<usize>) {
    let i = &s.infer;
    let (ladder, now): (&'static [&'static str], &str) = match i.engine {
        Engine::Llamacpp | Engine::Ollama => (&GGUF_LADDER, i.gguf.key()),
        Engine::Mlx => (&MLX_LADDER, i.mlx_weights.key()),
        Engine::Transformers | Engine::Vllm => (&[], ""),
    };
    (ladder, ladder.iter().position(|w| *w == now))
}

/// The local runners' levers: the next lighter weights, a quantized cache.
fn local_candidates(s: &Scenario, c: &mut Changes) {
    let (ladder, at) = ladder(s);
    let lighter = at.map_or(&ladder[..0], |k| &ladder[k + 1..]);
    for w in lighter.iter().take(2) {
        c.add(
            &format!("Use {w} weights"),
            "fewer bits per weight: a smaller file, some quality lost",
            &[(Key::Weights, w)],
        );
    }
    let i = &s.infer;
    match i.engine {
        Engine::Llamacpp if !i.llama.cache_type_k.is_quantized() => c.add(
            "Store the KV cache in q8_0 (with flash attention)",
            "34 bytes per 32 values: about half the cache, a small accuracy cost",
            &[
                (Key::CacheTypeK, "q8_0"),
                (Key::CacheTypeV, "q8_0"),
                (Key::FlashAttn, "on"),
            ],
        ),
        Engine::Ollama if !i.ollama.kv_cache_type.is_quantized() => c.add(
            "Store the KV cache in q8_0 (with flash attention)",
            "34 bytes per 32 values: about half the cache, a small accuracy cost",
            &[(Key::KvCacheType, "q8_0"), (Key::FlashAttention, "true")],
        ),
        Engine::Mlx if i.mlx.kv_bits.is_none() => c.add(
            "Quantize the KV cache to 8 bits (kv_bits)",
            "about half the cache, a small accuracy cost",
            &[(Key::KvBits, "8")],
        ),
        Engine::Llamacpp | Engine::Ollama | Engine::Mlx | Engine::Transformers | Engine::Vllm => {}
    }
}

/// The local runners' most precise weights that fit whole on the GPU at
/// the run's context (llama.cpp and Ollama: every layer on the GPU, without
/// `--fit` moving any to the CPU; MLX: within the GPU's working set), when
/// the run's do not; its keys put every layer on the GPU where the run
/// does not. `None`: the engine reads checkpoints ([`weights_that_fit`]),
/// or none fits.
pub fn local_weights_that_fit(s: &Scenario, capacity: Bytes) -> Option<Answer<&'static str>> {
    let (ladder, _) = ladder(s);
    let whole = whole_on_gpu(s);
    ladder
        .iter()
        .map(|w| Answer {
            value: *w,
            changes: std::iter::once((Key::Weights, w.to_string()))
                .chain(whole.iter().cloned())
                .collect(),
        })
        .find(|a| fits_with(s, &a.changes, capacity))
}

/// The keys that put every layer of a local run on the GPU at its
/// context, where the run does not: llama.cpp without `--fit` and with
/// every layer under `-ngl` (left out, it means all), Ollama with
/// `num_gpu` at every layer and the output; MLX has no such choice.
fn whole_on_gpu(s: &Scenario) -> Vec<(Key, String)> {
    let all = s.arch.map_or(run::Layers::MAX, |a| {
        a.layers.saturating_add(1).min(run::Layers::MAX)
    });
    let short = |n: Option<run::Layers>| n.is_some_and(|n| n.get() < all);
    let i = &s.infer;
    let mut ch = Vec::new();
    match i.engine {
        Engine::Llamacpp => {
            if i.llama.fit {
                ch.push((Key::Fit, "false".to_string()));
            }
            if short(i.llama.n_gpu_layers) {
                ch.push((Key::NGpuLayers, all.to_string()));
            }
        }
        Engine::Ollama => {
            if i.ollama.num_gpu.is_none() || short(i.ollama.num_gpu) {
                ch.push((Key::NumGpu, all.to_string()));
            }
        }
        Engine::Mlx | Engine::Transformers | Engine::Vllm => {}
    }
    ch
}

/// vLLM's own levers.
fn vllm_candidates(s: &Scenario, c: &mut Changes) {
    let v = &s.infer.vllm;
    if s.infer.kv_dtype == KvDtype::Auto {
        c.add(
            "Store the KV cache in fp8",
            "one byte per element: twice the tokens, a small accuracy cost",
            &[(Key::KvDtype, "fp8")],
        );
    }
    if !v.enforce_eager {
        c.add(
            "Run without CUDA graphs (enforce_eager)",
            "no graph memory; slower decoding at small batches",
            &[(Key::EnforceEager, "true")],
        );
    }
    let tp = v.tensor_parallel_size.get() * 2;
    if s.arch.is_some_and(|a| a.heads % tp == 0) {
        let t = tp.to_string();
        c.add(
            &format!("Split the model over {t} GPUs (tensor parallel)"),
            &format!("needs {t} GPUs; every layer communicates between them"),
            &[(Key::TensorParallelSize, &t)],
        );
    }
}

fn train_candidates(s: &Scenario) -> Vec<Candidate> {
    let t = &s.train;
    let mut out: Vec<Candidate> = Vec::new();
    let mut add = |label: &str, cost: &str, ch: &[(Key, &str)]| {
        out.push(Candidate {
            label: label.to_string(),
            cost: cost.to_string(),
            changes: ch.iter().map(|(k, v)| (*k, v.to_string())).collect(),
        });
    };
    let optim = t.optim.spec();
    let adamw_like = optim.torch_adamw;
    let offloaded = s.parallel.offload != Offload::None;
    match t.grad_ckpt {
        Ckpt::Off => add(
            "Turn on gradient checkpointing",
            "each layer's forward runs again in backward: about a third more compute per step",
            &[(Key::GradCkpt, "true")],
        ),
        Ckpt::On | Ckpt::NonReentrant | Ckpt::Reentrant => add(
            "Keep the checkpoints in host memory",
            "each layer's input crosses PCIe twice a step: slower steps, and host memory",
            &[(Key::GradCkpt, "offload")],
        ),
        Ckpt::Offload => {}
    }
    if matches!(t.dtype, Dtype::Fp32 | Dtype::AmpBf16 | Dtype::AmpFp16) && t.quant == Quant::None {
        add(
            "Train in pure bf16",
            "weights and optimizer state in bf16: updates below bf16's precision are lost",
            &[(Key::Dtype, "bf16")],
        );
    }
    if adamw_like && !offloaded {
        add(
            "Use 8-bit AdamW (bitsandbytes)",
            "optimizer state quantized to 8 bits, in blocks of 256",
            &[(Key::Optim, "adamw8bit")],
        );
        add(
            "Use paged 8-bit AdamW (bitsandbytes)",
            "8-bit state that pages to host memory when the GPU runs short: slower steps then",
            &[(Key::Optim, "paged_adamw_8bit")],
        );
    }
    if adamw_like && optim.temps != StepTemps::None {
        add(
            "Use fused AdamW (no step temporaries)",
            "none (a CUDA kernel for the whole step)",
            &[(Key::Optim, "adamw_fused")],
        );
    }
    if s.arch.is_some() {
        match (t.lora_r.is_some(), t.quant) {
            (false, _) => {
                add(
                    "Fine-tune with LoRA (rank 16)",
                    "trains low-rank adapters, not the weights: a fine-tune, which can trail full training",
                    &[(Key::LoraR, "16")],
                );
                add(
                    "QLoRA: LoRA (rank 16) over a 4-bit base",
                    "adapters over nf4 weights (double quantization): slower steps, each weight dequantized per use, and a small quality cost",
                    &[(Key::LoraR, "16"), (Key::Quant, "nf4"), (Key::DoubleQuant, "true")],
                );
            }
            (true, Quant::None) => add(
                "Load the base in 4 bits (QLoRA)",
                "nf4 weights with double quantization: slower steps, each weight dequantized per use, and a small quality cost",
                &[(Key::Quant, "nf4"), (Key::DoubleQuant, "true"), (Key::Dora, "false")],
            ),
            (true, Quant::Nf4 | Quant::Fp4 | Quant::Int8) => {}
        }
        if t.lora_r.is_some() && t.lora_targets != Targets::ATTN {
            add(
                "LoRA on attention only (q, k, v, o)",
                "fewer adapters than all linear layers: less capacity to adapt",
                &[(Key::LoraTargets, "attn")],
            );
        }
        if t.quant != Quant::None && t.kbit_prep {
            add(
                "Keep the unquantized weights in 16 bits",
                "skips prepare_model_for_kbit_training's fp32 upcast of embeddings, head and norms: a little less numerical headroom",
                &[(Key::KbitPrep, "false")],
            );
        }
    }
    if t.attn == crate::inputs::Attn::Eager {
        add("Use SDPA attention", "none", &[(Key::Attn, "sdpa")]);
    }
    if t.keep_outputs {
        add(
            "Drop the outputs before backward",
            "none (delete the output object, keep the loss)",
            &[(Key::KeepOutputs, "false")],
        );
    }
    let (gpus, zero) = (s.parallel.gpus.get(), s.parallel.zero.get());
    let fsdp = s.parallel.shard.fsdp();
    if !offloaded && optim.cpu_offload && !fsdp {
        let z = zero.max(2).to_string();
        add(
            "Offload the optimizer to host memory (ZeRO-Offload)",
            "the optimizer step runs on the CPU: much slower steps, and host memory",
            &[(Key::Zero, &z), (Key::Offload, "optimizer")],
        );
    }
    if gpus > 1 && zero < 3 {
        let z = (zero + 1).to_string();
        add(
            &format!("Shard more with ZeRO stage {z}"),
            "more communication between the GPUs",
            &[(Key::Zero, &z)],
        );
    }
    if gpus * 2 <= crate::train::run::Gpus::MAX {
        let g = (gpus * 2).to_string();
        add(
            &format!("Use {g} GPUs with ZeRO-3"),
            &format!("needs {g} GPUs; parameters gathered layer by layer over the interconnect"),
            &[(Key::Gpus, &g), (Key::Zero, "3")],
        );
    }
    let b = t.batch.get();
    if b >= 2 {
        let half = (b / 2).to_string();
        let acc = (t.grad_accum.get() * 2).to_string();
        add(
            &format!("Batch {half} with {acc}× gradient accumulation (same effective batch)"),
            "the same effective batch in more, smaller micro-steps: lower throughput",
            &[(Key::Batch, &half), (Key::GradAccum, &acc)],
        );
    }
    out
}

/// Whether a peak of `after` lowers `before` by at least 0.5% (less is
/// not worth a line).
fn lowers(before: Bytes, after: Bytes) -> bool {
    after.get().saturating_add(before.get() / 200) < before.get()
}

impl Outcome {
    /// This result as a suggestion to a run now peaking at `now`; its cost
    /// says the host memory the changed run needs.
    fn suggestion(
        &self,
        now: Bytes,
        capacity: Bytes,
        label: String,
        cost: String,
        changes: Vec<(Key, String)>,
    ) -> Suggestion {
        let fit = self.fit(capacity);
        Suggestion {
            label,
            cost: if self.host.get() > 0 {
                format!("{cost}; needs {} of host memory", self.host)
            } else {
                cost
            },
            saves: now.saturating_sub(self.peak),
            fits: fit == Fit::Yes,
            fits_paging: fit == Fit::Paging,
            peak: self.peak,
            host: self.host,
            gpus: self.scenario.parallel.gpus.get(),
            changes,
        }
    }
}

/// Changes that lower the peak: on one GPU, the changes that keep it first;
/// then most saving first. When none fits alone, a recipe follows: from
/// the run as it is, the change that lowers the peak most is applied, again
/// and again, until the run fits (on the user's one GPU when that can be
/// done), each step a change the page can apply.
pub fn suggestions(s: &Scenario, capacity: Bytes) -> Vec<Suggestion> {
    let Some(now) = peak_of(s) else {
        return Vec::new();
    };
    let gpus = s.parallel.gpus.get();
    // Each candidate estimated once: the list and the recipes' first step.
    let first: Vec<(Candidate, Outcome)> = candidates(s)
        .into_iter()
        .filter_map(|c| outcome(s, &c.changes).map(|o| (c, o)))
        .collect();
    let mut out: Vec<Suggestion> = first
        .iter()
        .filter(|(_, o)| lowers(now, o.peak))
        .map(|(c, o)| {
            o.suggestion(
                now,
                capacity,
                c.label.clone(),
                c.cost.clone(),
                c.changes.clone(),
            )
        })
        .collect();
    let more_gpus = |x: &Suggestion| x.gpus > gpus;
    out.sort_by(|a, b| {
        more_gpus(a)
            .cmp(&more_gpus(b))
            .then_with(|| b.saves.cmp(&a.saves))
            .then_with(|| a.label.cmp(&b.label))
    });
    let fits_alone = out.iter().any(|x| x.fits || x.fits_paging);
    if now > capacity && !fits_alone {
        let recipe = recipe(s, now, capacity, true, &first)
            .filter(|r| r.fits || r.fits_paging)
            .or_else(|| recipe(s, now, capacity, false, &first));
        out.extend(recipe.filter(|r| r.changes.len() > 1 && r.saves.get() > 0));
    }
    out
}

/// The most changes a recipe combines.
const RECIPE_STEPS: usize = 8;

/// Greedy: apply the change that lowers the peak most, then again from
/// there, until the run fits or nothing helps. `same_gpus` keeps the GPU
/// count; `now` is the peak of `s` and `first` every candidate of `s`
/// already estimated.
fn recipe(
    s: &Scenario,
    now: Bytes,
    capacity: Bytes,
    same_gpus: bool,
    first: &[(Candidate, Outcome)],
) -> Option<Suggestion> {
    let gpus = s.parallel.gpus.get();
    let mut changes: Vec<(Key, String)> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut costs: Vec<String> = Vec::new();
    let mut cur = *s;
    let mut best: Option<Outcome> = None;
    for _ in 0..RECIPE_STEPS {
        let peak_now = best.as_ref().map_or(now, |o| o.peak);
        let evaluated: Vec<(Candidate, Outcome)> = if best.is_none() {
            first.to_vec()
        } else {
            candidates(&cur)
                .into_iter()
                .filter_map(|c| outcome(&cur, &c.changes).map(|o| (c, o)))
                .collect()
        };
        let step = evaluated
            .into_iter()
            .filter(|(_, o)| !same_gpus || o.scenario.parallel.gpus.get() == gpus)
            .filter(|(_, o)| lowers(peak_now, o.peak))
            .min_by_key(|(_, o)| o.peak);
        let Some((c, o)) = step else {
            break;
        };
        for ch in c.changes {
            changes.retain(|(k, _)| *k != ch.0);
            changes.push(ch);
        }
        labels.push(mid_sentence(&c.label));
        if !costs.contains(&c.cost) {
            costs.push(c.cost);
        }
        cur = o.scenario;
        let done = o.fit(capacity) != Fit::No;
        best = Some(o);
        if done {
            break;
        }
    }
    let o = best?;
    Some(o.suggestion(
        now,
        capacity,
        format!("Recipe: {}", labels.join(", then ")),
        costs.join("; "),
        changes,
    ))
}

/// A suggestion's label inside the recipe's sentence: its first word in
/// lower case unless it is an acronym or a name ("Turn on…" → "turn on…",
/// "QLoRA: …" and "LoRA…" stay).
fn mid_sentence(label: &str) -> String {
    let mut chars = label.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second))
            if first.is_ascii_uppercase() && !second.is_ascii_uppercase() =>
        {
            let mut out = String::with_capacity(label.len());
            out.push(first.to_ascii_lowercase());
            out.push_str(&label[1..]);
            out
        }
        _ => label.to_string(),
    }
}
