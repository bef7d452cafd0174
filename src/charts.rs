//! The two charts on canvases: memory per phase of a step, and memory over
//! training steps. `vramfit-chart` draws; this module hands it the canvas,
//! redraws when the estimate changes, and exports PNG and SVG.

use crate::backend::AnyBackend;
use crate::form::FieldInput;
use crate::results::peak_line;
use crate::{browser, Page};
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use vramfit_chart::{bands, draw_phases, draw_steps, ChartStyle};
use vramfit_core::query::Key;
use vramfit_core::train::steps::Timeline;
use vramfit_core::Estimate;

/// Whether the system asks for a dark theme.
fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .map(|m| m.matches())
        .unwrap_or(false)
}

fn style(page: Page) -> ChartStyle {
    ChartStyle {
        dark: prefers_dark(),
        unit: page.unit.get(),
        capacity: Some(page.capacity.get()),
    }
}

/// What a chart shows: the estimate, or the steps timeline.
#[derive(Clone)]
enum Drawing {
    Phases(Estimate),
    Steps(Timeline),
}

/// Draws on either backend; returns the number of bands drawn.
fn draw(backend: AnyBackend, what: &Drawing, style: &ChartStyle) -> Result<usize, String> {
    let root = backend.into_drawing_area();
    match what {
        Drawing::Phases(e) => {
            draw_phases(&root, e, style).map_err(|e| e.to_string())?;
            Ok(bands::stack(&bands::timeline(&e.phases)).len())
        }
        Drawing::Steps(t) => {
            draw_steps(&root, t, style).map_err(|e| e.to_string())?;
            let points: Vec<bands::Point> = t
                .points
                .iter()
                .map(|p| bands::Point {
                    x: p.x,
                    parts: p.parts,
                })
                .collect();
            Ok(bands::stack(&points).len())
        }
    }
}

fn draw_on(
    canvas: web_sys::HtmlCanvasElement,
    what: &Drawing,
    style: &ChartStyle,
) -> Result<usize, String> {
    let backend = CanvasBackend::with_canvas_object(canvas).ok_or("no 2d context")?;
    draw(AnyBackend::Canvas(backend), what, style)
}

fn svg_of(what: &Drawing, style: &ChartStyle) -> String {
    let mut out = String::new();
    let backend = AnyBackend::Svg(plotters::prelude::SVGBackend::with_string(
        &mut out,
        (960, 440),
    ));
    match draw(backend, what, style) {
        Ok(_) => out,
        Err(e) => format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text>{e}</text></svg>"),
    }
}

/// A canvas redrawn whenever `what` changes, with its export buttons.
#[component]
fn ChartCanvas(
    page: Page,
    what: Memo<Option<Drawing>>,
    testid: &'static str,
    label: Signal<String>,
    file: &'static str,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let (drawn, set_drawn) = signal(None::<Result<usize, String>>);
    let (drawn_at, set_drawn_at) = signal(0.0f64);
    Effect::new(move |_| {
        let st = style(page);
        let Some(c) = canvas.get() else { return };
        what.with(|w| match w {
            Some(w) => {
                set_drawn.set(Some(draw_on(c, w, &st)));
                set_drawn_at.set(browser::now_ms());
            }
            None => set_drawn.set(Some(Err("no estimate".into()))),
        });
    });
    let png = move |_| {
        if let Some(c) = canvas.get_untracked() {
            if let Ok(url) = c.to_data_url() {
                browser::download_url(&format!("{file}.png"), &url);
            }
        }
    };
    let svg = move |_| {
        let st = style(page);
        if let Some(w) = what.get_untracked() {
            browser::download(&format!("{file}.svg"), "image/svg+xml", &svg_of(&w, &st));
        }
    };
    view! {
        <canvas node_ref=canvas width="960" height="440" role="img" aria-label=move || label.get()
            data-testid=testid
            data-bands=move || match drawn.get() { Some(Ok(n)) => n.to_string(), _ => String::new() }
            data-drawn-ms=move || format!("{:.2}", drawn_at.get())>
        </canvas>
        {move || match drawn.get() {
            Some(Err(e)) => Some(view! { <p class="error">{format!("The chart could not be drawn: {e}")}</p> }),
            _ => None,
        }}
        <div class="exports">
            <button type="button" data-testid=format!("{testid}-png") on:click=png>"PNG"</button>
            <button type="button" data-testid=format!("{testid}-svg") on:click=svg>"SVG"</button>
        </div>
    }
}

/// Memory per phase: iteration 1, then the steady state.
#[component]
pub fn PhaseChart(page: Page) -> impl IntoView {
    let what = Memo::new(move |_| page.primary.get().map(Drawing::Phases));
    let label = Signal::derive(move || {
        page.primary.with(|e| match e {
            Some(e) => format!(
                "Memory per phase of a training step, {}",
                peak_line(page, e)
            ),
            None => "No estimate".into(),
        })
    });
    view! {
        <section class="panel chart" aria-labelledby="phase-h">
            <h2 id="phase-h">"Memory through one training step"</h2>
            <ChartCanvas page=page what=what testid="phase-chart" label=label file="vramfit-phases"/>
            <p class="hint">
                "Iteration 1, then every later step (2): the optimizer state appears at the first step; "
                "with gradient accumulation, m2 stands for the later micro-steps. The red line is the GPU."
            </p>
        </section>
    }
}

impl PartialEq for Drawing {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Drawing::Phases(a), Drawing::Phases(b)) => a == b,
            (Drawing::Steps(a), Drawing::Steps(b)) => a == b,
            _ => false,
        }
    }
}

/// Memory over training steps, with an optional leak.
#[component]
pub fn StepsChart(page: Page) -> impl IntoView {
    let timeline = page.timeline;
    let what = Memo::new(move |_| timeline.get().and_then(Result::ok).map(Drawing::Steps));
    let oom = move || {
        timeline.with(|t| {
            t.as_ref()
                .and_then(|t| t.as_ref().ok())
                .and_then(|t| t.oom_step)
        })
    };
    let label = Signal::derive(move || match oom() {
        Some(k) => format!("Memory over training steps: out of memory at step {k}"),
        None => "Memory over training steps".to_string(),
    });
    let leak_custom = move || {
        page.scenario
            .with(|s| s.view.leak == vramfit_core::scenario::Leak::Custom)
    };
    view! {
        <section class="panel chart" aria-labelledby="steps-h">
            <h2 id="steps-h">"Memory over training steps"</h2>
            <ChartCanvas page=page what=what testid="steps-chart" label=label file="vramfit-steps"/>
            <p class="hint" data-testid="steps-summary" data-oom-step=move || oom().map(|k| k.to_string()).unwrap_or_default()>
                {move || timeline.with(|t| t.as_ref().map(|t| match t {
                    Err(e) => format!("The steps cannot be drawn: {e}."),
                    Ok(t) => match t.oom_step {
                    Some(1) => "It does not fit from the first step.".to_string(),
                    Some(k) => format!(
                        "Keeping {} each step runs out of memory at step {k}.",
                        page.show(t.leak_per_step)
                    ),
                    None if t.leak_per_step.get() > 0 => format!(
                        "The leak keeps {} each step; it still fits after {} steps.",
                        page.show(t.leak_per_step),
                        t.step_peaks.len()
                    ),
                    None => "Memory settles after the first step; it does not grow step by step.".to_string(),
                }}))}
            </p>
            <div class="fields inline">
                {[Key::Iters, Key::Leak, Key::DatasetMib]
                    .into_iter()
                    .filter_map(Key::field)
                    .map(|f| view! { <FieldInput field=f page=page/> })
                    .collect_view()}
                {move || leak_custom().then(|| Key::LeakMib.field().map(|f| view! { <FieldInput field=f page=page/> }))}
            </div>
        </section>
    }
}
