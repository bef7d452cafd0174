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
use crate::report::{Drivers, Estimate, Method, OverheadRule, PhaseReport};
use crate::terms::TermSet;
use crate::units::Bytes;
use run::Run;

/// What drives a training step's activations and logits.
pub(crate) const DRIVERS: Drivers = Drivers {
    activations: "batch × seq",
    logits: "batch × seq",
    kv_cache: "batch × seq",
};

/// The accurate estimate of a training step: under pipeline parallelism,
/// that of the rank that needs most, with the peaks of the first rank,
/// the fullest middle one and the last beside it.
pub fn estimate(s: &Run) -> Result<Estimate, EstimateError> {
    let Some(arch) = s
        .arch
        .filter(|_| s.parallel.pp.get() > 1 && s.stage.is_none())
    else {
        let b = breakdown(s)?;
        let phases = match s.stage {
            Some(st) => phases::build_pipeline(&b, st, s.overhead)?,
            None => phases::build(&b, s.train.grad_accum.get() > 1, s.overhead)?,
        };
        return assemble(s, b, phases);
    };
    // Each rank's phases; the Estimate is assembled once, for the fullest.
    let mut best: Option<(Breakdown, Vec<PhaseReport>)> = None;
    let mut ranks: Vec<crate::report::RankPeak> = Vec::new();
    for st in pipeline::stages(s.parallel.pipeline(), arch.layers, s.train.batch.get()) {
        let b = breakdown(&Run {
            stage: Some(&st),
            ..*s
        })?;
        let phases = phases::build_pipeline(&b, &st, s.overhead)?;
        let Some(top) = crate::report::top_phase(&phases) else {
            continue;
        };
        let p = &phases[top];
        ranks.push(crate::report::RankPeak {
            rank: st.rank,
            layers: st.layers,
            first: st.first,
            last: st.last,
            peak_allocated_bytes: p.components.allocated(),
            peak_total_bytes: p.peak_bytes,
            peak_phase: p.phase,
            peak_iteration: p.iteration,
            components: p.components,
        });
        let higher = best.as_ref().is_none_or(|(_, bp)| {
            crate::report::top_phase(bp).is_some_and(|i| p.peak_bytes > bp[i].peak_bytes)
        });
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
    e.caveats.push(format!(
        "pipeline parallelism (pp={}, {}, {} micro-batches): the figures are rank {top}'s, the fullest; NCCL's buffers are not counted",
        s.parallel.pp.get(),
        s.parallel.pp_schedule.label(),
        s.parallel.micro_batches.get(),
    ));
    e.ranks = ranks;
    Ok(e)
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
    e.overhead = OverheadRule::ContextAndReserve {
        ctx_mib: s.overhead.cuda_ctx_mib,
        reserve_pct: s.overhead.reserve(),
    };
    e.caveats.extend(e.overhead.caveat().map(String::from));
    let tp = s.parallel.tp.get();
    if tp > 1 {
        e.caveats.push(format!(
            "tensor parallelism (tp={tp}): the parameters, gradients and optimizer state are this GPU's share, 1/{tp} of the heads, of the MLP and of the vocabulary (the first GPU's slice, the largest where a size does not divide), norms whole; NCCL's buffers for the all-reduces are not counted"
        ));
    }
    e.host_bytes = host_bytes;
    e.pageable_bytes = pageable_bytes;
    e.host_terms = host_terms;
    Ok(e)
}
