//! The inference workload: what running a model takes of a GPU, engine by
//! engine, phase by phase (load, prefill, decode; vLLM's profiling run and
//! its key/value pool), from the model's description (`crate::model`).
//!
//! Reads `crate::model` and never matches on a family; imports nothing of
//! the scenario or the codec. Each engine is described once in `engine.rs`.

pub mod engine;
pub mod generate;
pub mod layer;
pub mod local;
pub mod run;
pub mod sim;
pub mod transformers;
pub mod vllm;

use crate::error::EstimateError;
use crate::model::family::Recurrence;
use crate::report::Estimate;
use run::{Engine, Run};

/// The greatest common divisor (Euclid's), for the engines' alignments
/// (MLX's 256-token cache steps, vLLM's block sizes).
pub(crate) const fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The least common multiple of `a` and `b` (0 when either is).
pub(crate) const fn lcm(a: u128, b: u128) -> u128 {
    match gcd(a, b) {
        0 => 0,
        g => a / g * b,
    }
}

/// The estimate of an inference run (as the scenario hands it over), by
/// its engine.
pub fn estimate(s: &Run) -> Result<Estimate, EstimateError> {
    let Some(&a) = s.arch else {
        return Err(EstimateError::NeedsArchitecture);
    };
    let nextn = crate::model::gguf::nextn_cached(a.family);
    let moe = a.family.spec().moe;
    // MiniMax-M2's router (fp32 routing weights after a sigmoid bias): what
    // it keeps after the prefill is not found; LFM2-MoE's, in the
    // logits' dtype, is measured.
    let sigmoid_bias = moe.is_some_and(|m| {
        m.router == crate::model::family::Router::SigmoidBias && !m.weights_in_logits_dtype
    });
    let recurrence = a
        .family
        .spec()
        .linear
        .and_then(|l| recurrence_refusal(l.kind, s.infer.engine));
    if let Some(why) = recurrence {
        return Err(EstimateError::NotModelled(why));
    }
    if s.infer.engine == Engine::Transformers && a.family.spec().indexer {
        return Err(EstimateError::NotModelled(INDEXER_NOT_MODELLED));
    }
    let transformers_or_vllm = matches!(s.infer.engine, Engine::Transformers | Engine::Vllm);
    if transformers_or_vllm && a.family.spec().altup {
        return Err(EstimateError::NotModelled(ALTUP_NOT_MODELLED));
    }
    if s.infer.engine == Engine::Mlx && !a.family.spec().in_mlx_lm {
        return Err(EstimateError::NotModelled(NOT_IN_MLX_LM));
    }
    let mut e = match s.infer.engine {
        Engine::Llamacpp | Engine::Ollama if nextn => {
            Err(EstimateError::NotModelled(NEXTN_NOT_MODELLED))
        }
        Engine::Transformers if sigmoid_bias => {
            Err(EstimateError::NotModelled(MINIMAX_GENERATE_NOT_MODELLED))
        }
        Engine::Transformers => {
            let gpu = s.capacity.gpu().map(|g| g.cuda_capability());
            transformers::estimate(&a, s.infer, s.overhead, gpu)
        }
        Engine::Vllm => {
            let cc = s.capacity.gpu().and_then(|g| g.cuda_capability());
            vllm::estimate(&a, s.infer, s.overhead, (s.capacity.bytes(), cc))
        }
        Engine::Llamacpp | Engine::Ollama => {
            let apple = s.capacity.is_apple();
            let d = local::estimate::Device {
                capacity: s.capacity.bytes(),
                apple,
            };
            local::estimate::llama_estimate(&a, s.infer, s.overhead, d)
        }
        Engine::Mlx => local::estimate::mlx_estimate(&a, s.infer),
    }?;
    // vLLM on one pipeline stage sizes a hybrid by its count of each kind
    // of layer (its groups, its widest section), whatever their order: the
    // order's caveat would say nothing there.
    let order_free = s.infer.engine == Engine::Vllm
        && s.infer.vllm.pipeline_parallel_size.get() == 1
        && a.family.spec().linear.is_some();
    if !order_free {
        e.caveats.extend(a.layer_order_caveat());
    }
    Ok(e)
}

/// The refusal of llama.cpp (and Ollama, which runs it) for a family
/// whose MTP layers llama.cpp b10488 keeps as layers: their weights are
/// skipped, but each has a key/value cache and a place in `-ngl`'s count
/// (`model::gguf::nextn_cached`; measured, `scripts/measure/families/`).
const NEXTN_NOT_MODELLED: &str = "llama.cpp b10488 keeps GLM-4.5's multi-token-prediction layer (the GGUF's last block, blk.N.nextn) as a layer: its weights are not loaded, but it has a key/value cache and counts in -ngl; vramfit does not model that layer yet: use engine=vllm or engine=mlx";

/// The refusal of MLX for a family mlx-lm has no model of
/// (`Spec::in_mlx_lm`).
const NOT_IN_MLX_LM: &str = "mlx-lm has no model of this family (no module of its model_type in mlx_lm/models), so MLX cannot run it: use engine=llamacpp, ollama, vllm or transformers";

/// The refusal of transformers for MiniMax-M2: with its published config
/// (`use_mtp: true`, no `num_mtp_layers`) transformers 5.23's `generate`
/// raises a ValueError; with `use_mtp` off, generate keeps 8 KB (tiny) to
/// 0.8 MB (2 layers at full width) more after the prefill than the replay,
/// not found yet (`scripts/measure/families/NOTES.md`).
const MINIMAX_GENERATE_NOT_MODELLED: &str = "transformers' generate on MiniMax-M2 is not modelled yet (its published config makes transformers 5.23 ask for MTP layers it does not have; with use_mtp off, what its router keeps after the prefill is not found): use engine=vllm, llamacpp or mlx";

/// The refusal of an engine for a kind of recurrent layer whose caches
/// there are not modelled yet: on transformers and vLLM, KDA. vLLM's state
/// pages of Mamba-2 and LFM2's short convolutions are (R32, R33), and
/// transformers' LFM2 (`layer/short_conv.rs`), Granite 4.0-H and
/// Nemotron-H (`layer/mamba2.rs`). llama.cpp, Ollama and MLX run them all.
const fn recurrence_refusal(kind: Recurrence, engine: Engine) -> Option<&'static str> {
    match (kind, engine) {
        (Recurrence::GatedDeltaNet, _)
        | (_, Engine::Llamacpp | Engine::Ollama | Engine::Mlx)
        | (Recurrence::Mamba2 | Recurrence::ShortConv, Engine::Vllm | Engine::Transformers) => None,
        (Recurrence::Kda, Engine::Transformers | Engine::Vllm) => Some(KDA_NOT_MODELLED),
    }
}

const KDA_NOT_MODELLED: &str =
    "Kimi Linear is modelled on llama.cpp, Ollama and MLX only: use engine=llamacpp, ollama or mlx";

/// The refusal of transformers for DeepSeek Sparse Attention:
/// transformers 5.23 keeps the indexer's keys beside the latent
/// (`DynamicIndexedLayer`, `index_head_dim` a token in the model's dtype)
/// and scores every cached token in fp32 (`[B, S, index_heads, T]`), not
/// measured. vLLM's pages, buffers and workspaces are (R34,
/// [`vllm::sparse`]).
const INDEXER_NOT_MODELLED: &str = "DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) is modelled on vLLM, llama.cpp, Ollama and MLX; transformers' generate (the indexer's key cache and its fp32 scores over every cached token) is not modelled yet: use engine=vllm, llamacpp, ollama or mlx";

/// The refusal of transformers and vLLM for Gemma 3n: transformers 5.23's
/// forward carries AltUp's four streams through every layer
/// (`Gemma3nTextModel.forward`: `torch.stack` of the projected copies) and
/// vLLM 0.33 builds its own `Gemma3nForConditionalGeneration` with the
/// audio and vision towers; neither is measured yet.
const ALTUP_NOT_MODELLED: &str = "Gemma 3n is modelled on llama.cpp, Ollama and MLX; transformers' generate (AltUp's four streams) and vLLM are not measured yet: use engine=llamacpp, ollama or mlx";

/// What must fit, by component: the peak's, or for an engine that takes
/// more than it needs (vLLM's pool) the peak with the key/value cache it
/// needs in place of the pool.
pub fn needed_components(e: &Estimate) -> Option<crate::component::Components> {
    use crate::component::Component;
    let mut c = e.peak()?.components;
    if let Some(needed) = e.needed_bytes {
        let others = c.allocated().saturating_sub(c.get(Component::KvCache));
        c.set(Component::KvCache, needed.saturating_sub(others));
    }
    Some(c)
}

/// One point of the context chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextPoint {
    /// Tokens per sequence: transformers' prompt and new tokens, vLLM's
    /// `max_model_len`.
    pub tokens: u32,
    /// What must fit there ([`needed_components`]), overhead included.
    pub peak: crate::component::Components,
}

/// The run's context, as the chart's x axis counts it. Left out of the
/// link, llama.cpp's and Ollama's is the engine's choice (the model's, which
/// `--fit` may lower; Ollama's by the GPU's memory): the n_ctx its estimate
/// `e` served, else the model's positions. Nothing is estimated here.
pub fn context_of(s: &Run, e: Option<&Estimate>) -> u32 {
    let i = s.infer;
    let positions = s.arch.map_or(0, |a| a.positions);
    match i.engine {
        Engine::Transformers | Engine::Mlx => i.prompt.get().saturating_add(i.new.get()),
        Engine::Vllm => match i.ctx {
            run::MaxLen::Tokens(t) => t.get(),
            run::MaxLen::Model | run::MaxLen::Auto => positions,
        },
        Engine::Llamacpp | Engine::Ollama => match i.ctx {
            run::MaxLen::Tokens(t) => t.get(),
            run::MaxLen::Model | run::MaxLen::Auto => e
                .and_then(|e| e.served.as_ref()?.n_ctx)
                .unwrap_or(positions),
        },
    }
}

/// The peak against the context, on `points` log-spaced lengths from 128
/// tokens (fewer when the run's is shorter) to the model's positions (four
/// times the run's when it has none, or when the run's is longer), the
/// run's own length among them (`context_of` with its estimate `e`); the
/// other settings as they are. A length that cannot be estimated is left
/// out.
pub fn context_curve(s: &Run, e: Option<&Estimate>, points: usize) -> Vec<ContextPoint> {
    let now = context_of(s, e).max(1);
    let positions = s.arch.map_or(0, |a| a.positions);
    let top = if positions >= now {
        positions
    } else {
        now.saturating_mul(4)
    };
    let top = top.min(run::Tokens::MAX);
    let low = now.min(128).max(match s.infer.engine {
        Engine::Transformers | Engine::Mlx => s.infer.new.get().saturating_add(1),
        Engine::Vllm | Engine::Llamacpp | Engine::Ollama => 1,
    });
    let mut xs: Vec<u32> = (0..points.max(2))
        .map(|k| {
            let f = k as f64 / (points.max(2) - 1) as f64;
            let x = f64::from(low) * (f64::from(top) / f64::from(low)).powf(f);
            x.round() as u32
        })
        .collect();
    xs.push(now);
    crate::sort::by_key(&mut xs, |x| *x);
    xs.dedup();
    xs.into_iter()
        .filter_map(|tokens| {
            let mut i = *s.infer;
            match i.engine {
                Engine::Transformers | Engine::Mlx => {
                    let prompt = tokens.checked_sub(i.new.get())?;
                    i.prompt = run::Tokens::new(prompt)?;
                }
                Engine::Vllm | Engine::Llamacpp | Engine::Ollama => {
                    i.ctx = run::MaxLen::Tokens(run::Tokens::new(tokens)?);
                }
            }
            let e = estimate(&Run { infer: &i, ..*s }).ok()?;
            Some(ContextPoint {
                tokens,
                peak: needed_components(&e)?,
            })
        })
        .collect()
}
