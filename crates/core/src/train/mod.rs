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
use crate::report::{Drivers, Estimate, Method, OverheadRule};
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
        return estimate_one(s);
    };
    let mut best: Option<Estimate> = None;
    let mut ranks: Vec<crate::report::RankPeak> = Vec::new();
    for st in pipeline::stages(s.parallel.pipeline(), arch.layers, s.train.batch.get()) {
        // Of the ranks whose stages are alike (the middle ones), the first
        // keeps the most micro-batches in flight at every kind of moment
        // (1F1B: pp − rank; GPipe: all alike): it stands for the others.
        if ranks
            .iter()
            .any(|r| (r.layers, r.first, r.last) == (st.layers, st.first, st.last))
        {
            continue;
        }
        let e = estimate_one(&Run {
            stage: Some(&st),
            ..*s
        })?;
        let peak = e.peak().ok_or(EstimateError::TooLarge {
            field: "the model size",
        })?;
        ranks.push(crate::report::RankPeak {
            rank: st.rank,
            layers: st.layers,
            first: st.first,
            last: st.last,
            peak_allocated_bytes: e.peak_allocated_bytes,
            peak_total_bytes: e.peak_total_bytes,
            peak_phase: e.peak_phase,
            peak_iteration: e.peak_iteration,
            components: peak.components,
        });
        if best
            .as_ref()
            .is_none_or(|b| e.peak_total_bytes > b.peak_total_bytes)
        {
            best = Some(e);
        }
    }
    let mut e = best.ok_or(EstimateError::NeedsArchitecture)?;
    let top = ranks
        .iter()
        .max_by_key(|r| (r.peak_total_bytes, std::cmp::Reverse(r.rank)))
        .map_or(0, |r| r.rank);
    e.caveats.push(format!(
        "pipeline parallelism (pp={}, {}, {} micro-batches): the figures are rank {top}'s, the one that needs most (the first, the fullest middle one and the last are listed); NCCL's send and receive buffers are not counted",
        s.parallel.pp.get(),
        s.parallel.pp_schedule.label(),
        s.parallel.micro_batches.get(),
    ));
    e.ranks = ranks;
    Ok(e)
}

/// One GPU's estimate (one pipeline rank's where `s.stage` says).
fn estimate_one(s: &Run) -> Result<Estimate, EstimateError> {
    let b = breakdown(s)?;
    let phases = match s.stage {
        Some(st) => phases::build_pipeline(&b, st, s.overhead)?,
        None => phases::build(&b, s.train.grad_accum.get() > 1, s.overhead)?,
    };
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
