//! The logits path and the head: HF computes the logits in the compute
//! dtype, upcasts them to fp32, and cross-entropy saves an fp32
//! log-softmax; backward makes three logits-sized gradients, then the
//! hidden state's and the head weight's; the embedding's gradient ends it.

use super::Inputs;
use crate::model::family::Norm;
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::ledger::Mode;
use crate::train::run::Offload;
use crate::train::stack::Loss;

/// `copies` × B × `positions` × V × `bytes`.
fn logits_over(x: &Inputs, copies: u128, positions: u128, bytes: u128) -> Term {
    let f = [
        (copies, U::Copies),
        (x.bt, U::Batch),
        (positions, U::Seq),
        (x.v, U::Vocab),
        (bytes, U::BytesEach),
    ];
    // One copy goes without saying.
    Term::of(if copies == 1 { &f[1..] } else { &f })
}

/// `copies` × B × S × V × `bytes`.
fn logits(x: &Inputs, copies: u128, bytes: u128) -> Term {
    logits_over(x, copies, x.seq, bytes)
}

/// How the loss handles the logits in this release.
struct LossPlan {
    /// Positions the cross-entropy covers: all but the last when the
    /// logits are shifted (4.46 to 4.48, a family's own loss), all of
    /// them when the labels are padded instead (4.49 and later).
    positions: u128,
    /// Bytes per element of the contiguous shifted copy (0: none; a
    /// batch of one's slice is already contiguous).
    shifted: u128,
    /// Bytes per element of the fp32 upcast and over how many positions.
    upcast: (u128, u128),
    /// Bytes per element of the log-softmax and the two gradients beside
    /// it at the head of backward.
    softmax: u128,
}

impl LossPlan {
    /// Source: transformers `loss/loss_utils.py::ForCausalLMLoss` (4.48.1
    /// l.32–48; 5.23.0 l.51–70) and 4.48.1
    /// `GPTBigCodeForCausalLM.forward` (its own `CrossEntropyLoss` on the
    /// half logits; under autocast `log_softmax` runs in fp32 from an
    /// fp32 copy); measured: the t4_rows.jsonl rows of 4.48.1 against
    /// 5.23.0 (Mistral-7B, Llama-3.1-8B, starcoderbase-1b, with and
    /// without autocast), `scripts/measure/t4/NOTES.md` mechanisms 1, 2.
    fn of(x: &Inputs) -> LossPlan {
        let al = x.act();
        let stack = x.c.stack;
        let s1 = x.seq.saturating_sub(1);
        // `[..., :-1, :].contiguous()` copies nothing for a batch of one.
        let copy = x.bt > 1;
        if x.c.spec.legacy.own_loss && stack.own_loss {
            let autocast = x.c.mode == Mode::Amp || x.c.autocast_half;
            let sm = if autocast { 4 } else { al };
            return LossPlan {
                positions: s1,
                shifted: if copy { al } else { 0 },
                upcast: (if autocast && al == 2 { 4 } else { 0 }, s1),
                softmax: sm,
            };
        }
        let upcast = (if al == 2 { 4 } else { 0 }, x.seq);
        match stack.loss {
            Loss::PaddedLabels => LossPlan {
                positions: x.seq,
                shifted: 0,
                upcast,
                softmax: 4,
            },
            Loss::Shifted => LossPlan {
                positions: s1,
                shifted: if copy { 4 } else { 0 },
                upcast,
                softmax: 4,
            },
        }
    }
}

/// The logits terms and the head's backward.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let al = x.act();
    let plan = LossPlan::of(x);
    put(T::LogitsOut, logits(x, 1, al));
    put(
        T::LogitsUpcast,
        logits_over(x, 1, plan.upcast.1, plan.upcast.0),
    );
    put(
        T::LogitsShifted,
        logits_over(x, 1, plan.positions, plan.shifted),
    );
    put(
        T::LogSoftmax,
        logits_over(x, 1, plan.positions, plan.softmax),
    );
    if x.c.spec.final_softcap {
        // Gemma 2: logits / c, tanh (kept for backward), × c.
        put(T::LogitsSoftcap, logits(x, 1, al));
    }
    if x.s.train.keep_outputs {
        put(T::LogitsKept, logits(x, 1, al));
    }
    // nll_loss's gradient and log_softmax's gradient next to the saved
    // log-softmax: three copies at once.
    put(
        T::LogitsGrads,
        logits_over(x, 2, plan.positions, plan.softmax),
    );
    put(T::LogitsGradOut, logits(x, 1, al));
    head(x, put);
}

/// The final norm's backward, after the head's: an RMSNorm's autograd (the
/// Python module's `pow`, `mean`, `rsqrt` and products in fp32) holds five
/// fp32 token × hidden temporaries at once, beside every saved tensor;
/// `nn.LayerNorm`'s fused kernel only its input's gradient.
///
/// Measured: shrunk Mixtral with a 128-token vocabulary, no checkpointing
/// (transformers 4.48.1, `mixtral-shrunk-v128` in t4_rows.jsonl, the
/// `moe_loop` group of `scripts/measure/t4/matrix.py`): the backward's
/// peak is this moment, its five `(2, 512, 1024)` fp32 tensors.
fn final_norm_backward(x: &Inputs) -> Term {
    let temps = match x.c.spec.norm {
        Norm::Rms
        | Norm::RmsCastAfter
        | Norm::RmsPlusOne
        | Norm::RmsScaled
        | Norm::RmsWeightFp32 => 5,
        Norm::LayerNorm => 0,
    };
    x.per_token(&[(temps, U::Copies), (x.h, U::Elements), (4, U::BytesEach)])
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
    put(T::FinalNormBackward, final_norm_backward(x));
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
    put(T::EmbeddingGradNew, embedding_grad_new(x));
}

/// A backward after the first (a later micro-step, a pipeline's later
/// micro-batch) makes the embedding's gradient anew (`embedding_dense_backward`,
/// V × h) while the one kept exists, until `AccumulateGrad` adds it in
/// place (torch 2.15 `torch/csrc/autograd/functions/accumulate_grad.h`,
/// `accumulateGrad`: `variable_grad += new_grad`). Measured: the
/// interleaved pipelines' first ranks (`raw/pp523_interleaved.jsonl`, two
/// V × h gradients alive at the peak). Held where it was measured: full
/// fine-tuning of an untied model whose embedding this GPU holds whole
/// and unsharded.
fn embedding_grad_new(x: &Inputs) -> Term {
    let p = &x.s.parallel;
    let whole = p.tp.get() == 1 && p.zero.get() == 0 && p.offload == Offload::None;
    if !(x.c.full && !x.a.tied && whole && x.ends.before) {
        return Term::ZERO;
    }
    Term::of(&[(x.v * x.h, U::Params), (x.grad_bytes, U::BytesEach)])
}
