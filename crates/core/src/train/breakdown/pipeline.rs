//! A pipeline rank's terms (`crate::train::pipeline`): what the ends of
//! the model it does not hold would have made goes, and what the schedule
//! keeps beside one micro-batch comes: the stage's output, the other
//! micro-batches waiting for their backward, and on the last stage the
//! outputs and inputs it keeps.
//!
//! Source: torch 2.15 `torch/distributed/pipelining/stage.py`
//! (`_PipelineStageBase.forward_one_chunk`: `fwd_cache` keeps each
//! micro-batch's output and inputs until `backward_one_chunk`;
//! `output_chunks` keeps the last stage's outputs until
//! `clear_runtime_states` at the next step) and `schedules.py`; measured:
//! `scripts/measure/parallel/raw/pp523.jsonl`.

use super::Inputs;
use crate::terms::{Term, TermId as T, TermSet, Terms, Unit as U};
use crate::train::run::{Beside, Kind, Stage};

/// What the final norm, the head and the loss make: nothing on a stage
/// before the last.
const HEAD: [T; 16] = [
    T::Outer,
    T::Labels,
    T::PaddedLabels,
    T::LastHidden,
    T::FinalNormBackward,
    T::HeadGrad,
    T::HeadGradCopy,
    T::TiedGradSum,
    T::LogitsOut,
    T::LogitsUpcast,
    T::LogitsShifted,
    T::LogSoftmax,
    T::LogitsKept,
    T::LogitsSoftcap,
    T::LogitsGrads,
    T::LogitsGradOut,
];

/// Sets the stage's terms on top of one micro-batch's (`terms`, sized by
/// the breakdown at the micro-batch on the stage's layers); returns what
/// its outputs and inputs are sized by, for [`beside`] to be called again.
pub(super) fn add(x: &Inputs, st: &Stage, terms: &mut Terms) -> Units {
    let per_token = |elems: u128| x.per_token(&[(elems, U::Elements), (x.act(), U::BytesEach)]);
    if !st.last {
        for id in HEAD {
            terms.set(id, Term::ZERO);
        }
        // The last layer's output is not a final norm's input here: the
        // forward cache keeps it, and its gradient comes from the next
        // stage (the hidden state's gradient, as sized).
        terms.set(T::PipeStageOutput, per_token(x.h));
    }
    if !st.first {
        terms.set(T::OuterEmbedding, Term::ZERO);
    }
    // No output object outlives the loss here (`keep_outputs` is the
    // Trainer's): the schedule keeps the last stage's outputs itself.
    terms.set(T::LogitsKept, Term::ZERO);
    // The step's token ids and labels: the whole batch.
    let m = u128::from(st.micro_batches);
    terms.set(
        T::Inputs,
        Term::of(&[(m * x.bt, U::Batch), (x.seq, U::Seq), (16, U::BytesEach)]),
    );
    let units = Units {
        bt: x.bt,
        seq: x.seq,
        h: x.h,
        v: x.v,
        act: x.act(),
    };
    beside(terms, st, units);
    if st.last {
        terms.set(T::PipeKeptStep, units.outputs(st.micro_batches));
        if !st.first {
            terms.set(T::PipeInputsStep, units.inputs(st.micro_batches));
        }
    }
    units
}

/// The sizes a stage's output and received input are made of: a
/// micro-batch's sequences, its tokens, the hidden width, the vocabulary
/// and the compute dtype's bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Units {
    bt: u128,
    seq: u128,
    h: u128,
    v: u128,
    act: u128,
}

impl Units {
    /// `n` micro-batches' hidden states as the stage receives them:
    /// micro-batch × S × h in the compute dtype.
    fn inputs(&self, n: u32) -> Term {
        self.of(n, (self.h, U::Elements))
    }

    /// `n` of the last stage's outputs: micro-batch × S × V logits in the
    /// compute dtype.
    fn outputs(&self, n: u32) -> Term {
        self.of(n, (self.v, U::Vocab))
    }

    /// `n` × micro-batch × S × `width` in the compute dtype.
    fn of(&self, n: u32, width: (u128, U)) -> Term {
        Term::of(&[
            (u128::from(n), U::Copies),
            (self.bt, U::Batch),
            (self.seq, U::Seq),
            width,
            (self.act, U::BytesEach),
        ])
    }
}

/// Sets, for each kind of moment, what the schedule keeps beside one
/// micro-batch at that kind's highest moment: the micro-batches waiting
/// on stages of the running one's kind and of the other
/// (`st.other_sizes`), the last stage's outputs and inputs, the other
/// stages' gradients made so far. Set again once the other kind is sized
/// (interleaved 1F1B), without building the breakdown again.
pub(crate) fn beside(terms: &mut Terms, st: &Stage, units: Units) {
    let saved = super::left_for_backward(terms);
    let own_grads = terms.bytes(T::Grads);
    let other = st.other_sizes;
    let sizes = [
        saved,
        units.outputs(1).bytes(),
        units.inputs(1).bytes(),
        other.saved,
        own_grads,
        other.grads,
    ];
    let bytes = |b: &Beside| {
        [
            b.waiting,
            b.kept,
            b.done,
            b.others,
            b.grads_alike,
            b.grads_other,
        ]
        .iter()
        .zip(sizes)
        .map(|(n, size)| u128::from(*n) * size)
        .sum::<u128>()
    };
    // Each kind's highest moment (the first of equals), in one pass.
    let mut tops: [Option<(u128, Beside)>; 4] = [None; 4];
    for (kind, b) in &st.moments {
        let (v, top) = (bytes(b), &mut tops[kind.index()]);
        if top.is_none_or(|(best, _)| v > best) {
            *top = Some((v, *b));
        }
    }
    for kind in Kind::ALL {
        let ids = kind_terms(kind);
        let top = tops[kind.index()].map(|(_, b)| b).unwrap_or_default();
        let waiting = Term::of(&[(u128::from(top.waiting), U::Copies), (saved, U::Bytes)]);
        terms.set(ids[0], waiting);
        terms.set(ids[1], units.outputs(top.kept));
        terms.set(ids[2], units.inputs(top.done));
        terms.set(
            ids[3],
            Term::of(&[(u128::from(top.others), U::Copies), (other.saved, U::Bytes)]),
        );
        let grads =
            u128::from(top.grads_alike) * own_grads + u128::from(top.grads_other) * other.grads;
        terms.set(ids[4], Term::of(&[(grads, U::Bytes)]));
    }
}

/// What a rank of several stages (interleaved 1F1B) holds whichever
/// stage runs: the parameters, their optimizer state and the step's
/// temporaries of all its stages (`rank`: the breakdown of one stage
/// holding all its layers), and beside the running stage's gradients the
/// others' once the step has made them all.
pub(crate) fn rank_wide(terms: &mut Terms, rank: &Terms) {
    for id in RANK_WIDE.iter() {
        terms.set(id, *rank.get(id));
    }
    let rest = rank.bytes(T::Grads).saturating_sub(terms.bytes(T::Grads));
    terms.set(T::PipeGradsRest, Term::of(&[(rest, U::Bytes)]));
}

/// The terms a rank's stages share: the parameters, the optimizer's
/// state at and after its first step, its temporaries.
const RANK_WIDE: TermSet = super::PARAMS
    .union(super::STATE)
    .union(super::STATE_FIRST_STEP)
    .union(TermSet::of(&[T::Temps, T::TempsFirstStep]));

/// A kind of moment's terms: the micro-batches waiting on stages of the
/// running one's kind, the outputs kept, the inputs held, the
/// micro-batches waiting on the rank's stages of the other kind, and the
/// other stages' gradients made so far.
pub(crate) fn kind_terms(kind: Kind) -> [T; 5] {
    match kind {
        Kind::Forward => [
            T::PipeWaitingForward,
            T::PipeKeptForward,
            T::PipeInputsForward,
            T::PipeOthersForward,
            T::PipeGradsForward,
        ],
        Kind::ForwardGrads => [
            T::PipeWaitingForwardGrads,
            T::PipeKeptForwardGrads,
            T::PipeInputsForwardGrads,
            T::PipeOthersForwardGrads,
            T::PipeGradsForwardGrads,
        ],
        Kind::BackwardFirst => [
            T::PipeWaitingBackwardFirst,
            T::PipeKeptBackwardFirst,
            T::PipeInputsBackwardFirst,
            T::PipeOthersBackwardFirst,
            T::PipeGradsBackwardFirst,
        ],
        Kind::Backward => [
            T::PipeWaitingBackward,
            T::PipeKeptBackward,
            T::PipeInputsBackward,
            T::PipeOthersBackward,
            T::PipeGradsBackward,
        ],
    }
}
