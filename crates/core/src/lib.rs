//! vramfit's pure core: the validated training [`Scenario`], the URL codec
//! that builds it from a query string, and the memory estimators.
//!
//! Nothing here knows about a browser, a GPU or a chart library: it compiles
//! and tests natively in seconds, and the web app and the CLI both call it.
//! All sizes are exact integer [`Bytes`]; GiB exist only in display.

mod choice;
pub mod query;
pub mod report;
pub mod scenario;
pub mod seed;
pub mod units;

pub use query::{decode, decode_strict, encode, Decoded, Notice, RawQuery};
pub use report::{Component, Components, Estimate, Method, Moment, Phase, PhaseReport};
pub use scenario::Scenario;
pub use units::{Bytes, DisplayUnit};

use std::fmt;

/// Why an estimate could not be computed from an otherwise valid scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EstimateError {
    /// A result does not fit in 64 bits of bytes; `field` names the inputs
    /// that drive it.
    TooLarge { field: &'static str },
}

impl fmt::Display for EstimateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EstimateError::TooLarge { field } => write!(
                f,
                "{field} is too large: the memory would exceed 16 EiB (2^64 bytes)"
            ),
        }
    }
}

impl std::error::Error for EstimateError {}
