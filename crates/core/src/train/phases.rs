//! The phases of model init and two training iterations (each with a later
//! micro-step when gradients accumulate): which terms are alive at each
//! phase's peak and end, the peak being the highest of the moments that
//! can hold it; then the overhead on top.

use super::breakdown::{kind_terms, Breakdown, PARAMS, SAVED, STATE, STATE_FIRST_STEP};
use super::run::{Kind, Stage};
use crate::error::EstimateError;
use crate::report::{Moment, OverheadRule, Phase, PhaseReport, Running};
use crate::terms::{TermId as T, TermSet};
use std::cell::RefCell;

/// What is still saved when layer 0's backward runs: the later layers'
/// checkpoints and saved tensors, the final norm's and the head's, are
/// released by their backward.
const SAVED_AT_FIRST: TermSet = TermSet::of(&[
    T::Labels,
    T::CausalMasks,
    T::RouterLogits,
    T::CkptInputFirst,
    T::CkptInFlight,
    T::QuantInputsFirst,
    T::OuterEmbedding,
    T::PositionTables,
    T::CkptRetainedKv,
    T::PerLayerInputsGrad,
]);

/// The recomputed layer's own tensors (checkpointing).
const RECOMPUTED: TermSet = TermSet::of(&[
    T::Recompute,
    T::RecomputeLinear,
    T::RecomputeScores,
    T::RecomputeCopies,
    T::RecomputeMask,
    T::RecomputeMaskedKv,
]);

/// Layer 0 recomputed (checkpointing).
const RECOMPUTED_FIRST: TermSet = TermSet::of(&[
    T::RecomputeFirst,
    T::RecomputeLinearFirst,
    T::RecomputeScoresFirst,
    T::RecomputeCopiesFirst,
    T::RecomputeMask,
    T::RecomputeMaskedKvFirst,
]);

/// One phase before the overhead: (iteration, micro-step, phase, where its
/// peak is, the terms at the peak, the terms at the end).
type Raw = (u32, u32, Phase, Moment, TermSet, TermSet);

/// Sums sets of terms on the GPU (the host's terms left out), each from
/// the last.
struct Moments<'a> {
    p: &'a Breakdown,
    running: RefCell<Running<'a>>,
    /// The bytes each of a layer's backward moments adds to what is alive
    /// around it ([`INSIDE`]; 0: the moment is not there).
    inside: [[u128; 3]; 2],
    /// The terms that hold bytes on the GPU.
    on_gpu: TermSet,
}

impl<'a> Moments<'a> {
    fn new(p: &'a Breakdown) -> Self {
        // Never host terms: the GPU holds them.
        let bytes = |set: TermSet| set.iter().map(|id| p.terms.bytes(id)).sum::<u128>();
        Moments {
            p,
            running: RefCell::new(Running::new(&p.terms)),
            inside: INSIDE.map(|sets| sets.map(bytes)),
            on_gpu: p.terms.present().without(p.host),
        }
    }

    /// What the GPU holds of a moment: everything but the host's terms,
    /// and only terms that hold bytes (a moment's sets name many that are
    /// zero for a given run: left out, the running sums never walk them).
    fn gpu(&self, set: TermSet) -> TermSet {
        set.and(self.on_gpu)
    }

    fn total(&self, set: TermSet) -> u128 {
        self.running.borrow_mut().total(self.gpu(set))
    }

    /// The second step's forward and backward moments are the first's with
    /// the optimizer's state beside them: only DeepSpeed's terms, which
    /// gather differently from the second step on, make them differ.
    fn steps_alike(&self) -> bool {
        self.gpu(TermSet::of(&[T::DsModule, T::DsFlatAhead, T::DsGathered])) == TermSet::EMPTY
    }

    /// The highest of `candidates` (the first of equals), or `best`.
    fn highest(&self, best: TermSet, candidates: &[TermSet]) -> TermSet {
        // The best's total is kept, not summed again for each candidate.
        let first = (best, self.total(best));
        let (best, _) = candidates.iter().fold(first, |(best, top), &x| {
            let t = self.total(x);
            if t > top {
                (x, t)
            } else {
                (best, top)
            }
        });
        best
    }
}

/// The phases of init and two iterations.
pub(super) fn build(
    p: &Breakdown,
    accumulate: bool,
    overhead: OverheadRule,
) -> Result<Vec<PhaseReport>, EstimateError> {
    let m = Moments::new(p);
    let mut raw: Vec<Raw> = Vec::with_capacity(13);
    raw.push((0, 1, Phase::Init, Moment::End, PARAMS, PARAMS));
    let micro_steps: &[u32] = if accumulate { &[1, 2] } else { &[1] };
    for iteration in [1u32, 2] {
        // From the second step DeepSpeed keeps parameters gathered
        // through forward and backward (`deepspeed.rs`).
        let state = if iteration == 1 {
            TermSet::EMPTY
        } else {
            STATE.with(T::DsGathered)
        };
        if iteration == 2 && m.steps_alike() {
            // The first step's forwards and backwards, after init.
            let first: Vec<Raw> = raw[1..1 + 2 * micro_steps.len()].to_vec();
            raw.extend(first.into_iter().map(|r| later_step(r, state)));
        } else {
            for &micro in micro_steps {
                raw.extend(micro_step(&m, state, iteration, micro));
            }
        }
        raw.extend(step(iteration));
    }
    with_overhead(&m, raw, overhead)
}

/// One micro-step's forward and backward from `state` (what the steps
/// before left).
fn micro_step(m: &Moments, state: TermSet, iteration: u32, micro: u32) -> [Raw; 2] {
    // Gradients from earlier micro-steps stay.
    let start = if micro > 1 {
        base(state).with(T::Grads)
    } else {
        base(state)
    };
    let first_step = iteration == 1;
    let (peak_fwd, end_fwd) = forward(m, start, first_step);
    let (at, peak_bwd) = backward(m, start, end_fwd, micro, first_step);
    let end_bwd = start.with(T::Grads).without(TermSet::of(&[T::DsGathered]));
    [
        (
            iteration,
            micro,
            Phase::Forward,
            Moment::End,
            peak_fwd,
            end_fwd,
        ),
        (iteration, micro, Phase::Backward, at, peak_bwd, end_bwd),
    ]
}

/// A first step's forward or backward as the second step has it: the
/// optimizer's `state` beside every moment, a constant, so the same
/// moment is highest ([`Moments::steps_alike`]).
fn later_step(r: Raw, state: TermSet) -> Raw {
    let (_, micro, phase, at, peak, end) = r;
    (2, micro, phase, at, peak.union(state), end.union(state))
}

/// The phases of init and two iterations of a pipeline rank (torch
/// 2.15's schedules, `crate::train::pipeline`): its forwards and its
/// backwards, each the highest of its kinds of moment, with what the
/// schedule's order leaves beside each kind (`breakdown/pipeline.rs`); the
/// gradients exist from the first backward on. The last stage's outputs
/// and inputs stay until the next step begins.
pub(super) fn build_pipeline(
    p: &Breakdown,
    stage: &Stage,
    overhead: OverheadRule,
) -> Result<Vec<PhaseReport>, EstimateError> {
    let m = Moments::new(p);
    let mut raw: Vec<Raw> = Vec::with_capacity(9);
    raw.push((0, 1, Phase::Init, Moment::End, PARAMS, PARAMS));
    let kept = STEP_HELD;
    for iteration in [1u32, 2] {
        let state = if iteration == 1 {
            TermSet::EMPTY
        } else {
            STATE
        };
        if iteration == 2 && m.steps_alike() {
            let first: Vec<Raw> = raw[1..3].to_vec();
            raw.extend(first.into_iter().map(|r| later_step(r, state)));
        } else {
            raw.extend(pipeline_step(&m, stage, state, iteration));
        }
        for (it, micro, phase, at, peak, end) in step(iteration) {
            raw.push((it, micro, phase, at, peak.union(kept), end.union(kept)));
        }
    }
    with_overhead(&m, raw, overhead)
}

/// What a pipeline rank holds from its step's last backward until the
/// next step: the last stage's outputs and inputs, and (several stages a
/// rank) the other stages' gradients.
const STEP_HELD: TermSet = TermSet::of(&[T::PipeKeptStep, T::PipeInputsStep, T::PipeGradsRest]);

/// A pipeline rank's forwards and backwards in one step from `state`.
fn pipeline_step(m: &Moments, stage: &Stage, state: TermSet, iteration: u32) -> [Raw; 2] {
    let beside = |ids: [T; 5]| TermSet::of(&ids);
    let kept = STEP_HELD;
    let first_step = iteration == 1;
    let start = base(state);
    let grads = start.with(T::Grads);
    let (fwd, end_fwd) = forward(m, start, first_step);
    // Every order starts with a forward before any backward.
    let fwd_first = fwd.union(beside(kind_terms(Kind::Forward)));
    let (fwd_grads, end_grads) = forward(m, grads, first_step);
    let peak_fwd = if stage.has(Kind::ForwardGrads) {
        m.highest(
            fwd_first,
            &[fwd_grads.union(beside(kind_terms(Kind::ForwardGrads)))],
        )
    } else {
        fwd_first
    };
    let (at_first, bwd_first) = backward(m, start, end_fwd, 1, first_step);
    let mut best = (
        at_first,
        bwd_first.union(beside(kind_terms(Kind::BackwardFirst))),
    );
    if stage.has(Kind::Backward) {
        let (at, bwd) = backward(m, grads, end_grads, 2, first_step);
        let later = bwd.union(beside(kind_terms(Kind::Backward)));
        if m.total(later) > m.total(best.1) {
            best = (at, later);
        }
    }
    [
        (iteration, 1, Phase::Forward, Moment::End, peak_fwd, end_fwd),
        (
            iteration,
            1,
            Phase::Backward,
            best.0,
            best.1,
            grads.union(kept),
        ),
    ]
}

/// Every iteration holds the parameters, the state so far, DDP's buckets
/// (allocated when it wraps the model), the inputs, retained data and
/// cuBLAS's workspaces (from the first matmul on).
fn base(state: TermSet) -> TermSet {
    PARAMS.union(state).union(TermSet::of(&[
        T::DdpBuckets,
        T::Inputs,
        T::Dataset,
        T::CublasWorkspaces,
    ]))
}

/// Forward's peak and end from `start`. The loss holds the logits, their
/// fp32 upcast and the log-softmax at once; under checkpointing the last
/// layer's own forward (everything it creates lives until it ends) can be
/// higher, and without it the last layer's forward with DoRA's transient.
/// In the first step DeepSpeed gathers each module while it runs (the
/// head's matmul, with the logits it makes); from the second, the flat
/// buffers of what it prefetched are alive as forward starts
/// (`deepspeed.rs`).
fn forward(m: &Moments, start: TermSet, first_step: bool) -> (TermSet, TermSet) {
    let (module, ahead) = if first_step {
        (TermSet::of(&[T::DsModule]), TermSet::EMPTY)
    } else {
        (TermSet::EMPTY, TermSet::of(&[T::DsFlatAhead]))
    };
    let end_fwd = start.union(SAVED).union(TermSet::of(&[
        T::CopiesSaved,
        T::LogSoftmax,
        T::LogitsKept,
        T::LogitsSoftcap,
        T::FsdpRoot,
        T::Fsdp2Tail,
    ]));
    let loss = end_fwd
        .without(TermSet::of(&[T::LogitsKept]))
        .union(TermSet::of(&[
            T::PaddedLabels,
            T::LastHidden,
            T::CopiesTransient,
            T::LogitsOut,
            T::LogitsUpcast,
            T::LogitsShifted,
            T::CachePresents,
            T::Fsdp2LossBuffer,
        ]));
    // FSDP2's first moment: the embedding gathered, its all-gather output
    // still held, and layer 0's being gathered (`fsdp.rs`).
    let gather = start
        .union(TermSet::of(&[T::FsdpRoot, T::Fsdp2Start]))
        .union(ahead);
    let head = start
        .union(SAVED)
        .union(TermSet::of(&[T::CopiesSaved, T::LogitsOut]))
        .union(module);
    let peak = if m.p.recompute {
        // The layer's attention scores exist only around its attention (a
        // no-grad forward keeps none of them for its MLP).
        let layer = start.union(SAVED).union(TermSet::of(&[
            T::CopiesTransient,
            T::RecomputeMask,
            T::RecomputeMaskedKv,
            T::CausalMasksForward,
            T::FsdpRoot,
            T::FsdpLayer,
            T::Fsdp2Buffer,
        ]));
        let around = layer.with(T::ForwardCopies);
        let mlp = if m.p.terms.bytes(T::LayerForward) > 0 {
            layer.with(T::LayerForwardCopies).with(T::LayerForward)
        } else {
            around.with(T::Recompute).with(T::RecomputeLinear)
        };
        let down = around.with(T::LayerForwardDown);
        let matmul = around.union(TermSet::of(&[T::LayerForwardQuant, T::DequantizedFwd]));
        let dora = around.with(T::DoraTransient);
        let attn = around.union(TermSet::of(&[
            T::RecomputeScores,
            T::ScoresTransient,
            T::ScoresMask,
        ]));
        if m.p.terms.bytes(T::LinearForward) > 0 {
            // Inside a Gated DeltaNet layer the final norm and the head
            // have not run yet.
            let linear = layer
                .without(TermSet::of(&[T::Outer]))
                .with(T::LinearForward);
            m.highest(loss, &[gather, mlp, down, matmul, dora, attn, linear, head])
        } else {
            m.highest(loss, &[gather, mlp, down, matmul, dora, attn, head])
        }
    } else {
        let layer = start.union(SAVED).union(TermSet::of(&[
            T::CopiesSaved,
            T::CopiesTransient,
            T::DoraTransient,
            T::CausalMasksForward,
            T::FsdpRoot,
            T::FsdpLayer,
            T::Fsdp2Buffer,
        ]));
        let attn = layer.union(TermSet::of(&[T::ScoresTransient, T::ScoresMask]));
        // In the last layer's expert loop: the final norm and the head
        // have not run yet.
        let experts = layer
            .without(TermSet::of(&[T::Outer]))
            .with(T::ExpertsLoopForward);
        if m.p.terms.bytes(T::ExpertsLoopForward) > 0 {
            m.highest(loss, &[gather, layer, attn, experts, head])
        } else {
            m.highest(loss, &[gather, layer, attn, head])
        }
    };
    (peak, end_fwd)
}

/// The moment backward ends, at the embedding's backward: every gradient
/// made. Under FSDP2 the embedding is gathered again, its gradient is
/// whole, the others are shards, and layer 0's reduce-scatter input is kept
/// (`fsdp.rs`).
fn end_of_backward(m: &Moments, start: TermSet) -> TermSet {
    let all = TermSet::of(&[
        T::TiedGradSum,
        T::EmbeddingGrad,
        T::FsdpRoot,
        T::Fsdp2EndUnit,
        T::DsReduceCat,
    ]);
    if m.p.terms.bytes(T::Fsdp2EndGrads) > 0 {
        start.union(all).union(TermSet::of(&[
            T::Fsdp2EndGrads,
            T::Fsdp2GradsRest,
            T::Fsdp2RsLayer,
        ]))
    } else {
        start.with(T::Grads).union(all)
    }
}

/// FSDP2's reduce-scatter of layer 1 (full fine-tuning): layer 0 gathered
/// ahead, the other units' gradients as shards, and three layer-sized
/// gradient buffers (layer 1's gradients, its reduce-scatter input, layer
/// 2's kept). Measured: Mistral-7B at 1 × 1024 (`fsdp2_rows.jsonl`), its
/// allocation groups at the peak.
fn fsdp2_reduce_scatter(start: TermSet) -> TermSet {
    start.union(TermSet::of(&[
        T::FsdpRoot,
        T::FsdpLayer,
        T::Fsdp2GradsDone,
        T::FsdpLayerGrad,
        T::Fsdp2RsInput,
        T::Fsdp2RsLayer,
        T::GradHidden,
        T::CkptInputFirst,
    ]))
}

/// Backward's peak from `start`: the highest of the moments that can hold
/// it (the first of equals, in time order), from the loss's gradients to
/// the end's. In the first step DeepSpeed gathers the head again for its
/// backward.
fn backward(
    m: &Moments,
    start: TermSet,
    end_fwd: TermSet,
    micro: u32,
    first_step: bool,
) -> (Moment, TermSet) {
    let p = m.p;
    // Under FSDP1 the root stays gathered through backward, and from the
    // head's backward on the next layer is gathered ahead (`fsdp.rs`).
    let logits_moment = end_fwd.with(T::LogitsGrads).with(T::FsdpHeadPrefetch);
    // The head's backward: its matmul makes the weight's gradient (of the
    // bf16 copy under autocast) while the logits' gradient is alive; under
    // autocast the copy's gradient then becomes the fp32 one, once the
    // logits' gradient is freed.
    let head = start.union(SAVED).union(TermSet::of(&[
        T::GradHidden,
        T::CopiesSaved,
        T::LogitsKept,
        T::FsdpRoot,
        T::FsdpHeadPrefetch,
        T::Fsdp2HeadPrefetch,
        T::Fsdp2Tail,
    ]));
    let head = if first_step {
        head.with(T::DsModule)
    } else {
        head
    };
    let head_moment = if p.amp_head {
        head.union(TermSet::of(&[T::LogitsGradOut, T::HeadGradCopy]))
    } else {
        head.union(TermSet::of(&[T::LogitsGradOut, T::HeadGrad]))
    };
    let head_cast = head.union(TermSet::of(&[T::HeadGradCopy, T::HeadGrad]));
    // DeepSpeed releases each module's parameters after its backward (no
    // later use in the step): by layer 0's backward only it and the
    // embedding are gathered, in every step (`deepspeed.rs`).
    let late = start
        .without(TermSet::of(&[T::DsGathered]))
        .with(T::DsModule);
    // A later backward makes the embedding's gradient anew beside the kept one.
    let end_moment = if micro > 1 {
        end_of_backward(m, late).with(T::EmbeddingGradNew)
    } else {
        end_of_backward(m, late)
    };
    let mut best = (Moment::Start, logits_moment, m.total(logits_moment));
    let mut consider = |at: Moment, x: TermSet, bytes: u128| {
        if bytes > best.2 {
            best = (at, x, bytes);
        }
    };
    consider(Moment::Start, head_moment, m.total(head_moment));
    if p.amp_head {
        consider(Moment::Start, head_cast, m.total(head_cast));
    }
    // The last layer's backward, once the head's is done: every saved
    // tensor, the hidden state's gradient and the layer's own moments.
    let layer_base = start.union(SAVED).union(TermSet::of(&[
        T::CopiesSaved,
        T::GradHidden,
        T::FsdpRoot,
        T::FsdpLayer,
        T::FsdpPrefetch,
        T::Fsdp2RsKept,
    ]));
    // Inside it the final norm's and the head's saved inputs are released
    // (their backward ran).
    let inner = layer_base.without(TermSet::of(&[T::Outer]));
    inside(m, inner, false, |x, b| consider(Moment::Start, x, b));
    // Between them, the final norm's backward (its incoming gradient
    // already converted).
    let norm = layer_base
        .without(TermSet::of(&[T::GradHidden]))
        .with(T::FinalNormBackward);
    consider(Moment::Start, norm, m.total(norm));
    // At attention's backward (eager with sinks, the math kernel): its
    // score-sized gradients, the layer's MLP part (and the weight copies
    // the experts saved) already released.
    let scores = m.p.terms.bytes(T::ScoresTransientBwd) > 0;
    let attn = |x: TermSet| {
        x.without(TermSet::of(&[
            T::Recompute,
            T::RecomputeLinear,
            T::RecomputeFirst,
            T::RecomputeLinearFirst,
            T::RecomputeCopies,
            T::RecomputeCopiesFirst,
        ]))
        .union(TermSet::of(&[T::RecomputeAttn, T::ScoresTransientBwd]))
    };
    if scores && !p.recompute {
        let x = layer_base.with(T::ScoresTransientBwd);
        consider(Moment::Start, x, m.total(x));
    }
    consider(Moment::End, end_moment, m.total(end_moment));
    if p.terms.bytes(T::Fsdp2RsInput) > 0 {
        let rs = fsdp2_reduce_scatter(start);
        consider(Moment::End, rs, m.total(rs));
    }
    if p.recompute {
        let last = last_recompute(start);
        inside(m, last, false, |x, b| consider(Moment::Middle, x, b));
        if let Some(adapter) = lora_recompute(p, last, false) {
            consider(Moment::Middle, adapter, m.total(adapter));
        }
        // Its recompute at the expert loop's last expert (transformers 4),
        // before the layer's output exists.
        if p.terms.bytes(T::ExpertsLoopForward) > 0 {
            let experts = last
                .without(TermSet::of(&[T::RecomputeOutput]))
                .with(T::ExpertsLoopForward);
            consider(Moment::Middle, experts, m.total(experts));
        }
        if scores {
            consider(Moment::Middle, attn(last), m.total(attn(last)));
        }
    }
    let first = first_layer(p, late, micro);
    inside(m, first, true, |x, b| consider(Moment::End, x, b));
    if let Some(adapter) = lora_recompute(p, first, p.first_own).filter(|_| p.recompute) {
        consider(Moment::End, adapter, m.total(adapter));
    }
    if scores && p.recompute {
        consider(Moment::End, attn(first), m.total(attn(first)));
    }
    (best.0, best.1)
}

/// The terms that make each of a layer's backward moments (see
/// [`inside`]): the last layer's, then layer 0's.
const INSIDE: [[TermSet; 3]; 2] = [
    [
        TermSet::of(&[
            T::MergedGrad,
            T::Dequantized,
            T::DequantizedIo,
            T::DoraTransient,
        ]),
        TermSet::of(&[T::LayerBackward, T::LayerWeightGrad]),
        TermSet::of(&[T::LayerBackwardEntry]),
    ],
    [
        TermSet::of(&[
            T::MergedGrad,
            T::Dequantized,
            T::DequantizedIo,
            T::DoraTransient,
        ]),
        TermSet::of(&[T::LayerBackwardFirst, T::LayerWeightGradFirst]),
        TermSet::of(&[T::LayerBackwardEntryFirst]),
    ],
];

/// A layer's backward from `base` (what is alive around it): at its
/// transients (a merged LoRA expert weight's gradient, a dequantized
/// weight, DoRA's norm), at its MLP's gradients with the first weight
/// gradient made, and (a MoE layer) entering its experts; each only when
/// its terms hold bytes (`base` alone is below the head's moment). Layer
/// 0's (`first`) are its own kind's. Calls `f` with each moment and its
/// bytes: `base`'s, summed once, plus the moment's own.
fn inside(m: &Moments, base: TermSet, first: bool, mut f: impl FnMut(TermSet, u128)) {
    let i = usize::from(first && m.p.first_own);
    let around = m.total(base);
    for (set, extra) in INSIDE[i].iter().zip(m.inside[i]) {
        if extra > 0 {
            f(base.union(*set), around + extra);
        }
    }
}

/// Inside a LoRA adapter of the layer being recomputed (`first`: layer
/// 0's own terms): around it, what the layer saved by then and the
/// adapter's outputs in place of all it saves; its output not made yet.
/// The chunks and scores of its token mixer, which runs before its MLP,
/// are whole by then. Measured: shrunk Qwen3.5 with LoRA and
/// checkpointing, whose backward peaks at layer 0's up_proj adapter
/// (`hybrid_train_rows.jsonl`). `None` where no adapter is recomputed.
fn lora_recompute(p: &Breakdown, around: TermSet, first: bool) -> Option<TermSet> {
    let (saved, lora) = if first {
        (T::RecomputeFirst, T::RecomputeLoraFirst)
    } else {
        (T::Recompute, T::RecomputeLora)
    };
    (p.terms.bytes(lora) > 0).then(|| {
        around
            .without(TermSet::of(&[saved, T::RecomputeOutput]))
            .with(lora)
    })
}

/// Under checkpointing, around the last layer's recompute and backward:
/// every saved tensor, the head's gradients, the layer recomputed.
fn last_recompute(start: TermSet) -> TermSet {
    start.union(SAVED).union(RECOMPUTED).union(TermSet::of(&[
        T::RecomputeOutput,
        T::GradHidden,
        T::HeadGrad,
        T::HeadGradCopy,
        T::FsdpRoot,
        T::FsdpLayer,
        T::FsdpPrefetch,
    ]))
}

/// Around layer 0's backward (recomputed under checkpointing): every
/// other layer's gradients are made by then (with accumulation, all of
/// them from earlier micro-steps are in `start`), and of the activations
/// only its own saved tensors (or checkpointed input) are left: the later
/// ones were released by their layers' backward. Counting every
/// checkpointed input overstated Mistral-7B full fine-tuning at 8 × 4096
/// by 7.4 GB (t4_rows.jsonl); without checkpointing, the tiny MoE rows'
/// backward peak is here (moe_aux_rows.jsonl).
fn first_layer(p: &Breakdown, start: TermSet, micro: u32) -> TermSet {
    let made = if micro > 1 {
        TermSet::EMPTY
    } else {
        TermSet::of(&[T::GradsButFirst])
    };
    let tied = if p.tied_head {
        TermSet::of(&[T::HeadGrad])
    } else {
        TermSet::EMPTY
    };
    start
        .union(SAVED_AT_FIRST)
        .union(made)
        .union(if p.first_own {
            RECOMPUTED_FIRST
        } else {
            RECOMPUTED
        })
        .union(TermSet::of(&[
            T::GradHidden,
            T::RecomputeOutput,
            T::FsdpRoot,
            T::FsdpLayer,
            T::FsdpKeptGrads,
        ]))
        .union(tied)
}

/// The optimizer step and zero_grad of `iteration`: the first step creates
/// the state (Adafactor's only partly by its peak).
fn step(iteration: u32) -> [Raw; 2] {
    let after = base(STATE).with(T::Grads);
    let step_peak = if iteration == 1 {
        base(STATE_FIRST_STEP).union(TermSet::of(&[T::Grads, T::TempsFirstStep, T::DsStepGrads]))
    } else {
        base(STATE).union(TermSet::of(&[T::Grads, T::Temps, T::DsStepGrads]))
    };
    [
        (
            iteration,
            1,
            Phase::OptimizerStep,
            Moment::Middle,
            step_peak,
            after,
        ),
        (
            iteration,
            1,
            Phase::ZeroGrad,
            Moment::Start,
            after,
            base(STATE),
        ),
    ]
}

/// The reports, with the overhead: the CUDA context (and NCCL's
/// communicator) from the start, and the allocator's reserve on top of the
/// highest allocation so far (reserved memory is not given back without
/// empty_cache()).
fn with_overhead(
    m: &Moments,
    raw: Vec<Raw>,
    overhead: OverheadRule,
) -> Result<Vec<PhaseReport>, EstimateError> {
    let (ctx, pct) = overhead.beside();
    let mut high = 0u128;
    let mut out = Vec::with_capacity(raw.len());
    for (iteration, micro, phase, at, peak, end) in raw {
        let (peak, end) = (m.gpu(peak), m.gpu(end));
        let mut running = m.running.borrow_mut();
        let peak_tally = *running.tally(peak);
        high = high.max(peak_tally.total());
        let over = ctx + high * pct / 100;
        let mut report = PhaseReport::new(
            iteration,
            phase,
            at,
            peak_tally.components(over, &super::DRIVERS)?,
            running.tally(end).components(over, &super::DRIVERS)?,
        );
        report.micro_step = micro;
        report.terms = peak;
        report.end_terms = end;
        out.push(report);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{decode_strict, RawQuery};
    use crate::train::breakdown::breakdown;

    /// The second step reuses the first's forwards and backwards with the
    /// optimizer's state beside them (`later_step`): for runs without
    /// DeepSpeed, exactly what working them out again gives.
    #[test]
    fn the_second_step_is_the_first_with_the_state() {
        let check = |q: &str, alike: bool| {
            let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
            let b = breakdown(&s.train_run()).expect("estimates");
            let m = Moments::new(&b);
            assert_eq!(m.steps_alike(), alike, "{q}");
            if !alike {
                return;
            }
            let state = STATE.with(T::DsGathered);
            for micro in [1, 2] {
                let again = micro_step(&m, state, 2, micro);
                let reused = micro_step(&m, TermSet::EMPTY, 1, micro).map(|r| later_step(r, state));
                for (x, y) in again.iter().zip(reused) {
                    assert_eq!((x.0, x.1, x.2, x.3), (y.0, y.1, y.2, y.3), "{q}");
                    assert_eq!(m.gpu(x.4), m.gpu(y.4), "{q}: peak of {:?}", x.2);
                    assert_eq!(m.gpu(x.5), m.gpu(y.5), "{q}: end of {:?}", x.2);
                }
            }
        };
        check("model=llama3.1-8b&dtype=amp_bf16&batch=4&seq=2048", true);
        check("model=gpt2-124m&dtype=fp32&attn=eager&grad_ckpt=true", true);
        check(
            "model=mixtral-8x7b&dtype=amp_bf16&lora_r=16&grad_ckpt=true&batch=2",
            true,
        );
        check(
            "model=qwen2.5-7b&dtype=bf16&lora_r=16&gpus=8&zero=3&grad_accum=4",
            true,
        );
        check(
            "model=llama3.1-70b&dtype=bf16&gpus=64&tp=8&shard=fsdp2&zero=3&grad_ckpt=true",
            true,
        );
        check(
            "model=qwen3-30b-a3b&dtype=bf16&zero=2&offload=optimizer&gpus=2",
            true,
        );
        check(
            "model=llama3.1-8b&optim=adafactor&quant=nf4&lora_r=16",
            true,
        );
        check(
            "model=qwen2.5-7b&dtype=mixed_bf16&gpus=4&zero=3&shard=deepspeed",
            false,
        );
    }
}
