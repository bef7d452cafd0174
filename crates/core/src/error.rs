//! Why an estimate could not be computed: shared by every workload and the
//! report (imports nothing of the crate).

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
    /// What the model has that this workload's estimate does not model yet
    /// (a refusal, never an estimate of something else).
    NotModelled(&'static str),
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
            EstimateError::NotModelled(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for EstimateError {}
