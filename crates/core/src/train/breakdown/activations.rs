//! Activations: what each layer saves for backward (from the ledger), or
//! under checkpointing each layer's input; the sliding-window masks; the
//! router logits of the auxiliary loss; the embedding and head, the
//! position tables, the inputs and labels.

use super::{Inputs, Layers};
use crate::inputs::Attn;
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::ledger::Saved;
use crate::train::run::Ckpt;
use crate::train::stack::Loss;

/// The activation terms.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    if x.ckpt.on() {
        checkpointed(x, put);
    } else {
        saved(x, put);
        put(T::SlidingMasks, sliding_masks(x, x.mask_layers()));
        let by_class = x.a.family.spec().varies_by_layer();
        let masked = x.layers.masked_kv_bytes(x.mask_layers(), by_class);
        put(T::MaskedKv, x.per_token(&[(masked, U::BytesEach)]));
    }
    aux_loss(x, put);
    outer(x, put);
    causal_masks(x, put);
    put(T::PerLayerInputsGrad, per_layer_inputs_grad(x));
}

/// Gemma 4's per-layer inputs' gradient: each layer's backward adds its
/// slice's (`select_backward`, a whole tensor) to one buffer of
/// `layers × p` a token, alive from the last layer's backward to the
/// embedding's, when the inputs need a gradient (their projection or
/// table trains).
fn per_layer_inputs_grad(x: &Inputs) -> Term {
    let a = x.a;
    if !x.layers.outer.ple_grad {
        return Term::ZERO;
    }
    let width = u128::from(a.layers) * u128::from(a.ple_dim);
    x.per_token(&[(width, U::Elements), (x.residual(), U::BytesEach)])
}

/// Non-reentrant checkpointing keeps each layer's input; everything inside
/// is dropped, including the layer's saved weight copies (still cached by
/// autocast until it exits). Reentrant checkpointing runs the forward
/// without grad: nothing is held; then the recomputed layer's output lives
/// through its backward (measured in quant_rows.jsonl: T·h·stream bytes).
fn checkpointed(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let (h, res) = (x.h, x.residual());
    let ckpt = x.ckpt;
    // Layer 0's input is the embeddings: where the embedding's side saves
    // them (Gemma 4's per-layer inputs), counted there.
    let shared = u128::from(x.layers.outer.embeddings_saved);
    put(
        T::CkptInputs,
        x.per_token(&[
            (x.l - shared, U::Layers),
            (h, U::Elements),
            (res, U::BytesEach),
        ]),
    );
    put(
        T::CkptSharedKv,
        x.per_token(&[(x.shared_kv(), U::BytesEach)]),
    );
    put(
        T::CkptRetainedKv,
        x.per_token(&[(x.layers.kv_retained, U::BytesEach)]),
    );
    // By layer 0's backward every later layer's backward has run and
    // released its checkpoint: one input is left (offloaded, it is the one
    // in flight); FSDP1's hooks keep them all in one case (`fsdp.rs`).
    if ckpt != Ckpt::Offload {
        let left = if x.fsdp_keeps_inputs() {
            x.l
        } else {
            1 - shared
        };
        put(
            T::CkptInputFirst,
            x.per_token(&[(left, U::Layers), (h, U::Elements), (res, U::BytesEach)]),
        );
    }
    if ckpt == Ckpt::Reentrant {
        put(
            T::RecomputeOutput,
            x.per_token(&[(h, U::Elements), (res, U::BytesEach)]),
        );
    } else {
        let first = &x.layers.ledgers[x.layers.first_kind].0;
        put(
            T::QuantInputs,
            x.per_token(&[(x.l, U::Layers), (u128::from(first.escaping), U::BytesEach)]),
        );
        put(
            T::QuantInputsFirst,
            x.per_token(&[(u128::from(first.escaping), U::BytesEach)]),
        );
    }
    if ckpt == Ckpt::Offload {
        // `save_on_cpu`: each kept input is copied to host memory when
        // saved and back when backward needs it, one at a time.
        // Source: torch.autograd.graph.save_on_cpu (PyTorch 2.x).
        put(
            T::CkptInFlight,
            x.per_token(&[(h, U::Elements), (res, U::BytesEach)]),
        );
    }
}

/// What every layer saves, by kind, and layer 0 apart when it differs.
fn saved(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let key = |s: &Saved| u128::from(s.per_token_key);
    let tok = |s: &Saved| u128::from(s.token_bytes());
    let ly = &x.layers;
    if ly.layer0_differs {
        put(
            T::LayerFirst,
            x.per_token(&[(tok(&ly.layer0), U::BytesEach)]),
        );
        put(
            T::ScoresFirst,
            x.per_token(&[(x.seq, U::KeyPositions), (key(&ly.layer0), U::BytesEach)]),
        );
        if Layers::linear(ly.first_kind) {
            put(T::LinearSequencesFirst, recurrent(x, &ly.layer0, 1));
        }
    }
    let attention = [(T::Layers, T::Scores), (T::MoeLayers, T::MoeScores)];
    for (k, (ids, scores)) in attention.into_iter().enumerate() {
        let (s, n) = ly.group(k);
        put(ids, x.per_token(&[(n, U::Layers), (tok(s), U::BytesEach)]));
        put(
            scores,
            x.per_token(&[
                (n, U::Layers),
                (x.seq, U::KeyPositions),
                (key(s), U::BytesEach),
            ]),
        );
    }
    // Gemma 4's global layers and its layers reusing keys and values, by
    // class: a model's are all dense or all MoE (its experts are in every
    // layer or none); were both there, their bytes would add.
    let classes = [
        (4, T::GlobalLayers, T::GlobalScores),
        (6, T::SharedLayers, T::SharedScores),
        (8, T::SharedGlobalLayers, T::SharedGlobalScores),
    ];
    for (k, ids, scores) in classes {
        let ((s, n), (moe, m)) = (ly.group(k), ly.group(k + 1));
        let (saved, keyed) = if n > 0 && m > 0 {
            let (t, q) = (n * tok(s) + m * tok(moe), n * key(s) + m * key(moe));
            (
                x.per_token(&[(t, U::BytesEach)]),
                x.per_token(&[(x.seq, U::KeyPositions), (q, U::BytesEach)]),
            )
        } else {
            let (s, n) = if n == 0 { (moe, m) } else { (s, n) };
            (
                x.per_token(&[(n, U::Layers), (tok(s), U::BytesEach)]),
                x.per_token(&[
                    (n, U::Layers),
                    (x.seq, U::KeyPositions),
                    (key(s), U::BytesEach),
                ]),
            )
        };
        put(ids, saved);
        put(scores, keyed);
    }
    // The recurrent layers, dense and MoE (LFM2-MoE has both; a Gated
    // DeltaNet model one kind).
    let ((s, n), (moe, m)) = (ly.group(2), ly.group(3));
    if n > 0 && m > 0 {
        let t = n * tok(s) + m * tok(moe);
        put(T::LinearLayers, x.per_token(&[(t, U::BytesEach)]));
        let per = |s: &Saved| x.bt * s.sequence_bytes(x.seq) + u128::from(s.per_layer);
        let bytes = n * per(s) + m * per(moe);
        put(T::LinearSequences, Term::of(&[(bytes, U::Bytes)]));
    } else if let Some((s, n)) = [(s, n), (moe, m)].into_iter().find(|(_, n)| *n > 0) {
        put(
            T::LinearLayers,
            x.per_token(&[(n, U::Layers), (tok(s), U::BytesEach)]),
        );
        put(T::LinearSequences, recurrent(x, s, n));
    }
}

/// What `layers` Gated DeltaNet layers keep beyond their per-token
/// tensors: per sequence (the chunks of its padded length and the
/// convolution's extra steps) and once per layer.
pub(super) fn recurrent(x: &Inputs, s: &Saved, layers: u128) -> Term {
    let bytes = x.bt * s.sequence_bytes(x.seq) + u128::from(s.per_layer);
    Term::of(&[(layers, U::Layers), (bytes, U::Bytes)])
}

impl Inputs<'_> {
    /// Sliding-window layers whose SDPA keeps a mask: once the sequence
    /// reaches the window, transformers passes a mask instead of
    /// `is_causal`, and each such layer's SDPA keeps its own copy in the
    /// compute dtype (b × s²).
    ///
    /// Source: masking_utils `_ignore_causal_mask_sdpa` (transformers
    /// 5.23); measured on Gemma 3 (30 B × b × s² for 15 sliding layers in
    /// bf16).
    pub fn mask_layers(&self) -> u128 {
        if self.window_masked() && !self.c.stack.mask_in_model_dtype {
            u128::from(self.geometry.sliding_layers)
        } else {
            0
        }
    }

    /// Bytes per token of the keys and values Gemma 4's layers reusing
    /// them read (the last earlier layer of each kind they are, its
    /// rotated keys and normed values): under checkpointing the reusing
    /// layers' checkpoints keep them (`shared_kv_states`, passed to every
    /// layer) until their backward; without it the storing layer's
    /// attention saves them (counted in its layer).
    pub fn shared_kv(&self) -> u128 {
        let a = self.a;
        let ab = u128::from(self.c.mode.act());
        a.kv_store_layers()
            .into_iter()
            .flatten()
            .map(|l| {
                let heads = a.attention_at(l);
                2 * u128::from(heads.kv_heads) * u128::from(heads.head_dim) * ab
            })
            .sum()
    }

    /// SDPA gets a mask: the sliding window is reached.
    pub fn window_masked(&self) -> bool {
        let g = &self.geometry;
        self.s.train.attn == Attn::Sdpa
            && g.window > 0
            && u128::from(self.s.train.seq.get()) >= u128::from(g.window)
    }
}

/// The causal masks a forward builds once and every layer reads: under
/// SDPA once the window is reached, transformers 5's boolean `(1, 1, S,
/// S)` (`masking_utils.sdpa_mask`, the batch an expanded view), 4.48's
/// `(S, S)` in the model's dtype (`_prepare_4d_causal_attention_mask`);
/// under eager attention an additive `(B, 1, S, S)` in the model's dtype
/// per kind of layer (full, sliding: `masking_utils.eager_mask`). They
/// live through backward when the layers keep them (checkpointing keeps
/// its arguments; 4.48's SDPA saves its float mask), else through forward
/// only. Measured: long_rows.jsonl (Mistral, Gemma 3, Phi-3-mini
/// checkpointed: S² bytes; Gemma 2 eager checkpointed: 2 · B · S² · dtype;
/// `scripts/measure/long/NOTES.md` §4.1, §4.3) and t4_rows.jsonl (4.48
/// SDPA − flash-attn: S² · 2).
fn causal_masks(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let g = &x.geometry;
    let s2 = x.seq * x.seq;
    let pb = x.plain_bytes();
    let (bytes, through_backward) = match x.s.train.attn {
        Attn::Sdpa if x.window_masked() => {
            if x.c.stack.mask_in_model_dtype {
                (s2 * pb, true)
            } else {
                (s2, x.ckpt.on())
            }
        }
        Attn::Eager => {
            let kinds = if g.window > 0 && g.sliding_layers > 0 {
                2
            } else {
                1
            };
            (kinds * x.bt * s2 * pb, x.ckpt.on())
        }
        Attn::Sdpa | Attn::FlashAttention2 => (0, false),
    };
    let id = if through_backward {
        T::CausalMasks
    } else {
        T::CausalMasksForward
    };
    put(id, Term::of(&[(bytes, U::Bytes)]));
}

/// `layers` sliding-window masks of b × s² in the compute dtype.
pub(super) fn sliding_masks(x: &Inputs, layers: u128) -> Term {
    x.per_token(&[
        (layers, U::Layers),
        (x.seq, U::KeyPositions),
        (x.act(), U::BytesEach),
    ])
}

/// The load-balancing loss (`output_router_logits`): the model's output
/// keeps every MoE layer's router logits (tokens × experts, in the
/// router's dtype) until the loss is done with them, through backward.
///
/// Source: transformers 5.23 `load_balancing_loss_func` and
/// `MoeCausalLMOutputWithPast.router_logits`; measured on tiny Mixtral and
/// Qwen3-MoE configs (bf16, amp, fp32: L·B·S·E·bytes, plus 4·E bytes of
/// per-expert fp32 means left out here).
fn aux_loss(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    if x.s.train.aux_loss {
        put(
            T::RouterLogits,
            x.per_token(&[
                (u128::from(x.a.layer_kinds()[1].1), U::Layers),
                (u128::from(x.a.experts), U::Experts),
                (x.act(), U::BytesEach),
            ]),
        );
    }
}

/// The embedding's and the final norm's and head's saved tensors; the
/// position tables; the
/// token ids and labels; and while the loss is computed, the labels padded
/// by one position and the last hidden state when nothing saved it.
fn outer(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let o = &x.layers.outer;
    put(
        T::Outer,
        x.per_token(&[(
            u128::from(o.saved.token_bytes() - o.embedding),
            U::BytesEach,
        )]),
    );
    put(
        T::OuterEmbedding,
        x.per_token(&[(u128::from(o.embedding), U::BytesEach)]),
    );
    put(
        T::PositionTables,
        Term::of(&[(x.seq, U::Seq), (u128::from(o.per_position), U::BytesEach)]),
    );
    put(T::Inputs, x.per_token(&[(16, U::BytesEach)]));
    let shifted =
        x.c.stack.loss == Loss::Shifted || (x.c.spec.legacy.own_loss && x.c.stack.own_loss);
    if shifted {
        // `labels[..., 1:].contiguous()`: a copy unless the batch is one
        // sequence (transformers 4.46 to 4.48).
        let copy = if x.bt > 1 { 8 } else { 0 };
        put(
            T::Labels,
            Term::of(&[
                (x.bt, U::Batch),
                (x.seq.saturating_sub(1), U::Seq),
                (copy, U::BytesEach),
            ]),
        );
    } else {
        put(T::Labels, x.per_token(&[(8, U::BytesEach)]));
        put(
            T::PaddedLabels,
            Term::of(&[(x.bt, U::Batch), (x.seq + 1, U::Seq), (8, U::BytesEach)]),
        );
    }
    cache_presents(x, put);
    put(
        T::LastHidden,
        x.per_token(&[(u128::from(o.final_hidden_transient), U::BytesEach)]),
    );
}

/// A family that keeps its key/value cache under checkpointing in this
/// release, with `use_cache` on: every layer's cache is a view of its
/// fused `c_attn` output (h + 2 × kv width per token), returned with the
/// outputs and kept until the output object is dropped after the loss.
///
/// Source: transformers 4.48.1 `GPTBigCodeModel.forward` (`presents`) and
/// `GPTBigCodeAttention.forward`; measured: starcoderbase-1b b4s2048 with
/// and without `use_cache` (t4_rows.jsonl): 905,969,664 bytes =
/// 24 · 4 · 2048 · 2304 · 2 at the forward peak.
fn cache_presents(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let t = &x.s.train;
    if x.c.spec.legacy.cache_under_ckpt && x.c.stack.cache_under_ckpt && t.use_cache && x.ckpt.on()
    {
        let g = &x.geometry;
        put(
            T::CachePresents,
            x.per_token(&[
                (x.l, U::Layers),
                (
                    u128::from(g.q_width() + g.k_width() + g.v_width()),
                    U::Elements,
                ),
                (x.act(), U::BytesEach),
            ]),
        );
    }
}
