//! One plotters backend for both the canvas and SVG export, so the charts'
//! drawing code is compiled once (generic drawing code is monomorphised per
//! backend; two backends doubled it, ~9 KB of the gzipped page).

use plotters::prelude::SVGBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use std::fmt;

/// Draws on a canvas, or into an SVG string.
pub enum AnyBackend<'a> {
    Canvas(CanvasBackend),
    Svg(SVGBackend<'a>),
}

/// Either backend's error, as text.
#[derive(Debug)]
pub struct AnyError(String);

impl fmt::Display for AnyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AnyError {}

fn conv<E: std::error::Error + Send + Sync>(e: DrawingErrorKind<E>) -> DrawingErrorKind<AnyError> {
    match e {
        DrawingErrorKind::DrawingError(e) => {
            DrawingErrorKind::DrawingError(AnyError(e.to_string()))
        }
        DrawingErrorKind::FontError(f) => DrawingErrorKind::FontError(f),
    }
}

/// Calls the same method on whichever backend this is.
macro_rules! each {
    ($self:ident, $b:ident => $call:expr) => {
        match $self {
            AnyBackend::Canvas($b) => $call.map_err(conv),
            AnyBackend::Svg($b) => $call.map_err(conv),
        }
    };
}

impl DrawingBackend for AnyBackend<'_> {
    type ErrorType = AnyError;

    fn get_size(&self) -> (u32, u32) {
        match self {
            AnyBackend::Canvas(b) => b.get_size(),
            AnyBackend::Svg(b) => b.get_size(),
        }
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.ensure_prepared())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.present())
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.draw_line(from, to, style))
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.draw_rect(upper_left, bottom_right, style, fill))
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.draw_path(path, style))
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.draw_circle(center, radius, style, fill))
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.fill_polygon(vert, style))
    }

    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<AnyError>> {
        each!(self, b => b.draw_text(text, style, pos))
    }

    /// Measured without the DOM. plotters' web font estimate appends a
    /// span to the page and reads its `offsetHeight`: a forced layout of
    /// the whole page for every label, 14 ms of each update (a Chrome CPU
    /// profile of 30 batch changes). The charts only need it to place
    /// labels, so a sans-serif's widths do.
    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> Result<(u32, u32), DrawingErrorKind<AnyError>> {
        Ok(text_size(text, style.size()))
    }
}

/// Width and height of `text` at `size` px in a sans-serif (Helvetica and
/// Arial advance widths in ems, by kind of character; the height is the
/// normal line height, 1.15 em).
fn text_size(text: &str, size: f64) -> (u32, u32) {
    let ems: f64 = text
        .chars()
        .map(|c| match c {
            ' ' | '.' | ',' | ':' | ';' | '!' | '|' | 'i' | 'j' | 'l' | 'I' | '\'' => 0.28,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' => 0.33,
            'm' | 'w' | 'M' | 'W' | '%' => 0.85,
            '0'..='9' | 'a'..='z' | '$' | '+' | '=' | '<' | '>' => 0.56,
            'A'..='Z' => 0.67,
            _ => 0.6,
        })
        .sum();
    ((ems * size).ceil() as u32, (1.15 * size).ceil() as u32)
}
