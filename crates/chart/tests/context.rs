//! Inference charts: the phases of a run, and memory against context
//! length (bands, axis, the run's length, where it stops fitting),
//! rendered natively to SVG.

use plotters::prelude::*;
use vramfit_chart::bands::stack;
use vramfit_chart::context::{drawing, tokens_label, x_label, x_of, Limit};
use vramfit_chart::{draw_context, draw_phases, phase_label, ChartStyle};
use vramfit_core::infer::{context_curve, context_of};

/// The run's estimate, from which the chart reads the engine's context.
fn primary(s: &vramfit_core::Scenario) -> Option<vramfit_core::Estimate> {
    vramfit_core::Estimates::primary_of(s).ok()
}

use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::{solve, Bytes, Component, DisplayUnit, Estimates, Phase, Scenario};

/// Llama 3.1 8B in 4 bits, an 8K prompt, on a 16 GiB laptop GPU.
const Q: &str = "task=infer&model=llama3.1-8b&weights=nf4&double_quant=true&prompt=8192&new=512&gpu=rtx-4090-laptop";

fn scenario(q: &str) -> Scenario {
    decode_strict(&RawQuery::parse(q)).expect("valid query")
}

fn style(capacity: Option<Bytes>) -> ChartStyle {
    ChartStyle {
        dark: false,
        unit: DisplayUnit::Gib,
        capacity,
        capacity_label: "GPU",
    }
}

fn svg(f: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>)) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (960, 440)).into_drawing_area();
        f(&root);
    }
    out
}

/// Every text the SVG draws, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().replace("&amp;", "&"))
        })
        .collect()
}

/// The solver's longest context, in tokens per sequence.
fn longest(s: &Scenario) -> Option<u32> {
    let cap = s.view.capacity.bytes();
    solve::max_context(s, cap).map(|(key, n)| match key {
        vramfit_core::query::Key::Prompt => n + s.infer.new.get(),
        _ => n,
    })
}

#[test]
fn tokens_are_labelled_as_powers_of_two() {
    assert_eq!(tokens_label(512), "512");
    assert_eq!(tokens_label(4096), "4K");
    assert_eq!(tokens_label(131_072), "128K");
    assert_eq!(tokens_label(1 << 20), "1M");
    assert_eq!(tokens_label(1500), "1500");
    assert_eq!(x_label(x_of(8192)), "8K");
    assert_eq!(x_label(13.5), "", "between powers of two: blank");
    assert_eq!(x_of(1024), 10.0);
}

#[test]
fn the_curve_becomes_one_point_per_length_on_a_log_axis() {
    let s = scenario(Q);
    let curve = context_curve(&s.infer_run(), primary(&s).as_ref(), 24);
    let now = context_of(&s.infer_run(), primary(&s).as_ref());
    assert_eq!(now, 8192 + 512);
    let d = drawing(&curve, now, longest(&s), false);
    assert_eq!(d.points.len(), curve.len());
    for (p, c) in d.points.iter().zip(&curve) {
        assert_eq!(p.x, f64::from(c.tokens).log2());
        assert_eq!(p.parts, c.peak);
    }
    // Sorted, and the run's own length among them.
    assert!(d.points.windows(2).all(|w| w[0].x < w[1].x));
    assert!(curve.iter().any(|c| c.tokens == now));
    // One band per component alive somewhere, each on the one below.
    let bands = stack(&d.points);
    let order: Vec<Component> = bands.iter().map(|b| b.component).collect();
    assert_eq!(order.first(), Some(&Component::Parameters));
    assert!(order.contains(&Component::KvCache), "{order:?}");
    assert!(order.contains(&Component::Activations));
    assert_eq!(order.last(), Some(&Component::Overhead));
    for w in bands.windows(2) {
        assert_eq!(w[0].upper, w[1].lower);
    }
    // The cache grows with the context.
    let kv = bands
        .iter()
        .find(|b| b.component == Component::KvCache)
        .expect("kv band");
    let thick = |k: usize| kv.upper[k].1 - kv.lower[k].1;
    assert!(thick(kv.upper.len() - 1) > thick(0));
}

#[test]
fn where_it_stops_fitting_follows_the_solver() {
    let s = scenario(Q);
    let curve = context_curve(&s.infer_run(), primary(&s).as_ref(), 24);
    let last = curve.last().expect("points").tokens;
    let n = longest(&s).expect("something fits");
    assert!(n < last, "a 16 GiB GPU does not hold 128K tokens");
    assert_eq!(drawing(&curve, 8704, Some(n), false).limit, Limit::Until(n));
    assert_eq!(
        drawing(&curve, 8704, Some(last), false).limit,
        Limit::FitsAll
    );
    assert_eq!(drawing(&curve, 8704, None, false).limit, Limit::Never);
    // Just past the limit the total is over the capacity, at it within.
    let cap = s.view.capacity.bytes();
    let at = |tokens: u32| {
        let q = format!("{Q}&prompt={}", tokens - 512);
        let q = q.replacen("&prompt=8192", "", 1);
        let e = Estimates::new(&scenario(&q)).vramfit.expect("estimate");
        e.peak_total_bytes
    };
    assert!(at(n) <= cap && at(n + 1) > cap);
}

#[test]
fn draws_bands_axis_capacity_run_and_limit_to_svg() {
    let s = scenario(Q);
    let curve = context_curve(&s.infer_run(), primary(&s).as_ref(), 24);
    let d = drawing(
        &curve,
        context_of(&s.infer_run(), primary(&s).as_ref()),
        longest(&s),
        false,
    );
    let Limit::Until(n) = d.limit else {
        panic!("expected a limit, got {:?}", d.limit)
    };
    let bands = stack(&d.points).len();
    let out =
        svg(|root| draw_context(root, &d, &style(Some(s.view.capacity.bytes()))).expect("draws"));
    assert_eq!(
        out.matches("<polygon").count(),
        bands,
        "one polygon per band"
    );
    let t = texts(&out);
    let has = |s: &str| t.iter().any(|x| x == s);
    for label in [
        "Parameters",
        "KV cache",
        "Activations",
        "CUDA context & allocator",
    ] {
        assert!(has(label), "legend has {label}: {t:?}");
    }
    assert!(has("tokens per sequence (log scale)"));
    assert!(has("memory (GiB)"));
    assert!(has("1K") && has("8K") && has("128K"), "x labels: {t:?}");
    assert!(has("this run: 8\u{2009}704 tokens"), "{t:?}");
    let fits = format!("fits up to {} tokens", vramfit_core::explain::group(n));
    assert!(has(&fits), "{fits}: {t:?}");
    let cap = s.view.capacity.bytes().gib();
    assert!(has(&format!("GPU {cap:.2} GiB")), "capacity label: {t:?}");
}

#[test]
fn a_run_that_never_fits_says_so() {
    let q = "task=infer&model=llama3.1-70b&gpu=rtx-4090-laptop";
    let s = scenario(q);
    let curve = context_curve(&s.infer_run(), primary(&s).as_ref(), 16);
    let d = drawing(
        &curve,
        context_of(&s.infer_run(), primary(&s).as_ref()),
        longest(&s),
        false,
    );
    assert_eq!(d.limit, Limit::Never);
    let out =
        svg(|root| draw_context(root, &d, &style(Some(s.view.capacity.bytes()))).expect("draws"));
    assert!(texts(&out)
        .iter()
        .any(|t| t == "does not fit at any length shown"));
}

#[test]
fn an_empty_curve_still_draws() {
    let d = drawing(&[], 0, None, false);
    let out = svg(|root| draw_context(root, &d, &style(None)).expect("draws"));
    assert!(out.contains("tokens per sequence"));
}

#[test]
fn inference_phases_are_named_without_iterations() {
    assert_eq!(phase_label(1, 1, Phase::Prefill), "prefill");
    assert_eq!(phase_label(1, 1, Phase::Profile), "profile");
    assert_eq!(phase_label(1, 1, Phase::Serve), "serve");
    assert_eq!(phase_label(1, 1, Phase::Forward), "fwd 1");
    let s = scenario(Q);
    let e = Estimates::new(&s).vramfit.expect("estimate");
    assert_eq!(
        e.phases.iter().map(|p| p.phase).collect::<Vec<_>>(),
        [Phase::Load, Phase::Prefill, Phase::Decode]
    );
    let out =
        svg(|root| draw_phases(root, &e, &style(Some(s.view.capacity.bytes()))).expect("draws"));
    let t = texts(&out);
    for label in [
        "load",
        "prefill",
        "decode",
        "phase of the inference run",
        "KV cache",
    ] {
        assert!(t.iter().any(|x| x == label), "{label}: {t:?}");
    }
    let peak = e.peak_total_bytes.gib();
    assert!(
        t.contains(&format!("peak {peak:.2} GiB (prefill)")),
        "peak mark: {t:?}"
    );
    assert!(!out.contains("prefill 1"));
}

/// A local runner placing its own layers (llama.cpp's `--fit`): the limit
/// is where every layer stops fitting on the GPU, and the mark says so
/// (past it, layers move to host memory rather than run out).
#[test]
fn a_self_placed_run_s_mark_says_every_layer_on_the_gpu() {
    let q = "task=infer&engine=llamacpp&model=llama3.1-8b&weights=q4_k_m&gpu=rtx-4060-laptop";
    let s = scenario(q);
    let cap = s.view.capacity.bytes();
    let a = solve::answers(&s, cap);
    assert!(a.context_whole);
    let n = a.context.map(|(_, n)| n).expect("a context");
    let run = s.infer_run();
    let curve = context_curve(&run, primary(&s).as_ref(), 24);
    let d = drawing(
        &curve,
        context_of(&run, primary(&s).as_ref()),
        Some(n),
        true,
    );
    assert_eq!(d.limit, Limit::Until(n));
    let out = svg(|root| draw_context(root, &d, &style(Some(cap))).expect("draws"));
    let want = format!(
        "all layers on the GPU up to {} tokens",
        vramfit_core::explain::group(n)
    );
    assert!(texts(&out).contains(&want), "{want}: {:?}", texts(&out));
    let scout = scenario("task=infer&engine=llamacpp&model=llama4-scout&gpu=rtx-4090");
    let run = scout.infer_run();
    let curve = context_curve(&run, primary(&scout).as_ref(), 16);
    let d = drawing(
        &curve,
        context_of(&run, primary(&scout).as_ref()),
        None,
        true,
    );
    let out = svg(|root| draw_context(root, &d, &style(Some(cap))).expect("draws"));
    assert!(texts(&out)
        .iter()
        .any(|t| t == "not every layer on the GPU at any length shown"));
}
