//! vramfit's charts. [`bands`] turns an estimate into stacked polygons (pure,
//! tested natively); the `draw_*` functions draw them with plotters on any
//! backend: the page's canvas, or an SVG string for export and for tests
//! (the `svg` feature turns on plotters' SVG backend).

pub mod bands;

use bands::{stack, timeline, Point};
use plotters::coord::Shift;
use plotters::prelude::*;
use vramfit_core::train::steps::Timeline;
use vramfit_core::{Bytes, Component, DisplayUnit, Estimate, Phase};

/// The fixed colour of each component (Okabe–Ito, safe for colour-blind
/// readers; blue, orange, yellow and green follow the seed's phase colours).
pub fn colour(c: Component) -> RGBColor {
    match c {
        Component::Parameters => RGBColor(0x00, 0x72, 0xB2),
        // Paul Tol's teal and wine, for inference's cache and engine.
        Component::KvCache => RGBColor(0x44, 0xAA, 0x99),
        Component::OptimizerState => RGBColor(0x00, 0x9E, 0x73),
        Component::Gradients => RGBColor(0xF0, 0xE4, 0x42),
        Component::OptimizerTemporaries => RGBColor(0x56, 0xB4, 0xE9),
        Component::WeightCopies => RGBColor(0xCC, 0x79, 0xA7),
        Component::Activations => RGBColor(0xE6, 0x9F, 0x00),
        Component::Logits => RGBColor(0xD5, 0x5E, 0x00),
        Component::Retained => RGBColor(0x7F, 0x3C, 0x8D),
        Component::Engine => RGBColor(0x88, 0x22, 0x55),
        Component::Overhead => RGBColor(0x99, 0x99, 0x99),
    }
}

/// The colour as `#rrggbb`, for the page's legend swatches.
pub fn colour_hex(c: Component) -> String {
    let RGBColor(r, g, b) = colour(c);
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// How to draw: theme, unit and the GPU's capacity line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChartStyle {
    pub dark: bool,
    pub unit: DisplayUnit,
    /// Drawn as a horizontal line with its label when set.
    pub capacity: Option<Bytes>,
}

impl ChartStyle {
    fn fg(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xE6, 0xE6, 0xE6)
        } else {
            RGBColor(0x22, 0x22, 0x22)
        }
    }

    fn bg(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x1B, 0x1E, 0x23)
        } else {
            WHITE
        }
    }

    fn scale(&self, bytes: u64) -> f64 {
        match self.unit {
            DisplayUnit::Gib => bytes as f64 / (1u64 << 30) as f64,
            DisplayUnit::Gb => bytes as f64 / 1e9,
        }
    }

    fn unit_name(&self) -> &'static str {
        match self.unit {
            DisplayUnit::Gib => "GiB",
            DisplayUnit::Gb => "GB",
        }
    }
}

/// Short x-axis label of a phase, e.g. "fwd 1" or "bwd 2·m2".
pub fn phase_label(iteration: u32, micro: u32, phase: Phase) -> String {
    let name = match phase {
        Phase::Init => "init",
        Phase::Forward => "fwd",
        Phase::Backward => "bwd",
        Phase::OptimizerStep => "step",
        Phase::ZeroGrad => "zero",
        Phase::Load => "load",
        Phase::Prefill => "prefill",
        Phase::Decode => "decode",
        Phase::Profile => "profile",
        Phase::Serve => "serve",
    };
    match (iteration, micro) {
        (0, _) => name.to_string(),
        (i, 1) => format!("{name} {i}"),
        (i, m) => format!("{name} {i}·m{m}"),
    }
}

/// A marked point: where it is and what it says.
struct Mark {
    x: f64,
    bytes: u64,
    text: String,
}

/// The x axis and the marked point of a stacked chart.
struct Frame<'a> {
    x_max: f64,
    x_labels: usize,
    x_label: &'a dyn Fn(&f64) -> String,
    x_desc: &'a str,
    mark: Option<Mark>,
}

/// Stacked bands, axes, legend, capacity line and a marked point.
fn draw_stacked<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[Point],
    frame: Frame,
    style: &ChartStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let Frame {
        x_max,
        x_labels,
        x_label,
        x_desc,
        mark,
    } = frame;
    root.fill(&style.bg())?;
    let bands = stack(points);
    let highest = points
        .iter()
        .map(|p| p.parts.total().get())
        .max()
        .unwrap_or(0);
    let cap = style.capacity.map(Bytes::get).unwrap_or(0);
    let top = style.scale(highest.max(cap)).max(1e-9) * 1.15;
    let fg = style.fg();
    let text = |size: u32| ("sans-serif", size).into_font().color(&fg);

    let mut chart = ChartBuilder::on(root)
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..x_max.max(1e-9), 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(fg.mix(0.12))
        .y_labels(8)
        .axis_style(fg.mix(0.6))
        .x_labels(x_labels)
        .x_label_formatter(x_label)
        .y_desc(format!("memory ({})", style.unit_name()))
        .x_desc(x_desc)
        .label_style(text(14))
        .axis_desc_style(text(14))
        .draw()?;

    for b in &bands {
        let c = colour(b.component);
        let outline: Vec<(f64, f64)> = b.polygon().map(|(x, y)| (x, style.scale(y))).collect();
        chart.draw_series(std::iter::once(Polygon::new(outline, c.mix(0.9).filled())))?;
    }

    if let Some(cap) = style.capacity {
        let y = style.scale(cap.get());
        let red = RGBColor(0xC6, 0x28, 0x28);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, y), (x_max, y)],
            red.stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("GPU {:.2} {}", y, style.unit_name()),
            (x_max * 0.01, y - top * 0.012),
            ("sans-serif", 13).into_font().color(&red),
        )))?;
    }

    if let Some(m) = mark {
        let py = style.scale(m.bytes);
        chart.draw_series(std::iter::once(Circle::new((m.x, py), 4, fg.filled())))?;
        let anchor = if m.x > x_max * 0.55 {
            x_max * 0.25
        } else {
            m.x
        };
        chart.draw_series(std::iter::once(Text::new(
            m.text,
            (anchor, py + top * 0.06),
            text(13),
        )))?;
    }

    let items: Vec<(&str, RGBColor)> = bands
        .iter()
        .map(|b| (b.component.label(), colour(b.component)))
        .collect();
    let plot = chart.plotting_area().get_pixel_range();
    draw_legend(root, plot, &items, &text(13), style)?;
    root.present()
}

/// The legend in the plot's upper right corner: a swatch and a label per
/// band. Drawn here rather than by plotters' series labels, which lay
/// their text out as `MultiLineText`: on the web that measures every label
/// in the page's DOM, a forced layout of the whole page per label (most of
/// an update's time in a Chrome CPU profile). Text sizes come from the
/// backend's `estimate_text_size`.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: (std::ops::Range<i32>, std::ops::Range<i32>),
    items: &[(&str, RGBColor)],
    font: &TextStyle,
    style: &ChartStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    const LINE: i32 = 20;
    const PAD: i32 = 8;
    const SWATCH: i32 = 12;
    const GAP: i32 = 6;
    let mut widest = 0;
    for (label, _) in items {
        widest = widest.max(i32::try_from(root.estimate_text_size(label, font)?.0).unwrap_or(0));
    }
    let rows = i32::try_from(items.len()).unwrap_or(0);
    let (w, h) = (2 * PAD + SWATCH + GAP + widest, 2 * PAD + LINE * rows);
    // Pixel ranges are the backend's; the root's own coordinates start at
    // its base pixel.
    let (bx, by) = root.get_base_pixel();
    let (x1, y0) = (plot.0.end - bx - 10, plot.1.start - by + 10);
    let x0 = x1 - w;
    let corners = [(x0, y0), (x1, y0 + h)];
    root.draw(&Rectangle::new(corners, style.bg().mix(0.85).filled()))?;
    root.draw(&Rectangle::new(corners, style.fg().mix(0.3)))?;
    let label_style = font.pos(Pos::new(HPos::Left, VPos::Center));
    for (row, (label, c)) in (0..).zip(items) {
        let cy = y0 + PAD + LINE * row + LINE / 2;
        let x = x0 + PAD;
        root.draw(&Rectangle::new(
            [(x, cy - 6), (x + SWATCH, cy + 6)],
            c.filled(),
        ))?;
        root.draw(&Text::new(
            *label,
            (x + SWATCH + GAP, cy),
            label_style.clone(),
        ))?;
    }
    Ok(())
}

/// Memory per phase of a training step (iteration 1, then the steady
/// state), one band per component, the peak marked with its value and phase.
pub fn draw_phases<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    est: &Estimate,
    style: &ChartStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let points = timeline(&est.phases);
    let (peak_x, peak) = bands::peak_point(est);
    let n = est.phases.len();
    let label = |x: &f64| {
        // Labels sit at phase centres; the edges stay blank.
        let x = *x;
        let i = x.floor();
        match est.phases.get(i as usize) {
            Some(p) if (x - i - 0.5).abs() < 1e-6 => {
                phase_label(p.iteration, p.micro_step, p.phase)
            }
            _ => String::new(),
        }
    };
    let mark = Mark {
        x: peak_x,
        bytes: peak,
        text: format!(
            "peak {:.2} {} ({} {})",
            style.scale(peak),
            style.unit_name(),
            est.peak_phase.label(),
            est.peak_iteration
        ),
    };
    let frame = Frame {
        x_max: n as f64,
        x_labels: n * 2 + 1,
        x_label: &label,
        x_desc: "phase of the training step (iteration)",
        mark: Some(mark),
    };
    draw_stacked(root, &points, frame, style)
}

/// Memory over training steps, with the step that runs out of memory marked.
pub fn draw_steps<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    t: &Timeline,
    style: &ChartStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let points: Vec<Point> = t
        .points
        .iter()
        .map(|p| Point {
            x: p.x,
            parts: p.parts,
        })
        .collect();
    let steps = t.step_peaks.len();
    let every = (steps / 12).max(1);
    let label = |x: &f64| {
        let x = *x;
        let k = x.round();
        if (x - k).abs() < 1e-6 && k >= 1.0 && (k as usize).is_multiple_of(every) {
            format!("{k}")
        } else {
            String::new()
        }
    };
    let mark = t.oom_step.map(|k| Mark {
        x: f64::from(k) - 0.5,
        bytes: t.step_peaks.get(k as usize - 1).map_or(0, |b| b.get()),
        text: format!("out of memory at step {k}"),
    });
    let frame = Frame {
        x_max: steps as f64,
        x_labels: steps + 1,
        x_label: &label,
        x_desc: "training step",
        mark,
    };
    draw_stacked(root, &points, frame, style)
}
