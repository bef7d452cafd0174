//! The software stack a run is trained with, described once as data
//! ([`StackSpec`]): which transformers release, which trainer. Every rule
//! that depends on the release is a field here, read where the mechanism
//! is; a family whose own modeling code differed in transformers 4 says so
//! in its [`crate::model::family::Legacy`].
//!
//! Sources: the released wheels of transformers 4.45.2 to 5.0.0 and the
//! installed 4.48.1, 4.57.6 and 5.23.0 (`scripts/measure/t4/NOTES.md`
//! gives file and line for each rule); measured in
//! `tests/fixtures/t4_rows.jsonl` and `fsdp1_rows.jsonl`.

use crate::choice::choice_enum;

choice_enum! {
    /// The transformers release, by what a training step keeps in memory:
    /// releases that keep the same are one value.
    pub enum Transformers {
        /// 5.0 and later (measured: 5.23.0 on torch 2.15).
        V5 = "5", "5.x",
        /// 4.54 to 4.57.x, the last 4.x (measured: 4.57.6 on torch 2.4.1;
        /// SDPA's grouped keys as with torch 2.5 or later).
        V457 = "4.57", "4.54 to 4.57 (the last 4.x)",
        /// 4.46 to 4.48.x (measured: 4.48.1 on torch 2.4.1). GPTBigCode's
        /// own loss is 4.48.0 to 4.48.2's.
        V448 = "4.48", "4.46 to 4.48",
    }
}

choice_enum! {
    /// The training loop.
    pub enum Trainer {
        /// transformers' `Trainer` (or a loop that does what it does).
        Hf = "hf", "Hugging Face Trainer",
        /// TRL's `SFTTrainer` (0.13): as the Trainer, but a 4-bit model's
        /// embeddings and head go back to bf16 after
        /// `prepare_model_for_kbit_training` when training in bf16.
        Trl = "trl", "TRL SFTTrainer",
    }
}

/// How the causal-LM loss copies the logits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// 4.46 to 4.48 (`loss_utils.ForCausalLMLoss`): `logits.float()`, then
    /// a contiguous copy of all but the last position
    /// (`shift_logits = logits[..., :-1, :].contiguous()`, a view for a
    /// batch of one), then cross-entropy over it; backward pads the
    /// gradient back (`slice_backward`).
    Shifted,
    /// 4.49 and later: `logits.float()`, the labels padded by one position
    /// and shifted instead (`nn.functional.pad`), no copy of the logits.
    PaddedLabels,
}

/// What a release does that the memory of a step depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackSpec {
    pub loss: Loss,
    /// Families whose modeling code computes its own loss in this release
    /// do ([`crate::model::family::Legacy::own_loss`]).
    pub own_loss: bool,
    /// Families that keep their key/value cache under checkpointing in
    /// this release do ([`crate::model::family::Legacy::cache_under_ckpt`]).
    pub cache_under_ckpt: bool,
    /// Families whose layers ignore checkpointing in this release do
    /// ([`crate::model::family::Legacy::ckpt_ignored`]).
    pub ckpt_ignored: bool,
    /// Families whose keys and values pass through the cache's
    /// concatenation with `use_cache` on and no checkpointing do
    /// ([`crate::model::family::Spec::cache_copies`]).
    pub cache_copies: bool,
    /// `gradient_checkpointing_enable()` without arguments is reentrant
    /// (`{"use_reentrant": True}` in every 4.x; non-reentrant from 5.0).
    pub default_reentrant: bool,
    /// `gradient_checkpointing_enable()` makes the embedding's output
    /// require a gradient for every model (5.x `enable_input_require_grads`
    /// when the input is `input_ids`; 4.x only for an adapter transformers
    /// loaded): layer 0 then saves what every layer does.
    pub ckpt_input_grads: bool,
    /// SDPA repeats grouped keys and values to every head (`repeat_kv`)
    /// and keeps the query's contiguous copy: before 4.54's
    /// `use_gqa_in_sdpa` (`enable_gqa`, with torch 2.5 or later).
    pub sdpa_repeats_kv: bool,
    /// The sliding-window or causal mask SDPA gets once the sequence
    /// reaches the window is one (S, S) tensor in the model's dtype, alive
    /// through the step (4.48's `_prepare_4d_causal_attention_mask`), not
    /// 5.x's boolean mask.
    pub mask_in_model_dtype: bool,
    /// A mixture of experts' experts are `nn.Linear` modules (4.x): LoRA
    /// adapts them as linear layers, bitsandbytes quantizes them.
    pub experts_linear: bool,
    /// Under FSDP1, reentrant checkpointing wraps the FSDP unit instead of
    /// running inside it (before 4.52's `GradientCheckpointingLayer`):
    /// frozen units keep every layer's input and its gradient until
    /// backward ends.
    pub ckpt_outside_fsdp_units: bool,
    /// The torch the release was measured with: its cuBLAS workspaces.
    pub blas: Blas,
}

pub use crate::cublas::Blas;
use crate::cublas::{TORCH_2_15, TORCH_2_4};

impl Transformers {
    /// The release's description.
    pub const fn spec(self) -> StackSpec {
        match self {
            Transformers::V5 => StackSpec {
                loss: Loss::PaddedLabels,
                own_loss: false,
                cache_under_ckpt: false,
                ckpt_ignored: false,
                cache_copies: true,
                default_reentrant: false,
                ckpt_input_grads: true,
                sdpa_repeats_kv: false,
                mask_in_model_dtype: false,
                experts_linear: false,
                ckpt_outside_fsdp_units: false,
                blas: TORCH_2_15,
            },
            Transformers::V457 => StackSpec {
                ckpt_ignored: true,
                blas: TORCH_2_4,
                default_reentrant: true,
                ckpt_input_grads: false,
                experts_linear: true,
                ..Transformers::V5.spec()
            },
            Transformers::V448 => StackSpec {
                loss: Loss::Shifted,
                own_loss: true,
                cache_under_ckpt: true,
                ckpt_ignored: false,
                cache_copies: false,
                default_reentrant: true,
                ckpt_input_grads: false,
                sdpa_repeats_kv: true,
                mask_in_model_dtype: true,
                experts_linear: true,
                ckpt_outside_fsdp_units: true,
                blas: TORCH_2_4,
            },
        }
    }
}

impl Trainer {
    /// After `prepare_model_for_kbit_training` upcast a 4-bit model's
    /// unquantized weights to fp32, the embeddings and the head go back to
    /// bf16 when training in bf16 (norms stay fp32).
    ///
    /// Source: TRL 0.13 `SFTTrainer.__init__` → `peft_module_casting_to_bf16`
    /// (`trl/trainer/utils.py` l.872–879: `lm_head`, `embed_tokens`, `wte`,
    /// `wpe`); measured: Mistral-7B cut to 2 layers, nf4, 4.48.1
    /// (t4_rows.jsonl): 2 · 32000 · 4096 · 2 bytes less from init on.
    pub const fn recasts_embeddings(self) -> bool {
        match self {
            Trainer::Trl => true,
            Trainer::Hf => false,
        }
    }
}
