//! The transformers engine as an estimate: the weights as loaded, then
//! `generate`'s phases (`super::generate`), each broken into the terms the
//! page explains.

use super::generate::{Generate, Generated, KvSplit, Moment, Request};
use super::layer::Dequant;
use super::run::{Engine, Inference};
use super::sim::Parts;
use crate::caching;
use crate::component::Component;
use crate::error::EstimateError;
use crate::inputs::Overhead;
use crate::model::family::Recurrence;
use crate::model::{Architecture, ExpertLayout, Holder, WeightFormat};
use crate::report::{self, Estimate, Method, Phase, PhaseReport, Served, Tally};
use crate::terms::{Term, TermId as T, TermSet, Terms, Unit as U};
use crate::units::Bytes;

/// Bytes per element of the tensors a format leaves in the model's dtype
/// (and of the activations): the format's own for bf16, fp16 and fp32; the
/// half-precision dtype quantized checkpoints are loaded with otherwise.
pub fn act_bytes(inf: &Inference) -> u64 {
    match inf.weights.plain_bytes() {
        0 => 2,
        b => b,
    }
}

/// The weights and buffers as transformers loads them: the decoder layers'
/// linears in the format (packed, with their scales and zeros), the rest
/// in the model's dtype. Sets the weight terms; returns their sum.
pub fn weights(a: &Architecture, inf: &Inference, terms: &mut Terms) -> u128 {
    let dt = act_bytes(inf);
    let q = a.quantized_linears(
        inf.weights,
        inf.format_options(),
        Holder::Checkpoint,
        ExpertLayout::Stacked,
    );
    let plain = a.params().saturating_sub(q.elems);
    let parts = [
        (
            T::Weights,
            Term::of(&[(plain, U::Params), (u128::from(dt), U::BytesEach)]),
        ),
        (T::QuantWeights, Term::of(&[(q.packed, U::Bytes)])),
        (T::QuantState, Term::of(&[(q.state, U::Bytes)])),
        (
            T::Buffers,
            Term::of(&[(u128::from(a.buffer_bytes(dt)), U::Bytes)]),
        ),
    ];
    parts.iter().fold(0, |sum, (id, t)| {
        terms.set(*id, *t);
        // As the terms hold it: at most 2^64 (a saturated term beyond).
        sum + terms.bytes(*id)
    })
}

/// The terms of one `generate` phase.
struct PhaseIds {
    kv: [T; 4],
    recurrent: T,
    growing: T,
    act: T,
    logits: T,
    state: T,
}

const PREFILL: PhaseIds = PhaseIds {
    kv: [
        T::PrefillKv,
        T::PrefillKvSliding,
        T::PrefillKv,
        T::PrefillKvSliding,
    ],
    recurrent: T::PrefillRecurrent,
    growing: T::PrefillKvGrowing,
    act: T::PrefillActivations,
    logits: T::PrefillLogits,
    state: T::PrefillState,
};

const DECODE: PhaseIds = PhaseIds {
    kv: [
        T::DecodeKv,
        T::DecodeKvSliding,
        T::DecodeKvBehind,
        T::DecodeKvSlidingBehind,
    ],
    recurrent: T::DecodeRecurrent,
    growing: T::DecodeKvGrowing,
    act: T::DecodeActivations,
    logits: T::DecodeLogits,
    state: T::DecodeState,
};

const WEIGHTS: TermSet = TermSet::of(&[T::Weights, T::QuantWeights, T::QuantState, T::Buffers]);

/// Sets the terms of a phase's highest moment; returns their set.
fn moment_terms(split: &KvSplit, m: &Moment, ids: &PhaseIds, terms: &mut Terms) -> TermSet {
    let mut set = WEIGHTS;
    for (id, ((layers, tokens), each)) in ids.kv.iter().zip(split.groups()) {
        if layers == 0 {
            continue;
        }
        terms.set(
            *id,
            Term::of(&[
                (split.batch, U::Batch),
                (tokens, U::Seq),
                (layers, U::Layers),
                (each, U::BytesEach),
            ]),
        );
        set = set.with(*id);
    }
    let (layers, each) = split.recurrent;
    if layers > 0 {
        terms.set(
            ids.recurrent,
            Term::of(&[(layers, U::Layers), (each, U::Bytes)]),
        );
        set = set.with(ids.recurrent);
    }
    let bytes = [
        (ids.growing, split.growing),
        (ids.act, m.parts[2]),
        (ids.logits, m.parts[3]),
        (ids.state, m.parts[4]),
    ];
    for (id, b) in bytes {
        terms.set(id, Term::of(&[(b, U::Bytes)]));
        set = set.with(id);
    }
    set
}

/// Live bytes by component, from the replay's categories.
fn tally(parts: &Parts) -> Tally {
    let mut t = Tally::new();
    let components = [
        Component::Parameters,
        Component::KvCache,
        Component::Activations,
        Component::Logits,
        Component::Engine,
    ];
    for (c, b) in components.iter().zip(parts) {
        t.add(*c, *b);
    }
    t
}

/// The request `generate` is given.
fn request(inf: &Inference, weights: u128) -> Request {
    let bnb4 = matches!(inf.weights, WeightFormat::Nf4 | WeightFormat::Fp4);
    Request {
        batch: u128::from(inf.batch.get()),
        prompt: u128::from(inf.prompt.get()),
        new: u128::from(inf.new.get()),
        dtype_bytes: u128::from(act_bytes(inf)),
        weights,
        attn: inf.attn,
        min_new: inf.min_new.get() > 0,
        dequant: bnb4.then_some(Dequant {
            double_quant: inf.double_quant,
        }),
    }
}

/// One phase: the highest moment (with its terms) and the end.
struct Raw {
    phase: Phase,
    at: report::Moment,
    peak: Parts,
    peak_terms: TermSet,
    end: Parts,
}

fn raw_phases(a: &Architecture, g: &Generate, run: &Generated, terms: &mut Terms) -> Vec<Raw> {
    let weights = run.end[0];
    let mut out = vec![Raw {
        phase: Phase::Load,
        at: report::Moment::End,
        peak: [weights, 0, 0, 0, 0],
        peak_terms: WEIGHTS,
        end: [weights, 0, 0, 0, 0],
    }];
    let split = g.kv_split(a, &run.prefill);
    out.push(Raw {
        phase: Phase::Prefill,
        at: report::Moment::Middle,
        peak: run.prefill.parts,
        peak_terms: moment_terms(&split, &run.prefill, &PREFILL, terms),
        end: run.prefill_end,
    });
    if let Some(d) = run.decode {
        let split = g.kv_split(a, &d);
        out.push(Raw {
            phase: Phase::Decode,
            at: if d.step == 1 {
                report::Moment::Start
            } else {
                report::Moment::End
            },
            peak: d.parts,
            peak_terms: moment_terms(&split, &d, &DECODE, terms),
            end: run.end,
        });
    }
    out
}

/// What `max_memory_allocated` counts beyond the weights' bytes with
/// plain segments: a weight of 10 MiB or more gets a segment of its own,
/// rounded up to 2 MiB, and the allocator hands out the whole segment when
/// 1 MiB or less would be left (`CUDACachingAllocator.cpp: should_split`,
/// `kSmallSize`; [`caching::allocation_size`]). Loaded on the GPU, the
/// weights are allocated one after another into new segments, so the rule
/// holds for each (an H200's Llama-2-13B: each 13824 × 5120 MLP weight 1
/// MiB short of its segment, 120 MiB in all, to the byte:
/// `tests/gpu_rows.rs`). Smaller weights share 20 MiB segments, split:
/// none counted; nor a quantized format's packed tensors.
fn weight_blocks(a: &Architecture, inf: &Inference) -> u128 {
    let dt = u128::from(inf.weights.plain_bytes());
    let kept = |bytes: u128| {
        let Ok(b) = u64::try_from(bytes) else {
            return 0;
        };
        let r = caching::round_size(b);
        let rest = caching::allocation_size(r) - r;
        if r >= caching::MIN_LARGE_ALLOC && rest <= caching::SMALL_SIZE {
            u128::from(rest)
        } else {
            0
        }
    };
    let mut blocks = 0;
    if dt > 0 {
        a.for_each_tensor(|place, t| {
            blocks += place.copies() * t.modules() * kept(t.tensor_elems() * dt);
        });
    }
    blocks
}

/// cuBLAS's workspace for `generate`'s thread (torch 2.15,
/// [`crate::cublas`]): allocated at the prefill's first matmul and kept,
/// so beside every moment from the prefill on. The measured rows (CPU,
/// fake tensors) hold none; an H200's `generate` held 32 MiB beside its
/// tensors (`tests/gpu_rows.rs`).
fn with_workspace(raw: &mut [Raw], gpu: Option<Option<(u8, u8)>>, terms: &mut Terms) {
    let Some(ws) = crate::cublas::TORCH_2_15.workspace(gpu) else {
        return;
    };
    terms.set(T::GenerateCublas, Term::of(&[(ws, U::Bytes)]));
    for r in raw.iter_mut().filter(|r| r.phase != Phase::Load) {
        r.peak[4] += ws;
        r.end[4] += ws;
        r.peak_terms = r.peak_terms.with(T::GenerateCublas);
    }
}

/// The estimate of `generate` on `a` with the run `inf`, on a GPU of
/// compute capability `gpu` (as [`crate::cublas::Blas::workspace`] reads
/// it).
pub fn estimate(
    a: &Architecture,
    inf: &Inference,
    overhead: &Overhead,
    gpu: Option<Option<(u8, u8)>>,
) -> Result<Estimate, EstimateError> {
    let mut terms = Terms::default();
    let w = weights(a, inf, &mut terms);
    let cuda = gpu != Some(None);
    let blocks = if cuda && !overhead.expandable_segments {
        weight_blocks(a, inf)
    } else {
        0
    };
    let g = Generate::new(a, request(inf, w + blocks));
    let run = g.run();
    let mut raw = raw_phases(a, &g, &run, &mut terms);
    if blocks > 0 {
        terms.set(T::WeightBlocks, Term::of(&[(blocks, U::Bytes)]));
        for r in raw.iter_mut() {
            r.peak_terms = r.peak_terms.with(T::WeightBlocks);
        }
    }
    with_workspace(&mut raw, gpu, &mut terms);
    let rule = report::OverheadRule::ContextAndReserve {
        ctx_mib: overhead.context(Engine::Transformers.spec().context_mib),
        nccl_mib: 0,
        reserve_pct: overhead.reserve(),
    };
    let (ctx, pct) = rule.beside();
    let mut high = 0u128;
    let mut phases = Vec::with_capacity(raw.len());
    for r in raw {
        let peak = tally(&r.peak);
        high = high.max(peak.total());
        let over = ctx + high * pct / 100;
        let mut report = PhaseReport::new(
            1,
            r.phase,
            r.at,
            peak.components(over, &DRIVERS)?,
            tally(&r.end).components(over, &DRIVERS)?,
        );
        report.terms = r.peak_terms;
        phases.push(report);
    }
    let params = crate::report::param_count(a.params())?;
    let mut e = Estimate::from_phases(Method::Vramfit, params, 0, phases, terms);
    e.overhead = rule;
    e.served = Some(Box::new(Served {
        engine: Engine::Transformers.label().into(),
        weights_bytes: bytes(w)?,
        kv_cache_bytes: bytes(run.kv_cache + run.state)?,
        ..Served::default()
    }));
    e.caveats = caveats(inf);
    if let Some(l) = a.family.spec().linear {
        e.caveats.push(fallback_caveat(l.kind).into());
        if matches!(
            inf.weights,
            WeightFormat::Fp8 | WeightFormat::Gptq | WeightFormat::Awq
        ) {
            e.caveats.push(HYBRID_PREQUANTIZED.into());
        }
    }
    e.caveats.extend(e.overhead.caveat().map(String::from));
    Ok(e)
}

/// What the recurrent layers are modelled as running: transformers 5.23's
/// torch fallbacks. KDA is refused before.
const fn fallback_caveat(kind: Recurrence) -> &'static str {
    match kind {
        Recurrence::ShortConv => "LFM2's short convolutions with causal-conv1d installed: the figures are transformers 5.23's torch fallback (causal_conv1d_fn and causal_conv1d_update in torch), which runs without it; that kernel's temporaries differ",
        Recurrence::Mamba2 => "Mamba-2 layers with mamba-ssm or causal-conv1d installed: the figures are transformers 5.23's torch fallbacks, which run without them (the prompt scanned in fp32 chunks, each layer's chunk-by-chunk tensors growing with the prompt); those kernels' prefill temporaries differ, and are far smaller",
        Recurrence::GatedDeltaNet | Recurrence::Kda => "Gated DeltaNet layers with flash-linear-attention or causal-conv1d installed: the figures are transformers 5.23's torch fallbacks, which run without them (the prompt in fp32 chunks of 64 tokens); those kernels' prefill temporaries differ",
    }
}

/// A pre-quantized hybrid checkpoint: which linears it left in 16 bits is
/// its own `quantization_config`'s to say (`modules_to_not_convert`);
/// vramfit counts every linear of the decoder layers in the format, as
/// bitsandbytes quantizes them (measured: `quant:hybrid` rows).
const HYBRID_PREQUANTIZED: &str = "a pre-quantized hybrid checkpoint: every linear of the decoder layers (the recurrent layers' projections included) is counted in the format; a checkpoint that leaves some in 16 bits (its quantization_config's modules_to_not_convert) holds more";

/// What drives `generate`'s activations, logits and cache.
const DRIVERS: report::Drivers = report::Drivers {
    activations: "batch × prompt",
    logits: "batch × vocabulary",
    kv_cache: "batch × context",
};

fn bytes(b: u128) -> Result<Bytes, EstimateError> {
    u64::try_from(b)
        .map(Bytes)
        .map_err(|_| EstimateError::TooLarge {
            field: "batch × context",
        })
}

/// What this estimate leaves out for these weights.
fn caveats(inf: &Inference) -> Vec<String> {
    let mut out = Vec::new();
    match inf.weights {
        WeightFormat::Fp8 | WeightFormat::Gptq | WeightFormat::Awq => out.push(
            "the fp8, GPTQ and AWQ kernels' own workspaces in transformers are not modelled (not measured); their weights are exact".into(),
        ),
        WeightFormat::Nf4 | WeightFormat::Fp4 if inf.compute_fp32 => out.push(
            "bitsandbytes computing in fp32: the casts of each linear's input and output are not modelled".into(),
        ),
        WeightFormat::Int8 => out.push(
            "LLM.int8: CUDA's int8 matmul temporaries (the quantized input, the int32 product) are not modelled (measured on the CPU path)".into(),
        ),
        // vLLM's formats: the codec refuses them under transformers.
        WeightFormat::Bf16
        | WeightFormat::Fp16
        | WeightFormat::Fp32
        | WeightFormat::Nf4
        | WeightFormat::Fp4
        | WeightFormat::Mxfp4
        | WeightFormat::W8a8
        | WeightFormat::Fp8Dynamic => {}
    }
    out
}
