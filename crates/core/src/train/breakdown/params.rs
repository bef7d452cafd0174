//! Parameters: the weights (a quantized base's packed weights and their
//! constants), the buffers, LoRA's adapters, the transient dequantized and
//! DoRA weights, and under ZeRO-3 the module gathered whole.

use super::Inputs;
use crate::model::{Architecture, FormatOptions, Holder, WeightFormat};
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::ledger::{self, Ctx, Mode};
use crate::train::run::{Dtype, Quant, Shard, Training};

/// The parameter terms.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let t = &x.s.train;
    let (a, q, pb, gpus) = (&x.a, &x.q, x.pb, x.gpus);
    let on3 = x.zero >= 3;
    let plain_bytes = x.plain_bytes();
    let recast = x.recast_elems();
    put(
        T::Weights,
        Term::of(&[
            (x.stats.params - q.elems - recast, U::Params),
            (plain_bytes, U::BytesEach),
        ])
        .split(gpus, on3),
    );
    put(
        T::WeightsRecast,
        Term::of(&[(recast, U::Params), (2, U::BytesEach)]).split(gpus, on3),
    );
    put(
        T::QuantWeights,
        Term::of(&[(q.packed, U::Bytes)]).split(gpus, on3),
    );
    put(
        T::QuantState,
        Term::of(&[(q.state, U::Bytes)]).split(gpus, on3),
    );
    put(
        T::Dequantized,
        Term::of(&[(q.largest, U::Elements), (q.dequant_bytes, U::BytesEach)]),
    );
    // Under autocast, beside it the matmul's incoming gradient in the
    // compute dtype and the input's gradient it makes (bf16 `grad_output @
    // dequantized`; without autocast the product runs in the stream's
    // dtype over the saved tensors' own: measured none). Measured:
    // Mistral-7B cut to 2 layers, nf4, 5.23.0, bf16 autocast
    // (t4_rows.jsonl): down_proj's (14336 + 4096) per token in bf16.
    if x.c.mode == Mode::Amp {
        put(
            T::DequantizedIo,
            x.per_token(&[(q.largest_io, U::Elements), (q.compute, U::BytesEach)]),
        );
    }
    // DoRA's per-layer transient (see `ledger::Ledger::dora`), the largest
    // of the layer kinds'.
    put(
        T::DoraTransient,
        Term::of(&[(kinds_transient(&x.c, a), U::Bytes)]),
    );
    // In forward, 4-bit weights are dequantized to the compute dtype (the
    // CUDA fallback past the fused kernel's few tokens, as on the CPU);
    // LLM.int8 on CUDA multiplies in int8 (`MatMul8bitLt`: no dequantized
    // weight), on the CPU dequantizes to the input's dtype (`MatMul8bitFp`).
    put(
        T::DequantizedFwd,
        Term::of(&[
            (if q.int8_cuda { 0 } else { q.largest }, U::Elements),
            (q.compute, U::BytesEach),
        ]),
    );
    // FSDP1 flattens parameters only: every rank keeps whole buffers.
    put(
        T::Buffers,
        Term::of(&[(u128::from(a.buffer_bytes(t.dtype.param_bytes())), U::Bytes)])
            .split(gpus, on3 && x.s.parallel.shard == Shard::Generic),
    );
    put(
        T::LoraAdapters,
        Term::of(&[(x.lc.params, U::Params), (4, U::BytesEach)]).split(gpus, on3),
    );
    if on3 && x.s.parallel.shard == Shard::Generic {
        // The largest module is gathered whole, with its gradient (FSDP1
        // gathers its own units: `fsdp.rs`).
        put(
            T::ZeroGathered,
            Term::of(&[
                (x.stats.largest_module, U::Params),
                (pb + x.grad_bytes, U::BytesEach),
            ]),
        );
    }
}

/// DoRA's largest per-layer transient over the layer kinds (0 without
/// DoRA).
fn kinds_transient(c: &Ctx, a: &Architecture) -> u128 {
    if !c.dora {
        return 0;
    }
    a.layer_kinds()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, _)| {
            u128::from(ledger::layer(c, kind, ledger::Mixer::Attention, true).dora_transient)
        })
        .max()
        .unwrap_or(0)
}
/// A quantized base's linear weights (bitsandbytes): what they hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Quantized {
    /// Weight elements quantized.
    pub elems: u128,
    /// Their packed bytes.
    pub packed: u128,
    /// Quantization constants, bytes.
    pub state: u128,
    /// Elements of the largest quantized weight.
    pub largest: u128,
    /// Its input and output widths together.
    pub largest_io: u128,
    /// Bytes per element of its dequantized copies (both, in backward,
    /// when the load and compute dtypes differ).
    pub dequant_bytes: u128,
    /// Bytes per element of the compute dtype.
    pub compute: u128,
    /// LLM.int8 on CUDA's kernels, which multiply in int8 (no dequantized
    /// weight in forward).
    pub int8_cuda: bool,
}

/// The base's linear layers under bitsandbytes: each decoder layer's
/// `nn.Linear` weights (not the embedding, the output head, norms or
/// biases, which transformers leaves unquantized).
///
/// Source: bitsandbytes 0.50 `nn/modules.py` (`Params4bit`, `Int8Params`),
/// `functional.py` (`quantize_4bit`: blocks of 64, fp32 absmax; double
/// quantization: absmax as uint8 in blocks of 256 with an fp32 nested
/// absmax, an fp32 offset and a 256-entry fp32 code per weight; the 4-bit
/// code table, 16 fp32), transformers' `quantizers/base.py` (what is left
/// unquantized); measured in `tests/fixtures/quant_rows.jsonl` (static
/// bytes exact). The dequantized copy exists only around its matmul: in
/// the compute dtype (4-bit), or, for int8's backward, in the stream's
/// dtype (`CB.to(A.dtype)`).
pub(super) fn quantized(a: &Architecture, t: &Training) -> Quantized {
    let four_bit = match t.quant {
        Quant::None => return Quantized::default(),
        Quant::Nf4 | Quant::Fp4 => true,
        Quant::Int8 => false,
    };
    // The compute dtype (bnb_4bit_compute_dtype) and the load dtype the
    // weights were quantized from: backward dequantizes in the load dtype,
    // then casts to the compute dtype, both alive at once when they differ
    // (`MatMul4Bit.backward`: `dequantize_4bit(B).to(grad.dtype)`).
    let compute = if t.compute_fp32 || t.dtype == Dtype::Fp32 {
        4
    } else {
        2
    };
    let load = if t.dtype == Dtype::Fp32 { 4 } else { 2 };
    let mut q = Quantized {
        compute: if four_bit {
            compute
        } else {
            u128::from(Mode::of_run(t).residual())
        },
        dequant_bytes: if four_bit {
            if compute == load {
                compute
            } else {
                compute + load
            }
        } else {
            u128::from(Mode::of_run(t).residual())
        },
        int8_cuda: t.quant == Quant::Int8 && t.cuda_like,
        ..Quantized::default()
    };
    let format = match t.quant {
        Quant::Nf4 => WeightFormat::Nf4,
        Quant::Fp4 => WeightFormat::Fp4,
        Quant::Int8 | Quant::None => WeightFormat::Int8,
    };
    let opts = FormatOptions {
        double_quant: t.double_quant,
        ..FormatOptions::default()
    };
    // transformers 4's experts are `nn.Linear`s bitsandbytes quantizes; 5's
    // stacked 3-D parameters it leaves alone.
    let held = a.quantized_linears(format, opts, Holder::Checkpoint, t.expert_layout());
    q.elems = held.elems;
    q.packed = held.packed;
    q.state = held.state;
    q.largest = held.largest;
    q.largest_io = held.largest_io;
    q
}

impl Inputs<'_> {
    /// Elements of the embeddings and the head that TRL puts back in bf16
    /// after k-bit preparation ([`crate::train::stack::Trainer::recasts_embeddings`]),
    /// when training a prepared 4-bit or 8-bit base under bf16 autocast.
    pub fn recast_elems(&self) -> u128 {
        if self.s.train.recasts_embeddings() {
            let head = if self.a.tied {
                0
            } else {
                u128::from(self.a.vocab) * u128::from(self.a.hidden)
            };
            self.stats.embedding + head
        } else {
            0
        }
    }
}
