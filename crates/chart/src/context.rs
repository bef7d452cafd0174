//! Memory against context length (inference): the curve
//! (`vramfit_core::infer::context_curve`) turned into stacked points on a
//! log₂ axis, with the run's own length and the longest that fits. Pure
//! arithmetic, no drawing; tested natively.

use crate::bands::Point;
use vramfit_core::infer::ContextPoint;

/// Where the run stops fitting, as the chart shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// Every length drawn fits.
    FitsAll,
    /// Fits up to this many tokens, not one more (inside the drawn range).
    Until(u32),
    /// Not even the shortest length fits.
    Never,
}

/// What the context chart draws: stacked points (x = log₂ tokens), the
/// run's own length and where it stops fitting.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextDrawing {
    pub points: Vec<Point>,
    /// The run's context, in tokens (a vertical line).
    pub now: u32,
    pub limit: Limit,
    /// The limit is where every layer stops fitting on the GPU (a local
    /// runner placing its layers: past it, layers move to host memory).
    pub whole: bool,
}

/// The x of `tokens` on the chart.
pub fn x_of(tokens: u32) -> f64 {
    f64::from(tokens.max(1)).log2()
}

/// The curve as a drawing. `longest` is the solver's longest context that
/// fits, in tokens (`None`: none fits); past the curve's last point it
/// means every length drawn fits. `whole`: it is the longest with every
/// layer on the GPU (`solve::Answers::context_whole`).
pub fn drawing(
    curve: &[ContextPoint],
    now: u32,
    longest: Option<u32>,
    whole: bool,
) -> ContextDrawing {
    let points = curve
        .iter()
        .map(|p| Point {
            x: x_of(p.tokens),
            parts: p.peak,
        })
        .collect();
    let last = curve.last().map_or(0, |p| p.tokens);
    let limit = match longest {
        None => Limit::Never,
        Some(n) if n >= last => Limit::FitsAll,
        Some(n) => Limit::Until(n),
    };
    ContextDrawing {
        points,
        now,
        limit,
        whole,
    }
}

/// A token count as an axis label: 512, 4K, 128K, 1M (powers of two).
pub fn tokens_label(tokens: u64) -> String {
    match tokens {
        t if t >= 1 << 20 && t % (1 << 20) == 0 => format!("{}M", t >> 20),
        t if t >= 1 << 10 && t % (1 << 10) == 0 => format!("{}K", t >> 10),
        t => t.to_string(),
    }
}

/// The label at `x` (an axis position): a power of two, or blank between.
pub fn x_label(x: f64) -> String {
    let k = x.round();
    if (x - k).abs() > 1e-6 || !(0.0..=31.0).contains(&k) {
        return String::new();
    }
    tokens_label(1u64 << (k as u32))
}
