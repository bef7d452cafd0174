//! The rules across keys that depend on what is done with the model: a
//! key of the other workload is unused; an inference run's keys against
//! its engine, its weights and the model. The engines' key table: which
//! keys each engine reads (`READ_BY`, and each engine's own group), from
//! which both the "not read" notices and the resetting of unread inputs
//! (`kept`) derive.

use super::checks::{conflict, conflict_using};
use super::notice::{FieldError, Note, Notice};
use super::{Field, Group, Key};
use crate::infer::engine::ContextBy;
use crate::infer::run::{
    Engine, Flash, Inference, KvDtype, LlamaArgs, MaxLen, MlxArgs, MlxWeights, Since, SplitMode,
    TensorOverrides, Tokens,
};
use crate::inputs::Attn;
use crate::inputs::View;
use crate::lora::Targets;
use crate::model::family::Positions;
use crate::model::ExpertLayout;
use crate::model::WeightFormat;
use crate::scenario::{Scenario, Task};
use crate::train::run::Parallel;
use crate::train::run::Training;

/// Says each key of the other workload is not used (once per key), and
/// keeps that workload's inputs at their defaults, so a link carries one
/// workload and `decode(encode(s)) == s`.
pub(super) fn check_task(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let mut said: Vec<Key> = Vec::new();
    for (k, _) in texts {
        let other = k.field().is_some_and(|f| !f.tasks.include(s.task));
        if other && !said.contains(k) {
            said.push(*k);
            notices.push(Notice::Unused {
                key: *k,
                because: match s.task {
                    Task::Train => "it is an inference setting: set task=infer to use it".into(),
                    Task::Infer => "it is a training setting (task=infer runs the model)".into(),
                },
            });
        }
    }
    match s.task {
        Task::Train => s.infer = Inference::default(),
        Task::Infer => {
            s.train = Training::default();
            s.parallel = Parallel::default();
            let v = View::default();
            s.view.iters = v.iters;
            s.view.leak = v.leak;
            s.view.leak_mib = v.leak_mib;
            s.view.dataset_mib = v.dataset_mib;
        }
    }
}

/// The engines' own arguments, a group each.
impl Group {
    /// The engine whose own arguments the group holds (a panel of its own
    /// on the page), if any.
    pub const fn engine(self) -> Option<Engine> {
        match self {
            Group::Engine => Some(Engine::Vllm),
            Group::LlamaCpp => Some(Engine::Llamacpp),
            Group::Ollama => Some(Engine::Ollama),
            Group::Mlx => Some(Engine::Mlx),
            Group::Model
            | Group::Architecture
            | Group::Run
            | Group::Stack
            | Group::Parallel
            | Group::Overhead
            | Group::Fit
            | Group::Infer
            | Group::View => None,
        }
    }
}

/// The engines that read a key outside the engines' own groups (a key
/// not listed: every engine).
const READ_BY: &[(Key, &[Engine])] = &[
    (Key::Prompt, &[Engine::Transformers, Engine::Mlx]),
    (Key::New, &[Engine::Transformers, Engine::Mlx]),
    (Key::MinNew, &[Engine::Transformers]),
    (Key::Batch, &[Engine::Transformers]),
    (Key::Attn, &[Engine::Transformers]),
    (Key::Ctx, &[Engine::Vllm, Engine::Llamacpp, Engine::Ollama]),
    (Key::KvDtype, &[Engine::Transformers, Engine::Vllm]),
    (Key::GroupSize, &[Engine::Transformers, Engine::Vllm]),
    (Key::DoubleQuant, &[Engine::Transformers]),
    (Key::BnbCompute, &[Engine::Transformers]),
    (Key::File, &[Engine::Llamacpp, Engine::Ollama]),
    (Key::FileBytes, &[Engine::Llamacpp, Engine::Ollama]),
    (Key::LoraR, &[Engine::Llamacpp, Engine::Ollama]),
    (Key::LoraTargets, &[Engine::Llamacpp, Engine::Ollama]),
    (Key::LoraType, &[Engine::Llamacpp, Engine::Ollama]),
];

/// Keys an engine reads only at their default: any other value is refused
/// (`engine_conflicts` says why): transformers' default cache keeps the
/// model's dtype.
const REFUSED_BY: &[(Key, &[Engine])] = &[(Key::KvDtype, &[Engine::Transformers])];

/// Whether `engine` refuses `key` at any value but its default.
pub(super) fn refused(engine: Engine, key: Key) -> bool {
    REFUSED_BY
        .iter()
        .any(|(k, by)| *k == key && by.contains(&engine))
}

/// The engines that read the key of `f`.
fn readers(f: &Field) -> &'static [Engine] {
    if let Some(e) = f.group.engine() {
        return match e {
            Engine::Vllm => &[Engine::Vllm],
            Engine::Llamacpp => &[Engine::Llamacpp],
            Engine::Ollama => &[Engine::Ollama],
            Engine::Mlx => &[Engine::Mlx],
            Engine::Transformers => &[Engine::Transformers],
        };
    }
    READ_BY
        .iter()
        .find(|(k, _)| *k == f.key)
        .map_or(Engine::ALL, |(_, e)| e)
}

/// Whether an inference run reads the key of `f`: its engine's keys, its
/// weights' options. The one rule for saying a key is unused and for
/// leaving it out of the canonical query.
pub(super) fn reads(i: &Inference, f: &Field) -> bool {
    let key = f.key;
    let grouped = matches!(i.weights, WeightFormat::Gptq | WeightFormat::Awq);
    let bnb4 = matches!(i.weights, WeightFormat::Nf4 | WeightFormat::Fp4);
    let bnb_option = matches!(key, Key::DoubleQuant | Key::BnbCompute);
    // `-mg` picks the one GPU of `-sm none` (`src/llama.cpp`, b10488).
    let single = i.llama.split_mode == SplitMode::Single;
    // MLX's microscaling modes take their own group.
    let mlx_group = i.mlx_weights.quant().is_none_or(|q| q.affine);
    // An adapter's targets and type, once there is one.
    let adapter = i.lora.r.is_some() || !matches!(key, Key::LoraTargets | Key::LoraType);
    readers(f).contains(&i.engine)
        && adapter
        && (grouped || key != Key::GroupSize)
        && (bnb4 || !bnb_option)
        && (single || key != Key::MainGpu)
        && (mlx_group || key != Key::QGroupSize)
}

/// Why an inference run does not read the key of `f` (see [`reads`]).
fn unread_because(i: &Inference, f: &Field) -> String {
    let by = readers(f);
    if !by.contains(&i.engine) {
        let names: Vec<&str> = by.iter().map(|e| e.key()).collect();
        let (engine, readers) = (i.engine.label(), names.join(" or "));
        return format!(
            "{engine} does not read it (engine={readers}){}",
            sized_by(i.engine, f.key)
        );
    }
    if f.key == Key::GroupSize {
        "only GPTQ and AWQ weights have groups".into()
    } else if f.key == Key::MainGpu {
        "split_mode is layer: every GPU holds layers (main_gpu is read with split_mode=none)".into()
    } else if matches!(f.key, Key::LoraTargets | Key::LoraType) {
        "lora_r is 0: no adapter is loaded".into()
    } else if f.key == Key::QGroupSize {
        "MLX's mxfp4, nvfp4 and mxfp8 take their mode's group (32, 16, 32)".into()
    } else {
        "only 4-bit bitsandbytes weights (nf4, fp4) read it".into()
    }
}

/// How the engine sizes a request, when the unread key is the other way
/// of saying it (a request's tokens, or its context): its words.
fn sized_by(engine: Engine, key: Key) -> &'static str {
    let spec = engine.spec();
    let by_request = spec.context == ContextBy::Request;
    // `batch`: its sequences; a request's tokens to an engine sized by its
    // context, or a context to one that runs the request's tokens.
    let by_tokens = matches!(key, Key::Prompt | Key::New | Key::MinNew);
    if key == Key::Batch {
        spec.words.sequences
    } else if (by_tokens && !by_request) || (key == Key::Ctx && by_request) {
        spec.words.request
    } else {
        ""
    }
}

/// Says each given key the run does not read, and resets every input it
/// does not read, so `decode(encode(s)) == s`.
fn unread(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let i = &mut s.infer;
    for f in super::FIELDS.iter().filter(|f| !reads(i, f)) {
        if texts.iter().any(|(k, _)| *k == f.key) {
            notices.push(Notice::Unused {
                key: f.key,
                because: unread_because(i, f),
            });
        }
    }
    *i = kept(i);
}

/// What of `i` its engine reads, the rest at the defaults.
fn kept(i: &Inference) -> Inference {
    let mut out = Inference {
        engine: i.engine,
        ..Inference::default()
    };
    match i.engine {
        Engine::Transformers => {
            (out.weights, out.batch, out.attn) = (i.weights, i.batch, i.attn);
            (out.prompt, out.new, out.min_new) = (i.prompt, i.new, i.min_new);
        }
        Engine::Vllm => {
            (out.weights, out.ctx, out.kv_dtype, out.vllm) = (i.weights, i.ctx, i.kv_dtype, i.vllm)
        }
        Engine::Llamacpp => {
            (out.gguf, out.ctx, out.llama) = (i.gguf, i.ctx, i.llama);
            (out.file, out.file_bytes) = (i.file, i.file_bytes);
            if i.llama.split_mode != SplitMode::Single {
                out.llama.main_gpu = LlamaArgs::default().main_gpu;
            }
        }
        Engine::Ollama => {
            (out.gguf, out.ctx, out.ollama) = (i.gguf, i.ctx, i.ollama);
            (out.file, out.file_bytes) = (i.file, i.file_bytes);
        }
        Engine::Mlx => {
            (out.mlx_weights, out.mlx) = (i.mlx_weights, i.mlx);
            if i.mlx_weights.quant().is_some_and(|q| !q.affine) {
                out.mlx.q_group_size = MlxArgs::default().q_group_size;
            }
            (out.prompt, out.new) = (i.prompt, i.new);
        }
    }
    if matches!(i.engine, Engine::Llamacpp | Engine::Ollama) && i.lora.r.is_some() {
        out.lora = i.lora;
    }
    if matches!(i.engine, Engine::Transformers | Engine::Vllm) {
        if matches!(i.weights, WeightFormat::Gptq | WeightFormat::Awq) {
            out.group_size = i.group_size;
        }
        if matches!(i.weights, WeightFormat::Nf4 | WeightFormat::Fp4) {
            (out.double_quant, out.compute_fp32) = (i.double_quant, i.compute_fp32);
        }
    }
    out
}

/// An inference run's keys against its engine, its weights and the model.
pub(super) fn check_infer(
    s: &mut Scenario,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
) -> Vec<Note> {
    if s.task != Task::Infer {
        return Vec::new();
    }
    engine_conflicts(s, texts, notices);
    let notes = model_limits(s, texts, notices);
    unread(s, texts, notices);
    check_adapter(s, texts, notices);
    notes
}

/// An adapter's targets must be modules the family has, whole, as for
/// training (peft adapts modules, and refuses names it does not find),
/// and `lm_head` an output layer of its own (`convert_lora_to_gguf.py`,
/// b10488, `LoraModel.modify_tensors`, refuses a tied one).
fn check_adapter(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let l = &mut s.infer.lora;
    if l.r.is_none() {
        return;
    }
    let Some(why) = s.arch.and_then(|a| {
        if l.targets.head() && a.tied {
            Some(crate::model::gguf::AdapterMisfit::Tied.to_string())
        } else {
            l.targets.misfit(&a, ExpertLayout::Stacked)
        }
    }) else {
        return;
    };
    let value = texts
        .iter()
        .rev()
        .find(|(k, _)| *k == Key::LoraTargets)
        .map_or_else(|| l.targets.text(), |(_, v)| v.to_string());
    notices.push(Notice::Invalid {
        key: Key::LoraTargets,
        value,
        error: FieldError::Conflict(why),
        default: Targets::ALL.text(),
    });
    l.targets = Targets::ALL;
}

/// The weights given against what the engine loads: checkpoints
/// (transformers, vLLM), GGUF files (llama.cpp, Ollama), MLX's.
fn weights_for_engine(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let Some((_, v)) = texts.iter().rev().find(|(k, _)| *k == Key::Weights) else {
        return;
    };
    let Ok(given) = super::fields::weights_of(v) else {
        return;
    };
    let d = Inference::default();
    let i = &mut s.infer;
    let why = match i.engine {
        Engine::Transformers | Engine::Vllm if given.checkpoint.is_none() => {
            i.weights = d.weights;
            format!(
                "transformers and vLLM load checkpoints: {} (GGUF file types are llama.cpp's and Ollama's)",
                WeightFormat::keys_joined()
            )
        }
        Engine::Llamacpp | Engine::Ollama if given.gguf.is_none() => {
            i.gguf = d.gguf;
            "llama.cpp and Ollama run GGUF files: a file type such as q4_k_m, q8_0 or f16".into()
        }
        Engine::Mlx if given.mlx.is_none() => {
            i.mlx_weights = d.mlx_weights;
            format!(
                "MLX runs its own conversions: {}",
                MlxWeights::keys_joined()
            )
        }
        Engine::Transformers | Engine::Vllm | Engine::Llamacpp | Engine::Ollama | Engine::Mlx => {
            return;
        }
    };
    let used = super::shown(Key::Weights, s);
    conflict_using(notices, texts, Key::Weights, why, used);
}

/// llama.cpp's `-mg` must name one of the machine's GPUs
/// (`src/llama.cpp: llama_model_load`, b10488: "invalid value for
/// main_gpu"); it is read with `-sm none` only ([`reads`]).
fn gpu_split(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let l = s.infer.llama;
    let n = l.gpus();
    let single = l.split_mode == SplitMode::Single;
    if s.infer.engine != Engine::Llamacpp || !single || (l.main_gpu.get() as usize) < n {
        return;
    }
    conflict(
        notices,
        texts,
        Key::MainGpu,
        format!(
            "llama.cpp counts GPUs from 0 and this machine has {n} (one per tensor_split entry), so main_gpu is at most {}",
            n - 1
        ),
    );
    s.infer.llama.main_gpu = LlamaArgs::default().main_gpu;
}

/// `-ot` against the model: the run of layers whose routed experts it
/// moves, one run with `--n-cpu-moe`'s; what vramfit does not model of
/// it refused next to its field.
fn tensor_overrides(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let Some(o) = s.infer.llama.override_tensor else {
        return;
    };
    if s.infer.engine != Engine::Llamacpp {
        return;
    }
    let (layers, experts) = s.arch.map_or((0, false), |a| (a.layers, a.experts > 0));
    let n = s.infer.llama.n_cpu_moe.get();
    let run = TensorOverrides::host_experts(o.text.as_str(), layers, experts).and_then(|r| {
        if n > 0 && r.1 > r.0 && r.0 > n {
            Err(format!("its layers ({}..{}) and n_cpu_moe's (0..{n}) are not one run, which vramfit does not model", r.0, r.1))
        } else {
            Ok(r)
        }
    });
    match run {
        Ok(r) => {
            if let Some(t) = s.infer.llama.override_tensor.as_mut() {
                t.host_experts = r;
            }
        }
        Err(why) => {
            conflict(notices, texts, Key::OverrideTensor, why);
            s.infer.llama.override_tensor = None;
        }
    }
}

/// llama.cpp's options that arrived at a build, by key.
const SINCE_BUILD: [(Key, Since); 4] = [
    (Key::NCpuMoe, Since::N_CPU_MOE),
    (Key::OverrideTensor, Since::OVERRIDE_TENSOR),
    (Key::KvUnified, Since::KV_UNIFIED),
    (Key::SwaFull, Since::SWA_FULL),
];

/// An option the llama.cpp build named does not have: refused next to
/// its field.
fn older_build(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    if s.infer.engine != Engine::Llamacpp {
        return;
    }
    let build = s.infer.llama.build.get();
    for (key, since) in SINCE_BUILD {
        if (since.set)(&s.infer.llama) && build < since.first {
            conflict(
                notices,
                texts,
                key,
                format!(
                    "llama.cpp b{build} has no {}: it arrived in b{}",
                    since.what, since.first
                ),
            );
            (since.reset)(&mut s.infer.llama);
        }
    }
}

/// Settings an engine cannot run: an fp8 cache under transformers,
/// bitsandbytes under vLLM, quantized experts, a quantized V cache
/// without flash attention in llama.cpp.
fn engine_conflicts(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    weights_for_engine(s, texts, notices);
    let l = s.infer.llama;
    if s.infer.engine == Engine::Llamacpp
        && l.cache_type_v.is_quantized()
        && l.flash_attn == Flash::Off
    {
        // `llama-context.cpp:461-467`: "quantized V cache was requested,
        // but this requires Flash Attention".
        conflict(
            notices,
            texts,
            Key::CacheTypeV,
            "llama.cpp refuses a quantized V cache without flash attention (flash_attn=off)".into(),
        );
        s.infer.llama.cache_type_v = LlamaArgs::default().cache_type_v;
    }
    gpu_split(s, texts, notices);
    older_build(s, texts, notices);
    tensor_overrides(s, texts, notices);
    let w = s.infer.weights;
    if refused(s.infer.engine, Key::KvDtype) && s.infer.kv_dtype != KvDtype::Auto {
        conflict(
            notices,
            texts,
            Key::KvDtype,
            "transformers' default cache keeps the model's dtype (its quantized caches are not modelled): use vLLM for an fp8 cache".into(),
        );
        s.infer.kv_dtype = KvDtype::Auto;
    }
    let bnb = matches!(
        w,
        WeightFormat::Nf4 | WeightFormat::Fp4 | WeightFormat::Int8
    );
    if s.infer.engine == Engine::Vllm && bnb {
        conflict(
            notices,
            texts,
            Key::Weights,
            "vLLM 0.33 loads no bitsandbytes weights: use fp8, GPTQ or AWQ, or transformers".into(),
        );
        s.infer.weights = Inference::default().weights;
    }
    let checkpoint = matches!(s.infer.engine, Engine::Transformers | Engine::Vllm);
    let moe = s.arch.is_some_and(|a| a.experts > 0);
    // vLLM's `Fp8MoEMethod` holds fp8 experts (`infer::vllm::plan`);
    // transformers' `FP8Experts` are not modelled.
    let fp8_on_vllm = s.infer.engine == Engine::Vllm && w == WeightFormat::Fp8;
    if checkpoint
        && moe
        && !fp8_on_vllm
        && matches!(
            w,
            WeightFormat::Fp8
                | WeightFormat::Gptq
                | WeightFormat::Awq
                | WeightFormat::W8a8
                | WeightFormat::Fp8Dynamic
        )
    {
        let only_vllm = if w == WeightFormat::Fp8 {
            " with transformers (they are with engine=vllm)"
        } else {
            ""
        };
        conflict(
            notices,
            texts,
            Key::Weights,
            format!(
                "{} experts of a mixture of experts are not modelled{only_vllm}: use 16-bit weights (or bitsandbytes with transformers, which leaves the experts in 16 bits)",
                w.label()
            ),
        );
        s.infer.weights = Inference::default().weights;
    }
    vllm_formats(s, texts, notices);
}

/// The formats only vLLM's estimate reads: MXFP4 (a mixture of experts'
/// experts), compressed-tensors W8A8 int8 and FP8_DYNAMIC.
fn vllm_formats(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let w = s.infer.weights;
    let vllm_only = matches!(
        w,
        WeightFormat::Mxfp4 | WeightFormat::W8a8 | WeightFormat::Fp8Dynamic
    );
    let why = match s.infer.engine {
        // transformers 5.23 decompresses compressed-tensors weights to the
        // model's dtype at the first forward, and dequantizes MXFP4 to bf16
        // without its triton kernels (`quantizers/quantizer_mxfp4.py`):
        // not modelled.
        Engine::Transformers if vllm_only => format!(
            "{} weights are estimated for vLLM only: transformers decompresses them to 16 bits (use bf16 to estimate that, or engine=vllm)",
            w.label()
        ),
        // `Mxfp4Config.get_quant_method` (`quantization/mxfp4.py:91-113`):
        // linear layers stay unquantized, only routed experts take MXFP4.
        Engine::Vllm if w.experts_only() && s.arch.is_some_and(|a| a.experts == 0) => {
            "MXFP4 quantizes only a mixture of experts' experts (vLLM keeps every linear layer in 16 bits): this model has no experts".into()
        }
        Engine::Transformers | Engine::Vllm | Engine::Llamacpp | Engine::Ollama | Engine::Mlx => {
            return;
        }
    };
    conflict(notices, texts, Key::Weights, why);
    s.infer.weights = Inference::default().weights;
}

/// vLLM's parallel sizes against the model: a stage per layer at most
/// (`get_pp_indices`, `distributed/utils.py:198-241`, would leave a stage
/// without layers: not modelled), and expert parallelism only for a
/// mixture of experts ("Number of experts in the model must be greater
/// than 0 when expert parallelism is enabled", `config/model.py:1498-1503`).
fn vllm_parallel(
    s: &mut Scenario,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
    a: &crate::model::Architecture,
) {
    let d = Inference::default().vllm;
    let v = &mut s.infer.vllm;
    if v.pipeline_parallel_size.get() > a.layers.max(1) {
        conflict(
            notices,
            texts,
            Key::PipelineParallelSize,
            format!(
                "vLLM splits the {} layers into stages: pipeline_parallel_size must be at most that",
                a.layers
            ),
        );
        v.pipeline_parallel_size = d.pipeline_parallel_size;
    }
    if v.enable_expert_parallel && a.experts == 0 {
        conflict(
            notices,
            texts,
            Key::EnableExpertParallel,
            "vLLM refuses expert parallelism for a model without experts".into(),
        );
        v.enable_expert_parallel = d.enable_expert_parallel;
    }
    // MTP's drafter is sized for the families whose description has one
    // (`Architecture::mtp_layers`), on one pipeline stage (R29).
    let drafter = a.mtp_layers() > 0;
    if v.num_speculative_tokens.get() > 0 && (!drafter || v.pipeline_parallel_size.get() > 1) {
        let why = if drafter {
            "MTP over pipeline stages is not modelled (the drafter keeps its own embedding there): set pipeline_parallel_size=1"
        } else {
            "MTP speculative decoding is modelled for the Gated DeltaNet hybrids' drafter (Qwen3.5 / 3.6, Qwen3-Next): this model's is not modelled yet"
        };
        conflict(notices, texts, Key::NumSpeculativeTokens, why.into());
        v.num_speculative_tokens = d.num_speculative_tokens;
    }
}

/// A learned position table's limit on the positions `generate` feeds,
/// prompt + new − 1 (N new tokens take N forwards and the last token is
/// never fed back: `GenerationMixin._sample`, transformers 5.23; PyTorch
/// fails at the position embedding past the table): `new` kept up to half
/// the table, the prompt up to the rest; a typed value that had to change is refused with
/// the reason and the value used (an untyped default is fitted silently,
/// as training's `seq`).
fn fit_positions(
    s: &mut Scenario,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
    positions: u32,
) {
    let i = &mut s.infer;
    let new = i.new.get().min(positions / 2).max(1);
    let prompt = i
        .prompt
        .get()
        .min(positions.saturating_add(1).saturating_sub(new))
        .max(1);
    let why = format!(
        "{positions} learned positions: prompt + new - 1 must be at most {positions} (the last new token is never fed back)"
    );
    for (key, now, used) in [
        (Key::New, i.new.get(), new),
        (Key::Prompt, i.prompt.get(), prompt),
    ] {
        let typed = texts.iter().rev().find(|(k, _)| *k == key);
        if let (Some((_, value)), true) = (typed, now != used) {
            notices.push(Notice::Invalid {
                key,
                value: value.to_string(),
                error: FieldError::Conflict(format!("the model has {why}")),
                default: used.to_string(),
            });
        }
    }
    if let (Some(n), Some(p)) = (Tokens::new(new), Tokens::new(prompt)) {
        (i.new, i.prompt) = (n, p);
    }
}

/// The sequence against the model's positions and the split against its
/// heads.
fn model_limits(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) -> Vec<Note> {
    let mut notes = Vec::new();
    let Some(a) = s.arch else {
        return notes;
    };
    let learned = a.family.spec().positions == Positions::Learned;
    let i = s.infer;
    match i.engine {
        Engine::Transformers => {
            let spec = a.family.spec();
            if i.attn == Attn::FlashAttention2 {
                // Measured for training only (t4_rows.jsonl).
                conflict_using(
                    notices,
                    texts,
                    Key::Attn,
                    "flash_attention_2 is estimated for training only: generate is estimated with sdpa or eager".into(),
                    Attn::Sdpa.key().to_string(),
                );
                s.infer.attn = Attn::Sdpa;
            }
            let i = s.infer;
            if (spec.attn_softcap || spec.sinks) && i.attn == Attn::Sdpa {
                // `_supports_sdpa = False` (modeling_gemma2.py,
                // modeling_gpt_oss.py): asked for, SDPA is refused; left
                // out, transformers picks eager.
                if texts.iter().any(|(k, _)| *k == Key::Attn) {
                    conflict_using(
                        notices,
                        texts,
                        Key::Attn,
                        format!(
                            "transformers has no SDPA for {} (softcapping, attention sinks): it runs eager attention",
                            a.family.label()
                        ),
                        Attn::Eager.key().to_string(),
                    );
                }
                s.infer.attn = Attn::Eager;
            }
            // The positions fed: the last new token never is (see `fit_positions`).
            let len = i.prompt.get().saturating_add(i.new.get()) - 1;
            if learned && len > a.positions {
                fit_positions(s, texts, notices, a.positions);
            } else if a.positions > 0 && len > a.positions {
                notes.push(Note::BeyondTrainedContext {
                    seq: len,
                    positions: a.positions,
                });
            }
        }
        Engine::Vllm => {
            if let MaxLen::Tokens(n) = i.ctx {
                if a.positions > 0 && n.get() > a.positions {
                    conflict_using(
                        notices,
                        texts,
                        Key::Ctx,
                        format!(
                            "vLLM refuses a max_model_len above the model's {} positions",
                            a.positions
                        ),
                        a.positions.to_string(),
                    );
                    s.infer.ctx = MaxLen::Model;
                }
            }
            let tp = i.vllm.tensor_parallel_size.get();
            if !a.heads.is_multiple_of(tp) {
                conflict(
                    notices,
                    texts,
                    Key::TensorParallelSize,
                    format!(
                        "vLLM splits the {} attention heads evenly: tensor_parallel_size must divide them",
                        a.heads
                    ),
                );
                s.infer.vllm.tensor_parallel_size = Inference::default().vllm.tensor_parallel_size;
            }
            vllm_parallel(s, texts, notices, &a);
        }
        Engine::Llamacpp | Engine::Ollama => {
            // llama.cpp runs past the trained context (RoPE extrapolates);
            // said, not refused.
            if let (MaxLen::Tokens(n), true) = (i.ctx, a.positions > 0) {
                if n.get() > a.positions {
                    notes.push(Note::BeyondTrainedContext {
                        seq: n.get(),
                        positions: a.positions,
                    });
                }
            }
            if let Some(f) = i.file_bytes.filter(|f| f.layers() != a.layers) {
                conflict(
                    notices,
                    texts,
                    Key::FileBytes,
                    format!(
                        "the file has {} layers and the model {}: read the model's file, or set the model to the file's",
                        f.layers(),
                        a.layers
                    ),
                );
                s.infer.file_bytes = None;
            }
        }
        Engine::Mlx => {
            let len = i.prompt.get().saturating_add(i.new.get());
            if a.positions > 0 && len > a.positions {
                notes.push(Note::BeyondTrainedContext {
                    seq: len,
                    positions: a.positions,
                });
            }
        }
    }
    notes
}
