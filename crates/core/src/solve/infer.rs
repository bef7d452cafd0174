//! The inference workload's answers: the longest context that fits, the
//! most precise weights that fit (one ladder for every engine, by the kind
//! of weights it loads), and the changes worth trying, engine by engine.
//! Every answer is judged by the verdict the page shows (`Outcome::fit`).

use super::{fits_with, largest, largest_fitting, outcome, owned, Answer, Candidate, Changes, Fit};
use crate::infer::engine::WeightsKind;
use crate::infer::run::{self, Engine, KvDtype, Tokens};
use crate::inputs::Attn;
use crate::model::WeightFormat;
use crate::query::Key;
use crate::scenario::Scenario;
use crate::units::Bytes;

/// What the page offers an inference run, a click away: the longest
/// context (or prompt) that fits, the most sequences at once (where the
/// engine reads `batch`), the most precise weights that fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answers {
    pub context: Option<(Key, u32)>,
    /// The longest context was held to every layer on the GPU: the run
    /// leaves the placement to llama.cpp's `--fit` or Ollama's scheduler,
    /// which would otherwise fit any context by moving layers to host
    /// memory, which vramfit does not know ([`placed_whole`]).
    pub context_whole: bool,
    /// `None`: the engine does not read `batch`; `Some(None)`: not even one
    /// sequence fits.
    pub batch: Option<Option<u32>>,
    pub weights: Option<Answer<&'static str>>,
}

/// Every inference answer for `s` on a GPU of `capacity`.
pub fn answers(s: &Scenario, capacity: Bytes) -> Answers {
    Answers {
        context: max_context(s, capacity),
        context_whole: !placed_whole(s).is_empty(),
        batch: crate::query::reads(&s.infer, Key::Batch).then(|| super::max_batch(s, capacity)),
        weights: weights_that_fit(s, capacity),
    }
}

/// The most precise weights of the engine's kind that fit, when the run's
/// do not: a checkpoint's format (the run's 16 or 32 bits, then fp8, int8,
/// AWQ, GPTQ, nf4 with double quantization as QLoRA loads it), a GGUF file
/// type or an MLX conversion, most precise first; a local runner's with
/// every layer on the GPU where the run does not put them there
/// ([`whole_on_gpu`]). `None`: none fits.
pub fn weights_that_fit(s: &Scenario, capacity: Bytes) -> Option<Answer<&'static str>> {
    let kind = s.infer.engine.spec().weights;
    let whole = whole_on_gpu(s);
    rungs(s)
        .into_iter()
        .map(|w| Answer {
            value: w,
            changes: owned(&weights_change(kind, w))
                .into_iter()
                .chain(whole.iter().cloned())
                .collect(),
        })
        .find(|a| fits_with(s, &a.changes, capacity))
}

/// The weights tried for `s`, most precise first.
fn rungs(s: &Scenario) -> Vec<&'static str> {
    match s.infer.engine.spec().weights {
        WeightsKind::Checkpoint => {
            let plain = match s.infer.weights.plain_bytes() {
                4 => WeightFormat::Fp32,
                _ => WeightFormat::Bf16,
            };
            let mut out = vec![plain.key()];
            for (w, _, _) in &LIGHTER {
                out.push(w.key());
            }
            out
        }
        WeightsKind::Gguf => GGUF_LADDER.to_vec(),
        WeightsKind::Mlx => MLX_LADDER.to_vec(),
    }
}

/// The keys that load weights `w` of a kind (a checkpoint's nf4 with
/// double quantization, as QLoRA's recipe).
fn weights_change(kind: WeightsKind, w: &'static str) -> Vec<(Key, &'static str)> {
    let mut ch = vec![(Key::Weights, w)];
    if kind == WeightsKind::Checkpoint && w == WeightFormat::Nf4.key() {
        ch.push((Key::DoubleQuant, "true"));
    }
    ch
}

/// An inference run's longest context that fits: transformers' longest
/// prompt (with `new` tokens after it), vLLM's longest `max_model_len`;
/// at most the model's positions when it has them (transformers feeding
/// prompt + new - 1 of them); llama.cpp's and Ollama's longest `-c` /
/// `num_ctx`, with every layer on the GPU where the run leaves the
/// placement to them ([`placed_whole`]).
pub fn max_context(s: &Scenario, capacity: Bytes) -> Option<(Key, u32)> {
    let positions = s.arch.map_or(0, |a| a.positions);
    let top = if positions > 0 {
        positions
    } else {
        Tokens::MAX
    };
    match s.infer.engine {
        Engine::Transformers | Engine::Mlx => {
            // `generate` feeds prompt + new - 1 positions (the last new
            // token is never fed back, as the codec's limit says).
            let fed = u32::from(s.infer.engine == Engine::Transformers);
            let room = (top.saturating_add(fed).min(Tokens::MAX))
                .saturating_sub(s.infer.new.get())
                .max(Tokens::MIN);
            largest_fitting(s, Key::Prompt, Tokens::MIN, room, capacity).map(|n| (Key::Prompt, n))
        }
        Engine::Vllm => {
            largest_fitting(s, Key::Ctx, Tokens::MIN, top, capacity).map(|n| (Key::Ctx, n))
        }
        Engine::Llamacpp | Engine::Ollama => {
            let whole = placed_whole(s);
            if whole.is_empty() {
                return largest_fitting(s, Key::Ctx, Tokens::MIN, top, capacity)
                    .map(|n| (Key::Ctx, n));
            }
            largest(Tokens::MIN, top, |n| {
                let ctx = (Key::Ctx, n.to_string());
                let with_all: Vec<(Key, String)> = std::iter::once(ctx.clone())
                    .chain(whole.iter().cloned())
                    .collect();
                match (outcome(s, &[ctx]), outcome(s, &with_all)) {
                    (Some(run), Some(all)) => {
                        run.fit(capacity) == Fit::Yes
                            && run.peak == all.peak
                            && run.host == all.host
                    }
                    _ => false,
                }
            })
            .map(|n| (Key::Ctx, n))
        }
    }
}

/// The keys that put every layer on the GPU where the run leaves the
/// placement to the engine ([`run::Inference::fits_layers`]: llama.cpp's
/// `--fit`, whose steps 3-4 move layers and experts to host memory until
/// the rest fits, `common/fit.cpp` of b10488; Ollama's scheduler, which
/// sets `-ngl` itself). Empty where the link sets the placement. A context
/// fits such a run only when the engine's placement equals these keys'
/// (nothing moved): otherwise any context "fits", host memory taking the
/// rest, and vramfit does not know the host's memory.
fn placed_whole(s: &Scenario) -> Vec<(Key, String)> {
    let i = &s.infer;
    let placed = match i.engine {
        Engine::Llamacpp | Engine::Ollama => i.fits_layers(),
        Engine::Transformers | Engine::Vllm | Engine::Mlx => false,
    };
    if placed {
        whole_on_gpu(s)
    } else {
        Vec::new()
    }
}

/// Weight formats to offer, most precise first, with what each costs
/// (Dettmers et al. 2022, LLM.int8(); 2023, QLoRA's NF4; Frantar et al.
/// 2023, GPTQ; Lin et al. 2024, AWQ: 8-bit near lossless, 4-bit a small
/// quality cost).
const LIGHTER: [(WeightFormat, &str, &str); 5] = [
    (
        WeightFormat::Fp8,
        "Use fp8 weights (an FP8 checkpoint)",
        "8-bit floats with block scales: close to 16-bit quality; needs the FP8 checkpoint",
    ),
    (
        WeightFormat::Int8,
        "Load the weights in 8 bits (LLM.int8, bitsandbytes)",
        "int8 weights with outlier columns in 16 bits: close to 16-bit quality, slower matmuls",
    ),
    (
        WeightFormat::Awq,
        "Use AWQ 4-bit weights (an AWQ checkpoint)",
        "4-bit weights, group 128: a small quality cost; needs the AWQ checkpoint",
    ),
    (
        WeightFormat::Gptq,
        "Use GPTQ 4-bit weights (a GPTQ checkpoint)",
        "4-bit weights, group 128: a small quality cost; needs the GPTQ checkpoint",
    ),
    (
        WeightFormat::Nf4,
        "Load the weights in 4 bits (nf4, bitsandbytes)",
        "4-bit NormalFloat with double quantization: a small quality cost, each weight dequantized per prefill matmul",
    ),
];

/// Changes worth trying for an inference run: lighter weights, an fp8
/// cache, fewer sequences, no CUDA graphs, more GPUs (vLLM).
pub(super) fn infer_candidates(s: &Scenario) -> Vec<Candidate> {
    let i = &s.infer;
    let mut c = Changes(Vec::new());
    let now = u128::from(i.weights.plain_bytes().max(1)) * 8;
    let checkpoints = i.engine.spec().weights == WeightsKind::Checkpoint;
    for &(w, label, cost) in LIGHTER.iter().filter(|_| checkpoints) {
        let bits = match w.plain_bytes() {
            0 if matches!(w, WeightFormat::Fp8 | WeightFormat::Int8) => 8,
            0 => 4,
            b => u128::from(b) * 8,
        };
        if bits < now && w != i.weights {
            c.add(
                label,
                cost,
                &weights_change(WeightsKind::Checkpoint, w.key()),
            );
        }
    }
    match i.engine {
        Engine::Transformers => {
            if i.attn == Attn::Eager {
                c.add("Use SDPA attention", "none", &[(Key::Attn, "sdpa")]);
            }
            if let Some((label, cost, keys)) = super::expandable(s) {
                c.add(label, cost, keys);
            }
            let b = i.batch.get();
            if b >= 2 {
                let half = (b / 2).to_string();
                c.add(
                    &format!("Generate {half} sequences at once"),
                    "half the sequences per call: more calls for the same work",
                    &[(Key::Batch, &half)],
                );
            }
        }
        Engine::Vllm => vllm_candidates(s, &mut c),
        Engine::Llamacpp | Engine::Ollama | Engine::Mlx => local_candidates(s, &mut c),
    }
    c.0
}

/// The GGUF file types tried, most precise first: the common ones.
const GGUF_LADDER: [&str; 8] = [
    "f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m", "q2_k",
];
/// MLX's weights tried, most precise first.
const MLX_LADDER: [&str; 6] = ["bf16", "8bit", "6bit", "4bit", "3bit", "2bit"];

/// The ladder of weights the engine reads, and the run's place on it.
fn ladder(s: &Scenario) -> (&'static [&'static str], Option<usize>) {
    let i = &s.infer;
    let (ladder, now): (&'static [&'static str], &str) = match i.engine.spec().weights {
        WeightsKind::Gguf => (&GGUF_LADDER, i.gguf.key()),
        WeightsKind::Mlx => (&MLX_LADDER, i.mlx_weights.key()),
        WeightsKind::Checkpoint => (&[], ""),
    };
    (ladder, ladder.iter().position(|w| *w == now))
}

/// The local runners' levers: the next lighter weights, a quantized cache,
/// and for a mixture of experts on llama.cpp every layer's routed experts
/// in host memory (`--cpu-moe`).
fn local_candidates(s: &Scenario, c: &mut Changes) {
    let (ladder, at) = ladder(s);
    let lighter = at.map_or(&ladder[..0], |k| &ladder[k + 1..]);
    for w in lighter.iter().take(2) {
        c.add(
            &format!("Use {w} weights"),
            "fewer bits per weight: a smaller file, some quality lost",
            &[(Key::Weights, w)],
        );
    }
    let i = &s.infer;
    match i.engine {
        Engine::Llamacpp if !i.llama.cache_type_k.is_quantized() => c.add(
            "Store the KV cache in q8_0 (with flash attention)",
            "34 bytes per 32 values: about half the cache, a small accuracy cost",
            &[
                (Key::CacheTypeK, "q8_0"),
                (Key::CacheTypeV, "q8_0"),
                (Key::FlashAttn, "on"),
            ],
        ),
        Engine::Ollama if !i.ollama.kv_cache_type.is_quantized() => c.add(
            "Store the KV cache in q8_0 (with flash attention)",
            "34 bytes per 32 values: about half the cache, a small accuracy cost",
            &[(Key::KvCacheType, "q8_0"), (Key::FlashAttention, "true")],
        ),
        Engine::Mlx if i.mlx.kv_bits.is_none() => c.add(
            "Quantize the KV cache to 8 bits (kv_bits)",
            "about half the cache, a small accuracy cost",
            &[(Key::KvBits, "8")],
        ),
        Engine::Llamacpp | Engine::Ollama | Engine::Mlx | Engine::Transformers | Engine::Vllm => {}
    }
    let experts_on_gpu = s
        .arch
        .filter(|a| a.experts > 0 && i.llama.n_cpu_moe.get() < a.layers);
    if let (Engine::Llamacpp, Some(a)) = (i.engine, experts_on_gpu) {
        c.add(
            "Keep the routed experts in host memory (--cpu-moe)",
            "the experts' matmuls run on the CPU: slower tokens, and host memory holds the experts",
            &[(Key::NCpuMoe, &a.layers.to_string())],
        );
    }
}

/// Changes sized to the GPU: for a mixture of experts on llama.cpp, the
/// fewest layers whose routed experts, in host memory (`--n-cpu-moe N`),
/// let the run fit, when fewer than all do (all is `--cpu-moe`, offered
/// among the candidates).
pub(super) fn sized_candidates(s: &Scenario, capacity: Bytes) -> Vec<Candidate> {
    let i = &s.infer;
    let Some(a) = s
        .arch
        .filter(|a| a.experts > 0 && i.engine == Engine::Llamacpp)
    else {
        return Vec::new();
    };
    let from = i.llama.n_cpu_moe.get() + 1;
    let mut c = Changes(Vec::new());
    if let Some(n) =
        super::smallest_fitting(s, Key::NCpuMoe, from, a.layers, capacity).filter(|n| *n < a.layers)
    {
        let layers = if n == 1 { "layer" } else { "layers" };
        c.add(
            &format!("Keep the routed experts of {n} {layers} in host memory (--n-cpu-moe {n})"),
            "those experts' matmuls run on the CPU: slower tokens, and host memory holds them",
            &[(Key::NCpuMoe, &n.to_string())],
        );
    }
    c.0
}

/// The keys that put every layer of a local run on the GPU at its
/// context, where the run does not: llama.cpp without `--fit` and with
/// every layer under `-ngl` (left out, it means all), Ollama with
/// `num_gpu` at every layer and the output; MLX has no such choice.
fn whole_on_gpu(s: &Scenario) -> Vec<(Key, String)> {
    let all = s.arch.map_or(run::Layers::MAX, |a| {
        a.layers.saturating_add(1).min(run::Layers::MAX)
    });
    let short = |n: Option<run::Layers>| n.is_some_and(|n| n.get() < all);
    let i = &s.infer;
    let mut ch = Vec::new();
    match i.engine {
        Engine::Llamacpp => {
            if i.llama.fit {
                ch.push((Key::Fit, "false".to_string()));
            }
            if short(i.llama.n_gpu_layers) {
                ch.push((Key::NGpuLayers, all.to_string()));
            }
        }
        Engine::Ollama => {
            if i.ollama.num_gpu.is_none() || short(i.ollama.num_gpu) {
                ch.push((Key::NumGpu, all.to_string()));
            }
        }
        Engine::Mlx | Engine::Transformers | Engine::Vllm => {}
    }
    ch
}

/// vLLM's own levers.
fn vllm_candidates(s: &Scenario, c: &mut Changes) {
    let v = &s.infer.vllm;
    if s.infer.kv_dtype == KvDtype::Auto {
        c.add(
            "Store the KV cache in fp8",
            "one byte per element: twice the tokens, a small accuracy cost",
            &[(Key::KvDtype, "fp8")],
        );
    }
    if !v.enforce_eager {
        c.add(
            "Run without CUDA graphs (enforce_eager)",
            "no graph memory; slower decoding at small batches",
            &[(Key::EnforceEager, "true")],
        );
    }
    let tp = v.tensor_parallel_size.get() * 2;
    if s.arch.is_some_and(|a| a.heads % tp == 0) {
        let t = tp.to_string();
        c.add(
            &format!("Split the model over {t} GPUs (tensor parallel)"),
            &format!("needs {t} GPUs; every layer communicates between them"),
            &[(Key::TensorParallelSize, &t)],
        );
    }
    // Pipeline stages hold a share of the layers each (R26).
    let pp = v.pipeline_parallel_size.get() * 2;
    if s.arch.is_some_and(|a| pp <= a.layers) {
        let (p, gpus) = (
            pp.to_string(),
            (pp * v.tensor_parallel_size.get()).to_string(),
        );
        c.add(
            &format!("Split the layers into {p} pipeline stages (pipeline parallel)"),
            &format!("needs {gpus} GPUs; a request passes through the stages in turn"),
            &[(Key::PipelineParallelSize, &p)],
        );
    }
}
