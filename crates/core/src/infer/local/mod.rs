//! The local runners' memory: llama.cpp (llama-server, llama-cli, and the
//! applications on its C API such as LM Studio's runtime), Ollama on top
//! of llama-server, and MLX on Apple silicon, with Apple's GPU working set.
//!
//! Versions: llama.cpp b10488 (`9d77fa17`, Ollama's pin), with the builds
//! where a rule changed selectable ([`params::builds`]); Ollama HEAD
//! `fb30760` (2026-08-21); mlx-lm `d78bf58e` (after v0.31.3) and mlx
//! `846d1762` (after v0.32.1). The rules and their sources are in
//! `scripts/measure/llamacpp/NOTES.md`; each function names the file and
//! line it follows.
//!
//! What is exact and what is an estimate:
//! - exact (as llama.cpp computes it): the context's numbers
//!   ([`params::resolve`]), the key/value cache and the recurrent state
//!   ([`kv`]), the layers' placement ([`placement`]), the model buffers
//!   given each tensor's bytes ([`weights`]), the output buffer, and
//!   `--fit`'s search ([`fit`]) over these numbers;
//! - an estimate of a measured quantity: the compute buffers
//!   ([`compute`]), which llama.cpp sizes by reserving its graphs.
//!
//! Entry points: [`llama_cpp`], [`ollama::ollama`], [`mlx::mlx`],
//! [`crate::gpus::apple::gpu_working_set`].
//!
//! Reads `crate::model` (the architecture, its key/value geometry and its
//! family's `Spec`), never matches on a family; imports nothing of the
//! codec.

pub mod adapter;
pub mod compute;
pub mod estimate;
pub mod fit;
pub mod ggml;
pub mod kv;
pub mod lmstudio;
pub mod mlx;
pub mod model;
pub mod ollama;
pub mod params;
pub mod placement;
pub mod plan;
pub mod read;
pub mod weights;

pub use fit::{FitAnswer, FitFailure, FitStatus};
pub use ggml::CacheType;
pub use model::{CacheModel, Dims, LocalModel, MlaKeys, Pattern, Width};
pub use params::{
    builds, Backend, FlashAttn, Frontend, Gpu, LlamaCpp, Resolved, BUILD, MAX_DEVICES,
};
pub use placement::{Partial, Place, Placement};
pub use plan::{DeviceBytes, Plan};
pub use read::{FileName, ReadFile, ReadFileError};
pub use weights::{FileBytes, FoldedFile, Fraction, LayerBytes, Layers, ModelBytes, Part, Weights};

use std::fmt;

/// Why llama.cpp refuses the settings, or why they cannot be worked out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalError {
    /// "quantized V cache was requested, but this requires Flash
    /// Attention" (`src/llama-context.cpp:461-467`, `:3601-3605`).
    QuantizedVNeedsFlashAttn,
    /// "model does not support different K and V cache types" (latent
    /// attention, `:3591-3594`).
    MlaNeedsSameTypes,
    /// A quantized cache's block does not divide a head or a row
    /// (`:3607-3625`; `ggml_row_size` asserts it).
    BlockDoesNotDivide { cache_type: CacheType, width: u64 },
    /// `-c 0` and the model's context is not known.
    NoTrainedContext,
    /// "n_ctx_seq == 0" (`:295-297`).
    ZeroContext,
    /// "invalid value for n_parallel" (`common/arg.cpp:2537-2539`).
    ZeroParallel,
    /// More GPUs than [`MAX_DEVICES`].
    TooManyGpus,
    /// The weights list has neither one entry nor one per layer.
    WeightsLayers { given: usize, model: u32 },
    /// A number does not fit llama.cpp's 32 bits.
    TooLarge { what: &'static str },
    /// More layers than llama.cpp holds ([`LLAMA_MAX_LAYERS`]).
    TooManyLayers { n_layer: u32 },
}

/// The most layers llama.cpp loads: `LLAMA_MAX_LAYERS` (`src/llama-hparams.h`,
/// the size of its per-layer arrays), which `llama_model::load_hparams`
/// enforces when it reads `feed_forward_length` per layer
/// (`llama_model_loader::get_key_or_arr`: "n > N_MAX").
pub const LLAMA_MAX_LAYERS: u32 = 512;

impl fmt::Display for LocalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalError::QuantizedVNeedsFlashAttn => {
                f.write_str("a quantized V cache needs flash attention (llama.cpp refuses -fa off)")
            }
            LocalError::MlaNeedsSameTypes => {
                f.write_str("latent attention needs the same K and V cache types")
            }
            LocalError::BlockDoesNotDivide { cache_type, width } => write!(
                f,
                "the {} cache's block of {} does not divide {width}",
                cache_type.name(),
                cache_type.block().0
            ),
            LocalError::NoTrainedContext => {
                f.write_str("the model's context length is unknown: give n_ctx")
            }
            LocalError::ZeroContext => f.write_str("n_ctx per sequence is 0"),
            LocalError::ZeroParallel => f.write_str("n_parallel must be at least 1"),
            LocalError::TooManyGpus => write!(f, "at most {MAX_DEVICES} GPUs"),
            LocalError::WeightsLayers { given, model } => write!(
                f,
                "weights for {given} layers given for a model of {model} layers"
            ),
            LocalError::TooLarge { what } => write!(f, "{what} is too large for llama.cpp"),
            LocalError::TooManyLayers { n_layer } => write!(
                f,
                "llama.cpp loads at most {LLAMA_MAX_LAYERS} layers (LLAMA_MAX_LAYERS) and refuses a model of {n_layer}"
            ),
        }
    }
}

impl std::error::Error for LocalError {}

/// A llama.cpp load: as it runs (after `--fit`), and what `--fit` chose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    pub plan: Plan,
    /// `None`: `--fit` off (or a build without it).
    pub fit: Option<FitAnswer>,
}

/// llama.cpp loading `m` with weights `w` and knobs `p` on `gpus`;
/// `host_memory` is what `--fit` fits a run without GPU to (the host's
/// total memory).
pub fn llama_cpp(
    m: &LocalModel,
    w: &ModelBytes<'_>,
    p: &LlamaCpp,
    gpus: &[Gpu],
    host_memory: Option<u128>,
) -> Result<Report, LocalError> {
    llama_cpp_with(m, &Weights::from(w), p, gpus, host_memory, None)
}

/// [`llama_cpp`] with the weights in any form, and an adapter loaded
/// beside the model (`--lora`): `--fit` places the model without it
/// (it runs before the adapters are loaded, `common/common.cpp:1294-1334`,
/// b10488); then the adapter goes where the weights it adapts are, and
/// the warm-up reserves the graph again with its matmuls.
pub fn llama_cpp_with(
    m: &LocalModel,
    w: &Weights<'_>,
    p: &LlamaCpp,
    gpus: &[Gpu],
    host_memory: Option<u128>,
    adapter: Option<&adapter::LoadedAdapter>,
) -> Result<Report, LocalError> {
    if m.cache.layers > LLAMA_MAX_LAYERS {
        return Err(LocalError::TooManyLayers {
            n_layer: m.cache.layers,
        });
    }
    let bare = LlamaCpp { lora: None, ..*p };
    let (n_ctx, placement, fit) = if bare.fits() {
        let (a, plan) = fit::fit_planned(m, w, &bare, gpus, host_memory)?;
        if adapter.is_none() {
            return Ok(Report { plan, fit: Some(a) });
        }
        (a.n_ctx, a.placement, Some(a))
    } else {
        (p.n_ctx_param(), Placement::asked(p, m.cache.layers), None)
    };
    let Some(ad) = adapter else {
        return Ok(Report {
            plan: plan::Context::new(m, w, p, gpus, n_ctx)?.plan(w, &placement),
            fit,
        });
    };
    let adapted = LlamaCpp {
        lora: Some(ad.shape),
        ..bare
    };
    let plan = plan::Context::new(m, w, &adapted, gpus, n_ctx)?.plan_adapted(w, ad, &placement);
    Ok(Report { plan, fit })
}
