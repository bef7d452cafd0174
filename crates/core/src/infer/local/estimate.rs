//! The local runners as estimates: llama.cpp and Ollama on a GGUF file
//! (predicted from the model's description for its file type), MLX on
//! Apple silicon. What is on the GPU is the estimate; what llama.cpp keeps
//! in host memory is its `host_bytes`.

use super::adapter::LoadedAdapter;
use super::mlx::{mlx, Mlx};
use super::ollama::{ollama_with, Ollama};
use super::{
    llama_cpp_with, Backend, FitFailure, FitStatus, FlashAttn, FoldedFile, Frontend, Gpu, LlamaCpp,
    LocalModel, MlaKeys, Plan, BUILD, MAX_DEVICES,
};
use crate::error::EstimateError;
use crate::infer::run::{Engine, Flash, Inference, MaxLen, MlxQuant, SplitMode};
use crate::inputs::Overhead;
use crate::model::gguf::Recipe;
use crate::model::{Architecture, ModuleName, Role};
use crate::report::{
    Drivers, Estimate, GpuShare, Method, Moment, OllamaPs, Phase, PhaseReport, Served, Tally,
};
use crate::terms::{Term, TermId as T, TermSet, Terms, Unit as U};
use crate::units::Bytes;

/// The GPU the estimate fits on.
#[derive(Clone, Copy, Debug)]
pub struct Device {
    /// What a process may allocate on it (a Mac: its GPU working set).
    pub capacity: Bytes,
    /// Apple silicon (Metal), else CUDA.
    pub apple: bool,
}

fn bytes(b: u128, field: &'static str) -> Result<Bytes, EstimateError> {
    u64::try_from(b)
        .map(Bytes)
        .map_err(|_| EstimateError::TooLarge { field })
}

/// The GGUF file of `a`: the one read, or the run's file type predicted,
/// as llama.cpp places it.
fn file(a: &Architecture, inf: &Inference) -> Result<FoldedFile, EstimateError> {
    if let Some(read) = inf.file_bytes {
        if read.layers() != a.layers {
            return Err(EstimateError::Engine(format!(
                "the file read has {} layers and the model {}",
                read.layers(),
                a.layers
            )));
        }
        return Ok(read.folded());
    }
    FoldedFile::predict(a, inf.gguf, Recipe::for_file_type(inf.gguf))
        .map_err(|e| EstimateError::Engine(format!("llama-quantize refuses it: {e}")))
}

/// The context llama.cpp's (and Ollama's) process holds beside its
/// buffers.
fn local_context(overhead: &Overhead) -> u32 {
    overhead.context(Engine::Llamacpp.spec().context_mib)
}

/// One GPU as llama.cpp sees it: its free memory is the capacity less the
/// CUDA context (Metal reports its working set as free).
fn gpu(d: Device, overhead: &Overhead) -> Gpu {
    let total = u128::from(d.capacity.get());
    let ctx = u128::from(local_context(overhead)) << 20;
    Gpu {
        backend: if d.apple {
            Backend::Metal
        } else {
            Backend::Cuda
        },
        free: if d.apple {
            total
        } else {
            total.saturating_sub(ctx)
        },
        total,
    }
}

/// The GPUs llama.cpp uses, each `d`: one per `-ts` entry; with `-sm
/// none` only `-mg`'s (`src/llama.cpp: llama_model_load`, b10488: "if
/// using single GPU mode, remove all except the main GPU"), which on GPUs
/// of one kind is any one of them. Ollama: one.
fn gpus_used(d: Device, overhead: &Overhead, inf: &Inference) -> Vec<Gpu> {
    let one = gpu(d, overhead);
    match (inf.engine, inf.llama.split_mode) {
        (Engine::Llamacpp, SplitMode::Layer) => vec![one; inf.llama.gpus()],
        (Engine::Llamacpp, SplitMode::Single)
        | (Engine::Ollama | Engine::Transformers | Engine::Vllm | Engine::Mlx, _) => vec![one],
    }
}

fn flash(f: Flash) -> FlashAttn {
    match f {
        Flash::Auto => FlashAttn::Auto,
        Flash::On => FlashAttn::On,
        Flash::Off => FlashAttn::Off,
    }
}

/// llama-server's parameters for the run.
fn llama_params(inf: &Inference) -> LlamaCpp {
    let l = &inf.llama;
    let mut tensor_split = [0.0; MAX_DEVICES];
    if let (Some(t), SplitMode::Layer) = (l.tensor_split, l.split_mode) {
        for (s, p) in tensor_split.iter_mut().zip(t.parts()) {
            *s = p;
        }
    }
    LlamaCpp {
        n_ctx: match inf.ctx {
            MaxLen::Tokens(t) => Some(t.get()),
            MaxLen::Model | MaxLen::Auto => None,
        },
        n_parallel: l.n_parallel.map(|c| c.get()),
        n_batch: l.n_batch.get(),
        n_ubatch: l.n_ubatch.get(),
        cache_type_k: l.cache_type_k,
        cache_type_v: l.cache_type_v,
        flash_attn: flash(l.flash_attn),
        n_gpu_layers: l.n_gpu_layers.map(|n| n.get()),
        host_experts: host_experts(l),
        tensor_overrides: l.n_cpu_moe.get() > 0 || l.override_tensor.is_some(),
        kv_unified: l.kv_unified,
        swa_full: Some(l.swa_full),
        tensor_split,
        fit: Some(l.fit),
        build: l.build.get(),
        ..LlamaCpp::defaults(Frontend::Server)
    }
}

/// The layers whose routed experts are in host memory: `--n-cpu-moe N`'s
/// `0..N` and `-ot`'s run (resolved against the model by the codec), one
/// run together (the codec refuses two apart).
fn host_experts(l: &crate::infer::run::LlamaArgs) -> (u32, u32) {
    let n = (0, l.n_cpu_moe.get());
    match l.override_tensor.map(|o| o.host_experts) {
        Some((lo, hi)) if hi > lo && n.1 > 0 => (0, hi.max(n.1)),
        Some((lo, hi)) if hi > lo => (lo, hi),
        Some(_) | None => n,
    }
}

/// Ollama's settings for the run of `a`.
fn ollama_params(a: &Architecture, inf: &Inference) -> Ollama {
    let o = &inf.ollama;
    let arch = crate::model::gguf::gguf_architecture(a);
    Ollama {
        num_ctx: match inf.ctx {
            MaxLen::Tokens(t) => Some(t.get()),
            MaxLen::Model | MaxLen::Auto => None,
        },
        num_parallel: super::ollama::parallel_for(arch, o.num_parallel.get()),
        num_gpu: o.num_gpu.map(|n| n.get()),
        kv_cache_type: Some(o.kv_cache_type),
        flash_attention: o.flash_attention,
        ..Ollama::DEFAULT
    }
}

fn fit_label(s: FitStatus) -> &'static str {
    match s {
        FitStatus::Fits => "fits as asked",
        FitStatus::Context => "context shortened to fit",
        FitStatus::Layers => "layers moved to the CPU to fit",
        FitStatus::Failed(why) => match why {
            FitFailure::LayersSetByUser => "could not fit: -ngl is set, so --fit leaves the layers as asked",
            FitFailure::SplitSetByUser => "could not fit: -ts is set, so --fit leaves the split as asked",
            FitFailure::OverridesSetByUser => {
                "could not fit: --n-cpu-moe or -ot set tensor overrides, so --fit leaves the layers as asked"
            }
            FitFailure::HostTooSmall => "could not fit: the host's memory is too small even at the least context",
        },
    }
}

/// The estimate of llama-server (or Ollama) running `a` on `d`.
pub fn llama_estimate(
    a: &Architecture,
    inf: &Inference,
    overhead: &Overhead,
    d: Device,
) -> Result<Estimate, EstimateError> {
    let f = file(a, inf)?;
    let m = LocalModel::of(a, MlaKeys::Present);
    let gpus = gpus_used(d, overhead, inf);
    let engine_error = |e: super::LocalError| EstimateError::Engine(e.to_string());
    let w = f.weights();
    let adapter = inf
        .adapter()
        .map(|ad| LoadedAdapter::of(a, &ad))
        .transpose()
        .map_err(|e| EstimateError::Engine(format!("the LoRA adapter: {e}")))?;
    let ad = adapter.as_ref();
    let (report, n_ctx, ollama) = match inf.engine {
        Engine::Ollama => {
            let r = ollama_with(&m, &w, &ollama_params(a, inf), &gpus, None, ad)
                .map_err(engine_error)?;
            (r.report, r.num_ctx, true)
        }
        Engine::Llamacpp | Engine::Transformers | Engine::Vllm | Engine::Mlx => {
            let r = llama_cpp_with(&m, &w, &llama_params(inf), &gpus, None, ad)
                .map_err(engine_error)?;
            (r, r.plan.resolved.n_ctx, false)
        }
    };
    let p = &report.plan;
    let ollama_ps = if ollama {
        let overflowing = report
            .fit
            .is_some_and(|f| f.placement.partial.iter().any(|x| x.hi > x.lo));
        let ps = super::ollama::ps_bytes(p, overflowing, m.cache.layers);
        Some(OllamaPs {
            size: bytes(ps.size, "the model size")?,
            size_vram: bytes(ps.size_vram, "the model size")?,
            kv_unlisted: bytes(ps.kv_unlisted, "n_ctx")?,
            lora_unlisted: bytes(ps.lora_unlisted, "lora_r")?,
            context: n_ctx,
        })
    } else {
        None
    };
    let fullest = fullest(p);
    let mut e = plan_estimate(a, p, fullest, overhead)?;
    e.overhead = crate::report::OverheadRule::ContextOnly {
        ctx_mib: local_context(overhead),
        engine: inf.engine.label(),
    };
    let total_weights = w.total(m.cache.layers);
    e.served = Some(Box::new(Served {
        engine: engine_label(inf),
        weights_bytes: bytes(total_weights, "the model size")?,
        kv_cache_bytes: bytes(p.kv.kv() + p.kv.recurrent, "n_ctx")?,
        n_gpu_layers: Some(p.n_gpu_layers),
        n_ctx: Some(n_ctx),
        fit: report.fit.map(|a| fit_label(a.status)),
        gpus: shares(p, fullest, overhead)?,
        ollama_ps,
        lora_bytes: adapter
            .as_ref()
            .map(|ad| bytes(ad.bytes(), "lora_r"))
            .transpose()?,
        ..Served::default()
    }));
    e.caveats = [
        Some("llama.cpp sizes its compute buffers by reserving its graphs: vramfit estimates them from the graph's code".into()),
        file_caveat(inf),
        (m.cache.recurrent > 0).then(|| "a hybrid's recurrent layers: their state (RS buffer) is exact, their compute graph is estimated as an attention layer's".into()),
        newer_build(inf),
        p.pipeline_parallel.then(|| "pipeline parallelism (several GPUs, every layer on them): its copies of the graph's inputs are not counted in the compute buffers".into()),
        (a.family.spec().per_layer_embeddings && a.ple_dim > 0).then(|| "the per-layer inputs (layers × per-layer width per token, gathered from the host's table and projected) are not in the compute-buffer estimate".into()),
        a.family.spec().altup.then(|| "Gemma 3n's AltUp streams and Laurel branch are not in the compute-buffer estimate".into()),
        fixed_kv_layers(a),
        server_host_memory(inf, &m),
        one_at_a_time(a, inf),
        projector(a, inf),
        crate::model::gguf::mtp_skipped(a.family).then(|| "the multi-token-prediction block the converter appends (num_nextn_predict_layers, taken as 1) is in the file, but llama.cpp loads only its expert bias (n_expert × 4 bytes, not counted) unless --spec-type draft-mtp".into()),
    ]
    .into_iter()
    .flatten()
    .collect();
    Ok(e)
}

/// What llama.cpp caches where its loader fixes the layers with a cache of
/// their own and the model says otherwise (Gemma 3n: the first 20, the
/// E2B's and E4B's own count; `Converter::kv_from_start`).
fn fixed_kv_layers(a: &Architecture) -> Option<String> {
    let fixed = crate::model::gguf::kv_from_start(a.family).min(a.layers);
    let own = a.layers - a.kv_shared_layers.min(a.layers);
    (fixed > 0 && own != fixed).then(|| {
        format!(
            "llama.cpp gives the first {fixed} layers a cache whatever kv_shared_layers says ({own} here)"
        )
    })
}

/// A multimodal model's projector (`Spec::multimodal`), which vramfit does
/// not size: Ollama's builds carry one and pass it to llama-server, on the
/// GPU unless `num_gpu` keeps layers on the CPU or a GPU has less than its
/// size and 1 GiB free, with `--fit` told to leave that much more free
/// (`appendMMProjArgs`, `shouldDisableMMProjOffload`, `mmprojFitTargetMiB`
/// in `llm/llama_server.go`, Ollama fb30760); llama.cpp loads one only
/// when given `--mmproj`.
fn projector(a: &Architecture, inf: &Inference) -> Option<String> {
    if !a.family.spec().multimodal {
        return None;
    }
    Some(match inf.engine {
        Engine::Ollama => "text only: Ollama's build of a multimodal model carries its vision projector, which it passes to llama-server (--mmproj) on the GPU, telling --fit to leave the projector's size and 1 GiB more free, unless num_gpu keeps layers on the CPU or the GPU has less room than that; the projector is not sized here".into(),
        Engine::Llamacpp | Engine::Transformers | Engine::Vllm | Engine::Mlx => "text only: a vision projector passed with --mmproj is not sized here".into(),
    })
}

/// Ollama running the model one request at a time when more were asked
/// ([`super::ollama::ONE_AT_A_TIME`]).
fn one_at_a_time(a: &Architecture, inf: &Inference) -> Option<String> {
    let arch = crate::model::gguf::gguf_architecture(a);
    let asked = inf.ollama.num_parallel.get();
    (inf.engine == Engine::Ollama && asked > 1 && super::ollama::parallel_for(arch, asked) == 1)
        .then(|| format!("Ollama runs {arch} models one request at a time (\"does not currently support parallel requests\"): num_parallel={asked} is not applied"))
}

/// What llama-server keeps in host memory beside the model, which is not
/// counted: its prompt cache (`--cache-ram`) and, for a hybrid's recurrent
/// state or a sliding-window cache, its context checkpoints
/// (`--ctx-checkpoints`), by the build that brought each. Source:
/// llama.cpp b10488 `common/common.h` (`n_ctx_checkpoints` 32,
/// `checkpoint_min_step` 8192, `cache_ram_mib` 8192),
/// `tools/server/server-context.cpp` (`create_checkpoint`, made where the
/// memory cannot be rolled back: recurrent or sliding-window).
fn server_host_memory(inf: &Inference, m: &LocalModel) -> Option<String> {
    use super::params::builds;
    if inf.engine != Engine::Llamacpp {
        return None;
    }
    let build = inf.llama.build.get();
    let sliding = m.cache.counts().1 > 0 && !inf.llama.swa_full;
    let checkpoints = (m.cache.recurrent > 0 && build >= builds::RS_CHECKPOINTS)
        || (sliding && build >= builds::SWA_CHECKPOINTS);
    let cache =
        (build >= builds::PROMPT_CACHE).then_some("prompt cache (--cache-ram, up to 8192 MiB)");
    let checkpoint = m.cache.checkpoint(m.cache.layers, build);
    let states = checkpoints.then(|| {
        if checkpoint > 0 {
            // As llama-server prints a checkpoint's size ("size = %.3f MiB").
            #[allow(clippy::cast_precision_loss)]
            let mib = checkpoint as f64 / f64::from(1u32 << 20);
            let slot = crate::units::Bytes::try_from_u128(32 * checkpoint)
                .map_or_else(String::new, |b| b.display(crate::units::DisplayUnit::Gib));
            format!(
                "context checkpoints (--ctx-checkpoints: up to 32 a slot in b10488, each a sequence's recurrent state, {mib:.3} MiB: up to {slot} a slot)"
            )
        } else {
            "context checkpoints (--ctx-checkpoints: up to 32 a slot in b10488, each a sequence's sliding-window cells: not sized)".to_string()
        }
    });
    let parts: Vec<String> = [cache.map(String::from), states]
        .into_iter()
        .flatten()
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "llama-server's host memory beside the model: its {}",
            parts.join(" and its ")
        )
    })
}

/// The engine and the build whose rules apply: llama.cpp's `build`.
fn engine_label(inf: &Inference) -> String {
    match inf.engine {
        Engine::Llamacpp => format!("llama.cpp (b{})", inf.llama.build.get()),
        Engine::Ollama | Engine::Transformers | Engine::Vllm | Engine::Mlx => {
            inf.engine.label().into()
        }
    }
}

/// A llama.cpp build newer than the one whose code vramfit reads: its
/// rules are that build's.
fn newer_build(inf: &Inference) -> Option<String> {
    let b = inf.llama.build.get();
    (inf.engine == Engine::Llamacpp && b > BUILD).then(|| {
        format!("changes after llama.cpp b{BUILD}: b{b} is estimated with b{BUILD}'s rules")
    })
}

/// The file's bytes, when they are predicted rather than read.
fn file_caveat(inf: &Inference) -> Option<String> {
    if inf.file_bytes.is_some() {
        return None;
    }
    Some(format!(
        "the GGUF's bytes are predicted for {} (llama.cpp b8973's llama-quantize){}",
        inf.gguf.label(),
        match inf.file {
            Some(name) => format!(": {name} is named but its header was not read"),
            None => "; a file read gives them exactly".into(),
        }
    ))
}

/// The GPU that holds the most (the first of equals): on GPUs of one
/// capacity, the one that decides whether the load fits.
fn fullest(p: &Plan) -> usize {
    (0..p.n_gpus).fold(0, |best, d| {
        if p.gpu(d).held() > p.gpu(best).held() {
            d
        } else {
            best
        }
    })
}

/// Each GPU's buffers, when there are several.
fn shares(p: &Plan, shown: usize, overhead: &Overhead) -> Result<Vec<GpuShare>, EstimateError> {
    if p.n_gpus < 2 {
        return Ok(Vec::new());
    }
    let ctx = u128::from(local_context(overhead)) << 20;
    (0..p.n_gpus)
        .map(|d| {
            let g = p.gpu(d);
            Ok(GpuShare {
                gpu: u32::try_from(d).unwrap_or(u32::MAX),
                layers: g.layers,
                output_layer: g.output,
                weights_bytes: bytes(g.weights, "the model size")?,
                kv_cache_bytes: bytes(g.kv + g.recurrent, "n_ctx")?,
                compute_bytes: bytes(g.compute, "n_ctx")?,
                lora_bytes: bytes(g.lora, "lora_r")?,
                total_bytes: bytes(g.held() + ctx, "the model size")?,
                phases: d == shown,
            })
        })
        .collect()
}

/// The phases of a llama.cpp load on GPU `shown`: the model, then the
/// context.
fn plan_estimate(
    a: &Architecture,
    p: &Plan,
    shown: usize,
    overhead: &Overhead,
) -> Result<Estimate, EstimateError> {
    let g = p.gpu(shown);
    let mut t = Terms::default();
    let put = |t: &mut Terms, id, b: u128| t.set(id, Term::of(&[(b, U::Bytes)]));
    put(&mut t, T::LocalWeights, g.weights);
    put(&mut t, T::LocalKv, g.kv + g.recurrent);
    put(&mut t, T::LocalCompute, g.compute);
    put(&mut t, T::LocalLora, g.lora);
    put(&mut t, T::LocalHostLora, p.host.lora);
    put(&mut t, T::LocalHostWeights, p.host.weights);
    put(&mut t, T::LocalHostKv, p.host.kv + p.host.recurrent);
    put(&mut t, T::LocalHostCompute, p.host.compute);
    put(&mut t, T::LocalOutput, p.output_buffer);
    let load = TermSet::of(&[T::LocalWeights]);
    let serve = load
        .with(T::LocalKv)
        .with(T::LocalCompute)
        .with(T::LocalLora);
    let mut host = TermSet::of(&[
        T::LocalHostWeights,
        T::LocalHostKv,
        T::LocalHostCompute,
        T::LocalOutput,
    ]);
    if p.host.lora > 0 {
        host = host.with(T::LocalHostLora);
    }
    let ctx = u128::from(local_context(overhead)) << 20;
    let phases = [
        (Phase::Load, Moment::End, load),
        (Phase::Serve, Moment::End, serve),
    ]
    .into_iter()
    .map(|(phase, at, set)| report(&t, phase, at, set, (ctx, &LLAMA_DRIVERS)))
    .collect::<Result<Vec<_>, _>>()?;
    let params = crate::report::param_count(a.params())?;
    let mut e = Estimate::from_phases(Method::Vramfit, params, 0, phases, t);
    let host_bytes: u128 = host.iter().map(|id| e.terms.bytes(id)).sum();
    e.host_bytes = bytes(host_bytes, "the model size")?;
    e.host_terms = host;
    Ok(e)
}

/// What drives llama.cpp's compute buffers, output buffer and cache.
const LLAMA_DRIVERS: Drivers = Drivers {
    activations:
        "n_ctx × n_ubatch, or a layer's largest tensor in host memory (the compute buffers)",
    logits: "n_batch × vocabulary (the output buffer)",
    kv_cache: "n_ctx",
};

/// What drives MLX's prompt chunk and cache.
const MLX_DRIVERS: Drivers = Drivers {
    activations: "prefill_step_size",
    logits: "prefill_step_size",
    kv_cache: "prompt + new",
};

/// One phase whose peak and end are the terms of `set`.
fn report(
    t: &Terms,
    phase: Phase,
    at: Moment,
    set: TermSet,
    (overhead, drivers): (u128, &Drivers),
) -> Result<PhaseReport, EstimateError> {
    let mut tally = Tally::new();
    for id in set.iter() {
        tally.add(id.component(), t.bytes(id));
    }
    let c = tally.components(overhead, drivers)?;
    let mut r = PhaseReport::new(1, phase, at, c, c);
    r.terms = set;
    r.end_terms = set;
    Ok(r)
}

/// Bytes of `a`'s weights as `mlx_lm.convert` writes them: quantized
/// (`quant`), every linear layer and embedding whose input width is a
/// multiple of the group (`mlx_lm/utils.py: quantize_model`, the class
/// predicate `hasattr(m, "to_quantized") and m.weight.shape[-1] %
/// group_size == 0`) holds its bits per weight, packed in uint32, and per
/// group a scale and a bias in the model's dtype (affine) or one 8-bit
/// scale (mxfp4, nvfp4, mxfp8: `mlx.core.quantize`'s modes); the rest
/// (norms, biases, vectors, gpt-oss's expert biases) in the dtype.
///
/// Gemma 4 (`gemma4_text.py` at d78bf58e): the router at 8 bits in groups
/// of 64 (`quant_predicate`), and each layer's `layer_scalar`, an array of
/// one (a parameter in MLX, a buffer in transformers). Qwen3-Next and
/// Qwen3.5-MoE: the router and the shared expert's gate at 8 bits;
/// Qwen3-MoE and gpt-oss: the router; Qwen3.5: `A_log` kept in fp32;
/// LFM2-MoE: the router at 8 bits and the expert bias in fp32. Gemma 3n
/// (`gemma3n.py`): the shared layers' keys and values loaded, no
/// predicate (AltUp's router and Laurel's matrices quantized as any
/// linear; measured, `scripts/measure/families/gemma3n/mlx_*.txt`).
/// Measured: mlx-cpu 0.32.4, mlx-lm d78bf58e
/// (`scripts/measure/mlx/hybrid_rows.jsonl`, `check.py`; every mode:
/// `modes_rows.jsonl`).
pub fn mlx_weights(a: &Architecture, quant: Option<MlxQuant>, group: u64, dt: u128) -> u128 {
    let spec = a.family.spec();
    let router_8bit = spec.moe.is_some_and(|m| m.mlx_router_8bit);
    let mut total = if spec.layer_scalar {
        u128::from(a.layers) * dt
    } else {
        0
    };
    // LFM2-MoE's expert bias, `E` fp32 values per MoE layer (a parameter
    // to mlx-lm, a buffer to transformers: not in the tensor walk).
    if spec.moe.is_some_and(|m| m.mlx_expert_bias_fp32) {
        total += a.layer_kinds()[1].1 as u128 * u128::from(a.experts) * 4;
    }
    let a_log_fp32 = spec.linear.is_some_and(|l| l.mlx_a_log_fp32);
    // Gemma 3n's shared layers keep the checkpoint's keys and values
    // (`Spec::mlx_keeps_shared_kv`): every layer's, as if none shared.
    let walked = Architecture {
        kv_shared_layers: if spec.mlx_keeps_shared_kv {
            0
        } else {
            a.kv_shared_layers
        },
        ..*a
    };
    walked.for_each_tensor(|at, t| {
        let n = u128::from(t.stack) * u128::from(t.rows) * u128::from(t.cols);
        if t.fp32_stored && a_log_fp32 {
            total += at.copies() * n * 4;
            return;
        }
        // `nn.Conv1d` has no `to_quantized`: the Gated DeltaNet's
        // convolution stays in the dtype.
        // gpt-oss's expert biases (`[E, out]`, no module) are vectors to
        // mlx-lm (`SwitchLinear`'s `bias`), kept in the dtype.
        let expert_bias = t.role == Role::Expert && t.module.is_none();
        let plain_router = t.role == Role::Router && spec.moe.is_some_and(|m| m.mlx_router_plain);
        let matrix =
            t.cols > 1 && !matches!(t.role, Role::Norm) && !t.conv && !expert_bias && !plain_router;
        let gate = t.role == Role::Router || t.module == Some(ModuleName::SharedExpertGate);
        // The gates' predicate gives 8 bits in groups of 64 with no mode:
        // affine whatever the model's mode (measured, `modes_rows.jsonl`).
        let (b, g, affine) = match quant {
            Some(_) if router_8bit && gate => (Some(8), 64, true),
            Some(q) => (Some(q.bits), q.group.map_or(group, u64::from), q.affine),
            None => (None, group, true),
        };
        // A group's scale and bias in the dtype, or one 8-bit scale.
        let per_group = if affine { 2 * dt } else { 1 };
        let q = match b {
            Some(b) if matrix && g > 0 && t.cols.is_multiple_of(g) => {
                n * u128::from(b) / 8 + n / u128::from(g) * per_group
            }
            Some(_) | None => n * dt,
        };
        let bias = if t.bias {
            u128::from(t.stack) * u128::from(t.rows) * dt
        } else {
            0
        };
        total += at.copies() * (q + bias);
    });
    total
}

/// The estimate of mlx-lm generating `new` tokens after `prompt` with
/// `a` (weights and activations in a 16-bit dtype, as `mlx_lm.convert`
/// writes them).
pub fn mlx_estimate(a: &Architecture, inf: &Inference) -> Result<Estimate, EstimateError> {
    let dt = 2;
    let m = &inf.mlx;
    let s = Mlx {
        kv_bits: m.kv_bits.map(|b| b.get()),
        kv_group_size: m.kv_group_size.get(),
        prefill_step_size: m.prefill_step_size.get(),
        max_kv_size: m.max_kv_size.map(|c| c.get()),
        ..Mlx::defaults(inf.prompt.get(), inf.new.get())
    };
    let r = mlx(a, &s).map_err(|e| EstimateError::Engine(e.to_string()))?;
    let w = mlx_weights(
        a,
        inf.mlx_weights.quant(),
        u64::from(m.q_group_size.get()),
        dt,
    );
    let mut t = Terms::default();
    let put = |t: &mut Terms, id, b: u128| t.set(id, Term::of(&[(b, U::Bytes)]));
    put(&mut t, T::MlxWeights, w);
    put(&mut t, T::MlxKv, r.kv);
    put(&mut t, T::MlxState, r.state);
    put(&mut t, T::MlxGrowth, r.growth);
    put(&mut t, T::MlxPrefill, r.prefill_activations);
    // The generation's peak (`MlxReport::peak`): the cache at its end, its
    // last growth and a prompt chunk's activations at once, an upper
    // bound on what is alive together.
    let load = TermSet::of(&[T::MlxWeights]);
    let decode = load.union(TermSet::of(&[
        T::MlxKv,
        T::MlxState,
        T::MlxGrowth,
        T::MlxPrefill,
    ]));
    let phases = [
        (Phase::Load, Moment::End, load),
        (Phase::Decode, Moment::End, decode),
    ]
    .into_iter()
    .map(|(phase, at, set)| report(&t, phase, at, set, (0, &MLX_DRIVERS)))
    .collect::<Result<Vec<_>, _>>()?;
    let params = crate::report::param_count(a.params())?;
    let mut e = Estimate::from_phases(Method::Vramfit, params, 0, phases, t);
    e.served = Some(Box::new(Served {
        engine: inf.engine.label().into(),
        weights_bytes: bytes(w, "the model size")?,
        kv_cache_bytes: bytes(r.kv + r.state, "prompt + new")?,
        ..Served::default()
    }));
    e.caveats = vec!["MLX's prompt-chunk activations are estimated (not measured)".into()];
    if m.max_kv_size.is_some() && super::mlx::own_cache(a) {
        e.caveats.push("max_kv_size is not read: mlx-lm leaves the cache to this model's own make_cache, which keeps the whole context in every full-attention layer".into());
    }
    Ok(e)
}
