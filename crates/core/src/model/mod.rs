//! What a model is, whatever is done with it: the family descriptions
//! ([`Spec`]), the modules a layer is made of, the architecture numbers and
//! their rules, the parameter-tensor walk, the attention's key/value
//! geometry, the presets and the `config.json` importer.
//!
//! Every workload (training in `crate::train`, and any other) reads this
//! description; none of them matches on the [`Family`]: what differs between
//! families is a field of the [`Spec`] or a number of the [`Architecture`].
//! This module imports nothing of a workload, the codec or the report.

pub mod arch;
pub mod attention;
pub mod family;
pub mod gguf;
pub mod hf_config;
pub mod module;
pub mod presets;
pub mod tensors;
pub mod weights;

pub use arch::{ArchError, ArchNum, ArchOverrides, Architecture, LayerHeads, LayerKind};
pub use attention::{KvGeometry, Latent, LayerAttention};
pub use family::{Family, Spec};
pub use module::{with_head_target, Module, ModuleKind, ModuleName, Proj, HEAD_TARGET};
pub use presets::{preset, Preset, PRESETS};
pub use tensors::{Ends, ExpertLayout, ParamStats, ParamTensor, Place, Role};
pub use weights::{FormatOptions, Holder, Quantized, WeightFormat};
