//! LM Studio's llama.cpp runtime, only where documented. LM Studio is
//! closed source; its `lms load` options (<https://lmstudio.ai/docs/cli/load>:
//! `--context-length`, `--gpu` as `off`, `max` or a ratio) and its SDK's
//! load settings (`contextLength`, `flashAttention`,
//! `offloadKVCacheToGpu`, `llamaKCacheQuantizationType` /
//! `llamaVCacheQuantizationType`; lmstudio-python #107, lmstudio-js #310)
//! map onto llama.cpp's knobs. The runtime calls the C API, whose
//! defaults hold elsewhere ([`Frontend::Library`]: a full-size
//! sliding-window cache, as lmstudio-bug-tracker #900's log prints
//! "using full-size SWA cache"). Not documented, so left as inputs: the
//! default context length, how a `--gpu` ratio becomes layers, and the
//! parallel slots (a log in lmstudio-bug-tracker #1862 shows 4 sequences
//! in one unified stream).

use super::ggml::CacheType;
use super::params::{FlashAttn, Frontend, LlamaCpp};

/// `--gpu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LmsGpu {
    /// `off`: no layer on the GPU.
    Off,
    /// `max`: every layer.
    Max,
    /// A number of layers (what a ratio becomes is not documented).
    Layers(u32),
}

/// LM Studio's load settings, by the SDK's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LmStudio {
    pub context_length: u32,
    pub gpu: LmsGpu,
    /// `flashAttention` (`None`: the runtime's default, llama.cpp's `auto`).
    pub flash_attention: Option<bool>,
    pub offload_kv_cache_to_gpu: bool,
    pub k_cache_quantization_type: CacheType,
    pub v_cache_quantization_type: CacheType,
    /// Parallel sequences, and whether they share one stream.
    pub n_parallel: u32,
    pub kv_unified: bool,
}

/// The llama.cpp knobs LM Studio's settings become.
pub fn lm_studio(s: &LmStudio) -> LlamaCpp {
    LlamaCpp {
        n_ctx: Some(s.context_length),
        n_parallel: Some(s.n_parallel.max(1)),
        kv_unified: s.kv_unified,
        cache_type_k: s.k_cache_quantization_type,
        cache_type_v: s.v_cache_quantization_type,
        flash_attn: match s.flash_attention {
            Some(true) => FlashAttn::On,
            Some(false) => FlashAttn::Off,
            None => FlashAttn::Auto,
        },
        n_gpu_layers: match s.gpu {
            LmsGpu::Off => Some(0),
            LmsGpu::Max => None,
            LmsGpu::Layers(n) => Some(n),
        },
        no_kv_offload: !s.offload_kv_cache_to_gpu,
        ..LlamaCpp::defaults(Frontend::Library)
    }
}
