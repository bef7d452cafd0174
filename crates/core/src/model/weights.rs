//! Weight formats: how a checkpoint stores a model's linear weights, and
//! what a loaded model holds of them, described once (packed weights,
//! scales, zeros, the tensors each format leaves unquantized). Training's
//! quantized bases and inference's `weights` both read it.

use super::arch::Architecture;
use super::tensors::{ExpertLayout, Place, Role};
use crate::choice::choice_enum;

choice_enum! {
    /// A format of the weights.
    pub enum WeightFormat {
        /// bfloat16 (what most checkpoints hold).
        Bf16 = "bf16", "bf16",
        /// float16.
        Fp16 = "fp16", "fp16",
        /// float32.
        Fp32 = "fp32", "fp32",
        /// float8 (e4m3) linear weights with an fp32 scale per 128 × 128
        /// block (`quant_method: fp8`, `weight_block_size: [128, 128]`: the
        /// Qwen3 and DeepSeek FP8 checkpoints).
        Fp8 = "fp8", "fp8 (128 × 128 block scales)",
        /// bitsandbytes LLM.int8(): int8 weights, an fp32 scale per row.
        Int8 = "int8", "int8 (bitsandbytes)",
        /// bitsandbytes 4-bit NormalFloat, blocks of 64.
        Nf4 = "nf4", "nf4 (bitsandbytes 4-bit)",
        /// bitsandbytes 4-bit float, blocks of 64.
        Fp4 = "fp4", "fp4 (bitsandbytes 4-bit)",
        /// GPTQ 4-bit: packed int32 weights, int32 zeros and fp16 scales per
        /// group, a group index per input.
        Gptq = "gptq", "GPTQ 4-bit",
        /// AWQ 4-bit (GEMM layout): packed int32 weights, zeros and fp16
        /// scales per group.
        Awq = "awq", "AWQ 4-bit",
        /// MXFP4, gpt-oss's own checkpoint format: the routed experts' 4-bit
        /// e2m1 values packed two per byte with an e8m0 scale byte per 32
        /// inputs; attention, embeddings, the head and the router stay 16-bit
        /// (`quant_method: mxfp4`).
        Mxfp4 = "mxfp4", "MXFP4 experts (gpt-oss)",
        /// compressed-tensors W8A8 int8 (llm-compressor's `W8A8`): int8
        /// weights with a scale per output channel, activations quantized per
        /// token at run time.
        W8a8 = "w8a8", "W8A8 int8 (compressed-tensors)",
        /// compressed-tensors fp8 (llm-compressor's `FP8_DYNAMIC`): float8
        /// e4m3 weights with a scale per output channel, activations
        /// quantized per token at run time.
        Fp8Dynamic = "fp8_dynamic", "fp8 per channel (FP8_DYNAMIC)",
    }
}

/// Who holds the weights: the layout a loader leaves them in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    /// The checkpoint's own tensors (transformers keeps them as stored).
    Checkpoint,
    /// vLLM's layout: fp8 scales always fp32; GPTQ repacked for Marlin
    /// without zeros or group index.
    Vllm,
}

/// The options a format takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatOptions {
    /// bitsandbytes' nested quantization of the 4-bit blocks' absmax.
    pub double_quant: bool,
    /// GPTQ / AWQ group size (0: one group over the whole input).
    pub group: u32,
    /// fp8's scale block, rows and columns alike: the checkpoint's
    /// `weight_block_size` (128), or the finer grid vLLM refines a
    /// mixture's experts to when tensor parallelism cuts their width off
    /// the blocks ([`crate::infer::vllm`]).
    pub fp8_block: u32,
}

impl Default for FormatOptions {
    fn default() -> Self {
        FormatOptions {
            double_quant: false,
            group: 128,
            fp8_block: 128,
        }
    }
}

/// What a model's linear weights hold in a format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quantized {
    /// Weight elements stored in the format (the rest keep the model's
    /// dtype).
    pub elems: u128,
    /// Their packed bytes.
    pub packed: u128,
    /// Scales, zeros, group indices and code tables, bytes.
    pub state: u128,
    /// Elements of the largest quantized weight.
    pub largest: u128,
    /// Its input and output widths together.
    pub largest_io: u128,
}

impl WeightFormat {
    /// Bytes per element of an unquantized format (0 for a quantized one).
    pub const fn plain_bytes(self) -> u64 {
        match self {
            WeightFormat::Bf16 | WeightFormat::Fp16 => 2,
            WeightFormat::Fp32 => 4,
            WeightFormat::Fp8
            | WeightFormat::Int8
            | WeightFormat::Nf4
            | WeightFormat::Fp4
            | WeightFormat::Gptq
            | WeightFormat::Awq
            | WeightFormat::Mxfp4
            | WeightFormat::W8a8
            | WeightFormat::Fp8Dynamic => 0,
        }
    }

    /// Whether the format quantizes only the routed experts (MXFP4: vLLM's
    /// `Mxfp4Config.get_quant_method` gives linear layers
    /// `UnquantizedLinearMethod` and only `RoutedExperts` its MoE method,
    /// `model_executor/layers/quantization/mxfp4.py:91-113`, vLLM 0.33.0;
    /// gpt-oss's checkpoint stores only `*_blocks` / `*_scales` for the
    /// experts).
    pub const fn experts_only(self) -> bool {
        matches!(self, WeightFormat::Mxfp4)
    }

    /// Whether the format replaces every `nn.Linear` but the output head,
    /// outside the decoder layers too (bitsandbytes: transformers 5.23
    /// `integrations/bitsandbytes.py` `replace_with_bnb_linear`, skipping
    /// `get_keys_to_not_convert`'s head; measured on Gemma 4's
    /// `per_layer_model_projection`, `scripts/measure/gemma4/qlora.sh` and
    /// `generate_quant_matrix.json`);
    /// the checkpoint formats quantize the decoder layers' linears only.
    pub const fn every_linear(self) -> bool {
        matches!(
            self,
            WeightFormat::Int8 | WeightFormat::Nf4 | WeightFormat::Fp4
        )
    }

    /// Whether the format quantizes the linear layers.
    pub const fn quantized(self) -> bool {
        self.plain_bytes() == 0
    }

    /// The packed bytes and the constants of one `out × inp` linear weight
    /// (`stack` of them for stacked experts).
    ///
    /// Sources (scripts/measure/weights/NOTES.md): bitsandbytes 0.50
    /// `functional.py` (`quantize_4bit`: blocks of 64, fp32 absmax; double
    /// quantization: uint8 absmax, an fp32 absmax per 256 blocks, an fp32
    /// offset and a 256-entry fp32 code; the 4-bit code, 16 fp32;
    /// `Int8Params`: int8 and an fp32 `SCB` per row); transformers 5.23
    /// `integrations/finegrained_fp8.py` (`weight_scale_inv` of
    /// ⌈out/128⌉ × ⌈in/128⌉; vLLM keeps it fp32); optimum / gptqmodel
    /// `QuantLinear` (qweight int32 [in·bits/32, out], qzeros int32
    /// [groups, out·bits/32], scales fp16 [groups, out], g_idx int32 [in];
    /// vLLM's Marlin repack keeps only the weights and scales); autoawq
    /// `WQLinear_GEMM` (qweight [in, out/8], qzeros [in/g, out/8], scales
    /// fp16 [in/g, out]). Checked against published checkpoint sizes in
    /// `tests/fixtures/weight_formats.jsonl`.
    ///
    /// MXFP4 (gpt-oss's checkpoint: `*_blocks` uint8 `[.., out, in/32, 16]`
    /// and `*_scales` uint8 `[.., out, in/32]`; vLLM 0.33
    /// `quantization/mxfp4.py:200-292`, `GptOssMxfp4MoEMethod.create_weights`:
    /// `w13_weight` uint8 `[E, 2I, H/2]`, `w13_weight_scale` uint8
    /// `[E, 2I, H/32]`, the same for `w2`): half a byte per value and a byte
    /// per 32 inputs, whoever holds it; vLLM's padding of the widths is the
    /// caller's (`infer::vllm`). W8A8 int8 and FP8_DYNAMIC (compressed-tensors
    /// 0.20 `quant_scheme.py` presets `W8A8`, `FP8_DYNAMIC`: `weight_scale`
    /// `[out, 1]` in the weight's dtype, bf16; vLLM 0.33
    /// `compressed_tensors/schemes/compressed_tensors_w8a8_int8.py:59-76` and
    /// `compressed_tensors_w8a8_fp8.py:87-191`: one byte per value and an
    /// fp32 `ChannelQuantScaleParameter` `[out, 1]`, on fp8 hardware).
    pub fn linear_bytes(
        self,
        stack: u128,
        out: u128,
        inp: u128,
        opts: FormatOptions,
        holder: Holder,
    ) -> (u128, u128) {
        let n = stack * out * inp;
        let groups = |g: u32| {
            if g == 0 {
                1
            } else {
                inp.div_ceil(u128::from(g))
            }
        };
        match self {
            WeightFormat::Bf16 | WeightFormat::Fp16 | WeightFormat::Fp32 => {
                (n * u128::from(self.plain_bytes()), 0)
            }
            WeightFormat::Nf4 | WeightFormat::Fp4 => {
                let nb = n.div_ceil(64);
                let state = if opts.double_quant {
                    nb + 4 * nb.div_ceil(256) + 4 + 1024 + 64
                } else {
                    4 * nb + 64
                };
                (n.div_ceil(2), state)
            }
            WeightFormat::Int8 => (n, stack * 4 * out),
            WeightFormat::W8a8 | WeightFormat::Fp8Dynamic => match holder {
                Holder::Checkpoint => (n, stack * 2 * out),
                Holder::Vllm => (n, stack * 4 * out),
            },
            WeightFormat::Mxfp4 => {
                let blocks = stack * out * inp.div_ceil(32);
                (16 * blocks, blocks)
            }
            WeightFormat::Fp8 => {
                let b = u128::from(opts.fp8_block.max(1));
                (n, stack * 4 * out.div_ceil(b) * inp.div_ceil(b))
            }
            WeightFormat::Gptq => {
                let ng = groups(opts.group);
                let packed = stack * 4 * inp.div_ceil(8) * out;
                let scales = stack * 2 * ng * out;
                match holder {
                    Holder::Checkpoint => (
                        packed,
                        scales + stack * 4 * ng * out.div_ceil(8) + stack * 4 * inp,
                    ),
                    Holder::Vllm => (packed, scales),
                }
            }
            WeightFormat::Awq => {
                let ng = groups(opts.group);
                (
                    stack * 4 * inp * out.div_ceil(8),
                    stack * (4 * ng * out.div_ceil(8) + 2 * ng * out),
                )
            }
        }
    }
}

impl Architecture {
    /// The linear weights in `format`: the decoder layers', and the
    /// model's own linears outside them for a format that replaces every
    /// one ([`WeightFormat::every_linear`]); not the embedding, the output
    /// head, norms or biases, which every format here leaves in the
    /// model's dtype. With the experts held as `experts` says: per
    /// expert `nn.Linear`s and the router's `nn.Linear` are linear layers
    /// too (transformers 4, which bitsandbytes quantizes one by one);
    /// stacked 3-D experts and a router parameter are not.
    pub fn quantized_linears(
        &self,
        format: WeightFormat,
        opts: FormatOptions,
        holder: Holder,
        experts: ExpertLayout,
    ) -> Quantized {
        let mut q = Quantized::default();
        if !format.quantized() {
            return q;
        }
        let linears = experts == ExpertLayout::Linears;
        // Gemma 4's router projects through an `nn.Linear` whatever the
        // experts' layout (`Gemma4TextRouter.proj`): bitsandbytes replaces
        // it (measured: the shrunk 26B-A4B's nf4 `generate` rows).
        let router_linear = self.family.spec().moe.is_some_and(|m| m.router_linear);
        let only_experts = format.experts_only();
        self.for_each_tensor_as(experts, |at, t| {
            let in_layer = matches!(at, Place::Layers { .. }) || format.every_linear();
            let linear = match t.role {
                // MXFP4 stores the stacked experts themselves in the format.
                Role::Expert => t.per_expert || only_experts,
                Role::Router => linears || router_linear,
                // transformers runs no DeepSeek Sparse Attention model
                // vramfit estimates with bitsandbytes.
                Role::Indexer => false,
                Role::Embedding
                | Role::PositionTable
                | Role::Norm
                | Role::Attention
                | Role::Mlp
                | Role::Head => true,
            };
            let in_format = !only_experts || t.role == Role::Expert;
            let nn_linear = t.is_linear() || t.recurrent_projection();
            if !in_layer || !nn_linear || !linear || !in_format {
                return;
            }
            let n = at.copies();
            let (stack, rows, cols) = (u128::from(t.stack), u128::from(t.rows), u128::from(t.cols));
            let (packed, state) = format.linear_bytes(stack, rows, cols, opts, holder);
            q.elems += n * t.weight_elems();
            q.packed += n * packed;
            q.state += n * state;
            if t.tensor_elems() > q.largest {
                q.largest = t.tensor_elems();
                q.largest_io = rows + cols;
            }
        });
        q
    }
}
