//! PyTorch's FSDP1 (`FullyShardedDataParallel`) and FSDP2 (`fully_shard`:
//! the same decoder-layer units and moments, the embedding and the tail as
//! units of their own, and buffers: [`fsdp2`]), as accelerate's FSDP
//! plugin and the Trainer set them up. FSDP1: full sharding, one flat
//! parameter per unit (each decoder layer; under LoRA, peft's wrap policy also makes
//! every adapter a unit; the root holds the embeddings, the final norm and
//! the head), each rank keeping its shard (the weights' terms are divided
//! by the GPUs as under ZeRO-3). What is gathered whole, and when, is
//! FSDP1's own: these terms replace ZeRO-3's "largest module".
//!
//! Source: torch 2.4 `distributed/fsdp/_runtime_utils.py`
//! (`_post_forward_reshard`: the root is not resharded after forward;
//! `_prefetch_handle` with `BACKWARD_PRE`; `_register_post_backward_hook`,
//! `_register_post_backward_reshard_only_hook`); accelerate 1.0.1's
//! plugin defaults; transformers 4.48 `trainer.py` (peft's
//! `fsdp_auto_wrap_policy`). Measured: `tests/fixtures/fsdp1_rows.jsonl`
//! (rank 0 of 2, fake process group; `scripts/measure/t4/NOTES.md`,
//! mechanism 10). Not modelled: the adapters' own units gathered while
//! they run (2 × 4 bytes per adapter parameter of one layer at a time).

use super::Inputs;
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::run::{Ckpt, Shard};

/// The parameters of the root unit (embeddings, final norm, head: what no
/// decoder layer holds) and of the largest decoder layer (of a hybrid, a
/// full-attention or a Gated DeltaNet layer, whichever is larger).
fn units(x: &Inputs) -> (u128, u128) {
    let a = &x.a;
    let layer = a.layer_params();
    let linear = a.linear_by_kind().map(u128::from);
    let in_layers: u128 = layer
        .iter()
        .zip(a.layer_kinds())
        .zip(linear)
        .map(|((p, (_, n)), lin)| p[0] * u128::from(n).saturating_sub(lin) + p[1] * lin)
        .sum();
    let largest = layer.iter().flatten().copied().max().unwrap_or(0);
    (x.stats.params.saturating_sub(in_layers), largest)
}

/// The FSDP terms (none under another sharding): FSDP1's units and
/// moments, which FSDP2 shares, then FSDP2's own buffers.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let par = &x.s.parallel;
    // FSDP2 always prefetches one unit in backward (no option).
    let prefetch = match par.shard {
        Shard::Generic | Shard::Deepspeed => return,
        Shard::Fsdp1 => par.backward_prefetch,
        Shard::Fsdp2 => true,
    };
    let (root, one) = units(x);
    let pb = x.plain_bytes();
    // FSDP1's root unit is gathered at the first forward and kept until the
    // end of backward (FSDP1 does not reshard the root after forward); so
    // is FSDP2's tail when it holds the tied embedding (`fsdp2`).
    let kept = match par.shard {
        Shard::Fsdp2 if !x.a.tied => 0,
        Shard::Generic | Shard::Fsdp1 | Shard::Fsdp2 | Shard::Deepspeed => root,
    };
    put(
        T::FsdpRoot,
        Term::of(&[(kept, U::Params), (pb, U::BytesEach)]),
    );
    // A decoder layer from its pre-forward (pre-backward) hook to its
    // post-forward (post-backward) reshard.
    put(
        T::FsdpLayer,
        Term::of(&[(one, U::Params), (pb, U::BytesEach)]),
    );
    // With BACKWARD_PRE the next layer (in backward order) is gathered
    // before the current one is freed: two at once in a layer's
    // backward, one already at the head's.
    if prefetch {
        put(
            T::FsdpPrefetch,
            Term::of(&[(one, U::Params), (pb, U::BytesEach)]),
        );
        // At the head's backward (the loss's gradients) the root's
        // pre-backward hook has gathered the last layer already, unless
        // reentrant checkpointing wraps the units (transformers ≤ 4.51):
        // their forward then runs without grad, so the root finds no unit
        // recorded next in backward order (as we read `_prefetch_handle`).
        // Measured: Mistral-7B LoRA 4.57.6 and 5.23.0 with and without
        // prefetch (436,224,000 bytes at the loss); Llama-3.1-8B and
        // Mistral-7B full fine-tuning on 4.48.1, reentrant (none) and not.
        // FSDP2 prefetches from the tail's pre-backward hook, which runs
        // once the logits' gradient is made: from the head's matmul on.
        let at = match par.shard {
            Shard::Fsdp2 => T::Fsdp2HeadPrefetch,
            Shard::Generic | Shard::Fsdp1 | Shard::Deepspeed => T::FsdpHeadPrefetch,
        };
        if !(x.ckpt == Ckpt::Reentrant && x.c.stack.ckpt_outside_fsdp_units) {
            put(at, Term::of(&[(one, U::Params), (pb, U::BytesEach)]));
        }
    }
    if x.lora.is_none() {
        // A trained unit's unsharded flat gradient, until its
        // reduce-scatter is issued (the shard it keeps is `Grads`).
        put(
            T::FsdpLayerGrad,
            Term::of(&[(one, U::Params), (x.grad_bytes, U::BytesEach)]),
        );
    }
    // Reentrant checkpointing that wraps the FSDP unit (transformers
    // ≤ 4.51) recomputes a frozen unit on detached inputs: its
    // post-backward hook (`register_multi_grad_hook`) keeps the input and
    // its gradient until the whole backward ends. At layer 0's backward
    // those of layers 2 to L−1 are kept besides the one flowing into it
    // (layer 1's, `GradHidden`). Measured: Mistral-7B LoRA, 4.48.1 vs
    // 4.57.6 (fsdp1_rows.jsonl), and a 3-layer allocation trace.
    if x.fsdp_keeps_inputs() {
        put(
            T::FsdpKeptGrads,
            x.per_token(&[
                (x.l.saturating_sub(2), U::Layers),
                (x.h, U::Elements),
                (x.act(), U::BytesEach),
            ]),
        );
    }
    if par.shard == Shard::Fsdp2 {
        fsdp2(x, (root, one), put);
    }
}

/// FSDP2 as accelerate 1.15's `fsdp2_prepare_model` wraps it: every
/// decoder layer a unit, then the input embedding (resharded after its
/// forward), the tail (final norm and head, with the embedding when tied;
/// not resharded after forward) and an empty root. An all-gather's output
/// outlives its copy-out until the next unit's copy-out in forward
/// (`wait_for_unshard`, `AllGatherState`; the root's post-forward frees
/// the last, after the loss); in backward it goes right after its
/// copy-out. A unit's reduce-scatter input is kept until the next
/// reduce-scatter (`reduce_scatter_states`), the last until backward ends.
/// The tail is resharded after its own backward, early in backward; the
/// embedding is gathered again for the last.
///
/// Source: torch 2.15 `distributed/fsdp/_fully_shard/_fsdp_param_group.py`
/// (`wait_for_unshard`, `post_backward`), `_fsdp_state.py`
/// (`_root_post_forward`, `_end_backward_iteration`); accelerate 1.15
/// `utils/fsdp_utils.py` (`fsdp2_prepare_model`); transformers 5.23
/// `trainer.py` (under FSDP2 peft's wrap policy is not installed: the
/// adapters stay in their layers' units). Measured:
/// `tests/fixtures/fsdp2_rows.jsonl` (rank 0 of 2, fake process group,
/// `scripts/measure/t4/fsdp2.py`).
fn fsdp2(x: &Inputs, (root, one): (u128, u128), put: &mut impl FnMut(T, Term)) {
    let (pb, gb) = (x.plain_bytes(), x.grad_bytes);
    let unit = |params: u128, bytes: u128| Term::of(&[(params, U::Params), (bytes, U::BytesEach)]);
    let tied = x.a.tied;
    // The embedding's own unit (none when tied: the tail holds it) and the
    // tail's parameters.
    let embed = if tied { 0 } else { u128::from(x.a.vocab) * x.h };
    let tail = root.saturating_sub(embed);
    // The first moment: the embedding gathered with its output buffer, then
    // layer 0's buffer beside the embedding's; the tied tail stays.
    let start = if tied {
        tail + one
    } else {
        embed + embed.max(one)
    };
    put(T::Fsdp2Start, unit(start, pb));
    put(T::Fsdp2Tail, unit(if tied { 0 } else { tail }, pb));
    put(T::Fsdp2Buffer, unit(one, pb));
    put(T::Fsdp2LossBuffer, unit(if tied { one } else { tail }, pb));
    put(T::Fsdp2EndUnit, unit(embed, pb));
    if x.lora.is_some() {
        // The adapters' gradients are a few MB per unit.
        return;
    }
    // The tail's reduce-scatter input is kept through the last layer's
    // backward (an untied head is the largest unit of most models).
    put(
        T::Fsdp2RsKept,
        unit(if tied { one } else { tail.max(one) }, gb),
    );
    put(T::Fsdp2RsLayer, unit(one, gb));
    put(T::Fsdp2RsInput, unit(one, gb));
    // The embedding's gradient as `embedding_dense_backward` makes it: the
    // whole vocabulary, under tensor parallelism too, where the unit's
    // gradient is this GPU's slice of it, a view FSDP2 copies into its
    // reduce-scatter input (measured at tp 2 × fsdp 2 on Qwen2.5-7B: the
    // whole 1.09 GB and the 0.55 GB slice at the end of backward).
    let end = if tied { root } else { embed };
    let sliced = x.s.parallel.tp.get() > 1;
    let end_grad = if tied {
        root
    } else {
        x.v * x.h + if sliced { embed } else { 0 }
    };
    put(T::Fsdp2EndGrads, unit(end_grad, gb));
    let rest = x.trainable.saturating_sub(end);
    put(T::Fsdp2GradsRest, unit(rest, gb).split(x.gpus, true));
    put(
        T::Fsdp2GradsDone,
        unit(rest.saturating_sub(2 * one), gb).split(x.gpus, true),
    );
}

impl Inputs<'_> {
    /// FSDP keeps every checkpointed layer input and its gradient to the
    /// end of backward: reentrant checkpointing wrapped around frozen units
    /// (LoRA), in a release before 4.52.
    pub fn fsdp_keeps_inputs(&self) -> bool {
        self.s.parallel.shard.fsdp()
            && self.ckpt == Ckpt::Reentrant
            && self.lora.is_some()
            && self.c.stack.ckpt_outside_fsdp_units
    }
}
