//! The memory-per-phase chart on a canvas: `vramfit-chart` draws, this
//! module hands it the canvas and records what was drawn for tests.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use vramfit_chart::{bands, draw_phases, ChartStyle};
use vramfit_core::{DisplayUnit, Estimate};

/// Whether the system asks for a dark theme.
fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .map(|m| m.matches())
        .unwrap_or(false)
}

/// Draws `estimate` on `canvas`; returns the number of bands drawn.
fn draw(canvas: web_sys::HtmlCanvasElement, estimate: &Estimate) -> Result<usize, String> {
    let backend = CanvasBackend::with_canvas_object(canvas).ok_or("no 2d context")?;
    let root = backend.into_drawing_area();
    let style = ChartStyle {
        dark: prefers_dark(),
        unit: DisplayUnit::Gib,
    };
    draw_phases(&root, estimate, &style).map_err(|e| e.to_string())?;
    Ok(bands::stack(&bands::timeline(&estimate.phases)).len())
}

/// Stacked areas of memory per phase, one band per component.
#[component]
pub fn PhaseChart(estimate: Estimate) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let (drawn, set_drawn) = signal(None::<Result<usize, String>>);
    let summary = format!(
        "Memory per phase: peak {:.2} GiB in the {} of iteration {}",
        estimate.peak_total_bytes.gib(),
        estimate.peak_phase.label(),
        estimate.peak_iteration
    );
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            set_drawn.set(Some(draw(c, &estimate)));
        }
    });
    view! {
        <figure class="chart">
            <canvas node_ref=canvas width="960" height="440" role="img" aria-label=summary
                data-testid="phase-chart"
                data-bands=move || match drawn.get() { Some(Ok(n)) => n.to_string(), _ => String::new() }>
            </canvas>
            <figcaption>
                {move || match drawn.get() {
                    Some(Err(e)) => format!("The chart could not be drawn: {e}"),
                    _ => "Memory over one training step, phase by phase: iteration 1, then every later iteration (2).".to_string(),
                }}
            </figcaption>
        </figure>
    }
}
