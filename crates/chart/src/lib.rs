//! vramfit's charts. [`bands`] turns an estimate into stacked polygons (pure,
//! tested natively); [`draw_phases`] draws them with plotters on any backend:
//! the page's canvas, or an SVG string for export and for native tests.

pub mod bands;

use bands::{peak_point, stack, timeline};
use plotters::coord::Shift;
use plotters::prelude::*;
use vramfit_core::{Component, DisplayUnit, Estimate};

/// The fixed colour of each component (Okabe–Ito, safe for colour-blind
/// readers; blue, orange, yellow and green follow the seed's phase colours).
pub fn colour(c: Component) -> RGBColor {
    match c {
        Component::Parameters => RGBColor(0x00, 0x72, 0xB2),
        Component::OptimizerState => RGBColor(0x00, 0x9E, 0x73),
        Component::Gradients => RGBColor(0xF0, 0xE4, 0x42),
        Component::OptimizerTemporaries => RGBColor(0x56, 0xB4, 0xE9),
        Component::WeightCopies => RGBColor(0xCC, 0x79, 0xA7),
        Component::Activations => RGBColor(0xE6, 0x9F, 0x00),
        Component::Logits => RGBColor(0xD5, 0x5E, 0x00),
        Component::Overhead => RGBColor(0x99, 0x99, 0x99),
    }
}

/// The colour as `#rrggbb`, for the page's legend swatches.
pub fn colour_hex(c: Component) -> String {
    let RGBColor(r, g, b) = colour(c);
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// How to draw: theme and unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChartStyle {
    pub dark: bool,
    pub unit: DisplayUnit,
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

/// Short x-axis label of phase `i`, e.g. "fwd 1".
fn phase_label(est: &Estimate, i: usize) -> String {
    est.phases
        .get(i)
        .map(|p| {
            let name = match p.phase {
                vramfit_core::Phase::Init => "init",
                vramfit_core::Phase::Forward => "fwd",
                vramfit_core::Phase::Backward => "bwd",
                vramfit_core::Phase::OptimizerStep => "step",
                vramfit_core::Phase::ZeroGrad => "zero",
            };
            if p.iteration == 0 {
                name.to_string()
            } else {
                format!("{name} {}", p.iteration)
            }
        })
        .unwrap_or_default()
}

/// Draws memory per phase as stacked areas, one band per component, with
/// axis labels, a legend and the peak marked.
pub fn draw_phases<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    est: &Estimate,
    style: &ChartStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&style.bg())?;
    let points = timeline(&est.phases);
    let bands = stack(&points);
    let (peak_x, peak) = peak_point(est);
    let n = est.phases.len().max(1) as f64;
    let top = style.scale(peak).max(1e-9) * 1.18;
    let fg = style.fg();
    let text = |size: u32| ("sans-serif", size).into_font().color(&fg);

    let mut chart = ChartBuilder::on(root)
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..n, 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(fg.mix(0.12))
        .y_labels(8)
        .axis_style(fg.mix(0.6))
        .x_labels(est.phases.len() * 2 + 1)
        .x_label_formatter(&|x| {
            // Labels sit at phase centres; the edges stay blank.
            let i = x.floor();
            if (x - i - 0.5).abs() < 1e-6 {
                phase_label(est, i as usize)
            } else {
                String::new()
            }
        })
        .y_desc(format!("memory ({})", style.unit_name()))
        .x_desc("phase of the training step (iteration)")
        .label_style(text(14))
        .axis_desc_style(text(14))
        .draw()?;

    for b in &bands {
        let c = colour(b.component);
        let outline: Vec<(f64, f64)> = b.polygon().map(|(x, y)| (x, style.scale(y))).collect();
        chart
            .draw_series(std::iter::once(Polygon::new(outline, c.mix(0.9).filled())))?
            .label(b.component.label())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], c.filled()));
    }

    // Phase separators.
    for i in 1..est.phases.len() {
        let x = i as f64;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, top)],
            fg.mix(0.2),
        )))?;
    }

    // The peak: a marker and its value.
    let py = style.scale(peak);
    let label = format!(
        "peak {:.2} {} ({} {})",
        py,
        style.unit_name(),
        est.peak_phase.label(),
        est.peak_iteration
    );
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(0.0, py), (n, py)],
        fg.mix(0.5).stroke_width(1),
    )))?;
    chart.draw_series(std::iter::once(Circle::new((peak_x, py), 4, fg.filled())))?;
    let anchor_x = if peak_x > n * 0.6 {
        n * 0.02
    } else {
        peak_x.min(n * 0.55)
    };
    chart.draw_series(std::iter::once(Text::new(
        label,
        (anchor_x, py + top * 0.05),
        text(13),
    )))?;

    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(style.bg().mix(0.85))
        .border_style(fg.mix(0.3))
        .label_font(text(13))
        .draw()?;
    root.present()
}

/// The phase chart as an SVG document.
#[cfg(feature = "svg")]
pub fn phases_svg(est: &Estimate, style: &ChartStyle, size: (u32, u32)) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        // Drawing into a String cannot fail for I/O reasons.
        if let Err(e) = draw_phases(&root, est, style) {
            return format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text>{e}</text></svg>");
        }
    }
    out
}
