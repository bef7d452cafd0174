//! What an inference run does: the engine, the weights' format, the
//! sequences and their lengths, the key/value cache's dtype, and the
//! engine's own knobs as it names them. Every value here has passed the
//! codec's checks: the estimator takes it without re-validating.

use crate::choice::{bounded, choice_enum};
use crate::model::{FormatOptions, WeightFormat};
use crate::scenario::{Attn, Batch};
use crate::units::Bytes;
use serde::Serialize;

choice_enum! {
    /// The program that runs the model.
    pub enum Engine {
        /// Hugging Face transformers, `model.generate()` with its default
        /// dynamic cache (transformers 5.23, torch 2.15).
        Transformers = "transformers", "transformers generate (5.23)",
        /// vLLM's server or `LLM` class (vLLM 0.33): a pool of key/value
        /// blocks sized from the GPU's memory.
        Vllm = "vllm", "vLLM (0.33)",
    }
}

choice_enum! {
    /// The dtype of the key/value cache.
    pub enum KvDtype {
        /// The model's dtype.
        Auto = "auto", "the model's dtype",
        /// float8 (vLLM: e4m3 on CUDA), one byte per element; per-tensor
        /// scales outside the pool.
        Fp8 = "fp8", "fp8",
        /// float8 e4m3.
        Fp8E4m3 = "fp8_e4m3", "fp8 (e4m3)",
        /// float8 e5m2.
        Fp8E5m2 = "fp8_e5m2", "fp8 (e5m2)",
    }
}

impl KvDtype {
    /// Bytes per element, given the model's.
    pub fn bytes(self, model: u64) -> u64 {
        match self {
            KvDtype::Auto => model,
            KvDtype::Fp8 | KvDtype::Fp8E4m3 | KvDtype::Fp8E5m2 => 1,
        }
    }
}

bounded!(
    /// Tokens of a prompt, of a generation, or of a context.
    Tokens(u32),
    1,
    4_194_304
);
bounded!(
    /// `generate`'s `min_new_tokens` (0: none).
    MinNew(u32),
    0,
    4_194_304
);
bounded!(
    /// A share of the GPU's memory in ten-thousandths (9200 = 0.92).
    Share(u16),
    1,
    10_000
);
bounded!(
    /// vLLM's `tensor_parallel_size`: GPUs the model is split over.
    TensorParallel(u32),
    1,
    1024
);
bounded!(
    /// vLLM's `block_size`: tokens per key/value block.
    BlockSize(u32),
    1,
    65_536
);
bounded!(
    /// A count of sequences or tokens an engine takes per step.
    Count(u32),
    1,
    16_777_216
);
bounded!(
    /// GPTQ / AWQ group size (0: one group over the whole input).
    GroupSize(u32),
    0,
    65_536
);

/// The longest sequence the engine is set up for (vLLM's
/// `max_model_len`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxLen {
    /// The model's trained context (its `max_position_embeddings`).
    Model,
    /// vLLM's `auto`: the longest that fits the KV cache.
    Auto,
    /// A number of tokens.
    Tokens(Tokens),
}

/// vLLM's engine arguments, as vLLM names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Vllm {
    /// `gpu_memory_utilization`: the share of the GPU's total memory the
    /// engine may take.
    pub gpu_memory_utilization: Share,
    /// `max_num_seqs` (`None`: vLLM's default for the GPU).
    pub max_num_seqs: Option<Count>,
    /// `max_num_batched_tokens` (`None`: vLLM's default for the GPU).
    pub max_num_batched_tokens: Option<Count>,
    pub block_size: BlockSize,
    /// `enforce_eager`: no CUDA graphs.
    pub enforce_eager: bool,
    pub tensor_parallel_size: TensorParallel,
    /// `kv_cache_memory_bytes`: the pool's size given, instead of what the
    /// profile leaves.
    pub kv_cache_memory: Option<Bytes>,
}

impl Default for Vllm {
    /// vLLM 0.33's defaults (`config/cache.py`: utilization 0.92, block
    /// size 16).
    fn default() -> Self {
        Vllm {
            gpu_memory_utilization: Share(9200),
            max_num_seqs: None,
            max_num_batched_tokens: None,
            block_size: BlockSize(16),
            enforce_eager: false,
            tensor_parallel_size: TensorParallel(1),
            kv_cache_memory: None,
        }
    }
}

/// One inference run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Inference {
    pub engine: Engine,
    /// The format the weights are in.
    pub weights: WeightFormat,
    /// GPTQ / AWQ group size.
    pub group_size: GroupSize,
    /// bitsandbytes' nested quantization (`bnb_4bit_use_double_quant`).
    pub double_quant: bool,
    /// `bnb_4bit_compute_dtype` is fp32 rather than bf16.
    pub compute_fp32: bool,
    /// Sequences generated at once (transformers' batch).
    pub batch: Batch,
    /// Prompt tokens per sequence (transformers).
    pub prompt: Tokens,
    /// New tokens per sequence: `generate`'s `max_new_tokens`.
    pub new: Tokens,
    /// `generate`'s `min_new_tokens`.
    pub min_new: MinNew,
    /// The longest sequence (vLLM's `max_model_len`).
    pub ctx: MaxLen,
    pub kv_dtype: KvDtype,
    /// The attention implementation (transformers).
    pub attn: Attn,
    pub vllm: Vllm,
}

impl Inference {
    /// The format's options.
    pub fn format_options(&self) -> FormatOptions {
        FormatOptions {
            double_quant: self.double_quant,
            group: self.group_size.get(),
        }
    }
}

impl Default for Inference {
    fn default() -> Self {
        Inference {
            engine: Engine::Transformers,
            weights: WeightFormat::Bf16,
            group_size: GroupSize(128),
            double_quant: false,
            compute_fp32: false,
            batch: Batch::ONE,
            prompt: Tokens(1024),
            new: Tokens(256),
            min_new: MinNew(0),
            ctx: MaxLen::Model,
            kv_dtype: KvDtype::Auto,
            attn: Attn::Sdpa,
            vllm: Vllm::default(),
        }
    }
}
