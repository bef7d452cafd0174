//! `llama-quantize`'s choice of each tensor's type for a file type: the
//! mixture rules, by tensor category, layer and model, and the fallback
//! when a row is not a whole number of blocks.
//!
//! Source: llama.cpp b8973 (`3142f1db`), `src/llama-quant.cpp`:
//! `llama_tensor_get_type` (the outer wrapper), `llama_tensor_get_type_impl`
//! (the rules, one `if` chain per category, mirrored here function by
//! function in the same order), `tensor_type_fallback`,
//! `init_quantize_state_counters` (`n_attention_wv`, `has_tied_embeddings`,
//! `n_ffn_down = n_layer`). Falcon's branches are left out: no family of
//! vramfit converts to `LLM_ARCH_FALCON`. The `--tensor-type`,
//! `--output-tensor-type`, `--token-embedding-type` and `--pure` options are
//! not modelled: a file made with them is a recipe of its own.

use super::ftype::FileType;
use super::layout::{Category, Slot, Src};
use super::types::GgmlType;

/// Which `llama-quantize` made the file: its rules changed twice in ways
/// that change published sizes (`scripts/measure/gguf/NOTES.md` §5.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rules {
    /// Before build 2248 (PR #5650, 2024-02-22): a tied token embedding
    /// took the default type, not the output tensor's rule. Otherwise as
    /// [`Rules::Before8266`].
    Before2248,
    /// Builds 2248 to 8265 (until PR #19770, 2026-03-10; every file
    /// published before March 2026): `attn_qkv` and `attn_kv_b` kept
    /// their own rules (`attn_qkv`: Q4_K_M → Q5_K, Q5_K_M → Q6_K), and
    /// Q2_K/Q3_K rows that are not whole blocks fell back to IQ4_NL.
    Before8266,
    /// Build 8973 (`3142f1db`, 2026-04-29): `attn_qkv` and `attn_kv_b`
    /// take the `attn_v` rules; the Q2_K/Q3_K fallback is Q4_0.
    #[default]
    B8973,
}

impl Rules {
    /// `category_is_attn_v` (b8973) or the name test of older builds.
    fn attn_v_like(self, cat: Category) -> bool {
        match cat {
            Category::AttnV => true,
            Category::AttnQkv | Category::AttnKvB => self == Rules::B8973,
            Category::Output
            | Category::TokenEmbd
            | Category::AttnK
            | Category::AttnQ
            | Category::AttnOutput
            | Category::FfnUp
            | Category::FfnGate
            | Category::FfnDown
            | Category::Other => false,
        }
    }
}

/// What the rules read of the model (`qs.model.hparams`, `qs.model.type`,
/// `qs.model.arch`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Model {
    /// `hparams.n_layer`.
    pub layers: u64,
    /// `hparams.n_expert` (0 for a dense model).
    pub experts: u64,
    /// `hparams.n_gqa()`: heads / the file's kv heads (0 when none).
    pub gqa: u64,
    /// `model.type == LLM_TYPE_70B`.
    pub is_70b: bool,
}

/// Why `llama-quantize` would refuse the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoFallback {
    pub tensor: &'static str,
    pub row: u64,
    pub ty: GgmlType,
}

/// `quantize_state_impl`'s running counters: the attn_v-like, ffn_down,
/// ffn_gate and ffn_up tensors typed so far. Only the rules that move a
/// counter read one (or, with experts, the layer's index instead), so a
/// tensor whose typing moves none has one type in every layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub attention_wv: u64,
    pub ffn_down: u64,
    pub ffn_gate: u64,
    pub ffn_up: u64,
}

impl Counters {
    /// The four counters, in a fixed order.
    pub const fn all(self) -> [u64; 4] {
        [self.attention_wv, self.ffn_down, self.ffn_gate, self.ffn_up]
    }

    /// What moved these counters since `earlier`.
    pub const fn since(self, earlier: Counters) -> Counters {
        Counters {
            attention_wv: self.attention_wv - earlier.attention_wv,
            ffn_down: self.ffn_down - earlier.ffn_down,
            ffn_gate: self.ffn_gate - earlier.ffn_gate,
            ffn_up: self.ffn_up - earlier.ffn_up,
        }
    }

    /// These counters moved `n` times by `step`.
    pub const fn after(self, step: Counters, n: u64) -> Counters {
        Counters {
            attention_wv: self.attention_wv + step.attention_wv * n,
            ffn_down: self.ffn_down + step.ffn_down * n,
            ffn_gate: self.ffn_gate + step.ffn_gate * n,
            ffn_up: self.ffn_up + step.ffn_up * n,
        }
    }
}

/// `quantize_state_impl`: the settings and the running counters.
#[derive(Clone, Copy)]
pub(crate) struct Quantizer {
    ft: FileType,
    rules: Rules,
    imatrix: bool,
    m: Model,
    has_tied: bool,
    n_attention_wv: u64,
    i: Counters,
    pub n_fallback: u32,
}

/// `use_more_bits`: the first and last eighth of the layers, and every
/// third one between.
fn use_more_bits(i: u64, n: u64) -> bool {
    i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2
}

/// The indices where a rule's answer can change, for a count `n` (the
/// layers, or `n_attention_wv`): attn_v's `i < 2` and `i < 4`,
/// ffn_down's `n / 16`, and `n / 8` and `7n / 8`, the ends of the middle
/// where `use_more_bits` alternates with a period of three (the only rule
/// that reads an index modulo anything) and of ffn_gate/ffn_up's band.
pub(crate) const fn thresholds(n: u64) -> [u64; 5] {
    [2, 4, n / 16, n / 8, 7 * n / 8]
}

impl Quantizer {
    /// `has_tied`: the file has no `output.weight`; `n_attention_wv`: its
    /// attn_v, attn_qkv and attn_kv_b tensors (counted by every build).
    pub fn new(
        ft: FileType,
        rules: Rules,
        imatrix: bool,
        m: Model,
        has_tied: bool,
        n_attention_wv: u64,
    ) -> Self {
        Quantizer {
            ft,
            rules,
            imatrix,
            m,
            has_tied,
            n_attention_wv,
            i: Counters::default(),
            n_fallback: 0,
        }
    }

    /// The counters so far.
    pub const fn counters(&self) -> Counters {
        self.i
    }

    /// Continues from counters `i` (those at the start of a layer, worked
    /// out rather than counted).
    pub fn set_counters(&mut self, i: Counters) {
        self.i = i;
    }

    /// The counts the rules compare indices with: the layers and
    /// `n_attention_wv`.
    pub const fn counts(&self) -> [u64; 2] {
        [self.m.layers, self.n_attention_wv]
    }

    /// `llama_tensor_get_type`: the type of tensor `s` in layer `layer`
    /// (tensors visited in file order: by layer, then by name). A tensor
    /// `tensor_allows_quantization` refuses keeps the converter's type; a
    /// float file type (F32, F16, BF16) gives every other tensor that type
    /// (MXFP4 experts stay MXFP4: such a file is the converter's own
    /// `--outtype`, as `llama-quantize` refuses to requantize them).
    pub fn tensor_type(&mut self, s: &Slot, layer: u64) -> Result<GgmlType, NoFallback> {
        if !s.quantizable() {
            return Ok(source_type(s.src));
        }
        let default = self.ft.default_type();
        if !default.is_quantized() {
            return Ok(match s.src {
                Src::Mxfp4 => GgmlType::Mxfp4,
                Src::F32Weight => GgmlType::F32,
                Src::Weight | Src::F32 | Src::Kept => default,
            });
        }
        let new = self.mixture(s, layer, default);
        self.fallback(s, new)
    }

    /// `llama_tensor_get_type_impl`, its outer `if` chain.
    fn mixture(&mut self, s: &Slot, layer: u64, new: GgmlType) -> GgmlType {
        let ft = self.ft;
        let tied_embd =
            self.has_tied && self.rules != Rules::Before2248 && s.cat == Category::TokenEmbd;
        if s.cat == Category::Output || tied_embd {
            return output_type(ft, s.ne[0], new);
        }
        if ft == FileType::Mxfp4Moe {
            // MoE tensors → MXFP4, every other → Q8_0.
            return if s.ne[2] > 1 {
                GgmlType::Mxfp4
            } else {
                GgmlType::Q8_0
            };
        }
        if s.cat == Category::TokenEmbd {
            return token_embd_type(ft, new);
        }
        if ft.is_iq2_family() {
            return self.iq2_family(s.cat, new);
        }
        if self.rules.attn_v_like(s.cat) {
            return self.attn_v(new);
        }
        match s.cat {
            Category::AttnK => self.attn_k(new),
            Category::AttnQ => attn_q(ft, new),
            Category::FfnDown => self.ffn_down(layer, new),
            Category::AttnOutput => self.attn_output(new),
            Category::AttnQkv => attn_qkv(ft, new),
            Category::FfnGate | Category::FfnUp => self.ffn_gate_up(s.cat, layer, new),
            Category::AttnV
            | Category::AttnKvB
            | Category::Output
            | Category::TokenEmbd
            | Category::Other => new,
        }
    }

    /// The layer `layer_info` gives: with more than one expert, the one in
    /// the tensor's name; else the running counter.
    fn layer_of(&self, counter: u64, layer: u64) -> u64 {
        if self.m.experts.max(1) > 1 {
            layer
        } else {
            counter
        }
    }

    /// The IQ1/IQ2 mixtures' own branch.
    fn iq2_family(&mut self, cat: Category, new: GgmlType) -> GgmlType {
        let (ft, m) = (self.ft, self.m);
        let s_or_m = matches!(ft, FileType::Iq2S | FileType::Iq2M);
        if self.rules.attn_v_like(cat) {
            self.i.attention_wv += 1;
            return if m.gqa >= 4 || m.experts >= 4 {
                GgmlType::Q4K
            } else if s_or_m {
                GgmlType::Iq3S
            } else {
                GgmlType::Q2K
            };
        }
        if m.experts == 8 && cat == Category::AttnK {
            return GgmlType::Q4K;
        }
        if cat == Category::FfnDown {
            let first = self.i.ffn_down < m.layers / 8;
            self.i.ffn_down += 1;
            return match (first, s_or_m) {
                (true, true) => GgmlType::Iq3S,
                (true, false) => GgmlType::Q2K,
                (false, _) => new,
            };
        }
        if cat == Category::AttnOutput {
            return if m.experts == 8 {
                GgmlType::Q5K
            } else if matches!(ft, FileType::Iq1S | FileType::Iq1M) {
                GgmlType::Iq2Xxs
            } else if s_or_m {
                GgmlType::Iq3S
            } else {
                new
            };
        }
        new
    }

    /// attn_v (and, at b8973, attn_qkv and attn_kv_b): more bits, by file
    /// type, GQA and the running count `i_attention_wv`; then 70B models'
    /// Q3_K/Q4_K → Q5_K, and Q8_0 with 8 experts. (Each file type appears
    /// in one branch of the C++ `else if` chain, so a `match` with guards
    /// is the same chain.)
    fn attn_v(&mut self, new: GgmlType) -> GgmlType {
        use FileType as F;
        use GgmlType::{Iq3S, Iq3Xxs, Q3K, Q4K, Q5K, Q6K, Q8_0};
        let (m, i) = (self.m, self.i.attention_wv);
        let gqa4 = m.gqa >= 4;
        let t = match self.ft {
            F::Q2K if gqa4 => Q4K,
            F::Q2K => Q3K,
            F::Q2KS | F::Iq3Xs | F::Iq3S if gqa4 => Q4K,
            F::Iq3Xxs if gqa4 => Q4K,
            F::Iq3Xxs if self.imatrix => Iq3Xxs,
            F::Iq3Xxs => Iq3S,
            F::Iq3M => Q4K,
            F::Q3KM if i < 2 => Q5K,
            F::Q3KM => Q4K,
            F::Q3KL => Q5K,
            F::Iq4Nl | F::Iq4Xs if gqa4 => Q5K,
            F::Q4KM | F::Q5KM if use_more_bits(i, self.n_attention_wv) => Q6K,
            F::Q4KS if i < 4 => Q5K,
            F::F32
            | F::Bf16
            | F::F16
            | F::Q8_0
            | F::Q6K
            | F::Q5KM
            | F::Q5KS
            | F::Q5_1
            | F::Q5_0
            | F::Q4KM
            | F::Q4KS
            | F::Q4_1
            | F::Q4_0
            | F::Iq4Xs
            | F::Iq4Nl
            | F::Mxfp4Moe
            | F::Q3KS
            | F::Iq3S
            | F::Iq3Xs
            | F::Q2KS
            | F::Iq2M
            | F::Iq2S
            | F::Iq2Xs
            | F::Iq2Xxs
            | F::Iq1M
            | F::Iq1S
            | F::Tq2_0
            | F::Tq1_0
            | F::Q1_0 => new,
        };
        let t = if m.is_70b && matches!(t, Q3K | Q4K) {
            Q5K
        } else {
            t
        };
        self.i.attention_wv += 1;
        if m.experts == 8 {
            Q8_0
        } else {
            t
        }
    }

    /// attn_k: Q8_0 with 8 experts; IQ3_XS → IQ3_XXS; IQ3_XXS → IQ2_S.
    fn attn_k(&self, new: GgmlType) -> GgmlType {
        if self.m.experts == 8 {
            GgmlType::Q8_0
        } else {
            attn_q(self.ft, new)
        }
    }

    /// ffn_down (with the `_exps` and `_shexp` variants): more bits in the
    /// first layers (`i < n/8`, `n/16`), or where `use_more_bits`, by file
    /// type (as `attn_v`, a `match` standing for the `else if` chain).
    fn ffn_down(&mut self, layer: u64, new: GgmlType) -> GgmlType {
        use FileType as F;
        use GgmlType::{Q3K, Q4K, Q4_1, Q5K, Q5_1, Q6K};
        let (i, n) = (self.layer_of(self.i.ffn_down, layer), self.m.layers);
        self.i.ffn_down += 1;
        let (more, first) = (use_more_bits(i, n), i < n / 8);
        let imatrix = self.imatrix;
        match self.ft {
            F::Q2K => Q3K,
            F::Q2KS if first => Q4K,
            F::Iq3Xxs if !imatrix && first => Q4K,
            F::Iq3Xxs if !imatrix => Q3K,
            F::Q3KM if i < n / 16 => Q5K,
            F::Q3KM => Q4K,
            F::Iq3M if first || (self.m.experts == 8 && more) => Q4K,
            F::Q3KL => Q5K,
            F::Q4KM | F::Q5KM if more => Q6K,
            F::Iq4Nl | F::Iq4Xs if first && !imatrix => Q5K,
            F::Q4KS if first => Q5K,
            F::Q4_0 if imatrix && first => Q4_1,
            F::Q5_0 if imatrix && first => Q5_1,
            F::F32
            | F::Bf16
            | F::F16
            | F::Q8_0
            | F::Q6K
            | F::Q5KM
            | F::Q5KS
            | F::Q5_1
            | F::Q5_0
            | F::Q4KM
            | F::Q4KS
            | F::Q4_1
            | F::Q4_0
            | F::Iq4Xs
            | F::Iq4Nl
            | F::Mxfp4Moe
            | F::Q3KS
            | F::Iq3M
            | F::Iq3S
            | F::Iq3Xs
            | F::Iq3Xxs
            | F::Q2KS
            | F::Iq2M
            | F::Iq2S
            | F::Iq2Xs
            | F::Iq2Xxs
            | F::Iq1M
            | F::Iq1S
            | F::Tq2_0
            | F::Tq1_0
            | F::Q1_0 => new,
        }
    }

    /// attn_output: Q5_K for the low and middle mixtures with 8 experts;
    /// otherwise one step up for Q2_K, IQ3_XXS, Q3_K_M, Q3_K_L and IQ3_M.
    fn attn_output(&self, new: GgmlType) -> GgmlType {
        let ft = self.ft;
        if self.m.experts == 8 {
            let low = matches!(
                ft,
                FileType::Q2K
                    | FileType::Iq3Xs
                    | FileType::Iq3Xxs
                    | FileType::Q3KS
                    | FileType::Q3KM
                    | FileType::Iq4Nl
                    | FileType::Q4KS
                    | FileType::Q4KM
                    | FileType::Iq3S
                    | FileType::Iq3M
                    | FileType::Iq4Xs
            );
            return if low { GgmlType::Q5K } else { new };
        }
        match ft {
            FileType::Q2K => GgmlType::Q3K,
            FileType::Iq3Xxs => GgmlType::Iq3S,
            FileType::Q3KM | FileType::Iq3M => GgmlType::Q4K,
            FileType::Q3KL => GgmlType::Q5K,
            FileType::F32
            | FileType::Bf16
            | FileType::F16
            | FileType::Q8_0
            | FileType::Q6K
            | FileType::Q5KM
            | FileType::Q5KS
            | FileType::Q5_1
            | FileType::Q5_0
            | FileType::Q4KM
            | FileType::Q4KS
            | FileType::Q4_1
            | FileType::Q4_0
            | FileType::Iq4Xs
            | FileType::Iq4Nl
            | FileType::Mxfp4Moe
            | FileType::Q3KS
            | FileType::Iq3S
            | FileType::Iq3Xs
            | FileType::Q2KS
            | FileType::Iq2M
            | FileType::Iq2S
            | FileType::Iq2Xs
            | FileType::Iq2Xxs
            | FileType::Iq1M
            | FileType::Iq1S
            | FileType::Tq2_0
            | FileType::Tq1_0
            | FileType::Q1_0 => new,
        }
    }

    /// ffn_gate, ffn_up: IQ3_XS → IQ3_XXS in the middle three quarters.
    fn ffn_gate_up(&mut self, cat: Category, layer: u64, new: GgmlType) -> GgmlType {
        let counter = if cat == Category::FfnGate {
            &mut self.i.ffn_gate
        } else {
            &mut self.i.ffn_up
        };
        let c = *counter;
        *counter += 1;
        let (i, n) = (self.layer_of(c, layer), self.m.layers);
        if self.ft == FileType::Iq3Xs && i >= n / 8 && i < 7 * n / 8 {
            GgmlType::Iq3Xxs
        } else {
            new
        }
    }

    /// `tensor_type_fallback`: a row that is not a whole number of the
    /// chosen type's blocks takes a 32-element type, or F16 when even that
    /// does not divide it; a type with no fallback makes `llama-quantize`
    /// throw.
    fn fallback(&mut self, s: &Slot, new: GgmlType) -> Result<GgmlType, NoFallback> {
        use GgmlType as T;
        let row = s.ne[0];
        if row.is_multiple_of(new.block()) {
            return Ok(new);
        }
        self.n_fallback += 1;
        let legacy = self.rules != Rules::B8973;
        let to = match new {
            T::Iq1S | T::Iq1M | T::Iq2Xxs | T::Iq2Xs | T::Iq2S | T::Iq3Xxs | T::Iq3S | T::Iq4Xs => {
                T::Iq4Nl
            }
            T::Q2K | T::Q3K if legacy => T::Iq4Nl,
            T::Q2K | T::Q3K | T::Tq1_0 | T::Tq2_0 => T::Q4_0,
            T::Q4K => T::Q5_0,
            T::Q5K => T::Q5_1,
            T::Q6K => T::Q8_0,
            T::F32
            | T::F16
            | T::Q4_0
            | T::Q4_1
            | T::Q5_0
            | T::Q5_1
            | T::Q8_0
            | T::Q8_1
            | T::Q8K
            | T::Iq4Nl
            | T::I8
            | T::I16
            | T::I32
            | T::I64
            | T::F64
            | T::Bf16
            | T::Mxfp4
            | T::Nvfp4
            | T::Q1_0
            | T::Q2_0 => {
                return Err(NoFallback {
                    tensor: s.name,
                    row,
                    ty: new,
                })
            }
        };
        Ok(if row.is_multiple_of(to.block()) {
            to
        } else {
            T::F16
        })
    }
}

/// The type a tensor keeps when it is not quantized: what the converter
/// wrote (a plain weight at the converter's default `--outtype auto`,
/// bf16 for a bf16 checkpoint).
fn source_type(src: Src) -> GgmlType {
    match src {
        Src::Weight | Src::Kept => GgmlType::Bf16,
        Src::F32 | Src::F32Weight => GgmlType::F32,
        Src::Mxfp4 => GgmlType::Mxfp4,
    }
}

/// The output tensor (and a tied token embedding): Q8_0 for MXFP4_MOE or
/// a row that is not whole blocks of the default type; Q5_K for the IQ1,
/// IQ2 and IQ3_XXS mixtures; else Q6_K (Q8_0 stays Q8_0).
fn output_type(ft: FileType, row: u64, new: GgmlType) -> GgmlType {
    let low = matches!(
        ft,
        FileType::Iq2Xxs
            | FileType::Iq2Xs
            | FileType::Iq3Xxs
            | FileType::Iq1S
            | FileType::Iq2S
            | FileType::Iq2M
            | FileType::Iq1M
    );
    if ft == FileType::Mxfp4Moe || !row.is_multiple_of(new.block()) {
        GgmlType::Q8_0
    } else if low {
        GgmlType::Q5K
    } else if new != GgmlType::Q8_0 {
        GgmlType::Q6K
    } else {
        new
    }
}

/// An untied token embedding: Q2_K for IQ2_XXS, IQ2_XS, IQ1_S and IQ1_M;
/// IQ3_S for IQ2_S, IQ2_M and IQ3_XXS; Q4_K for TQ1_0 and TQ2_0; else the
/// default type.
fn token_embd_type(ft: FileType, new: GgmlType) -> GgmlType {
    match ft {
        FileType::Iq2Xxs | FileType::Iq2Xs | FileType::Iq1S | FileType::Iq1M => GgmlType::Q2K,
        FileType::Iq2S | FileType::Iq2M | FileType::Iq3Xxs => GgmlType::Iq3S,
        FileType::Tq1_0 | FileType::Tq2_0 => GgmlType::Q4K,
        FileType::F32
        | FileType::Bf16
        | FileType::F16
        | FileType::Q8_0
        | FileType::Q6K
        | FileType::Q5KM
        | FileType::Q5KS
        | FileType::Q5_1
        | FileType::Q5_0
        | FileType::Q4KM
        | FileType::Q4KS
        | FileType::Q4_1
        | FileType::Q4_0
        | FileType::Iq4Xs
        | FileType::Iq4Nl
        | FileType::Mxfp4Moe
        | FileType::Q3KL
        | FileType::Q3KM
        | FileType::Q3KS
        | FileType::Iq3M
        | FileType::Iq3S
        | FileType::Iq3Xs
        | FileType::Q2K
        | FileType::Q2KS
        | FileType::Q1_0 => new,
    }
}

/// attn_q (and attn_k without 8 experts): IQ3_XS → IQ3_XXS, IQ3_XXS →
/// IQ2_S.
fn attn_q(ft: FileType, new: GgmlType) -> GgmlType {
    if ft == FileType::Iq3Xs {
        GgmlType::Iq3Xxs
    } else if ft == FileType::Iq3Xxs {
        GgmlType::Iq2S
    } else {
        new
    }
}

/// attn_qkv's own rule, reached before build 8266 only (b8973 sends
/// attn_qkv to the attn_v rules first, leaving this branch dead).
fn attn_qkv(ft: FileType, new: GgmlType) -> GgmlType {
    if matches!(ft, FileType::Q3KM | FileType::Q3KL | FileType::Iq3M) {
        GgmlType::Q4K
    } else if ft == FileType::Q4KM {
        GgmlType::Q5K
    } else if ft == FileType::Q5KM {
        GgmlType::Q6K
    } else {
        new
    }
}
