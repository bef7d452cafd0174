//! The chart's bands and its drawing, rendered natively to SVG.

use plotters::prelude::*;
use vramfit_chart::bands::{stack, timeline};
use vramfit_chart::{draw_phases, draw_steps, ChartStyle};
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::train::{seed, steps};
use vramfit_core::{Bytes, Component, DisplayUnit, Estimate, Estimates};

fn estimate(q: &str) -> Estimate {
    let s = decode_strict(&RawQuery::parse(q)).expect("valid query");
    seed::estimate(&s.train_run()).expect("estimate")
}

fn svg_of(
    size: (u32, u32),
    f: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>),
) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        f(&root);
    }
    svg
}

const Q: &str = "params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048";

#[test]
fn timeline_has_start_peak_end_per_phase() {
    let e = estimate(Q);
    let t = timeline(&e.phases);
    assert_eq!(t.len(), e.phases.len() * 3);
    // Each phase starts where the previous ended.
    for (i, p) in e.phases.iter().enumerate().skip(1) {
        assert_eq!(t[3 * i].parts, e.phases[i - 1].end_components);
        assert_eq!(t[3 * i + 1].parts, p.components);
        assert_eq!(t[3 * i].x, i as f64);
    }
    // Forward peaks at its end.
    assert_eq!(t[4].x, 2.0);
}

#[test]
fn bands_stack_exactly() {
    let e = estimate(Q);
    let points = timeline(&e.phases);
    let bands = stack(&points);
    let order: Vec<Component> = bands.iter().map(|b| b.component).collect();
    assert_eq!(
        order,
        [
            Component::Parameters,
            Component::OptimizerState,
            Component::Gradients,
            Component::OptimizerTemporaries,
            Component::Activations
        ]
    );
    // Each band sits on the one below; the top edge is the total.
    for w in bands.windows(2) {
        assert_eq!(w[0].upper, w[1].lower);
    }
    assert!(bands[0].lower.iter().all(|&(_, y)| y == 0));
    let top = &bands[bands.len() - 1].upper;
    for (p, &(x, y)) in points.iter().zip(top) {
        assert_eq!((p.x, p.parts.total().get()), (x, y));
    }
    // Band thickness is the component's bytes.
    let acts = &bands[4];
    assert_eq!(acts.upper[4].1 - acts.lower[4].1, 83_650_478_080);
    assert_eq!(acts.polygon().count(), 2 * points.len());
}

#[test]
fn draws_bands_legend_axes_and_peak_to_svg() {
    let e = estimate(Q);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        let style = ChartStyle {
            dark: false,
            unit: DisplayUnit::Gib,
            capacity: None,
            capacity_label: "GPU",
        };
        draw_phases(&root, &e, &style).expect("draws");
    }
    assert_eq!(svg.matches("<polygon").count(), 5, "one polygon per band");
    for label in ["Parameters", "Optimizer state", "Gradients", "Activations"] {
        assert!(svg.contains(label), "legend has {label}");
    }
    assert!(svg.contains("memory (GiB)"));
    assert!(svg.contains("phase of the training step"));
    assert!(svg.contains("fwd 1") && svg.contains("step 2"));
    assert!(svg.contains("peak 86.29 GiB (forward 2)"), "{svg}");
}

#[test]
fn gb_unit_changes_the_axis() {
    let e = estimate(Q);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (600, 300)).into_drawing_area();
        let style = ChartStyle {
            dark: true,
            unit: DisplayUnit::Gb,
            capacity: None,
            capacity_label: "GPU",
        };
        draw_phases(&root, &e, &style).expect("draws");
    }
    assert!(svg.contains("memory (GB)"));
    assert!(svg.contains("peak 92.65 GB"));
}

#[test]
fn the_capacity_line_is_drawn_and_labelled() {
    let e = estimate(Q);
    let style = ChartStyle {
        dark: false,
        unit: DisplayUnit::Gib,
        capacity: Some(Bytes(80 << 30)),
        capacity_label: "GPU",
    };
    let svg = svg_of((900, 420), |root| {
        draw_phases(root, &e, &style).expect("draws")
    });
    assert!(svg.contains("GPU 80.00 GiB"), "capacity label");
    assert!(
        svg.contains("#C62828") || svg.contains("#c62828"),
        "red capacity line"
    );
}

#[test]
fn the_steps_chart_marks_the_step_that_runs_out_of_memory() {
    let q = "model=gpt2-124m&dtype=fp32&batch=4&seq=1024&iters=10&gpu=custom&capacity_gib=9&leak=logits";
    let s = decode_strict(&RawQuery::parse(q)).expect("valid");
    let e = Estimates::new(&s).primary().cloned().expect("estimate");
    let t = steps::timeline(&s.train_run(), &e, s.view.capacity.bytes()).expect("timeline");
    let k = t.oom_step.expect("runs out of memory");
    let style = ChartStyle {
        dark: false,
        unit: DisplayUnit::Gib,
        capacity: Some(s.view.capacity.bytes()),
        capacity_label: "GPU",
    };
    let svg = svg_of((900, 420), |root| {
        draw_steps(root, &t, &style).expect("draws")
    });
    assert!(svg.contains(&format!("out of memory at step {k}")));
    assert!(svg.contains("Kept across steps"), "the leak has its band");
    assert!(svg.contains("training step"));
}

#[test]
fn micro_steps_get_their_own_labels() {
    let q = "model=gpt2-124m&grad_accum=4";
    let s = decode_strict(&RawQuery::parse(q)).expect("valid");
    let e = Estimates::new(&s).primary().cloned().expect("estimate");
    let style = ChartStyle {
        dark: false,
        unit: DisplayUnit::Gib,
        capacity: None,
        capacity_label: "GPU",
    };
    let svg = svg_of((1200, 420), |root| {
        draw_phases(root, &e, &style).expect("draws")
    });
    assert!(svg.contains("fwd 1·m2") && svg.contains("bwd 2·m2"));
}
