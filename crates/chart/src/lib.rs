//! vramfit's charts. [`bands`] turns an estimate into stacked polygons and
//! [`context`] an inference run's memory against its context length (pure,
//! tested natively); the `draw_*` functions draw them with plotters on any
//! backend: the page's canvas, or an SVG string for export and for tests
//! (the `svg` feature turns on plotters' SVG backend).

pub mod bands;
pub mod context;

use bands::{stack, timeline, Point};
use context::{ContextDrawing, Limit};
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
    /// What the line is: "GPU", or an engine's share of it ("vLLM's share").
    pub capacity_label: &'static str,
}

impl ChartStyle {
    fn fg(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xE6, 0xE6, 0xE6)
        } else {
            RGBColor(0x22, 0x22, 0x22)
        }
    }

    /// The capacity line's red (lighter on the dark background).
    fn red(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xFF, 0x6B, 0x6B)
        } else {
            RGBColor(0xC6, 0x28, 0x28)
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

/// Whether a phase is an inference run's (load, prefill, decode; vLLM's
/// profiling run and serving) rather than a training step's.
pub fn is_inference(phase: Phase) -> bool {
    match phase {
        Phase::Load | Phase::Prefill | Phase::Decode | Phase::Profile | Phase::Serve => true,
        Phase::Init | Phase::Forward | Phase::Backward | Phase::OptimizerStep | Phase::ZeroGrad => {
            false
        }
    }
}

/// Short x-axis label of a phase, e.g. "fwd 1", "bwd 2·m2" or "prefill"
/// (an inference run has no iterations to tell apart).
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
        _ if is_inference(phase) => name.to_string(),
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

/// A vertical line across the plot with its label at the top.
struct Rule {
    x: f64,
    text: String,
}

/// The x axis and the marked point of a stacked chart.
struct Frame<'a> {
    x_min: f64,
    x_max: f64,
    x_labels: usize,
    x_label: &'a dyn Fn(&f64) -> String,
    x_desc: &'a str,
    mark: Option<Mark>,
    rule: Option<Rule>,
}

/// Stacked bands, axes, legend, capacity line and a marked point.
fn draw_stacked<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[Point],
    frame: Frame,
    style: &ChartStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let Frame {
        x_min,
        x_max,
        x_labels,
        x_label,
        x_desc,
        mark,
        rule,
    } = frame;
    let x_max = x_max.max(x_min + 1e-9);
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
    // The family as a variant, not the text "sans-serif": parsing a name
    // lowercases it, which links Unicode's case tables (about 12 KB).
    let text = |size: u32| (FontFamily::SansSerif, size).into_font().color(&fg);

    // The legend in rows above the plot, where it hides nothing.
    let items: Vec<(&str, RGBColor)> = bands
        .iter()
        .map(|b| (b.component.label(), colour(b.component)))
        .collect();
    let (width, _) = root.dim_in_pixel();
    let room = i32::try_from(width).unwrap_or(0) - 2 * MARGIN - Y_LABELS;
    let legend = legend_layout(root, &items, &text(13), room)?;
    let mut chart = ChartBuilder::on(root)
        .margin(MARGIN)
        .margin_top(MARGIN + legend.rows * LEGEND_LINE + 4)
        .x_label_area_size(48)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x_min..x_max, 0f64..top)?;
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

    let plot = chart.plotting_area().get_pixel_range();
    // Pixel ranges are the backend's; the root's own coordinates start at
    // its base pixel.
    let (bx, by) = root.get_base_pixel();

    let base = (bx, by);
    let backdrop = style.bg().mix(0.8);
    if let Some(cap) = style.capacity {
        let y = style.scale(cap.get());
        let red = style.red();
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x_min, y), (x_max, y)],
            red.stroke_width(2),
        )))?;
        let line_y = chart.backend_coord(&(x_min, y)).1 - by;
        let label = format!("{} {:.2} {}", style.capacity_label, y, style.unit_name());
        let font = (FontFamily::SansSerif, 13).into_font().color(&red);
        let at = Label {
            pixel: (plot.0.start - bx + 8, line_y + 4),
            right: false,
            above: false,
        };
        label_on(root, &label, at, &font, backdrop)?;
    }

    if let Some(r) = rule {
        let x = r.x.clamp(x_min, x_max);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, top)],
            fg.mix(0.55).stroke_width(1),
        )))?;
        // Beside the line at the top, on its left when it sits on the right.
        let (px, _) = chart.backend_coord(&(x, top));
        let right = x > x_min + (x_max - x_min) * 0.55;
        let at = Label {
            pixel: (px - bx + if right { -5 } else { 5 }, plot.1.start - by + 4),
            right,
            above: false,
        };
        label_on(root, &r.text, at, &text(13), backdrop)?;
    }

    if let Some(m) = mark {
        let py = style.scale(m.bytes);
        let x = m.x.clamp(x_min, x_max);
        chart.draw_series(std::iter::once(Circle::new((x, py), 4, fg.filled())))?;
        // Above the point, ending at it when it sits on the right.
        let (px, py) = chart.backend_coord(&(x, py));
        let right = x > x_min + (x_max - x_min) * 0.55;
        let at = Label {
            pixel: (px - base.0, py - base.1 - 8),
            right,
            above: true,
        };
        label_on(root, &m.text, at, &text(13), backdrop)?;
    }

    draw_legend(
        root,
        (plot.0.start - bx, MARGIN),
        &legend.places,
        &items,
        &text(13),
    )?;
    root.present()
}

/// Where a label goes: its anchor pixel (the root's coordinates), and
/// which side of it the text lies on.
struct Label {
    pixel: (i32, i32),
    /// The text ends at the anchor (else starts there).
    right: bool,
    /// The text's bottom is at the anchor (else its top).
    above: bool,
}

/// A label on a translucent backdrop, readable over the bands and lines.
fn label_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: &str,
    at: Label,
    font: &TextStyle,
    backdrop: RGBAColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let (w, h) = root.estimate_text_size(text, font)?;
    let (w, h) = (i32::try_from(w).unwrap_or(0), i32::try_from(h).unwrap_or(0));
    let (x, y) = at.pixel;
    let x0 = if at.right { x - w } else { x };
    let y0 = if at.above { y - h } else { y };
    root.draw(&Rectangle::new(
        [(x0 - 3, y0 - 1), (x0 + w + 3, y0 + h + 1)],
        backdrop.filled(),
    ))?;
    let pos = Pos::new(
        if at.right { HPos::Right } else { HPos::Left },
        if at.above { VPos::Bottom } else { VPos::Top },
    );
    root.draw(&Text::new(text.to_string(), (x, y), font.pos(pos)))
}

/// The chart's margin and the width of its y labels, in pixels.
const MARGIN: i32 = 14;
const Y_LABELS: i32 = 64;

const LEGEND_LINE: i32 = 20;
const LEGEND_SWATCH: i32 = 12;
const LEGEND_GAP: i32 = 6;
/// Between one item and the next on a row.
const LEGEND_SPACE: i32 = 18;

/// Where the legend's items go: (x from the row's start, row) each, and
/// how many rows that takes.
struct Legend {
    places: Vec<(i32, i32)>,
    rows: i32,
}

/// The legend's items in rows `room` pixels wide.
fn legend_layout<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    items: &[(&str, RGBColor)],
    font: &TextStyle,
    room: i32,
) -> Result<Legend, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut places = Vec::with_capacity(items.len());
    let (mut x, mut row) = (0, 0);
    for (label, _) in items {
        let text = i32::try_from(root.estimate_text_size(label, font)?.0).unwrap_or(0);
        let w = LEGEND_SWATCH + LEGEND_GAP + text;
        if x > 0 && x + w > room {
            (x, row) = (0, row + 1);
        }
        places.push((x, row));
        x += w + LEGEND_SPACE;
    }
    let rows = if items.is_empty() { 0 } else { row + 1 };
    Ok(Legend { places, rows })
}

/// The legend above the plot: a swatch and a label per band, in rows from
/// `origin` (the root's coordinates). Drawn here rather than by plotters'
/// series labels, which lay their text out as `MultiLineText`: on the web
/// that measures every label in the page's DOM, a forced layout of the
/// whole page per label (most of an update's time in a Chrome CPU
/// profile). Text sizes come from the backend's `estimate_text_size`.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    origin: (i32, i32),
    places: &[(i32, i32)],
    items: &[(&str, RGBColor)],
    font: &TextStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let label_style = font.pos(Pos::new(HPos::Left, VPos::Center));
    for ((x, row), (label, c)) in places.iter().zip(items) {
        let cy = origin.1 + LEGEND_LINE * row + LEGEND_LINE / 2;
        let x = origin.0 + x;
        root.draw(&Rectangle::new(
            [(x, cy - 6), (x + LEGEND_SWATCH, cy + 6)],
            c.filled(),
        ))?;
        root.draw(&Text::new(
            *label,
            (x + LEGEND_SWATCH + LEGEND_GAP, cy),
            label_style.clone(),
        ))?;
    }
    Ok(())
}

/// Memory per phase of a training step (iteration 1, then the steady
/// state) or of an inference run (load, prefill, decode; vLLM's profiling
/// run and serving), one band per component, the peak marked with its
/// value and phase.
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
    let inference = is_inference(est.peak_phase);
    let at = if inference {
        est.peak_phase.label().to_string()
    } else {
        format!("{} {}", est.peak_phase.label(), est.peak_iteration)
    };
    let mark = Mark {
        x: peak_x,
        bytes: peak,
        text: format!("peak {:.2} {} ({at})", style.scale(peak), style.unit_name(),),
    };
    let frame = Frame {
        x_min: 0.0,
        x_max: n as f64,
        x_labels: n * 2 + 1,
        x_label: &label,
        x_desc: if inference {
            "phase of the inference run"
        } else {
            "phase of the training step (iteration)"
        },
        mark: Some(mark),
        rule: None,
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
        x_min: 0.0,
        x_max: steps as f64,
        x_labels: steps + 1,
        x_label: &label,
        x_desc: "training step",
        mark,
        rule: None,
    };
    draw_stacked(root, &points, frame, style)
}

/// Memory against context length (an inference run): one band per
/// component over tokens on a log₂ axis, the run's own length as a
/// vertical line, and the length where it stops fitting marked on the
/// GPU's line.
pub fn draw_context<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    d: &ContextDrawing,
    style: &ChartStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x_min, x_max) = match (d.points.first(), d.points.last()) {
        (Some(a), Some(b)) => (a.x, b.x),
        _ => (0.0, 1.0),
    };
    // One label per power of two, at most about 12 of them.
    let span = (x_max.ceil() - x_min.floor()).max(1.0);
    let every = (span / 12.0).ceil().max(1.0);
    let label = move |x: &f64| {
        let k = x.round();
        if (k / every).fract().abs() < 1e-9 {
            context::x_label(*x)
        } else {
            String::new()
        }
    };
    let cap = style.capacity.map_or(0, Bytes::get);
    let mark = match d.limit {
        Limit::FitsAll => None,
        Limit::Until(n) => Some(Mark {
            x: context::x_of(n),
            bytes: cap,
            text: if d.whole {
                format!(
                    "all layers on the GPU up to {} tokens",
                    vramfit_core::explain::group(n)
                )
            } else {
                format!("fits up to {} tokens", vramfit_core::explain::group(n))
            },
        }),
        Limit::Never => d.points.first().map(|p| Mark {
            x: p.x,
            bytes: p.parts.total().get(),
            text: if d.whole {
                "not every layer on the GPU at any length shown".to_string()
            } else {
                "does not fit at any length shown".to_string()
            },
        }),
    };
    let rule = Rule {
        x: context::x_of(d.now),
        text: format!("this run: {} tokens", vramfit_core::explain::group(d.now)),
    };
    let frame = Frame {
        x_min,
        x_max,
        x_labels: (span as usize) * 2 + 1,
        x_label: &label,
        x_desc: "tokens per sequence (log scale)",
        mark,
        rule: Some(rule),
    };
    draw_stacked(root, &d.points, frame, style)
}
