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

pub mod caching;
mod choice;
pub mod clip;
pub mod compare;
pub mod component;
pub mod cublas;
pub mod error;
pub mod explain;
#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod gpus;
pub mod import;
pub mod infer;
pub mod inputs;
pub mod lora;
pub mod model;
pub mod paste;
pub mod query;
pub mod regex;
pub mod report;
pub mod scenario;
pub mod solve;
pub mod sort;
pub mod terms;
pub mod text;
pub mod tools;
pub mod train;
pub mod units;
pub mod wire;

pub use component::{Component, Components};
pub use error::EstimateError;
pub use query::{decode, decode_strict, encode, Decoded, Notice, RawQuery};
pub use report::{Estimate, Method, Moment, Phase, PhaseReport};
pub use scenario::{Scenario, Task};
pub use units::{Bytes, DisplayUnit};

use serde::Serialize;

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
                vramfit: train::estimate(&s.train_run()),
                seed: train::seed::estimate(&s.train_run()),
            },
            Task::Infer => Estimates {
                vramfit: infer::estimate(&s.infer_run()),
                seed: Err(EstimateError::TrainingOnly),
            },
        }
    }

    /// [`Estimates::primary`] of `s` alone, computing the seed formula only
    /// when it is the answer (the solver's inner loop).
    pub fn primary_of(s: &Scenario) -> Result<Estimate, EstimateError> {
        match s.task {
            Task::Train => match train::estimate(&s.train_run()) {
                Err(EstimateError::NeedsArchitecture) => train::seed::estimate(&s.train_run()),
                other => other,
            },
            Task::Infer => infer::estimate(&s.infer_run()),
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
    pub fn document<'a>(&'a self, s: &'a Scenario) -> Result<Document<'a>, &'a EstimateError> {
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
        Ok(Document {
            query: query::encode(s).to_query_string(),
            scenario: s,
            estimate: primary,
            seed_formula: seed,
            notes,
        })
    }
}

/// The JSON document the CLI prints and the page exports: the canonical
/// query (which reproduces it), the resolved model, the primary estimate
/// (vramfit's, or the seed formula's when only a parameter count is given)
/// and the seed formula's beside it.
#[derive(Serialize)]
pub struct Document<'a> {
    pub query: String,
    pub scenario: &'a Scenario,
    #[serde(flatten)]
    pub estimate: &'a Estimate,
    /// The seed formula's estimate, when the primary one is vramfit's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_formula: Option<&'a Estimate>,
    /// Why a method could not run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Document<'_> {
    /// Pretty-printed JSON. Bytes are exact integers.
    pub fn to_json(&self) -> String {
        // Serializing plain structs of integers and strings cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
