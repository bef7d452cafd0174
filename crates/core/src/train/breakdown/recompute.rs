//! Under gradient checkpointing, backward recomputes one layer's forward at
//! a time; a layer's backward holds its MLP's gradients and makes its first
//! weight gradient, and layer 0's holds only its own saved tensors; and
//! LoRA over fused experts makes a merged weight's gradient.

use super::activations::sliding_masks;
use super::copies::copies;
use super::Inputs;
use crate::model::family::Mlp;
use crate::model::ModuleName;
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::ledger::{Mode, Part, Saved};

/// The recompute terms, a layer's backward and the merged experts'
/// gradient.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let ly = &x.layers;
    let ckpt = x.ckpt.on();
    // The last layer's (the largest kind's) and layer 0's; when layer 0 is
    // like the last layer it is estimated with the last layer's terms.
    // Layer 0's saved tensors are what is left of the activations by its
    // backward, checkpointed or not.
    let first_own = ly.first_own();
    one_layer(
        x,
        &LAST,
        &ly.largest,
        super::Layers::moe(ly.largest_kind),
        ckpt || !first_own,
        put,
    );
    if first_own {
        one_layer(
            x,
            &FIRST,
            &ly.layer0,
            super::Layers::moe(ly.first_kind),
            true,
            put,
        );
    }
    if ckpt {
        layer_forward(x, put);
        if x.a.linear_layers > 0 {
            put(T::LinearForward, linear_forward(x));
        }
    }
    if x.c.expert_linears.is_some() || x.c.dense_dispatch() {
        // Beside the embedding's output (the model's `inputs_embeds`), the
        // layer's input and the attention block's output (h each).
        let per_tok = 3 * x.h * x.residual() + u128::from(ly.largest.loop_forward);
        put(
            T::ExpertsLoopForward,
            x.per_token(&[(per_tok, U::BytesEach)]),
        );
    }
    put(T::RecomputeMask, sliding_masks(x, x.mask_layers().min(1)));
    let scores =
        |extra: u64| x.per_token(&[(x.seq, U::KeyPositions), (u128::from(extra), U::BytesEach)]);
    put(T::ScoresTransient, scores(ly.largest.scores_fwd_extra));
    put(
        T::ScoresMask,
        Term::of(&[
            (x.seq, U::Seq),
            (x.seq, U::KeyPositions),
            (u128::from(ly.largest.scores_mask), U::BytesEach),
        ]),
    );
    put(T::ScoresTransientBwd, scores(ly.largest.scores_bwd_extra));
    if ckpt && ly.largest.scores_bwd_extra > 0 {
        // What the recomputed layer still holds at its attention's
        // backward: all it saved but its MLP's (or experts').
        let pt = &ly.largest.per_token;
        let mlp: u64 = [Part::Mlp, Part::Experts, Part::Router]
            .iter()
            .map(|p| pt[*p as usize])
            .sum();
        put(
            T::RecomputeAttn,
            x.per_token(&[(u128::from(ly.largest.token_bytes() - mlp), U::BytesEach)]),
        );
    }
    if x.ckpt.on() {
        // The layer recomputed last (the largest class) and layer 0.
        for (id, kind) in [
            (T::RecomputeMaskedKv, ly.largest_kind),
            (T::RecomputeMaskedKvFirst, ly.first_kind),
        ] {
            let masked = u128::from(ly.recomputed_masked_kv(kind));
            put(
                id,
                x.per_token(&[(x.mask_layers().min(1), U::Layers), (masked, U::BytesEach)]),
            );
        }
    }
    merged_grad(x, put);
}

/// The terms one layer's recompute and backward are made of.
struct LayerIds {
    saved: T,
    recurrent: T,
    lora: T,
    scores: T,
    copies: T,
    mlp: T,
    entry: T,
    weight_grad: T,
}

/// Backward's first layer, the last of the model (of the largest kind).
const LAST: LayerIds = LayerIds {
    saved: T::Recompute,
    recurrent: T::RecomputeLinear,
    lora: T::RecomputeLora,
    scores: T::RecomputeScores,
    copies: T::RecomputeCopies,
    mlp: T::LayerBackward,
    entry: T::LayerBackwardEntry,
    weight_grad: T::LayerWeightGrad,
};

/// Backward's last layer, layer 0 (its own kind; under LoRA its input
/// needs no gradient).
const FIRST: LayerIds = LayerIds {
    saved: T::RecomputeFirst,
    recurrent: T::RecomputeLinearFirst,
    lora: T::RecomputeLoraFirst,
    scores: T::RecomputeScoresFirst,
    copies: T::RecomputeCopiesFirst,
    mlp: T::LayerBackwardFirst,
    entry: T::LayerBackwardEntryFirst,
    weight_grad: T::LayerWeightGradFirst,
};

/// A layer's weight copies alive at once in its checkpointed forward:
/// autocast's cached copies are among `CopiesTransient` already, a frozen
/// weight's bf16 copy lives only through its own matmul (nothing is
/// saved), the other uncached copies (fp32 casts, peft's merged experts)
/// through the layer. Measured: Llama 4 shrunk under LoRA with
/// checkpointing and autocast (`scripts/measure/families/llama4/dense/`).
fn forward_copies(layer: &Saved) -> u64 {
    layer
        .weight_copies_uncached
        .saturating_sub(layer.frozen_casts)
        .saturating_add(layer.frozen_cast_max)
}

/// One layer: what it saves, its scores and weight copies (when `saved`:
/// recomputed under checkpointing; layer 0's, the last left), then inside
/// its backward, at its MLP, the gradients
/// the ledger counts beyond the saved tensors
/// ([`crate::train::ledger::Saved::backward_mlp`]; a MoE layer's as it
/// enters its experts, before any weight gradient) and, in full
/// fine-tuning, the first weight gradient it makes, the down projection's
/// (dense `ffn × hidden`; a MoE layer's routed experts' `experts × moe_ffn
/// × hidden`).
///
/// Measured: Mistral-7B full fine-tuning with checkpointing at 8 × 4096
/// (t4_rows.jsonl, transformers 5.23.0): the backward peak is inside layer
/// 0's MLP backward, with every other layer's gradients and its
/// down_proj's made; tiny-qwen3_moe with checkpointing (moe_aux_rows.jsonl):
/// inside layer 0's experts' backward.
fn one_layer(
    x: &Inputs,
    ids: &LayerIds,
    layer: &Saved,
    moe: bool,
    saved: bool,
    put: &mut impl FnMut(T, Term),
) {
    if saved {
        put(
            ids.saved,
            x.per_token(&[(u128::from(layer.token_bytes()), U::BytesEach)]),
        );
        put(ids.recurrent, super::activations::recurrent(x, layer, 1));
        put(
            ids.lora,
            x.per_token(&[(u128::from(layer.lora_forward), U::BytesEach)]),
        );
        put(
            ids.scores,
            x.per_token(&[
                (x.seq, U::KeyPositions),
                (u128::from(layer.per_token_key), U::BytesEach),
            ]),
        );
        put(
            ids.copies,
            copies(u128::from(layer.weight_copies) + u128::from(layer.weight_copies_uncached)),
        );
    }
    put(
        ids.entry,
        x.per_token(&[(u128::from(layer.backward_entry), U::BytesEach)]),
    );
    let mlp = x.per_token(&[(u128::from(layer.backward_mlp), U::BytesEach)]);
    let Some(grads) = weight_grads(x, moe) else {
        put(ids.mlp, mlp);
        return;
    };
    // DeepSeek-V2's sorted loop (transformers 4.57): from its first
    // expert's addition (two experts' gradients made) to its last (all of
    // them, the experts' saved tensors released), whichever is higher
    // ([`crate::train::ledger`]'s `sorted_back`). Measured: shrunk
    // DeepSeek-V2-Lite, full fine-tuning without checkpointing, its trace.
    let a = &x.a;
    let weight = |n: u128| Term::of(&[(n * x.h, U::Params), (x.grad_bytes, U::BytesEach)]);
    let (mlp, grads) = if moe && x.c.sorted_loop() {
        let f = u128::from(a.moe_ffn);
        let first = (mlp, weight(u128::from(a.experts).min(2) * 3 * f));
        let last = (
            x.per_token(&[(u128::from(layer.backward_last), U::BytesEach)]),
            weight(u128::from(a.experts) * 3 * f),
        );
        let bytes = |(m, g): &(Term, Term)| m.bytes() + g.bytes();
        if bytes(&last) > bytes(&first) {
            last
        } else {
            first
        }
    } else {
        (mlp, weight(grads))
    };
    put(ids.mlp, mlp);
    // Made whole, before any reduction shards it.
    put(ids.weight_grad, grads);
}

/// Full fine-tuning: the weight gradient (elements ÷ hidden) a layer's
/// backward makes first, at its MLP: the down projection's (dense `ffn ×
/// hidden`; a MoE layer's routed experts' `experts × moe_ffn × hidden`);
/// `None` under LoRA.
fn weight_grads(x: &Inputs, moe: bool) -> Option<u128> {
    if x.lora.is_some() {
        return None;
    }
    let a = &x.a;
    let down = if moe {
        u128::from(a.experts) * u128::from(a.moe_ffn)
    } else {
        u128::from(a.ffn)
    };
    // transformers 4's loop over stacked experts (gpt-oss) takes each
    // expert's slice of the 3-D weights: `select`'s backward makes a
    // zero-filled gradient of the whole parameter per expert, summed
    // out of place, so at gate_up's accumulation the running sum, the
    // new one and their sum (3 × E·h·2f) sit beside down's finished
    // gradient (E·f·h). Measured: shrunk gpt-oss, full fine-tuning with
    // reentrant checkpointing, transformers 4.57.6 (its trace at the
    // backward's peak).
    Some(if moe && x.c.experts_looped {
        down * (1 + 3 * 2)
    } else if moe && x.c.dense_dispatch() && x.c.mode != Mode::Amp {
        // Llama 4's bmms: every expert's gate_up and down, and the shared
        // expert's three, before the scores' gradient is summed (NOTES.md
        // §2 of `scripts/measure/families/llama4/dense/`; under autocast
        // not listed: the down experts' only, as `ledger::moe_dense`).
        3 * down + 3 * u128::from(a.shared_experts) * u128::from(a.moe_ffn)
    } else {
        down
    })
}

/// The forward under checkpointing saves nothing: a gated MLP's highest
/// moment holds the attention block's output and its norm (h each),
/// act(gate), up and their product (f each); an MoE layer's, the k routed
/// copies of the token (h) with the experts' gate_up, act and product
/// (4·moe_ffn), besides the two h. GPT-2's MLP keeps its whole recompute
/// term (its GELU's temporaries).
///
/// Source: LlamaDecoderLayer / LlamaMLP.forward (Python references);
/// measured with vocabularies too small for the logits to dominate
/// (llama-20m, tiny Mixtral and Qwen3-MoE at vocab 64) and on quantized
/// Mistral layers (`quant_rows.jsonl`).
fn layer_forward(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let (a, h) = (&x.a, x.h);
    let (act, resid) = (x.act(), x.residual());
    // Under autocast grouped_mm runs the experts in fp32.
    let expert = if x.c.mode == Mode::Amp { 4 } else { act };
    let (f, moe_f, k) = (
        u128::from(a.ffn),
        u128::from(a.moe_ffn),
        u128::from(a.experts_per_token),
    );
    let moe = a.layer_kinds()[1].1 > 0;
    // transformers 4's expert loop, at its last expert ([`Saved::loop_forward_nograd`]).
    let looped = x.c.expert_linears.is_some();
    let loop_fwd = u128::from(x.layers.largest.loop_forward_nograd);
    // Llama 4's block runs every token through every expert: nothing saved,
    // its largest moment is at the product or at the down bmm, beside the
    // router's logits and scores (the generate notes' no-grad block above
    // its entry, `scripts/measure/families/llama4/dense/NOTES.md` §4), one
    // hidden-wide tensor of which the checkpointed layer's base already
    // holds (the shrunk layouts' rows and Maverick's, exact). Under
    // autocast not listed: the routed experts' formula below.
    let dense = moe && x.c.dense_dispatch() && x.c.mode != Mode::Amp;
    let e = u128::from(a.experts);
    let per_tok = match (moe, x.c.spec.mlp) {
        (true, _) if looped => 2 * h * resid + loop_fwd,
        (true, _) if dense => {
            (e * act * (h + 4 * moe_f).max(2 * h + 3 * moe_f) + 2 * e * act).saturating_sub(h * act)
        }
        (true, _) => 2 * h * resid + k * (h + 4 * moe_f) * expert,
        (false, Mlp::Gated | Mlp::GatedFused) => 2 * h * resid + 3 * f * act,
        // Nemotron-H's MLP (`Mlp::Up`) never reaches here: training
        // refuses its Mamba-2 layers (`breakdown::recurrence_unmeasured`).
        (false, Mlp::Plain | Mlp::Up) => 0,
    };
    let ly = &x.layers.largest;
    put(T::ForwardCopies, copies(u128::from(forward_copies(ly))));
    if per_tok > 0 {
        put(T::LayerForward, x.per_token(&[(per_tok, U::BytesEach)]));
        let before_down = u128::from(forward_copies(ly).saturating_sub(ly.down_merge));
        put(T::LayerForwardCopies, copies(before_down));
    }
    // At the down experts' matmul: the routed inputs, the product and the
    // output (gate_up's output and the activation released), beside every
    // merged weight. Highest when an adapted down experts' merge is large.
    // Measured: mixtral-shrunk QLoRA on transformers 5.23 (t4_rows.jsonl),
    // its allocation trace (`qlora48.py --debug-out`).
    if moe && !looped {
        let down = 2 * h * resid + k * (2 * h + moe_f) * expert;
        put(T::LayerForwardDown, x.per_token(&[(down, U::BytesEach)]));
    }
    // A quantized gated MLP peaks at up_proj's matmul instead: the two h,
    // act(gate) (f), the input cast to the compute dtype (h) and the
    // matmul's output (f) in it, beside the dequantized weight. Measured on
    // Mistral-7B layers (quant_rows.jsonl, M-qlora).
    let q = &x.q;
    if q.elems > 0 && !moe {
        // LLM.int8 on CUDA instead: the input in fp16 and int8 (3 bytes per
        // element), an int32 product and its fp16 dequantization (6 per
        // output). Source: bitsandbytes 0.50 `backends/cuda/ops.py`
        // (int8_vectorwise_quant, int8_linear_matmul, int8_mm_dequant); not
        // measured (no GPU).
        let io = if q.int8_cuda {
            3 * h + 6 * f
        } else {
            (h + f) * q.compute
        };
        put(
            T::LayerForwardQuant,
            x.per_token(&[((2 * h + f) * resid + io, U::BytesEach)]),
        );
    }
}

/// A checkpointed recurrent layer's forward at its highest moment
/// ([`crate::train::ledger::recurrent_nograd`]), for the batch.
fn linear_forward(x: &Inputs) -> Term {
    let n = crate::train::ledger::recurrent_nograd(&x.c);
    let chunks = x.seq.div_ceil(crate::train::ledger::CHUNK);
    let bytes = x.bt * x.seq * u128::from(n.per_token)
        + x.bt * (chunks * u128::from(n.per_chunk) + u128::from(n.per_sequence))
        + u128::from(n.once);
    Term::of(&[(bytes, U::Bytes)])
}

/// LoRA on fused experts (peft's ParamWrapper): backward through a merged
/// weight makes its full-size gradient before reducing it to the adapters'
/// (down_proj first, the first the layer's backward meets).
fn merged_grad(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let a = &x.a;
    let (Some(moe), Some(lo)) = (x.c.spec.moe, x.lora) else {
        return;
    };
    let (e, h, mf) = (
        u128::from(a.experts),
        u128::from(a.hidden),
        u128::from(a.moe_ffn),
    );
    // transformers 4's per-expert linears merge nothing.
    let stacked = x.c.expert_linears.is_none();
    let merged = if !moe.peft_experts || !stacked || a.layer_kinds()[1].1 == 0 {
        0
    } else if lo.adapts(a.family.module(ModuleName::ExpertsDown)) {
        e * h * mf
    } else if lo.adapts(a.family.module(ModuleName::ExpertsGateUp)) {
        e * 2 * mf * h
    } else {
        0
    };
    put(
        T::MergedGrad,
        Term::of(&[(merged, U::Elements), (x.pb, U::BytesEach)]),
    );
}
