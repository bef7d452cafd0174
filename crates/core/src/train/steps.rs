//! Memory over training steps (seeds 000, 003, 004): the first step creates
//! the optimizer state, gradient-accumulation micro-steps repeat, a leak
//! adds the same bytes every step, and the step that no longer fits is where
//! the run stops with an out-of-memory error.

use crate::component::{Component, Components};
use crate::error::EstimateError;
use crate::inputs::Leak;
use crate::report::{Estimate, Phase, PhaseReport};
use crate::terms::TermId;
use crate::train::run::Run;
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

/// Bytes the chosen leak keeps per optimizer step: the output object of
/// every micro-step (its logits, the estimate's own logits term), or the
/// typed MiB. Too large for 64 bits is the estimate's error, naming the
/// inputs.
pub fn leak_per_step(s: &Run, e: &Estimate) -> Result<Bytes, EstimateError> {
    let (bytes, field) = match s.view.leak {
        Leak::None => return Ok(Bytes::ZERO),
        Leak::Custom => (u128::from(s.view.leak_mib) << 20, "leak_mib"),
        Leak::Logits => (
            e.terms.bytes(TermId::LogitsOut) * u128::from(s.train.grad_accum.get()),
            "batch × seq × grad_accum (the logits kept every step)",
        ),
    };
    Bytes::try_from_u128(bytes).ok_or(EstimateError::TooLarge { field })
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

/// `c` with `extra` bytes kept across steps, or the leak's error when the
/// moment no longer fits in 64 bits.
fn with_retained(mut c: Components, extra: u128, s: &Run) -> Result<Components, EstimateError> {
    let total = u128::from(c.total().get()) + extra;
    let retained = u128::from(c.get(Component::Retained).get()) + extra;
    match (u64::try_from(total), u64::try_from(retained)) {
        (Ok(_), Ok(r)) => {
            c.set(Component::Retained, Bytes(r));
            Ok(c)
        }
        _ => Err(EstimateError::TooLarge {
            field: match s.view.leak {
                Leak::Custom => "leak_mib × iters",
                Leak::None | Leak::Logits => {
                    "batch × seq × grad_accum (the logits kept every step)"
                }
            },
        }),
    }
}

/// The timeline of `steps` training steps against `capacity`; an error
/// when what the steps keep no longer fits in 64 bits (the estimate's own
/// size rule).
pub fn timeline(s: &Run, e: &Estimate, capacity: Bytes) -> Result<Timeline, EstimateError> {
    let steps = s.view.iters.get();
    let accum = s.train.grad_accum.get();
    let leak = leak_per_step(s, e)?;
    let mut points = Vec::new();
    let mut step_peaks = Vec::new();
    let mut oom_step = None;
    let init = e.phases.iter().find(|p| p.phase == Phase::Init);
    let mut prev = init.map(|p| p.end_components).unwrap_or_default();
    for k in 1..=steps {
        let phases = step_phases(e, k.min(2), accum);
        let kept = u128::from(leak.get()) * u128::from(k - 1);
        let width = 1.0 / phases.len().max(1) as f64;
        let x0 = f64::from(k - 1);
        let mut peak = Bytes::ZERO;
        for (i, p) in phases.iter().enumerate() {
            let x = x0 + i as f64 * width;
            // The step's own leak appears when it ends.
            let end_kept = if i + 1 == phases.len() {
                kept + u128::from(leak.get())
            } else {
                kept
            };
            let at_peak = with_retained(p.components, kept, s)?;
            let at_end = with_retained(p.end_components, end_kept, s)?;
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
    Ok(Timeline {
        points,
        leak_per_step: leak,
        oom_step,
        step_peaks,
    })
}
