//! vramfit's pure core: what a model is (`model`), the workloads that run on
//! it (`train`), the validated [`Scenario`] and the URL codec that builds
//! it from a query string (`query`), and what is shared by every workload
//! (`units`, `terms`, `report`, `explain`, `solve`, `gpus`, `wire`).
//!
//! Nothing here knows about a browser, a GPU or a chart library: it compiles
//! and tests natively in seconds, and the web app and the CLI both call it.
//! All sizes are exact integer [`Bytes`]; GiB exist only in display. The
//! import rules between the wings are held by `tests/layers.rs`.
#![warn(clippy::too_many_lines)]

mod choice;
pub mod clip;
pub mod explain;
#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod gpus;
pub mod import;
pub mod infer;
pub mod model;
pub mod query;
pub mod report;
pub mod scenario;
pub mod solve;
pub mod terms;
pub mod tools;
pub mod train;
pub mod units;
pub mod wire;

pub use query::{decode, decode_strict, encode, Decoded, Notice, RawQuery};
pub use report::{Component, Components, Estimate, Method, Moment, Phase, PhaseReport};
pub use scenario::{Scenario, Task};
pub use units::{Bytes, DisplayUnit};

use std::fmt;

/// Why an estimate could not be computed from an otherwise valid scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EstimateError {
    /// A result does not fit in 64 bits of bytes; `field` names the inputs
    /// that drive it.
    TooLarge { field: &'static str },
    /// The model's parameter count does not fit in 64 bits (an estimate
    /// reports it exactly, never held at the largest value).
    TooManyParams,
    /// The accurate method needs an architecture, not just a parameter count.
    NeedsArchitecture,
    /// The seed formula is for training.
    TrainingOnly,
    /// The engine refuses the settings before it reads any memory (its
    /// message).
    Engine(String),
}

impl fmt::Display for EstimateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EstimateError::TooLarge { field } => write!(
                f,
                "{field} is too large: the memory would exceed 16 EiB (2^64 bytes)"
            ),
            EstimateError::TooManyParams => f.write_str(
                "the model has more than 2^64 − 1 parameters: make its layers, widths or experts smaller",
            ),
            EstimateError::NeedsArchitecture => f.write_str(
                "the vramfit estimate needs a model's architecture: choose a model \
                 (a parameter count alone only feeds the seed formula, for training)",
            ),
            EstimateError::TrainingOnly => f.write_str(
                "the seed formula estimates training only; running a model needs its architecture",
            ),
            EstimateError::Engine(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for EstimateError {}

/// Both methods for one scenario: vramfit's (when there is an architecture)
/// and the seed formula's. The page and the CLI show exactly this.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimates {
    pub vramfit: Result<Estimate, EstimateError>,
    pub seed: Result<Estimate, EstimateError>,
}

impl Estimates {
    pub fn new(s: &Scenario) -> Self {
        match s.task {
            Task::Train => Estimates {
                vramfit: train::estimate(s),
                seed: train::seed::estimate(s),
            },
            Task::Infer => Estimates {
                vramfit: infer::estimate(s),
                seed: Err(EstimateError::TrainingOnly),
            },
        }
    }

    /// [`Estimates::primary`] of `s` alone, computing the seed formula only
    /// when it is the answer (the solver's inner loop).
    pub fn primary_of(s: &Scenario) -> Result<Estimate, EstimateError> {
        match s.task {
            Task::Train => match train::estimate(s) {
                Err(EstimateError::NeedsArchitecture) => train::seed::estimate(s),
                other => other,
            },
            Task::Infer => infer::estimate(s),
        }
    }

    /// The estimate to lead with: vramfit's, else the seed formula's; the
    /// same answer as [`Estimates::primary_of`].
    pub fn primary(&self) -> Result<&Estimate, &EstimateError> {
        match (&self.vramfit, &self.seed) {
            (Ok(e), _) => Ok(e),
            // A run the seed formula does not estimate (inference): the
            // reason is vramfit's.
            (Err(e), Err(EstimateError::TrainingOnly)) => Err(e),
            // Without an architecture the seed formula is the answer, and
            // its own error (inputs too large) is the reason when it fails.
            (Err(EstimateError::NeedsArchitecture), seed) => seed.as_ref(),
            (Err(e), _) => Err(e),
        }
    }

    /// The JSON document for `query` (the canonical query of `s`).
    pub fn document<'a>(
        &'a self,
        s: &'a Scenario,
    ) -> Result<report::Document<'a>, &'a EstimateError> {
        let primary = self.primary()?;
        let seed = self
            .seed
            .as_ref()
            .ok()
            .filter(|e| !std::ptr::eq(*e, primary));
        let notes = match &self.vramfit {
            Err(e) => vec![e.to_string()],
            Ok(_) => Vec::new(),
        };
        Ok(report::Document {
            query: query::encode(s).to_query_string(),
            scenario: s,
            estimate: primary,
            seed_formula: seed,
            notes,
        })
    }
}
