//! From an estimate to stacked bands: pure arithmetic, no drawing.
//!
//! plotters' `AreaSeries` takes a scalar baseline, so a stacked-area chart is
//! drawn as one polygon per component between its lower and upper edges,
//! computed here and tested natively.

use vramfit_core::{Component, Components, Estimate, PhaseReport};

/// One moment of the timeline: x in phase units (phase `i` spans `i..i+1`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub parts: Components,
}

/// The memory timeline of an estimate: for each phase its start (the
/// previous phase's end), its peak and its end.
pub fn timeline(phases: &[PhaseReport]) -> Vec<Point> {
    let mut out = Vec::with_capacity(phases.len() * 3);
    let mut prev = Components::default();
    for (i, p) in phases.iter().enumerate() {
        let x = i as f64;
        out.push(Point { x, parts: prev });
        out.push(Point {
            x: x + p.peak_at.fraction(),
            parts: p.components,
        });
        out.push(Point {
            x: x + 1.0,
            parts: p.end_components,
        });
        prev = p.end_components;
    }
    out
}

/// One component's band: `upper[k]` and `lower[k]` share the x of point `k`.
/// Heights are exact bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub component: Component,
    pub lower: Vec<(f64, u64)>,
    pub upper: Vec<(f64, u64)>,
}

impl Band {
    /// The closed outline: along the top left to right, back along the bottom.
    pub fn polygon(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.upper.iter().chain(self.lower.iter().rev()).copied()
    }
}

/// Stacks the components of every point in [`Component::ALL`] order. A
/// component that is zero everywhere gets no band.
pub fn stack(points: &[Point]) -> Vec<Band> {
    let mut base = vec![0u64; points.len()];
    let mut bands = Vec::new();
    for c in Component::ALL {
        if points.iter().all(|p| p.parts.get(c).get() == 0) {
            continue;
        }
        let lower: Vec<(f64, u64)> = points.iter().zip(&base).map(|(p, &b)| (p.x, b)).collect();
        for (b, p) in base.iter_mut().zip(points) {
            *b = b.saturating_add(p.parts.get(c).get());
        }
        let upper = points.iter().zip(&base).map(|(p, &b)| (p.x, b)).collect();
        bands.push(Band {
            component: c,
            lower,
            upper,
        });
    }
    bands
}

/// The highest point of the estimate's timeline: (x, bytes).
pub fn peak_point(est: &Estimate) -> (f64, u64) {
    timeline(&est.phases)
        .iter()
        .map(|p| (p.x, p.parts.total().get()))
        .fold((0.0, 0), |best, p| if p.1 > best.1 { p } else { best })
}
