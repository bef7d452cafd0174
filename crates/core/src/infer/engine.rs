//! Each engine described once, as data ([`EngineSpec`], as families are
//! `model::Spec`s, optimizers `OptimSpec`s and releases `StackSpec`s): the
//! weights it loads, who picks the context when the link does not, whether
//! PyTorch's caching allocator holds its tensors, and its words for the
//! page and the CLI alike. Its estimator is the other half (`infer::
//! estimate` dispatches); the keys it reads are the codec's table
//! (`query/tasks.rs`). An input of the workload: the codec and the page
//! read it.

use super::run::{Engine, MlxWeights};
use crate::inputs::Overhead;
use crate::lora::AdapterType;
use crate::model::gguf::FileType;
use crate::model::WeightFormat;

/// The kind of weights an engine loads, each with its own list of
/// `weights` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightsKind {
    /// A checkpoint's format as loaded: bf16 to GPTQ/AWQ, bitsandbytes,
    /// fp8 (`WeightFormat`).
    Checkpoint,
    /// A GGUF file's type (`FileType`, `llama-quantize`'s names).
    Gguf,
    /// An MLX conversion (`MlxWeights`, `mlx_lm.convert`).
    Mlx,
}

impl WeightsKind {
    /// Every kind, in the order of [`WeightsKind::index`].
    pub const ALL: [WeightsKind; 3] =
        [WeightsKind::Checkpoint, WeightsKind::Gguf, WeightsKind::Mlx];

    /// The `weights` values of this kind: the form's options, the solver's
    /// ladder's names, the `weights` writer's.
    pub fn options(self) -> &'static [(&'static str, &'static str)] {
        match self {
            WeightsKind::Checkpoint => WeightFormat::OPTIONS,
            WeightsKind::Gguf => FileType::OPTIONS,
            WeightsKind::Mlx => MlxWeights::OPTIONS,
        }
    }

    /// Its place in [`WeightsKind::ALL`] (the page keeps each kind's last
    /// choice aside).
    pub fn index(self) -> usize {
        match self {
            WeightsKind::Checkpoint => 0,
            WeightsKind::Gguf => 1,
            WeightsKind::Mlx => 2,
        }
    }
}

/// Who picks a run's context when the link leaves `ctx` out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextBy {
    /// The request: its prompt and new tokens (`generate`).
    Request,
    /// The model: its positions (vLLM's `max_model_len`).
    Model,
    /// The engine, when it loads the model: llama.cpp the model's positions,
    /// which `--fit` may lower; Ollama by the GPU's memory. Its estimate
    /// says what it chose (`served.n_ctx`).
    Engine,
}

/// What the page and the CLI call an engine's settings, figures and phases.
#[derive(Clone, Copy, Debug)]
pub struct Words {
    /// The title of its own arguments' panel.
    pub panel: &'static str,
    /// The weights figure.
    pub weights: &'static str,
    /// The key/value cache figure.
    pub kv_cache: &'static str,
    /// The phase chart's caption: what its phases are.
    pub phases: &'static str,
    /// The answer "longest ... that fits": the context key as the engine
    /// names it (`None`: the prompt, with the new tokens as they are).
    pub context_arg: Option<&'static str>,
    /// The context chart's note, where the engine makes the curve differ.
    pub context_note: Note,
    /// How it sizes a request: said when a key it does not read is given
    /// (`batch`: its sequences; `prompt`/`new`: its context; `ctx`: the
    /// request's tokens).
    pub sequences: &'static str,
    pub request: &'static str,
}

/// A note the page shows, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    None,
    Always(&'static str),
    /// Only while llama.cpp's `--fit` is on ([`super::run::Inference::fits_layers`]).
    WhileFit(&'static str),
}

impl Note {
    /// The note for a run whose `--fit` is on or off.
    pub fn text(self, fit: bool) -> Option<&'static str> {
        match self {
            Note::None => None,
            Note::Always(t) => Some(t),
            Note::WhileFit(t) => fit.then_some(t),
        }
    }
}

/// One engine: the one place what differs between engines (beyond their
/// estimators and the keys they read) is written.
#[derive(Clone, Copy, Debug)]
pub struct EngineSpec {
    pub engine: Engine,
    /// The weights it loads.
    pub weights: WeightsKind,
    /// Who picks the context when the link leaves it out.
    pub context: ContextBy,
    /// Whether its tensors come from PyTorch's caching allocator, which
    /// reserves more than it hands out (`Overhead::reserve_pct`); llama.cpp's
    /// ggml and MLX allocate their buffers themselves.
    pub caching_allocator: bool,
    /// What its process holds on the GPU outside its tensors (the CUDA
    /// context and kernels), in MiB, when the link does not say
    /// ([`Overhead::CONTEXT_TORCH`], measured, for transformers and
    /// training; [`Overhead::CONTEXT_ASSUMED`] for the others).
    pub context_mib: u32,
    /// The type of a LoRA adapter it loads when the link does not say
    /// (`None`: vramfit does not size its adapters): llama.cpp's from
    /// `convert_lora_to_gguf.py` (f32), Ollama's own conversion (f16).
    pub adapter_type: Option<AdapterType>,
    pub words: Words,
}

const FIT_NOTE: &str =
    " With --fit on, llama.cpp moves layers to host memory rather than run out: the \
     GPU's part levels off as the context grows, and more of the model runs on the CPU.";
const LOCAL_PHASES: &str =
    "Loading the layers placed on the GPU, then serving: the key/value cache of n_ctx \
     tokens and the compute buffers added. What stays in host memory is not drawn. \
     The red line is the GPU.";
const GGUF_WEIGHTS: &str = "Weights (the whole GGUF file's tensors)";
const LOCAL_CACHE: &str =
    "KV cache (n_ctx tokens, every attention layer; a hybrid's recurrent state per sequence)";
const BY_CONTEXT: &str = "; it sizes a request by ctx (prompt + new tokens)";

/// The engine a link means when it names none (`generate`, as training's
/// stack runs it).
pub const DEFAULT_ENGINE: Engine = Engine::Transformers;

/// Every engine, in [`Engine`]'s order.
pub static ENGINES: [EngineSpec; 5] = [
    EngineSpec {
        engine: Engine::Transformers,
        weights: WeightsKind::Checkpoint,
        context: ContextBy::Request,
        caching_allocator: true,
        context_mib: Overhead::CONTEXT_TORCH,
        adapter_type: None,
        words: Words {
            panel: "Engine arguments",
            weights: "Weights (as loaded)",
            kv_cache: "KV cache (after the last token)",
            phases: "Loading the weights, the prompt's forward pass (prefill, which fills the key/value \
                 cache), then generating the new tokens one by one (decode). The red line is the GPU.",
            context_arg: None,
            context_note: Note::None,
            sequences: "",
            request: "; it runs prompt + new tokens: set those",
        },
    },
    EngineSpec {
        engine: Engine::Vllm,
        weights: WeightsKind::Checkpoint,
        context: ContextBy::Model,
        caching_allocator: true,
        context_mib: Overhead::CONTEXT_ASSUMED,
        adapter_type: None,
        words: Words {
            panel: "vLLM engine arguments",
            weights: "Weights (as loaded)",
            kv_cache: "KV cache (the pool of blocks)",
            phases: "Loading the weights, vLLM's profiling run (a dummy batch of max_num_batched_tokens), \
                 then serving with its key/value pool. The red line is the engine's share of the GPU.",
            context_arg: Some("max_model_len"),
            context_note: Note::Always(
                " For vLLM, what it needs at each max_model_len: the weights, its profiling run, its graphs \
                 and the cache of one request that long; the rest of its share becomes its key/value pool.",
            ),
            sequences: "; it serves up to max_num_seqs requests of up to ctx tokens",
            request: BY_CONTEXT,
        },
    },
    EngineSpec {
        engine: Engine::Llamacpp,
        weights: WeightsKind::Gguf,
        context: ContextBy::Engine,
        caching_allocator: false,
        context_mib: Overhead::CONTEXT_ASSUMED,
        adapter_type: Some(AdapterType::F32),
        words: Words {
            panel: "llama-server arguments",
            weights: GGUF_WEIGHTS,
            kv_cache: LOCAL_CACHE,
            phases: LOCAL_PHASES,
            context_arg: Some("-c"),
            context_note: Note::WhileFit(FIT_NOTE),
            sequences: "; it serves n_parallel sequences sharing ctx",
            request: BY_CONTEXT,
        },
    },
    EngineSpec {
        engine: Engine::Ollama,
        weights: WeightsKind::Gguf,
        context: ContextBy::Engine,
        caching_allocator: false,
        context_mib: Overhead::CONTEXT_ASSUMED,
        adapter_type: Some(AdapterType::F16),
        words: Words {
            panel: "Ollama settings",
            weights: GGUF_WEIGHTS,
            kv_cache: LOCAL_CACHE,
            phases: LOCAL_PHASES,
            context_arg: Some("num_ctx"),
            context_note: Note::WhileFit(FIT_NOTE),
            sequences: "; it serves num_parallel requests of ctx tokens each",
            request: BY_CONTEXT,
        },
    },
    EngineSpec {
        engine: Engine::Mlx,
        weights: WeightsKind::Mlx,
        context: ContextBy::Request,
        caching_allocator: false,
        context_mib: Overhead::CONTEXT_ASSUMED,
        adapter_type: None,
        words: Words {
            panel: "mlx-lm arguments",
            weights: "Weights (as mlx_lm.convert writes them)",
            kv_cache: "KV cache (prompt and new tokens)",
            phases: "Loading the weights, then generating: the cache at its end, its last growth and a \
                 prompt chunk's activations at once. The red line is the GPU's working set.",
            context_arg: None,
            context_note: Note::None,
            sequences: "",
            request: "; it runs prompt + new tokens: set those",
        },
    },
];

impl Engine {
    /// The engine's description.
    pub fn spec(self) -> &'static EngineSpec {
        // ENGINES is in the enum's order (held by a test).
        &ENGINES[self as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_enums_order() {
        assert_eq!(ENGINES.len(), Engine::ALL.len());
        for (spec, e) in ENGINES.iter().zip(Engine::ALL) {
            assert_eq!(spec.engine, *e);
            assert_eq!(e.spec().engine, *e);
        }
    }
}
