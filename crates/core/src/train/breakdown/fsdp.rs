//! PyTorch's FSDP1 (`FullyShardedDataParallel`), as accelerate's FSDP
//! plugin and the Trainer set it up: full sharding, one flat parameter per
//! unit (each decoder layer; under LoRA, peft's wrap policy also makes
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

/// The FSDP1 terms (none under another sharding).
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let par = &x.s.parallel;
    if par.shard != Shard::Fsdp1 {
        return;
    }
    let a = &x.a;
    let layer = a.layer_params();
    let kinds = a.layer_kinds();
    let in_layers: u128 = layer
        .iter()
        .zip(kinds)
        .map(|(p, (_, n))| p * u128::from(n))
        .sum();
    let root = x.stats.params.saturating_sub(in_layers);
    let one = layer[0].max(layer[1]);
    let pb = x.plain_bytes();
    // The root unit is gathered at the first forward and kept until the
    // end of backward (FSDP1 does not reshard the root after forward).
    put(
        T::FsdpRoot,
        Term::of(&[(root, U::Params), (pb, U::BytesEach)]),
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
    if par.backward_prefetch {
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
        if !(x.ckpt == Ckpt::Reentrant && x.c.stack.ckpt_outside_fsdp_units) {
            put(
                T::FsdpHeadPrefetch,
                Term::of(&[(one, U::Params), (pb, U::BytesEach)]),
            );
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
}

impl Inputs<'_> {
    /// FSDP1 keeps every checkpointed layer input and its gradient to the
    /// end of backward: reentrant checkpointing wrapped around frozen
    /// units (LoRA), in a release before 4.52.
    pub fn fsdp_keeps_inputs(&self) -> bool {
        self.s.parallel.shard == Shard::Fsdp1
            && self.ckpt == Ckpt::Reentrant
            && self.lora.is_some()
            && self.c.stack.ckpt_outside_fsdp_units
    }
}
