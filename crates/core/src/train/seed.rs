//! The seed formula: the estimate of "Understanding Model Memory
//! Calculations" (seed `001_420ff22d8420f7e5.txt`), as written. Kept beside
//! the accurate estimator so people can see how far the popular formula is
//! from measured PyTorch memory.
//!
//! Every quantity uses one precision P, the bytes of the parameter dtype
//! (4 for fp32 and mixed precision, 2 for bf16/fp16).

use crate::error::EstimateError;
use crate::report::{tally, Estimate, Method, Moment, Phase, PhaseReport};
use crate::terms::{Term, TermId as T, TermSet, Terms, Unit};
use crate::train::run::Optimizer;
use crate::train::run::Run;
use crate::units::Bytes;

/// The seed's heuristic for activations per token:
/// A = 4.6894e-4 × N + 1.8494e6.
///
/// Source: seed 001, "Memory Calculation Formulas", 5. Activations.
pub fn activations_per_token(params: u128) -> f64 {
    4.6894e-4 * params as f64 + 1.8494e6
}

/// Optimizer state as a multiple of N × P.
///
/// Source: seed 001, 2. Optimizer State: "Optimizer State = 2 × N × P" for
/// Adam; "for simpler optimizers like SGD without momentum, this requirement
/// may be lower". The seed names no other optimizer, so every other one is
/// counted as Adam, as written. DIFFERENCE: the seed gives no number for SGD;
/// we read "lower" as one buffer (N × P) with momentum and none without.
pub fn state_multiplier(optim: Optimizer) -> u64 {
    u64::from(optim.spec().seed_state)
}

/// The seed's five quantities for a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedTerms {
    /// Model memory = N × P.
    pub model: Bytes,
    /// Optimizer state = 2 × N × P for Adam (see [`state_multiplier`]).
    pub optimizer_state: Bytes,
    /// Gradients = N × P.
    pub gradients: Bytes,
    /// Optimizer intermediates = N × P.
    pub optimizer_intermediates: Bytes,
    /// Activations = A × B × L × P, rounded to whole bytes.
    pub activations: Bytes,
}

impl SeedTerms {
    pub fn new(s: &Run) -> Result<Self, EstimateError> {
        SeedTerms::of(s, s.params())
    }

    /// The terms of `s` with `n` parameters ([`Run::params`], counted
    /// once by the caller).
    fn of(s: &Run, n: u128) -> Result<Self, EstimateError> {
        let t = &s.train;
        let p = u128::from(t.dtype.param_bytes());
        let np = Bytes::try_from_u128(n * p).ok_or(EstimateError::TooLarge { field: "params" })?;
        let state = Bytes::try_from_u128(n * p * u128::from(state_multiplier(t.optim)))
            .ok_or(EstimateError::TooLarge { field: "params" })?;
        let tokens_bytes = f64::from(t.batch.get()) * f64::from(t.seq.get()) * p as f64;
        let acts = (activations_per_token(n) * tokens_bytes).round();
        // 2^64 is exactly representable; anything at or above it does not fit.
        if acts >= 18_446_744_073_709_551_616.0 {
            return Err(EstimateError::TooLarge {
                field: "batch × seq",
            });
        }
        Ok(SeedTerms {
            model: np,
            optimizer_state: state,
            gradients: np,
            optimizer_intermediates: np,
            activations: Bytes(acts as u64),
        })
    }
}

/// The seed's four phases over two iterations.
///
/// What is alive follows the seed's "How GPU Gets Utilized": init holds the
/// model; forward adds activations; backward frees activations as it creates
/// gradients, so its peak is the larger of the two; the optimizer step holds
/// gradients, state and intermediates, then frees gradients and
/// intermediates. The state, created by the first step, stays for every
/// later iteration.
pub fn estimate(s: &Run) -> Result<Estimate, EstimateError> {
    let n = s.params();
    let t = SeedTerms::of(s, n)?;
    let p = u128::from(s.train.dtype.param_bytes());
    let np = [(n, Unit::Params), (p, Unit::BytesEach)];
    let mut terms = Terms::default();
    terms.set(T::SeedModel, Term::of(&np));
    terms.set(
        T::SeedState,
        Term::of(&[
            (u128::from(state_multiplier(s.train.optim)), Unit::Copies),
            (n, Unit::Params),
            (p, Unit::BytesEach),
        ]),
    );
    terms.set(T::SeedGrads, Term::of(&np));
    terms.set(T::SeedIntermediates, Term::of(&np));
    terms.set(
        T::SeedActivations,
        Term::of(&[(u128::from(t.activations.get()), Unit::Bytes)]),
    );
    let model = TermSet::of(&[T::SeedModel]);
    // Each moment is converted once, checked: a sum past 2^64 bytes is an
    // error naming what drives it, never a saturated total.
    let report = |iteration, phase, at, peak: TermSet, end: TermSet| {
        let mut r = PhaseReport::new(
            iteration,
            phase,
            at,
            tally(&terms, peak).components(0, &super::DRIVERS)?,
            tally(&terms, end).components(0, &super::DRIVERS)?,
        );
        r.terms = peak;
        r.end_terms = end;
        Ok::<_, EstimateError>(r)
    };
    let mut phases = vec![report(0, Phase::Init, Moment::End, model, model)?];
    for iteration in [1, 2] {
        let base = if iteration == 1 {
            model
        } else {
            model.with(T::SeedState)
        };
        let forward = base.with(T::SeedActivations);
        let grads = base.with(T::SeedGrads);
        let (backward_at, backward_peak) = if t.activations >= t.gradients {
            (Moment::Start, forward)
        } else {
            (Moment::End, grads)
        };
        let step_end = model.with(T::SeedState);
        let step_peak = step_end.union(TermSet::of(&[T::SeedGrads, T::SeedIntermediates]));
        phases.push(report(
            iteration,
            Phase::Forward,
            Moment::End,
            forward,
            forward,
        )?);
        phases.push(report(
            iteration,
            Phase::Backward,
            backward_at,
            backward_peak,
            grads,
        )?);
        phases.push(report(
            iteration,
            Phase::OptimizerStep,
            Moment::Middle,
            step_peak,
            step_end,
        )?);
    }
    let n = u64::try_from(n).map_err(|_| EstimateError::TooLarge {
        field: "the model size",
    })?;
    Ok(Estimate::from_phases(
        Method::SeedFormula,
        n,
        n,
        phases,
        terms,
    ))
}
