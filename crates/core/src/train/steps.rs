//! Memory over training steps (seeds 000, 003, 004): the first step creates
//! the optimizer state, gradient-accumulation micro-steps repeat, a leak
//! adds the same bytes every step, and the step that no longer fits is where
//! the run stops with an out-of-memory error.

use crate::report::{Component, Components, Estimate, Phase, PhaseReport};
use crate::scenario::{Leak, Scenario};
use crate::units::Bytes;

/// Micro-steps drawn one by one; beyond this, one stands for the rest.
const MAX_MICRO_DRAWN: u32 = 8;

/// One moment: x in steps (step k spans k-1..k).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub parts: Components,
}

/// The over-steps timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub points: Vec<Point>,
    /// Bytes a step keeps by mistake.
    pub leak_per_step: Bytes,
    /// The first step whose peak does not fit, if any (1-based).
    pub oom_step: Option<u32>,
    /// The highest point of each step, overhead included.
    pub step_peaks: Vec<Bytes>,
}

/// Bytes the chosen leak keeps per optimizer step: the outputs of every
/// micro-step (logits in the compute dtype), or the typed MiB.
pub fn leak_per_step(s: &Scenario) -> Bytes {
    match s.view.leak {
        Leak::None => Bytes::ZERO,
        Leak::Custom => Bytes(u64::from(s.view.leak_mib) << 20),
        Leak::Logits => {
            let Some(a) = s.arch else {
                return Bytes::ZERO;
            };
            let t = &s.train;
            let bytes = u128::from(t.batch.get())
                * u128::from(t.seq.get())
                * u128::from(a.vocab)
                * u128::from(crate::train::ledger::Mode::of(t.dtype).act())
                * u128::from(t.grad_accum.get());
            Bytes::try_from_u128(bytes).unwrap_or(Bytes(u64::MAX))
        }
    }
}

/// The phases of one step of iteration `it` (1 or 2), micro-steps expanded.
fn step_phases(e: &Estimate, it: u32, accum: u32) -> Vec<&PhaseReport> {
    let of = |micro: u32, ph: Phase| {
        e.phases
            .iter()
            .find(|p| p.iteration == it && p.micro_step == micro && p.phase == ph)
    };
    let mut out = Vec::new();
    for m in 1..=accum.clamp(1, MAX_MICRO_DRAWN) {
        let micro = m.min(2);
        out.extend(of(micro, Phase::Forward));
        out.extend(of(micro, Phase::Backward));
    }
    out.extend(of(1, Phase::OptimizerStep));
    out.extend(of(1, Phase::ZeroGrad));
    out
}

fn with_retained(mut c: Components, extra: Bytes) -> Components {
    c.set(Component::Retained, c.get(Component::Retained) + extra);
    c
}

/// The timeline of `steps` training steps against `capacity`.
pub fn timeline(s: &Scenario, e: &Estimate, capacity: Bytes) -> Timeline {
    let steps = s.view.iters.get();
    let accum = s.train.grad_accum.get();
    let leak = leak_per_step(s);
    let mut points = Vec::new();
    let mut step_peaks = Vec::new();
    let mut oom_step = None;
    let init = e.phases.iter().find(|p| p.phase == Phase::Init);
    let mut prev = init.map(|p| p.end_components).unwrap_or_default();
    for k in 1..=steps {
        let phases = step_phases(e, k.min(2), accum);
        let kept = Bytes(leak.get().saturating_mul(u64::from(k - 1)));
        let width = 1.0 / phases.len().max(1) as f64;
        let x0 = f64::from(k - 1);
        let mut peak = Bytes::ZERO;
        for (i, p) in phases.iter().enumerate() {
            let x = x0 + i as f64 * width;
            let last = i + 1 == phases.len();
            // The step's own leak appears when it ends.
            let end_kept = if last {
                Bytes(kept.get().saturating_add(leak.get()))
            } else {
                kept
            };
            let at_peak = with_retained(p.components, kept);
            let at_end = with_retained(p.end_components, end_kept);
            points.push(Point { x, parts: prev });
            points.push(Point {
                x: x + p.peak_at.fraction() * width,
                parts: at_peak,
            });
            points.push(Point {
                x: x + width,
                parts: at_end,
            });
            peak = peak.max(at_peak.total());
            prev = at_end;
        }
        step_peaks.push(peak);
        if oom_step.is_none() && peak > capacity {
            oom_step = Some(k);
        }
    }
    Timeline {
        points,
        leak_per_step: leak,
        oom_step,
        step_peaks,
    }
}
