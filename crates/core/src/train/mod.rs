//! The training workload: live tensor bytes at every phase of the first two
//! training iterations, from the model's description (`crate::model`), the
//! ledger of what each layer saves for backward and the optimizer's own
//! allocations.
//!
//! The step is the Hugging Face Trainer's: `loss = model(ids, labels=ids).loss;
//! loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)`, with the
//! output object dropped right after `.loss` unless `keep_outputs`. Every
//! byte is a [`Term`](crate::terms::Term) (named factors); each phase's peak
//! and end are sets of terms. Held to the measured ground truth
//! (`tests/ground_truth.rs`).
//!
//! Reads `crate::model` and never matches on a family; reads its run as the
//! scenario hands it over (`run::Run`), and may not import the scenario, the
//! codec (`crate::query`) or anything of the page.

pub mod breakdown;
pub mod ledger;
pub mod lora;
pub mod optim;
mod phases;
pub mod pipeline;
pub mod run;
pub mod seed;
pub mod stack;
pub mod steps;

pub use breakdown::{breakdown, Breakdown};
pub use lora::{lora_count, LoraCount};
pub use optim::{zero_partition, OptimSpec};
pub use run::{Lora, Parallel, Targets, Training};

use crate::error::EstimateError;
use crate::inputs::Overhead;
use crate::model::family::Recurrence;
use crate::model::Architecture;
use crate::report::{Drivers, Estimate, Method, OverheadRule, Phase, PhaseReport};
use crate::terms::TermSet;
use crate::units::Bytes;
use run::{Quant, Run};

/// What drives a training step's activations and logits.
pub(crate) const DRIVERS: Drivers = Drivers {
    activations: "batch × seq",
    logits: "batch × seq",
    kv_cache: "batch × seq",
};

/// What the GPU holds beside a training run's tensors: PyTorch's context,
/// NCCL's communicator where several GPUs train (a process group on every
/// rank), and the caching allocator's reserve.
fn overhead(s: &Run) -> OverheadRule {
    OverheadRule::ContextAndReserve {
        ctx_mib: s.overhead.context(Overhead::CONTEXT_TORCH),
        nccl_mib: if s.parallel.gpus.get() > 1 {
            Overhead::NCCL_COMMUNICATOR
        } else {
            0
        },
        reserve_pct: s.overhead.reserve(),
    }
}

/// The accurate estimate of a training step: under pipeline parallelism,
/// that of the rank that needs most, with the peaks of the first rank,
/// the fullest middle one and the last beside it.
pub fn estimate(s: &Run) -> Result<Estimate, EstimateError> {
    let Some(arch) = s.arch.filter(|_| s.parallel.pp.get() > 1) else {
        let b = breakdown(s)?;
        let phases = phases::build(&b, s.train.grad_accum.get() > 1, overhead(s))?;
        return assemble(s, b, phases);
    };
    // Each rank's phases; the Estimate is assembled once, for the fullest.
    let mut best: Option<(Breakdown, Vec<PhaseReport>)> = None;
    let mut ranks: Vec<crate::report::RankPeak> = Vec::new();
    let stages = pipeline::stages(s.parallel.pipeline(), arch.layers, s.train.batch.get());
    let mut built = Built::for_ranks(&stages);
    for kinds in stages {
        let Some((b, phases, peak)) = rank(s, kinds, &mut built)? else {
            continue;
        };
        let higher = best.as_ref().is_none_or(|(_, bp)| {
            crate::report::top_phase(bp).is_some_and(|i| peak.peak_total_bytes > bp[i].peak_bytes)
        });
        ranks.push(peak);
        if higher {
            best = Some((b, phases));
        }
    }
    let (b, phases) = best.ok_or(EstimateError::NeedsArchitecture)?;
    let mut e = assemble(s, b, phases)?;
    let top = ranks
        .iter()
        .max_by_key(|r| (r.peak_total_bytes, std::cmp::Reverse(r.rank)))
        .map_or(0, |r| r.rank);
    let vpp = match s.parallel.vpp.get() {
        1 => String::new(),
        v => format!(", {v} stages a rank"),
    };
    e.caveats.push(format!(
        "pipeline parallelism (pp={}{vpp}, {}, {} micro-batches): the figures are rank {top}'s, the fullest; NCCL's buffers per peer are not counted",
        s.parallel.pp.get(),
        s.parallel.pp_schedule.label(),
        s.parallel.micro_batches.get(),
    ));
    e.ranks = ranks;
    Ok(e)
}

/// The estimate of one pipeline rank (`rank < pp`), as [`estimate`] makes
/// each rank's: its figures alone, without the other ranks'.
pub fn estimate_rank(s: &Run, rank: u32) -> Result<Estimate, EstimateError> {
    let arch = s.arch.ok_or(EstimateError::NeedsArchitecture)?;
    if rank >= s.parallel.pp.get() {
        return Err(EstimateError::NotModelled(
            "a rank beyond the pipeline's last",
        ));
    }
    let kinds = pipeline::rank_stages(
        s.parallel.pipeline(),
        arch.layers,
        s.train.batch.get(),
        rank,
    );
    let (b, phases, _) =
        self::rank(s, kinds, &mut Built::default())?.ok_or(EstimateError::NeedsArchitecture)?;
    assemble(s, b, phases)
}

/// A pipeline rank's breakdown, phases and peak (`None`: no phase). A
/// rank holding stages of two kinds (interleaved 1F1B) is sized on each
/// kind's (each with the other's micro-batches and gradients beside it),
/// and its figures are those of the kind whose forward or backward needs
/// most.
fn rank(
    s: &Run,
    kinds: Vec<run::Stage>,
    built: &mut Built,
) -> Result<Option<(Breakdown, Vec<PhaseReport>, crate::report::RankPeak)>, EstimateError> {
    let Some(st) = kinds.first() else {
        return Ok(None);
    };
    let (rank, layers) = (st.rank, st.rank_layers);
    let first = kinds.iter().any(|k| k.first);
    let last = kinds.iter().any(|k| k.last);
    let mut best: Option<(Breakdown, Vec<PhaseReport>, Bytes)> = None;
    for b in pipeline_breakdowns(s, kinds, built)? {
        let phases = phases::build_pipeline(&b.0, &b.1, overhead(s))?;
        let run_peak = phases
            .iter()
            .filter(|p| matches!(p.phase, Phase::Forward | Phase::Backward))
            .map(|p| p.peak_bytes)
            .max()
            .unwrap_or_default();
        if best.as_ref().is_none_or(|x| run_peak > x.2) {
            best = Some((b.0, phases, run_peak));
        }
    }
    let Some((b, phases, _)) = best else {
        return Ok(None);
    };
    let Some(top) = crate::report::top_phase(&phases) else {
        return Ok(None);
    };
    let p = &phases[top];
    let peak = crate::report::RankPeak {
        rank,
        layers,
        first,
        last,
        peak_allocated_bytes: p.components.allocated(),
        peak_total_bytes: p.peak_bytes,
        peak_phase: p.phase,
        peak_iteration: p.iteration,
        components: p.components,
    };
    Ok(Some((b, phases, peak)))
}

/// Each kind of stage's breakdown with what the rank's other stages hold
/// beside it. One stage: its own breakdown. Several (interleaved 1F1B):
/// the parameters, their state and the optimizer's temporaries are the
/// rank's (sized as one stage holding all its layers), the gradients those
/// of the stage running plus the other stages' made so far, and the
/// micro-batches waiting on the stages of the other kind are sized on
/// that kind's breakdown.
fn pipeline_breakdowns(
    s: &Run,
    kinds: Vec<run::Stage>,
    built: &mut Built,
) -> Result<Vec<(Breakdown, run::Stage)>, EstimateError> {
    let mut on = |st: &run::Stage| built.get(s, st);
    let mut out = Vec::with_capacity(kinds.len());
    let Some(whole) = whole_of(&kinds) else {
        for st in kinds {
            out.push((on(&st)?, st));
        }
        return Ok(out);
    };
    // Each kind alone, then what one micro-batch leaves for backward on
    // each and one stage's gradients.
    let mut built = Vec::with_capacity(kinds.len());
    let mut sizes = [run::Sizes::default(); 2];
    for (i, st) in kinds.iter().enumerate() {
        let b = on(st)?;
        if let Some(size) = sizes.get_mut(i) {
            *size = run::Sizes {
                saved: breakdown::left_for_backward(&b.terms),
                grads: b.terms.bytes(crate::terms::TermId::Grads),
            };
        }
        built.push(b);
    }
    let rank_terms = on(&whole)?;
    let two = kinds.len() == 2;
    for (i, (mut st, mut b)) in kinds.into_iter().zip(built).enumerate() {
        if two {
            st.other_sizes = sizes[1 - i];
            breakdown::beside(&mut b.terms, &st, b.pipe);
        }
        breakdown::rank_wide(&mut b.terms, &rank_terms.terms);
        b.trainable = rank_terms.trainable;
        out.push((b, st));
    }
    Ok(out)
}

/// What a rank of several stages (interleaved 1F1B) is sized as for what
/// its stages share: one stage holding all its layers; `None` for a rank
/// of one stage.
fn whole_of(kinds: &[run::Stage]) -> Option<run::Stage> {
    let head = kinds.first()?;
    if kinds.len() == 1 && head.alike == 1 {
        return None;
    }
    Some(run::Stage {
        layers: head.rank_layers,
        first: kinds.iter().any(|k| k.first),
        last: kinds.iter().any(|k| k.last),
        alike: 1,
        other: 0,
        moments: Vec::new(),
        ..head.clone()
    })
}

/// The breakdowns an estimate's pipeline ranks share: ranks whose stages
/// are alike but for the schedule (the middle ranks' plain stages under
/// interleaved 1F1B) build one, and the others copy it with their own
/// moments. Only the shapes that recur are kept (a copy costs a few
/// kilobytes moved).
#[derive(Default)]
struct Built {
    recurring: Vec<run::StageShape>,
    kept: Vec<(run::StageShape, Breakdown)>,
}

impl Built {
    /// For these ranks' stages (each rank's kinds, as `pipeline::stages`
    /// lists them).
    fn for_ranks(ranks: &[Vec<run::Stage>]) -> Built {
        let mut seen = Vec::new();
        let mut recurring = Vec::new();
        for kinds in ranks {
            let whole = whole_of(kinds);
            for shape in kinds.iter().chain(&whole).map(run::Stage::shape) {
                if !seen.contains(&shape) {
                    seen.push(shape);
                } else if !recurring.contains(&shape) {
                    recurring.push(shape);
                }
            }
        }
        Built {
            recurring,
            kept: Vec::new(),
        }
    }

    /// `st`'s breakdown: built once per shape, then copied with `st`'s
    /// own moments (`breakdown::beside`).
    fn get(&mut self, s: &Run, st: &run::Stage) -> Result<Breakdown, EstimateError> {
        let shape = st.shape();
        if let Some((_, b)) = self.kept.iter().find(|(k, _)| *k == shape) {
            let mut b = b.clone();
            breakdown::beside(&mut b.terms, st, b.pipe);
            return Ok(b);
        }
        let b = breakdown(&Run {
            stage: Some(st),
            ..*s
        })?;
        if self.recurring.contains(&shape) {
            self.kept.push((shape, b.clone()));
        }
        Ok(b)
    }
}

/// What tensor parallelism splits, in the words of what this model has
/// (`breakdown::tp_share`), and what is not counted; `None` without it.
fn tp_caveat(s: &Run) -> Option<String> {
    let tp = s.parallel.tp.get();
    if tp <= 1 {
        return None;
    }
    let a = s.arch?;
    let heads = if a.family.spec().tp == crate::model::family::TpPlan::GatheredHeads {
        "of the attention's weights (its outputs gathered: every head runs on each GPU)"
    } else {
        "of the heads"
    };
    let experts = if a.moe().is_some() {
        format!(", 1/{tp} of each routed expert's width")
    } else {
        String::new()
    };
    let delta_net = if a.linear_layers > 0 {
        format!(", 1/{tp} of the Gated DeltaNet projections' rows (their outputs gathered whole, so their activations are one GPU's)")
    } else {
        String::new()
    };
    Some(format!(
        "tensor parallelism (tp={tp}): the parameters, gradients and optimizer state are this GPU's share, 1/{tp} {heads}, of the MLP and of the vocabulary (the first GPU's slice, the largest where a size does not divide){experts}{delta_net}, norms whole; NCCL's buffers per peer for the all-reduces are not counted (its communicator's kernels are)"
    ))
}

/// The estimate from one GPU's terms and phases.
fn assemble(s: &Run, b: Breakdown, phases: Vec<PhaseReport>) -> Result<Estimate, EstimateError> {
    let too_large = EstimateError::TooLarge {
        field: "the model size",
    };
    let params = crate::report::param_count(b.params)?;
    let trainable = crate::report::param_count(b.trainable)?;
    let bytes = |set: TermSet| {
        let sum = set
            .iter()
            .fold(0u128, |acc, id| acc.saturating_add(b.terms.bytes(id)));
        u64::try_from(sum).map(Bytes).map_err(|_| too_large.clone())
    };
    let (host_bytes, pageable_bytes) = (bytes(b.host)?, bytes(b.pageable)?);
    let host_terms = TermSet::of(
        &b.host
            .iter()
            .filter(|id| b.terms.bytes(*id) > 0)
            .collect::<Vec<_>>(),
    );
    let mut e = Estimate::from_phases(Method::Vramfit, params, trainable, phases, b.terms);
    e.overhead = overhead(s);
    e.caveats.extend(e.overhead.caveat().map(String::from));
    e.caveats.extend(tp_caveat(s));
    if let Some(a) = s.arch.filter(|a| a.linear_layers > 0) {
        let qlora_ckpt = s.train.quant != Quant::None && s.train.ckpt().on();
        e.caveats.extend(hybrid_caveat(a, qlora_ckpt));
    }
    if s.arch.is_some_and(|a| a.family.spec().varies_by_layer()) && s.train.ckpt().on() {
        e.caveats.push(GEMMA4_CKPT_CAVEAT.to_string());
    }
    // The 12B's multimodal wrapper (`gemma4_unified`): not replayed.
    let unified = s.arch.is_some_and(|a| a.family.spec().token_type_mask);
    if unified {
        e.caveats.push(GEMMA4_UNIFIED_CAVEAT.to_string());
    }
    e.caveats
        .extend(s.arch.and_then(|a| a.layer_order_caveat()));
    e.caveats
        .extend(s.arch.and_then(|a| unquantized_experts(a, s.train)));
    e.host_bytes = host_bytes;
    e.pageable_bytes = pageable_bytes;
    e.host_terms = host_terms;
    Ok(e)
}

/// Gemma 4 with checkpointing: its backward's moments at layer 0 (the
/// recomputed keys and values of the layers later layers reuse, the
/// per-layer inputs' gradient, the norms' backward) are measured on E2B's
/// and E4B's published configs (exact) and on shrunk ones (up to 4.1%
/// high in backward, 3.4% overall: `tests/ground_truth.rs`).
const GEMMA4_CKPT_CAVEAT: &str = "Gemma 4 with checkpointing: its backward holds, beside the recomputed layer, the keys and values the last layers reuse as every earlier layer's checkpoint keeps them (`shared_kv_states`) and the per-layer inputs' gradient; exact on E2B's and E4B's published configs, up to 4% high on small test configurations (hidden 256), where the moment vramfit takes inside a norm's backward is not the peak";

/// Gemma 4 12B trained as its text model (`Gemma4UnifiedForCausalLM`, as
/// measured: `scripts/measure/gemma4/train_unified_rows.jsonl`); the
/// multimodal wrapper the published checkpoint loads into builds a
/// token-type mask of the sequence's square per forward (measured under
/// `generate`, not replayed).
const GEMMA4_UNIFIED_CAVEAT: &str = "Gemma 4 12B: estimated as its text model (Gemma4UnifiedForCausalLM); loaded as the published checkpoint's multimodal wrapper, each forward also builds a boolean token-type mask of sequence × sequence positions, which vramfit does not count";

/// A quantized base's routed experts where transformers 5 stacks them in
/// 3-D parameters: bitsandbytes replaces only `nn.Linear` layers, so they
/// stay unquantized, and peft's `prepare_model_for_kbit_training` casts
/// every parameter that is not 4- or 8-bit to fp32. Measured: the shrunk
/// MoE hybrids' and Mixtral's QLoRA rows (`hybrid_train_rows.jsonl`,
/// `t4_rows.jsonl`), whose frozen parameters are the experts in fp32.
fn unquantized_experts(a: &crate::model::Architecture, t: &run::Training) -> Option<String> {
    use crate::model::tensors::{ExpertLayout, Role};
    if t.quant == Quant::None || t.expert_layout() != ExpertLayout::Stacked {
        return None;
    }
    let mut elems = 0u128;
    a.for_each_tensor_as(ExpertLayout::Stacked, |at, p| {
        if p.role == Role::Expert {
            elems += at.copies() * p.elems();
        }
    });
    if elems == 0 {
        return None;
    }
    let dtype = if t.kbit_prep {
        "prepare_model_for_kbit_training casts them to fp32 (kbit_prep=false keeps them in the load dtype)"
    } else {
        "they stay in the load dtype"
    };
    // Tenths of a billion, at least one.
    let tenths = elems.div_ceil(100_000_000);
    let (whole, tenth) = (tenths / 10, tenths % 10);
    Some(format!(
        "a quantized base's routed experts ({whole}.{tenth} billion parameters, stacked in 3-D parameters by transformers 5) are sized unquantized, as bitsandbytes leaves them (it replaces only nn.Linear layers), and {dtype}"
    ))
}

/// What a hybrid's training figures assume, by its kind of recurrent
/// layer: transformers 5.23's torch fallbacks, measured on shrunk Qwen3.5
/// and Qwen3-Next layers (`scripts/measure/hybrid/`) and shrunk LFM2
/// (`scripts/measure/families/lfm2/train/`); flash-linear-attention's
/// and causal-conv1d's kernels keep other tensors. `qlora_ckpt`: a
/// quantized base under checkpointing, whose backward was measured up to
/// 2% below the estimate.
fn hybrid_caveat(a: &Architecture, qlora_ckpt: bool) -> Option<String> {
    let linear = a.linear_layers;
    let qlora = if qlora_ckpt {
        "; with a quantized base and checkpointing the backward's peak was up to 2% below this estimate on the measured models (it falls inside an earlier layer than the last)"
    } else {
        ""
    };
    match a.family.spec().linear?.kind {
        Recurrence::GatedDeltaNet => Some(format!(
            "Gated DeltaNet ({linear} layers): sized as transformers 5.23 runs them without flash-linear-attention and causal-conv1d (its torch fallbacks: fp32 chunks of 64 positions, every chunk's state kept for backward); with those packages installed their kernels keep less, not modelled{qlora}"
        )),
        Recurrence::ShortConv => Some(format!(
            "short convolutions ({linear} layers): sized as transformers 5.23 runs them without the causal-conv1d kernel (its torch fallback: F.conv1d over the whole sequence, its input and output kept for backward); with the kernel installed they keep other tensors, not modelled"
        )),
        // Training refuses them (`breakdown::recurrence_unmeasured`).
        Recurrence::Mamba2 | Recurrence::Kda => None,
    }
}
