//! LoRA as peft configures it: which modules get adapters ([`Targets`],
//! peft's `target_modules`) and what the adapters add ([`lora_count`]).

use super::run::Lora;
use crate::model::{Architecture, ExpertLayout};

/// The adapters LoRA adds, counted from the parameter tensors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoraCount {
    /// Adapter parameters: r × (in + out) per adapted module.
    pub params: u128,
    /// Adapter tensors: A and B per adapted module.
    pub tensors: u128,
    /// Elements of the largest adapter (r × max(in, out)).
    pub largest: u128,
    /// Adafactor's factored elements: (r + in) + (out + r) per module.
    pub factored: u128,
}

/// Counts LoRA's adapters on `a`.
///
/// Source: peft 0.21 `LoraLayer.update_layer`: `lora_A = nn.Linear(in, r)`,
/// `lora_B = nn.Linear(r, out)`, both without bias; `ParamWrapper` (a 3-D
/// experts parameter) the same with `r × experts` (see
/// [`ParamTensor::lora_rank`]); transformers 4's per-expert linears one
/// pair each (measured: shrunk Mixtral on 4.48.1 and 4.57.6, `n_trainable`
/// in t4_rows.jsonl).
pub fn lora_count(a: &Architecture, lora: &Lora, experts: ExpertLayout) -> LoraCount {
    let mut c = LoraCount::default();
    a.for_each_tensor_as(experts, |at, t| {
        if t.module().is_some_and(|m| lora.adapts(m)) {
            let (i, o) = (u128::from(t.cols), u128::from(t.rows));
            let r = t.lora_rank(lora.r);
            // Each module of the entry (each expert's, per-expert linears).
            let n = at.copies() * t.modules();
            c.params += at.copies() * t.lora_params(lora.r);
            c.tensors += 2 * n;
            c.largest = c.largest.max(r * i.max(o));
            c.factored += n * (i + o + 2 * r);
            if lora.dora {
                // DoRA's magnitude: one fp32 vector of the output width
                // (`lora_magnitude_vector`).
                c.params += n * o;
                c.tensors += n;
                c.factored += n * o;
            }
        }
    });
    c
}
