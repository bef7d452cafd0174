//! The logits path and the head: HF computes the logits in the compute
//! dtype, upcasts them to fp32, and cross-entropy saves an fp32
//! log-softmax; backward makes three logits-sized gradients, then the
//! hidden state's and the head weight's; the embedding's gradient ends it.

use super::Inputs;
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::ledger::Mode;

/// `copies` × B × S × V × `bytes`.
fn logits(x: &Inputs, copies: u128, bytes: u128) -> Term {
    let f = [
        (copies, U::Copies),
        (x.bt, U::Batch),
        (x.seq, U::Seq),
        (x.v, U::Vocab),
        (bytes, U::BytesEach),
    ];
    // One copy goes without saying.
    Term::of(if copies == 1 { &f[1..] } else { &f })
}

/// The logits terms and the head's backward.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let al = x.act();
    put(T::LogitsOut, logits(x, 1, al));
    if al == 2 {
        put(T::LogitsUpcast, logits(x, 1, 4));
    }
    put(T::LogSoftmax, logits(x, 1, 4));
    if x.c.spec.final_softcap {
        // Gemma 2: logits / c, tanh (kept for backward), × c.
        put(T::LogitsSoftcap, logits(x, 1, al));
    }
    if x.s.train.keep_outputs {
        put(T::LogitsKept, logits(x, 1, al));
    }
    // nll_loss's gradient and log_softmax's gradient next to the saved
    // log-softmax: three fp32 copies at once.
    put(T::LogitsGrads, logits(x, 2, 4));
    put(T::LogitsGradOut, logits(x, 1, al));
    head(x, put);
}

/// The head's backward: the gradient of the hidden state, and of the head
/// weight (and, under autocast, of its bf16 copy). The end of backward: the
/// embedding's gradient. Tied, it meets the head's gradient (out-of-place
/// sum: two more V×h); untied, the gradient of the embedding output is
/// still alive.
fn head(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let (h, v, al) = (x.h, x.v, x.act());
    put(
        T::GradHidden,
        x.per_token(&[(h, U::Elements), (al, U::BytesEach)]),
    );
    if x.c.full {
        put(
            T::HeadGrad,
            Term::of(&[(v * h, U::Params), (x.grad_bytes, U::BytesEach)]),
        );
        if x.c.mode == Mode::Amp {
            put(
                T::HeadGradCopy,
                Term::of(&[(v * h, U::Params), (2, U::BytesEach)]),
            );
        }
    }
    if x.c.full && x.a.tied {
        put(
            T::TiedGradSum,
            Term::of(&[
                (2, U::Copies),
                (v * h, U::Params),
                (x.grad_bytes, U::BytesEach),
            ]),
        );
    } else {
        put(
            T::EmbeddingGrad,
            x.per_token(&[(h, U::Elements), (x.residual(), U::BytesEach)]),
        );
    }
}
