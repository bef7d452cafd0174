//! One decoder layer's forward pass under `generate` (no gradients), op by
//! op: what it allocates and frees, family by family as the model's
//! description says (norms, rotary style, fused projections, q/k norms,
//! latent attention, the attention kernel, the MLP or the experts).
//!
//! Source: transformers 5.23 `models/*/modeling_*.py` (each family's
//! attention, MLP and decoder layer), `integrations/sdpa_attention.py`,
//! `integrations/moe.py` (`grouped_mm_experts_forward`,
//! `batched_mm_experts_forward`), `masking_utils.py`; torch 2.15's CUDA
//! SDPA kernel choice (`sdp_utils.cpp`). Transcribed from the measurement's
//! own replay (`scripts/measure/infer/generate.py`, `GenerateProgram`),
//! which reproduces every measured row to the byte.

mod deltanet;
mod mamba2;
mod short_conv;

use super::sim::{Cat, Id, Run, Sim, Stage};
use crate::inputs::Attn;
use crate::model::family::{
    Act, Blocks, EmbedScale, Layout, Mlp, Moe, Norm, NormPlace, QkNorm, Qkv, RopeStyle, Router,
    Shared, Spec,
};
use crate::model::{Architecture, KvGeometry, LayerKind};

/// Whether a layer attends to every earlier token or within a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    Full = 0,
    Sliding = 1,
}

/// The numbers the forward pass reads, in bytes and elements.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    /// Sequences, prompt tokens, new tokens.
    pub b: u128,
    pub p: u128,
    /// Bytes per element of the model's dtype.
    pub dt: u128,
    pub h: u128,
    pub heads: u128,
    pub kv_heads: u128,
    pub head_dim: u128,
    pub ffn: u128,
    pub vocab: u128,
    /// Rotary width of a head.
    pub rd: u128,
    pub window: u128,
    pub experts: u128,
    pub top_k: u128,
    pub moe_ffn: u128,
    /// Shared experts' width (in elements).
    pub shared_ffn: u128,
    /// Latent attention: compressed key/value width, rotary part, value
    /// head.
    pub latent: u128,
    pub rope: u128,
    pub v_head: u128,
    /// Gated DeltaNet: key heads, value heads, their widths and the
    /// convolution's kernel (zero without linear-attention layers).
    pub lin_hk: u128,
    pub lin_hv: u128,
    pub lin_dk: u128,
    pub lin_dv: u128,
    pub lin_k: u128,
    /// The recurrent layers are LFM2's short convolutions (a convolution
    /// state over the hidden size, no recurrent state).
    pub short_conv: bool,
    /// The recurrent layers are Mamba-2's (`lin_hk` groups, `lin_hv`
    /// heads of `lin_dv`, state `lin_dk`), scanned in chunks of
    /// `lin_chunk` tokens in the prompt's forward.
    pub mamba2: bool,
    pub lin_chunk: u128,
    /// Gemma 4's global layers: their head width, key/value heads and
    /// rotary width (`head_dim` 0: as the others), and whether their keys
    /// are their values.
    pub global: Global,
    /// Gemma 4's per-layer inputs: each layer's width (0: none), the
    /// decoder layers.
    pub ple: u128,
    pub layers: u128,
    /// The layers reusing keys and values have an MLP twice as wide.
    pub double_wide: bool,
}

/// A global layer's attention (Gemma 4), as [`Dims`] holds it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Global {
    pub head_dim: u128,
    pub kv_heads: u128,
    pub rd: u128,
    pub k_eq_v: bool,
}

impl Dims {
    pub fn of(a: &Architecture, b: u128, p: u128, dt: u128) -> Dims {
        let n = |x: u32| u128::from(x);
        let g = KvGeometry::of(a);
        Dims {
            b,
            p,
            dt,
            h: n(a.hidden),
            heads: n(a.heads),
            kv_heads: n(a.kv_heads),
            head_dim: n(a.head_dim),
            ffn: n(a.ffn),
            vocab: n(a.vocab),
            rd: u128::from(g.rotary_width()),
            window: u128::from(g.window),
            experts: n(a.experts),
            top_k: n(a.experts_per_token),
            moe_ffn: n(a.moe_ffn),
            shared_ffn: n(a.shared_experts) * n(a.moe_ffn),
            latent: n(a.kv_lora_rank),
            rope: n(a.rope_dim),
            v_head: n(a.v_head_dim),
            lin_hk: n(a.linear_k_heads),
            lin_hv: n(a.linear_v_heads),
            lin_dk: n(a.linear_k_dim),
            lin_dv: n(a.linear_v_dim),
            lin_k: n(a.linear_conv),
            short_conv: a.family.spec().short_conv(),
            mamba2: a.family.spec().mamba2(),
            lin_chunk: a.family.spec().linear.map_or(0, |l| u128::from(l.chunk)),
            global: Self::global(a),
            ple: n(a.ple_dim),
            layers: n(a.layers),
            double_wide: a.double_wide > 0,
        }
    }

    /// Gemma 4's global layers ([`Architecture::global_heads`]): the
    /// proportional RoPE's table spans the whole head
    /// (`_compute_proportional_rope_parameters` pads `inv_freq` with zeros
    /// to `head_dim / 2`, transformers 5.23 `modeling_rope_utils.py`).
    fn global(a: &Architecture) -> Global {
        if !a.family.spec().global_attention {
            return Global::default();
        }
        let g = a.global_heads();
        Global {
            head_dim: u128::from(g.head_dim),
            kv_heads: u128::from(g.kv_heads),
            rd: u128::from(g.head_dim),
            k_eq_v: !g.v_proj,
        }
    }

    /// The numbers a layer of `span` reads: a global layer's own head
    /// width, key/value heads and rotary width; a layer reusing keys and
    /// values (`shared`) its wider MLP.
    pub fn at(&self, span: Span, shared: bool) -> Dims {
        let mut d = *self;
        if span == Span::Full && self.global.head_dim > 0 {
            d.head_dim = self.global.head_dim;
            d.kv_heads = self.global.kv_heads;
            d.rd = self.global.rd;
        }
        if shared && self.double_wide {
            d.ffn *= 2;
        }
        d
    }

    /// A recurrent layer's cache for the batch. A Gated DeltaNet layer's:
    /// its convolution state (the conv's channels × the kernel, all
    /// `kernel` steps, in the model's dtype:
    /// `LinearAttentionLayer.lazy_initialization`) and its recurrent state
    /// (value heads × key width × value width, fp32, as the chunked rule
    /// returns it). LFM2's: the convolution state over the hidden size
    /// alone.
    pub fn linear_state(&self) -> (u128, u128) {
        if self.short_conv {
            return (self.dt * self.b * self.h * self.lin_k, 0);
        }
        let channels = 2 * self.lin_hk * self.lin_dk + self.lin_hv * self.lin_dv;
        (
            self.dt * self.b * channels * self.lin_k,
            4 * self.b * self.lin_hv * self.lin_dk * self.lin_dv,
        )
    }

    /// Bytes per token per layer the cache stores: keys and values of the
    /// key/value heads, or latent attention's compressed latent and its
    /// rotary key (DeepSeek caches those, `DeepseekV2Attention.forward`).
    pub fn kv_token_bytes(&self, latent: bool) -> u128 {
        if latent {
            (self.latent + self.rope) * self.dt
        } else {
            2 * self.kv_heads * self.head_dim * self.dt
        }
    }
}

/// One forward pass's allocations through a simulation of live bytes.
pub struct Forward<'a> {
    pub d: &'a Dims,
    pub spec: &'static Spec,
    pub attn: Attn,
    pub sim: Sim,
    /// MoE layers in decode gather whole experts (`batched_mm`, what
    /// generate switches to on a GPU).
    pub batched_decode: bool,
    /// The decoder layers' linear weights are 4-bit (bitsandbytes).
    pub dequant: Option<Dequant>,
    /// What the layer's own names hold to its end beyond its block's
    /// (Granite's routed experts' output, [`Moe::shared_in_layer`]).
    pub held: Option<Id>,
}

/// bitsandbytes 4-bit linears: how a matmul that is not the custom
/// kernel's dequantizes its weight.
#[derive(Clone, Copy, Debug)]
pub struct Dequant {
    /// Nested quantization: the absmax is dequantized first.
    pub double_quant: bool,
}

/// bitsandbytes 0.50 `backends/cuda/ops.py`: at most this many input
/// rows always take the custom 4-bit kernel (`_GEMM_4BIT_CUSTOM_FLOOR_M`);
/// above it `_gemm_4bit_use_custom_cuda` decides by GPU and shape, and past
/// 1536 rows never. vramfit takes the dequantizing fallback above the
/// floor: what an H100 does with a prefill's rows (measured: every quant row
/// of `infer_transformers.jsonl`), an upper bound on GPUs whose heuristic
/// keeps the custom kernel up to 512 rows.
const CUSTOM_4BIT_ROWS: u128 = 4;

/// What a forward carries through every layer.
pub struct Carried {
    pub masks: [Option<Id>; 2],
}

/// [`Forward::rms`]'s highest total over its start (`dt` bytes per
/// element of the model's dtype) and its output's bytes. In op order: the
/// fp32 copy (`c`, none in fp32), `pow(2)`, `mean`, `+ eps` and `rsqrt`
/// (the squares freed after the mean, the sum after the rsqrt), `x *
/// rsqrt` with the mean alive; then the weight's product and the casts.
/// The highest of the moments that can hold the peak, in closed form (a
/// test holds it to the op-by-op replay).
fn rms_peak(dt: u128, rows: u128, n: u128, weight_first: bool) -> (u128, u128) {
    let c = if dt != 4 { 4 * n } else { 0 };
    // The rsqrt beside the sum, the mean and the copy; `x * rsqrt` beside
    // the mean, the rsqrt and the copy.
    let norm = (c + 12 * rows).max(c + 8 * rows + 4 * n);
    // With only the mean and the normalized x alive: the last products.
    let tail = match (weight_first, dt != 4) {
        (true, true) => 4 * rows + 8 * n + dt * n,
        (false, true) => 4 * rows + 4 * n + 2 * dt * n,
        (_, false) => 4 * rows + 8 * n,
    };
    let out = if dt != 4 { dt * n } else { 4 * n };
    (norm.max(tail), out)
}

/// [`Forward::rms_weight_fp32`]'s highest total and its output's bytes,
/// in closed form (a test holds it to the op-by-op replay): [`rms_peak`]'s
/// `weight_first` steps, and in a half model the weight's fp32 copy over
/// `width` beside the normalised input, the product and the mean.
fn rms_weight_fp32_peak(dt: u128, rows: u128, n: u128, width: u128) -> (u128, u128) {
    let (peak, o) = rms_peak(dt, rows, n, true);
    let weight = if dt != 4 {
        8 * n + 4 * rows + 4 * width
    } else {
        0
    };
    (peak.max(weight), o)
}

/// `q * cos + rotate_half(q) * sin` on `n` elements in the model's dtype
/// (`dt` bytes each): the product with cos, `-x2` and the `cat` of
/// rotate_half, the product with sin, their sum. Returns the sum's size,
/// the rest freed.
fn rotated(s: &mut Run, dt: u128, n: u128) -> u128 {
    let qc = s.a(dt * n);
    let ng = s.a(dt * n / 2);
    let ct = s.a(dt * n);
    s.f(&[ng]);
    let qs = s.a(dt * n);
    s.f(&[ct]);
    let qe = s.a(dt * n);
    s.f(&[qc, qs]);
    qe
}

/// [`Forward::gemma_norm`]'s highest total over its start and its output's
/// bytes, in closed form as [`rms_peak`] (a test holds it to the op-by-op
/// replay): `_norm` (its fp32 copy `c`, squares, mean, `+ eps`, rsqrt, the
/// product), then `1 + weight.float()` over `width`, the product and the
/// cast back.
fn gemma_norm_peak(dt: u128, rows: u128, n: u128, width: u128) -> (u128, u128) {
    let half = dt != 4;
    let c = if half { 4 * n } else { 0 };
    let wf = if half { 4 * width } else { 0 };
    let norm = (c + 4 * n + 4 * rows).max(c + 8 * rows);
    let weight = (4 * n + wf + 4 * width).max(8 * n + 4 * width);
    let cast = if half { 4 * n + dt * n } else { 0 };
    let out = if half { dt * n } else { 4 * n };
    (norm.max(weight).max(cast), out)
}

/// [`Forward::scaled_norm`]'s highest total over its start and its
/// output's bytes, in closed form (a test holds it to the op-by-op
/// replay): the fp32 copy, squares, mean, `+ eps`, `pow(-0.5)`, the
/// product; with `scale`, `weight.float()` over `width` and its product;
/// the cast back.
fn scaled_norm_peak(dt: u128, rows: u128, n: u128, width: u128, scale: bool) -> (u128, u128) {
    if dt == 4 {
        let w = if scale { 8 * n } else { 0 };
        return ((4 * n + 8 * rows).max(w), 4 * n);
    }
    let w = if scale { 8 * n + 4 * width } else { 0 };
    let peak = (8 * n + 8 * rows).max(w).max(4 * n + dt * n);
    (peak, dt * n)
}

impl Forward<'_> {
    fn s(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// A linear layer's output on `t` rows (`inp` to `out` features, in the
    /// model's dtype). A 4-bit weight on more rows than the custom kernel
    /// takes is dequantized first (`_dequant_linear_fallback`: with nested
    /// quantization the absmax in fp32 and plus its offset, then the whole
    /// weight in the input's dtype), alive during `F.linear`.
    fn lin(&mut self, t: u128, inp: u128, out: u128) -> Id {
        let dt = self.d.dt;
        let Some(dq) = self.dequant.filter(|_| t > CUSTOM_4BIT_ROWS) else {
            return self.sim.a(dt * t * out);
        };
        let s = &mut self.sim;
        let blocks = (inp * out).div_ceil(64);
        let absmax = [
            s.a_if(dq.double_quant, 4 * blocks),
            s.a_if(dq.double_quant, 4 * blocks),
        ];
        let w = s.a(dt * inp * out);
        let o = s.a(dt * t * out);
        s.f(&absmax);
        s.free(w);
        o
    }

    // ------------------------------------------------------------ norms

    /// The family's norm over `n` elements in `rows` rows.
    pub fn norm(&mut self, rows: u128, n: u128) -> Id {
        match self.spec.norm {
            Norm::Rms => self.rms(rows, n, false),
            Norm::RmsCastAfter => self.rms(rows, n, true),
            Norm::RmsPlusOne => self.gemma_norm(rows, n, self.d.h),
            Norm::RmsScaled => self.scaled_norm(rows, n, self.d.h, true),
            Norm::RmsWeightFp32 => self.rms_weight_fp32(rows, n, self.d.h),
            Norm::LayerNorm => self.layer_norm(rows, n),
        }
    }

    /// NemotronHRMSNorm: the fp32 copy (a half model's), `pow(2)`, `mean`,
    /// `+ eps`, `rsqrt`, `x * rsqrt` (the copy freed when its name is
    /// bound to it), `weight.to(float32)` over `width` and the product, the
    /// cast back; the normalised input and the mean go when it returns
    /// (measured: `scripts/measure/infer/NOTES.md` §15).
    fn rms_weight_fp32(&mut self, rows: u128, n: u128, width: u128) -> Id {
        let (peak, o) = rms_weight_fp32_peak(self.d.dt, rows, n, width);
        let [o] = self.sim.burst(peak, [o]);
        o
    }

    /// Gemma4RMSNorm: `_norm(x.float())`, times `weight.float()` over
    /// `width` unless `scale` is off (the value norm), cast back.
    fn scaled_norm(&mut self, rows: u128, n: u128, width: u128, scale: bool) -> Id {
        let (peak, o) = scaled_norm_peak(self.d.dt, rows, n, width, scale);
        let [o] = self.sim.burst(peak, [o]);
        o
    }

    /// LlamaRMSNorm (`x.to(fp32)`, `pow(2).mean`, `rsqrt`, `x * rsqrt`,
    /// `.to(dtype)`, `weight * x`); with `weight_first`, OLMo 2's and
    /// gpt-oss's `(weight * x_fp32).to(dtype)`.
    fn rms(&mut self, rows: u128, n: u128, weight_first: bool) -> Id {
        let (peak, o) = rms_peak(self.d.dt, rows, n, weight_first);
        let [o] = self.sim.burst(peak, [o]);
        o
    }

    /// GemmaRMSNorm: `_norm(x.float()) * (1 + weight.float())`, cast back.
    fn gemma_norm(&mut self, rows: u128, n: u128, width: u128) -> Id {
        let (peak, o) = gemma_norm_peak(self.d.dt, rows, n, width);
        let [o] = self.sim.burst(peak, [o]);
        o
    }

    /// `nn.LayerNorm`: the output, mean and rstd (dropped at once).
    fn layer_norm(&mut self, rows: u128, n: u128) -> Id {
        let dt = self.d.dt;
        let s = self.s();
        let o = s.a(dt * n);
        let mu = s.a(dt * rows);
        let rs = s.a(dt * rows);
        s.f(&[Some(mu), Some(rs)]);
        o
    }

    // ------------------------------------------------------------ rotary

    /// The rotary tables of one forward (`T` tokens), kept to its end: a
    /// cos and a sin per table (Gemma 3: two tables; Gemma 4's full
    /// layers' first, as measured, over their own head width), DeepSeek's
    /// one complex table.
    pub fn rotary_tables(&mut self, t: u128) -> [Option<Id>; 4] {
        let (dt, rd) = (self.d.dt, self.d.rd);
        let widths = [self.d.at(Span::Full, false).rd, rd];
        let mut out = [None; 4];
        let mut put = |k: usize, ids: [Option<Id>; 2]| out[2 * k..2 * k + 2].copy_from_slice(&ids);
        match self.spec.rope {
            RopeStyle::None => {}
            RopeStyle::Half | RopeStyle::HalfCat | RopeStyle::PartialCat => {
                let tables = usize::from(self.spec.rope_tables.clamp(1, 2));
                for (k, &width) in widths.iter().enumerate().take(tables) {
                    put(k, self.rotary(t, width, dt != 4));
                }
            }
            RopeStyle::HalfFp32 => {
                // OLMo 3: a table per layer type (`Olmo3RotaryEmbedding`).
                for k in 0..usize::from(self.spec.rope_tables.clamp(1, 2)) {
                    put(k, self.rotary(t, rd, false));
                }
            }
            RopeStyle::Split => put(0, self.rotary_split(t, rd)),
            RopeStyle::Complex => put(0, self.rotary_complex(t, rd)),
            RopeStyle::Interleave => put(0, self.rotary(t, self.d.rope, dt != 4)),
            RopeStyle::Mrope => put(0, self.rotary_mrope(t, rd)),
        }
        out
    }

    /// `LlamaRotaryEmbedding`: `inv_freq @ positions` in fp32, cat, cos and
    /// sin times the attention scaling, cast to the model's dtype unless
    /// `cast` is false.
    fn rotary(&mut self, t: u128, rd: u128, cast: bool) -> [Option<Id>; 2] {
        let dt = self.d.dt;
        let mut s = Run::default();
        let pf = s.a(4 * t);
        let fr = s.a(4 * t * rd / 2);
        s.f(&[pf]);
        let em = s.a(4 * t * rd);
        let c = s.a(4 * t * rd);
        let cm = s.a(4 * t * rd);
        s.f(&[c]);
        let sn = s.a(4 * t * rd);
        let sm = s.a(4 * t * rd);
        s.f(&[sn]);
        let out = if cast {
            let cd = s.a(dt * t * rd);
            let sd = s.a(dt * t * rd);
            s.f(&[fr, em, cm, sm]);
            [cd, sd]
        } else {
            s.f(&[fr, em]);
            [cm, sm]
        };
        self.sim.burst(s.max(), out).map(Some)
    }

    /// gpt-oss: cos and sin over `rd/2` frequencies (no cat).
    fn rotary_split(&mut self, t: u128, rd: u128) -> [Option<Id>; 2] {
        let dt = self.d.dt;
        let mut s = Run::default();
        let pf = s.a(4 * t);
        let fr = s.a(4 * t * rd / 2);
        s.f(&[pf]);
        let c = s.a(4 * t * rd / 2);
        let cm = s.a(4 * t * rd / 2);
        s.f(&[c]);
        let sn = s.a(4 * t * rd / 2);
        let sm = s.a(4 * t * rd / 2);
        s.f(&[sn]);
        let out = if dt != 4 {
            let cd = s.a(dt * t * rd / 2);
            let sd = s.a(dt * t * rd / 2);
            s.f(&[fr, cm, sm]);
            [cd, sd]
        } else {
            s.f(&[fr]);
            [cm, sm]
        };
        self.sim.burst(s.max(), out).map(Some)
    }

    /// DeepSeek: `freqs_cis = polar(1, freqs)`, complex64 (T, r/2).
    fn rotary_complex(&mut self, t: u128, r: u128) -> [Option<Id>; 2] {
        let mut s = Run::default();
        let pf = s.a(4 * t);
        let fr = s.a(4 * t * r / 2);
        s.f(&[pf]);
        let on = s.a(4 * t * r / 2);
        let po = s.a(8 * t * r / 2);
        s.f(&[on]);
        let fc = s.a(8 * t * r / 2);
        s.f(&[po, fr]);
        let [fc] = self.sim.burst(s.max(), [fc]);
        [Some(fc), None]
    }

    /// `apply_rotary_pos_emb` on `n` elements of q or k.
    fn rope_apply(&mut self, n: u128) -> Id {
        let dt = self.d.dt;
        let mut s = Run::default();
        let qe = match self.spec.rope {
            RopeStyle::Split => {
                let (m1, m2) = (s.a(dt * n / 2), s.a(dt * n / 2));
                let sb = s.a(dt * n / 2);
                s.f(&[m1, m2]);
                let (m3, m4) = (s.a(dt * n / 2), s.a(dt * n / 2));
                let ad = s.a(dt * n / 2);
                s.f(&[m3, m4]);
                let qe = s.a(dt * n);
                s.f(&[sb, ad]);
                qe
            }
            RopeStyle::HalfFp32 => {
                // q (model dtype) × cos (fp32) promotes to fp32.
                let qc = s.a(4 * n);
                let ng = s.a(dt * n / 2);
                let ct = s.a(dt * n);
                s.f(&[ng]);
                let qs = s.a(4 * n);
                s.f(&[ct]);
                let qe = s.a(4 * n);
                s.f(&[qc, qs]);
                qe
            }
            RopeStyle::HalfCat | RopeStyle::PartialCat | RopeStyle::Mrope => {
                // The first rd of each head's hd channels: q_rot * cos,
                // -x2 and cat for rotate_half, * sin, the sum, then the
                // sum and the pass-through part concatenated (Phi-3's rd
                // is the whole head: the rest is empty, the cat a copy).
                // Source: transformers 5.23 `glm4_moe`'s and `phi3`'s
                // `apply_rotary_pos_emb`.
                let r = n * self.d.rd / self.d.head_dim.max(1);
                let qr = rotated(&mut s, dt, r);
                let qe = s.a(dt * n);
                s.f(&[qr]);
                qe
            }
            RopeStyle::None | RopeStyle::Half | RopeStyle::Complex | RopeStyle::Interleave => {
                rotated(&mut s, dt, n)
            }
        };
        let [qe] = self.sim.burst(s.max(), [qe]);
        qe
    }

    // ------------------------------------------------------------ masks

    /// `sdpa_mask` with the sliding overlay: a bool (1, 1, q, kv).
    fn sliding_mask(&mut self, q: u128, kv: u128) -> Id {
        let b = self.d.b;
        let mut s = Run::default();
        let ab = s.a(8 * b);
        let ah = s.a(8);
        let t = s.a(8 * q);
        let qa = s.a(8 * q);
        s.f(&[t]);
        let t = s.a(8 * kv);
        let ka = s.a(8 * kv);
        s.f(&[t]);
        let one = s.a(1);
        let sub = s.a(8 * q);
        let gt = s.a(q * kv);
        s.f(&[sub]);
        let an = s.a(q * kv);
        s.f(&[gt, one]);
        let le = s.a(q * kv);
        let m = s.a(q * kv);
        s.f(&[le, an, ab, ah, qa, ka]);
        let [m] = self.sim.burst(s.max(), [m]);
        m
    }

    /// `create_chunked_causal_mask` (Llama 4): the chunk overlay reads each
    /// sequence's left padding (`left_padding[batch_idx]`, zeros without an
    /// attention mask), so the mask is per sequence, a bool (B, 1, q, kv):
    /// the key and query chunk indices (int64, per sequence), their `eq`,
    /// its `and` with the overlay's start, the causal `le` (1, 1, q, kv) and
    /// the final `and`. Measured op by op (transformers 5.23
    /// `masking_utils.py` `chunked_overlay`;
    /// `scripts/measure/families/llama4/generate/NOTES.md`).
    fn chunked_mask(&mut self, q: u128, kv: u128) -> Id {
        let b = self.d.b;
        let mut s = Run::default();
        let lp = s.a(8 * b);
        let ab = s.a(8 * b);
        let ah = s.a(8);
        let t = s.a(8 * q);
        let qa = s.a(8 * q);
        s.f(&[t]);
        let t = s.a(8 * kv);
        let ka = s.a(8 * kv);
        s.f(&[t]);
        let one = s.a(1);
        let mut chunk = |n: u128| {
            let ix = s.a(8 * b);
            let sub = s.a(8 * b * n);
            s.f(&[ix]);
            let c = s.a(8 * b * n);
            s.f(&[sub]);
            c
        };
        let (ck, cq) = (chunk(kv), chunk(q));
        let eq = s.a(b * q * kv);
        s.f(&[ck, cq]);
        let ov = s.a(b * q * kv);
        s.f(&[eq, one]);
        let le = s.a(q * kv);
        let m = s.a(b * q * kv);
        s.f(&[le, ov, ab, ah, qa, ka, lp]);
        let [m] = self.sim.burst(s.max(), [m]);
        m
    }

    /// `eager_mask`: the bool mask, then `where(mask, 0, min)` as a float
    /// (B, 1, q, kv).
    fn eager_mask(&mut self, q: u128, kv: u128, sliding: bool) -> Id {
        let (b, dt) = (self.d.b, self.d.dt);
        let m = if sliding && self.spec.chunked {
            self.chunked_mask(q, kv)
        } else if sliding {
            self.sliding_mask(q, kv)
        } else {
            self.causal_mask(1, q, kv)
        };
        let s = self.s();
        let z = s.a(dt);
        let sc = s.a(dt);
        let w = s.a(dt * b * q * kv);
        s.f(&[Some(sc), Some(z), Some(m)]);
        w
    }

    /// A mask built with the token types (Gemma 4 12B's
    /// `token_type_ids_mask_function` or'ed in): a boolean (B, 1, q, kv)
    /// for every layer kind whatever the window, per sequence (measured:
    /// `scripts/measure/gemma4/generate_unified_rows.jsonl`, `GT_DEBUG=1`
    /// traces: two `bitwise_or` masks alive through the forward).
    fn token_type_mask(&mut self, q: u128, kv: u128) -> Id {
        self.causal_mask(self.d.b, q, kv)
    }

    /// A boolean causal mask of `rows × q × kv` (`rows` 1, or the batch
    /// for a mask per sequence), with the aranges it is built from.
    fn causal_mask(&mut self, rows: u128, q: u128, kv: u128) -> Id {
        let b = self.d.b;
        let s = self.s();
        let ab = s.a(8 * b);
        let ah = s.a(8);
        let t = s.a(8 * q);
        let qa = s.a(8 * q);
        s.free(t);
        let t = s.a(8 * kv);
        let ka = s.a(8 * kv);
        s.free(t);
        let m = s.a(rows * q * kv);
        s.f(&[Some(ab), Some(ah), Some(qa), Some(ka)]);
        m
    }

    /// The masks of one forward, by span (`create_causal_mask`,
    /// `create_sliding_window_causal_mask`): under SDPA, no mask for full
    /// layers (`is_causal`) and a sliding layer's once its keys reach the
    /// window; eager builds both as floats.
    pub fn masks(&mut self, q: u128, spans: &[(Span, u128)]) -> Carried {
        let mut masks = [None, None];
        for &(span, kv) in spans {
            masks[span as usize] = match (self.attn, span) {
                (Attn::Sdpa, _) if self.spec.token_type_mask => Some(self.token_type_mask(q, kv)),
                (Attn::Sdpa, Span::Full) => None,
                (Attn::Sdpa, Span::Sliding) if kv < self.d.window => None,
                (Attn::Sdpa, Span::Sliding) if self.spec.chunked => Some(self.chunked_mask(q, kv)),
                (Attn::Sdpa, Span::Sliding) => Some(self.sliding_mask(q, kv)),
                (Attn::Eager, span) => Some(self.eager_mask(q, kv, span == Span::Sliding)),
                // flash-attn takes no mask (the codec refuses it here: not
                // measured for inference).
                (Attn::FlashAttention2, _) => None,
            };
        }
        Carried { masks }
    }

    // ------------------------------------------------------------ attention

    /// The attention on query (B, H, q, hdq) and the cache's keys and
    /// values (B, Hkv, kv, ·): returns the output and what the layer keeps
    /// to its end (eager's weights).
    fn attention(
        &mut self,
        q: u128,
        kv: u128,
        mask: bool,
        hd: (u128, u128),
        heads: (u128, u128),
    ) -> (Id, Option<Id>) {
        let (hdq, hdv) = hd;
        let (h, hkv) = heads;
        let (dt, b) = (self.d.dt, self.d.b);
        if self.attn == Attn::Eager {
            return self.attn_eager(q, kv, mask, hd, heads);
        }
        let (mut hq, mut hk) = (h, hkv);
        let mut rep = [None, None];
        if h != hkv {
            if !mask && hdq == hdv && hdq <= 256 {
                // use_gqa_in_sdpa: enable_gqa=True
            } else if q == 1 {
                // pack_gqa: (B, Hkv, n_rep, d) queries, views
                hq = hkv;
            } else {
                if hkv > 1 {
                    rep = [
                        Some(self.sim.a(dt * b * h * kv * hdq)),
                        Some(self.sim.a(dt * b * h * kv * hdv)),
                    ];
                }
                hk = h;
            }
        }
        let qq = if h != hkv && q == 1 && hq == hkv {
            h / hkv
        } else {
            q
        };
        let out = self.attn_kernel(qq, (hq, hk), kv, hd, mask, q);
        self.sim.f(&rep);
        (out, None)
    }

    /// CUDA's SDPA backend choice (flash, then memory-efficient, then
    /// math) and what that kernel allocates.
    ///
    /// torch 2.15 (`sdp_utils.cpp: can_use_mem_efficient_attention`) runs
    /// grouped-query heads (`enable_gqa`) in the memory-efficient kernel
    /// natively on NVIDIA GPUs (`check_batch_size_and_num_heads_dense<
    /// supports_gqa = true, .., supports_mqa = true>`; the wheel's
    /// `scaled_dot_product_attention` docstring: "Memory-efficient attention
    /// also supports GQA on NVIDIA CUDA"): an fp32 model's grouped heads
    /// never reach the math kernel's (q, kv) scores. A boolean mask becomes
    /// the bias by `attention.cpp: convert_boolean_attn_mask` =
    /// `where(mask, 0, -inf)` (two scalars and the output, no `logical_not`
    /// copy), which `preprocess_mask` pads to a multiple of 8 keys
    /// (`pad_bias<8>`) before expanding it (a view) to every head.
    fn attn_kernel(
        &mut self,
        q: u128,
        heads: (u128, u128),
        kv: u128,
        hd: (u128, u128),
        mask: bool,
        qm: u128,
    ) -> Id {
        let (hq, _) = heads;
        let (hdq, hdv) = hd;
        let (b, dt) = (self.d.b, self.d.dt);
        let half = dt == 2;
        if !mask && half && hdq == hdv && hdq <= 256 {
            let out = self.sim.a(dt * b * q * hq * hdv);
            let lse = self.sim.a(4 * b * hq * q);
            self.sim.free(lse);
            return out;
        }
        let align = if half { 8 } else { 4 };
        if !(hdq % align == 0 && hdv % align == 0) {
            return self.attn_math(q, heads, kv, hd, !mask && qm > 1);
        }
        let s = self.s();
        let mut m = None;
        if mask {
            // convert_boolean_attn_mask: where(mask, 0, -inf), batch-expanded
            let (s0, s1) = (s.a(dt), s.a(dt));
            m = Some(s.a(dt * b * qm * kv));
            s.f(&[Some(s1), Some(s0)]);
            if !kv.is_multiple_of(8) {
                // preprocess_mask: pad_bias<8>, then expanded (a view)
                let pd = s.a(dt * b * qm * (kv + 8 - kv % 8));
                s.f(&[m]);
                m = Some(pd);
            }
        }
        let out = s.a(dt * b * q * hq * hdv);
        s.f(&[m]);
        out
    }

    /// `_scaled_dot_product_attention_math` (fp32; it runs here only for
    /// head widths the memory-efficient kernel cannot align).
    fn attn_math(
        &mut self,
        q: u128,
        heads: (u128, u128),
        kv: u128,
        hd: (u128, u128),
        causal: bool,
    ) -> Id {
        let (hq, hk) = heads;
        let (hdq, hdv) = hd;
        let (b, e) = (self.d.b, 4);
        let s = self.s();
        let qs = s.a(e * b * hq * q * hdq);
        let mut wm = None;
        if causal {
            let o1 = s.a(q * kv);
            let tr = s.a(q * kv);
            s.free(o1);
            let (s1, s2) = (s.a(4), s.a(4));
            wm = Some(s.a(4 * q * kv));
            s.f(&[Some(s2), Some(s1), Some(tr)]);
        }
        let rep = if hq != hk {
            [
                Some(s.a(e * b * hq * kv * hdq)),
                Some(s.a(e * b * hq * kv * hdv)),
            ]
        } else {
            [None, None]
        };
        let kt = s.a(e * b * hq * hdq * kv);
        let qc = s.a_if(q > 1, e * b * hq * q * hdq);
        let mut sc = s.a(e * b * hq * q * kv);
        s.f(&[qc, Some(kt)]);
        if wm.is_some() {
            let ad = s.a(e * b * hq * q * kv);
            s.free(sc);
            sc = ad;
        }
        let sm = s.a(e * b * hq * q * kv);
        s.free(sc);
        let mut o = s.a(e * b * hq * q * hdv);
        s.f(&rep);
        s.f(&[Some(qs), wm, Some(sm)]);
        if q > 1 {
            let oc = s.a(e * b * hq * q * hdv);
            s.free(o);
            o = oc;
        }
        o
    }

    /// `eager_attention_forward`: repeat_kv, scores, softcapping, the mask,
    /// the softmax in fp32 (gpt-oss: over a sink column, in the model's
    /// dtype), the weights cast back (kept to the end of the layer), the
    /// output made contiguous.
    fn attn_eager(
        &mut self,
        q: u128,
        kv: u128,
        mask: bool,
        hd: (u128, u128),
        heads: (u128, u128),
    ) -> (Id, Option<Id>) {
        let (hdq, hdv) = hd;
        let (h, hkv) = heads;
        let (b, dt) = (self.d.b, self.d.dt);
        let spec = self.spec;
        let s = &mut self.sim;
        let rep = if h != hkv && hkv > 1 {
            [
                Some(s.a(dt * b * h * kv * hdq)),
                Some(s.a(dt * b * h * kv * hdv)),
            ]
        } else {
            [None, None]
        };
        // One key/value head: `repeat_kv`'s expand is a view of stride 0,
        // which each `matmul` copies whole to fold batch and heads into
        // one dimension (a view when the batch is 1), for its `bmm` only
        // (measured: `scripts/measure/gemma4/`, eager rows).
        let mqa = h != hkv && hkv == 1 && b > 1;
        // The rotated query is a permuted view for rotate_half RoPE: bmm
        // copies it.
        let qc = s.a_if(q > 1 && spec.rope != RopeStyle::Split, dt * b * h * q * hdq);
        let kc = s.a_if(mqa, dt * b * h * kv * hdq);
        let n = b * h * q * kv;
        let sc = s.a(dt * n);
        s.f(&[qc, kc]);
        let mut x = s.a(dt * n);
        s.free(sc);
        if spec.attn_softcap {
            let d = s.a(dt * n);
            s.free(x);
            let t = s.a(dt * n);
            s.free(d);
            x = s.a(dt * n);
            s.free(t);
        }
        if mask {
            let y = s.a(dt * n);
            s.free(x);
            x = y;
        }
        let (w, keep_sub) = if spec.sinks {
            let n1 = b * h * q * (kv + 1);
            let cb = s.a(dt * n1);
            let mv = s.a(dt * b * h * q);
            let mi = s.a(8 * b * h * q);
            s.free(mi);
            let sb = s.a(dt * n1);
            s.f(&[Some(mv), Some(cb)]);
            let w = s.a(dt * n1);
            s.free(x);
            (w, Some(sb))
        } else if dt != 4 && !spec.softmax_in_dtype {
            let c = s.a(4 * n);
            let smx = s.a(4 * n);
            s.free(c);
            let w = s.a(dt * n);
            s.f(&[Some(smx), Some(x)]);
            (w, None)
        } else {
            let w = s.a(dt * n);
            s.free(x);
            (w, None)
        };
        let vc = s.a_if(mqa, dt * b * h * kv * hdv);
        let mut o = s.a(dt * b * h * q * hdv);
        s.f(&[vc]);
        if q > 1 {
            let oc = s.a(dt * b * h * q * hdv);
            s.free(o);
            o = oc;
        }
        s.f(&rep);
        s.f(&[keep_sub]);
        (o, Some(w))
    }

    // ------------------------------------------------------------ the layer

    /// The cache's update in a layer: `DynamicLayer.update` (keys = cat,
    /// then values = cat, each replacing the old one) or
    /// `DynamicSlidingWindowLayer.update` (both cats before either is
    /// replaced). `old` are the layer's cached keys and values.
    fn cache_update(
        &mut self,
        span: Span,
        old: [Option<Id>; 2],
        stored: u128,
        kv_bytes: (u128, u128),
    ) -> [Id; 2] {
        let b = self.d.b;
        let s = self.s();
        s.tag(Cat::Kv);
        let kn = s.a(b * kv_bytes.0 * stored);
        let vn = match span {
            Span::Sliding => {
                let vn = s.a(b * kv_bytes.1 * stored);
                s.f(&old);
                vn
            }
            Span::Full => {
                s.f(&old[..1]);
                let vn = s.a(b * kv_bytes.1 * stored);
                s.f(&old[1..]);
                vn
            }
        };
        s.tag(Cat::Act);
        [kn, vn]
    }
}

/// One layer's place in a forward: its span and kind, the tokens its
/// cache stores after the update and the keys attention sees, and its
/// cached keys and values before it.
#[derive(Clone, Copy, Debug)]
pub struct LayerAt {
    pub span: Span,
    pub kind: LayerKind,
    /// Query tokens per sequence (P in prefill, 1 in decode).
    pub q: u128,
    pub stored: u128,
    pub kv: u128,
    /// The cached keys and values before the layer runs, or a Gated
    /// DeltaNet layer's convolution and recurrent states.
    pub old: [Option<Id>; 2],
    /// A Gated DeltaNet layer (no keys and values: a recurrent state).
    pub linear: bool,
    /// A layer reusing an earlier layer's keys and values (Gemma 4's last
    /// layers): no key or value projection, no cache of its own.
    pub shared: bool,
    /// An MLP (or experts) alone behind its norm (Nemotron-H's `-`
    /// layers, [`crate::model::family::Blocks::Single`]): no cache.
    pub ffn_only: bool,
}

impl Forward<'_> {
    /// A decoder layer on input `x` (`T = B·q` tokens): its output, with
    /// its cache's new keys and values (none on a layer reusing them).
    pub fn layer(&mut self, at: LayerAt, masks: [bool; 2]) -> (Id, [Option<Id>; 2]) {
        let d = self.d;
        let t = d.b * at.q;
        let mask = masks[at.span as usize];
        if self.spec.blocks == Blocks::Single {
            return self.single_block(t, at, mask);
        }
        self.sim.stage(Stage::Attention);
        let (o, mut keep, cache) = self.attn_block(t, at, mask);
        self.sim.stage(Stage::Mlp);
        let dt = d.dt;
        let h = d.h;
        let out = match (self.spec.norm_place, self.spec.layout) {
            (NormPlace::Sandwich, _) => {
                let on = self.norm(t, t * h);
                self.sim.free(o);
                let r1 = self.sim.a(dt * t * h);
                self.sim.free(on);
                let n2 = self.norm(t, t * h);
                let (m, held) = self.sandwich_ffn(t, at.kind, n2, &mut keep[0]);
                let dn = self.norm(t, t * h);
                self.sim.free(m);
                let r2 = self.sim.a(dt * t * h);
                self.sim.f(&[Some(dn), Some(r1), keep[0], keep[1]]);
                self.sim.f(&held);
                self.per_layer_input(t, r2)
            }
            (NormPlace::Post, _) => {
                let on = self.norm(t, t * h);
                self.sim.free(o);
                let r1 = self.sim.a(dt * t * h);
                self.sim.free(on);
                let m = self.ffn(t, at.kind);
                let dn = self.norm(t, t * h);
                self.sim.free(m);
                let r2 = self.sim.a(dt * t * h);
                self.sim.f(&[Some(dn), Some(r1), keep[0], keep[1]]);
                r2
            }
            (NormPlace::Pre, Layout::Gpt2) => {
                let r1 = self.sim.a(dt * t * h);
                // ln_1's output, released after the residual add.
                self.sim.f(&[keep[1]]);
                let n2 = self.norm(t, t * h);
                let m = self.ffn(t, at.kind);
                let r2 = self.sim.a(dt * t * h);
                self.sim.f(&[Some(n2), Some(r1), Some(o), Some(m), keep[0]]);
                r2
            }
            (NormPlace::Pre, Layout::NeoX) => {
                // `use_parallel_residual`: the MLP reads the layer's input
                // through its own norm while the attention's output waits;
                // `mlp + attn` first, then `+ x` (transformers 5.23
                // `GPTNeoXLayer.forward`).
                let n2 = self.norm(t, t * h);
                let m = self.ffn(t, at.kind);
                self.sim.free(n2);
                let s = self.sim.a(dt * t * h);
                let r2 = self.sim.a(dt * t * h);
                self.sim.f(&[Some(s), Some(m), Some(o), keep[0], keep[1]]);
                r2
            }
            (NormPlace::Pre, Layout::Llama) if self.spec.granite_scales => {
                // `residual + hidden_states * residual_multiplier` after
                // each block: the product, the sum, the product freed.
                let sc = self.sim.a(dt * t * h);
                let r1 = self.sim.a(dt * t * h);
                self.sim.f(&[Some(sc), Some(o)]);
                let n2 = self.norm(t, t * h);
                let m = self.ffn(t, at.kind);
                self.sim.free(n2);
                let sc = self.sim.a(dt * t * h);
                let r2 = self.sim.a(dt * t * h);
                let held = self.held.take();
                self.sim
                    .f(&[Some(sc), Some(m), Some(r1), keep[0], keep[1], held]);
                r2
            }
            (NormPlace::Pre, Layout::Llama) => {
                let r1 = self.sim.a(dt * t * h);
                let held = self.spec.attn_out_held.then_some(o);
                if held.is_none() {
                    self.sim.free(o);
                }
                let n2 = self.norm(t, t * h);
                let m = self.ffn(t, at.kind);
                self.sim.free(n2);
                let r2 = self.sim.a(dt * t * h);
                self.sim.f(&[Some(m), Some(r1), held, keep[0], keep[1]]);
                r2
            }
        };
        (out, cache)
    }

    /// Nemotron-H's block (`NemotronHBlock.forward`): its norm, one mixer
    /// (a Mamba-2 layer, attention, or the MLP), `residual + output`, the
    /// output freed when the block returns.
    fn single_block(&mut self, t: u128, at: LayerAt, mask: bool) -> (Id, [Option<Id>; 2]) {
        let (dt, h) = (self.d.dt, self.d.h);
        if at.ffn_only {
            self.sim.stage(Stage::Mlp);
            let n1 = self.norm(t, t * h);
            let m = self.ffn(t, at.kind);
            self.sim.free(n1);
            let r = self.sim.a(dt * t * h);
            self.sim.free(m);
            return (r, [None, None]);
        }
        self.sim.stage(Stage::Attention);
        let (o, keep, cache) = self.attn_block(t, at, mask);
        let r = self.sim.a(dt * t * h);
        self.sim.f(&[Some(o), keep[0], keep[1]]);
        (r, cache)
    }

    /// Gemma 4's per-layer input after the MLP's residual `r2`
    /// (`per_layer_input_gate`, the activation, the product with the
    /// layer's slice of the per-layer inputs, `per_layer_projection`,
    /// `post_per_layer_input_norm`, the residual add; `layer_scalar` in
    /// place). Returns the layer's output; `r2` itself without one.
    fn per_layer_input(&mut self, t: u128, r2: Id) -> Id {
        let (dt, h, ple) = (self.d.dt, self.d.h, self.d.ple);
        if ple == 0 {
            return r2;
        }
        let g = self.lin(t, h, ple);
        let act = self.sim.a(dt * t * ple);
        self.sim.free(g);
        let m = self.sim.a(dt * t * ple);
        self.sim.free(act);
        let p = self.lin(t, ple, h);
        self.sim.free(m);
        let pn = self.norm(t, t * h);
        self.sim.free(p);
        let out = self.sim.a(dt * t * h);
        self.sim.f(&[Some(pn), Some(r2)]);
        out
    }

    /// Self-attention: returns the output projection, what the layer keeps
    /// to its end (eager's weights; GPT-2 layout: ln_1's output) and the
    /// cache's new keys and values.
    fn attn_block(
        &mut self,
        t: u128,
        at: LayerAt,
        mask: bool,
    ) -> (Id, [Option<Id>; 2], [Option<Id>; 2]) {
        if self.spec.varies_by_layer() {
            return self.attn_per_layer(t, at, mask);
        }
        let (o, keep, cache) = self.attn_kinds(t, at, mask);
        (o, keep, cache.map(Some))
    }

    /// Gemma 4's attention (`Gemma4TextAttention.forward`, transformers
    /// 5.23): the input norm, `q_proj`, `q_norm`, RoPE; then `k_proj` and
    /// `v_proj` (a global layer whose keys are its values has no `v_proj`:
    /// `k_proj`'s output, alive to the value norm, is both), `k_norm`,
    /// RoPE, the value norm (no weight) and the cache's update. A layer
    /// reusing keys and values does none of these: it attends to the last
    /// earlier layer of its kind's (`shared_kv_states`), at `at.kv` keys.
    fn attn_per_layer(
        &mut self,
        t: u128,
        at: LayerAt,
        mask: bool,
    ) -> (Id, [Option<Id>; 2], [Option<Id>; 2]) {
        let d = self.d;
        let (dt, h, hq, hkv, hd) = (d.dt, d.h, d.heads, d.kv_heads, d.head_dim);
        let n1 = self.norm(t, t * h);
        let qn = t * hq * hd;
        let qp = self.lin(t, h, hq * hd);
        let qq = self.scaled_norm(t * hq, qn, hd, true);
        self.sim.free(qp);
        let qe = self.rope_apply(qn);
        self.sim.free(qq);
        let cache = if at.shared {
            [None, None]
        } else {
            let kn = t * hkv * hd;
            let k_as_v = at.span == Span::Full && d.global.k_eq_v;
            let kp = self.lin(t, h, hkv * hd);
            let vp = (!k_as_v).then(|| self.lin(t, h, hkv * hd));
            let kk = self.scaled_norm(t * hkv, kn, hd, true);
            if !k_as_v {
                self.sim.free(kp);
            }
            let ke = self.rope_apply(kn);
            self.sim.free(kk);
            let vv = self.scaled_norm(t * hkv, kn, hd, false);
            self.sim.f(&[vp, k_as_v.then_some(kp)]);
            let half = (hkv * hd * dt, hkv * hd * dt);
            let cache = self.cache_update(at.span, at.old, at.stored, half);
            self.sim.f(&[Some(ke), Some(vv)]);
            cache.map(Some)
        };
        let (out, keep) = self.attention(at.q, at.kv, mask, (hd, hd), (hq, hkv));
        let o = self.lin(t, hq * hd, h);
        self.sim.f(&[Some(out), Some(qe), Some(n1)]);
        (o, [keep, None], cache)
    }

    /// The attention of a layer like every other of its model: full or
    /// sliding, Gated DeltaNet, gated, latent.
    fn attn_kinds(&mut self, t: u128, at: LayerAt, mask: bool) -> (Id, [Option<Id>; 2], [Id; 2]) {
        let d = self.d;
        let (dt, h, hq, hkv, hd) = (d.dt, d.h, d.heads, d.kv_heads, d.head_dim);
        let spec = self.spec;
        if at.linear {
            return if d.short_conv {
                self.short_conv_block(t, at)
            } else if d.mamba2 {
                self.mamba2_block(t, at)
            } else {
                self.deltanet_block(t, at)
            };
        }
        if spec.attn_gate {
            return self.attn_gated(t, at, mask);
        }
        if spec.qkv == Qkv::Latent {
            return self.attn_latent(t, at, mask);
        }
        let half = (hkv * hd * dt, hkv * hd * dt);
        let n1 = match spec.norm_place {
            NormPlace::Post => None,
            NormPlace::Pre | NormPlace::Sandwich => Some(self.norm(t, t * h)),
        };
        if spec.layout == Layout::Gpt2 {
            let qkv = self.lin(t, h, h + 2 * hkv * hd);
            let cache = self.cache_update(at.span, at.old, at.stored, half);
            let (out, keep) = self.attention(at.q, at.kv, mask, (hd, hd), (hq, hkv));
            let o = self.lin(t, h, h);
            self.sim.f(&[Some(out), Some(qkv)]);
            return (o, [keep, n1], cache);
        }
        if spec.qkv == Qkv::Fused {
            // Phi-3's `qkv_proj`, GPT-NeoX's `query_key_value`: one
            // projection (q, k, v are views of it), the rotary part of q
            // and k rotated and concatenated with the rest
            // (`Phi3Attention.forward`, `GPTNeoXAttention.forward`).
            let qkv = self.lin(t, h, (hq + 2 * hkv) * hd);
            let qe = self.rope_apply(t * hq * hd);
            let ke = self.rope_apply(t * hkv * hd);
            let cache = self.cache_update(at.span, at.old, at.stored, half);
            self.sim.free(ke);
            let (out, keep) = self.attention(at.q, at.kv, mask, (hd, hd), (hq, hkv));
            let o = self.lin(t, hq * hd, h);
            self.sim.f(&[Some(out), Some(qkv), Some(qe), n1]);
            return (o, [keep, None], cache);
        }
        let (qe, vp, scales) = if spec.rope == RopeStyle::Complex {
            self.projections_complex(t, at)
        } else {
            let (qe, vp) = self.projections(t);
            (qe, vp, [None; 2])
        };
        let cache = self.cache_update(at.span, at.old, at.stored, half);
        self.sim.f(&[Some(qe.1), Some(vp)]);
        let (out, keep) = self.attention(at.q, at.kv, mask, (hd, hd), (hq, hkv));
        let o = self.lin(t, hq * hd, h);
        self.sim.f(&[Some(out), Some(qe.0), n1]);
        self.sim.f(&scales);
        (o, [keep, None], cache)
    }

    /// q, k and v projections with the family's q/k norms and RoPE:
    /// returns the rotated (q, k) and v.
    fn projections(&mut self, t: u128) -> ((Id, Id), Id) {
        let d = self.d;
        let (dt, hq, hkv, hd, h) = (d.dt, d.heads, d.kv_heads, d.head_dim, d.h);
        let (qn, kn) = (t * hq * hd, t * hkv * hd);
        let qp = self.lin(t, h, hq * hd);
        match self.spec.qk_norm {
            QkNorm::PerHead if self.spec.norm == Norm::RmsPlusOne => {
                // Gemma 3: q, k, v projected, then q_norm and k_norm.
                let kp = self.lin(t, h, hkv * hd);
                let vp = self.lin(t, h, hkv * hd);
                let qq = self.gemma_norm(t * hq, qn, hd);
                self.sim.free(qp);
                let kk = self.gemma_norm(t * hkv, kn, hd);
                self.sim.free(kp);
                let qe = self.rope_apply(qn);
                let ke = self.rope_apply(kn);
                self.sim.f(&[Some(qq), Some(kk)]);
                ((qe, ke), vp)
            }
            QkNorm::PerHead | QkNorm::Whole => {
                // Qwen3: q_proj → q_norm, k_proj → k_norm, v_proj; OLMo 2
                // the same over the whole projection.
                let rows = |heads| {
                    if self.spec.qk_norm == QkNorm::Whole {
                        t
                    } else {
                        t * heads
                    }
                };
                let (rq, rk) = (rows(hq), rows(hkv));
                let qq = self.norm(rq, qn);
                self.sim.free(qp);
                let kp = self.lin(t, h, hkv * hd);
                let kk = self.norm(rk, kn);
                self.sim.free(kp);
                let vp = self.lin(t, h, hkv * hd);
                let qe = self.rope_apply(qn);
                let ke = self.rope_apply(kn);
                let (qe, ke) = if self.spec.rope == RopeStyle::HalfFp32 && dt != 4 {
                    let q2 = self.sim.a(dt * qn);
                    let k2 = self.sim.a(dt * kn);
                    self.sim.f(&[Some(qe), Some(ke)]);
                    (q2, k2)
                } else {
                    (qe, ke)
                };
                self.sim.f(&[Some(qq), Some(kk)]);
                ((qe, ke), vp)
            }
            // Llama 4's L2 norm comes with its complex rotary
            // ([`Forward::projections_complex`]), never here.
            QkNorm::None | QkNorm::L2 => {
                let kp = self.lin(t, h, hkv * hd);
                let vp = self.lin(t, h, hkv * hd);
                let qe = self.rope_apply(qn);
                let ke = self.rope_apply(kn);
                self.sim.f(&[Some(qp), Some(kp)]);
                ((qe, ke), vp)
            }
        }
    }

    /// Llama 4's q, k and v (transformers 5.23 `Llama4TextAttention.forward`,
    /// measured op by op: `scripts/measure/families/llama4/generate/`). On
    /// a rotated layer `apply_rotary_emb` turns q and k together: their fp32
    /// copies, the complex products, the casts back (in fp32 the copies and
    /// casts are the tensors themselves), then the L2 norm of each
    /// (`QkNorm::L2`). On a layer without RoPE (`Spec::nope_full`) the
    /// temperature: the positions (int64) and the scales (fp32), kept to
    /// the attention's end, and the query times the scales (fp32), cast
    /// back. Returns (q, k), v and the temperature's tensors.
    fn projections_complex(&mut self, t: u128, at: LayerAt) -> ((Id, Id), Id, [Option<Id>; 2]) {
        let d = self.d;
        let (dt, hq, hkv, hd, h) = (d.dt, d.heads, d.kv_heads, d.head_dim, d.h);
        let (qn, kn) = (t * hq * hd, t * hkv * hd);
        let qp = self.lin(t, h, hq * hd);
        let kp = self.lin(t, h, hkv * hd);
        let vp = self.lin(t, h, hkv * hd);
        let cast = dt != 4;
        if self.spec.nope_full && at.span == Span::Full {
            if !self.spec.query_scale {
                return ((qp, kp), vp, [None; 2]);
            }
            let s = &mut self.sim;
            let ar = s.a(8 * at.q);
            let pos = s.a(8 * at.q);
            s.free(ar);
            let mut x = s.a(4 * at.q);
            // + 1, / floor_scale, floor, log1p, * attn_scale, + 1
            for _ in 0..6 {
                let y = s.a(4 * at.q);
                s.free(x);
                x = y;
            }
            let qs = s.a(4 * qn);
            let q = if cast {
                let q = s.a(dt * qn);
                s.free(qs);
                q
            } else {
                qs
            };
            s.free(qp);
            return ((q, kp), vp, [Some(pos), Some(x)]);
        }
        let s = &mut self.sim;
        let qf = s.a_if(cast, 4 * qn);
        let kf = s.a_if(cast, 4 * kn);
        let (qx, kx) = (s.a(4 * qn), s.a(4 * kn));
        let (qe, ke) = if cast {
            let (qo, ko) = (s.a(dt * qn), s.a(dt * kn));
            s.f(&[qf, kf, Some(qx), Some(kx)]);
            (qo, ko)
        } else {
            (qx, kx)
        };
        s.f(&[Some(qp), Some(kp)]);
        if self.spec.qk_norm != QkNorm::L2 {
            return ((qe, ke), vp, [None; 2]);
        }
        let q = self.l2_norm(qn);
        self.sim.free(qe);
        let k = self.l2_norm(kn);
        self.sim.free(ke);
        ((q, k), vp, [None; 2])
    }

    /// `Llama4TextL2Norm` on `n` elements, over rows of `head_dim`: the fp32
    /// copy (none in fp32), its square, mean, `+ eps`, rsqrt, the product,
    /// the cast back (none in fp32).
    fn l2_norm(&mut self, n: u128) -> Id {
        let (dt, hd) = (self.d.dt, self.d.head_dim.max(1));
        let s = &mut self.sim;
        let xf = s.a_if(dt != 4, 4 * n);
        let pw = s.a(4 * n);
        let mut r = s.a(4 * n / hd);
        s.free(pw);
        for _ in 0..2 {
            let y = s.a(4 * n / hd);
            s.free(r);
            r = y;
        }
        let m = s.a(4 * n);
        s.f(&[Some(r), xf]);
        if dt != 4 {
            let out = s.a(dt * n);
            s.free(m);
            out
        } else {
            m
        }
    }

    /// DeepSeek's latent attention (`q_lora_rank` none): q_proj, the
    /// compressed kv and rotary key, the cache of the latent, `kv_b_proj`
    /// over every cached token, keys assembled, SDPA with unequal head
    /// widths.
    fn attn_latent(&mut self, t: u128, at: LayerAt, mask: bool) -> (Id, [Option<Id>; 2], [Id; 2]) {
        let d = self.d;
        let (dt, h, hq, b) = (d.dt, d.h, d.heads, d.b);
        let (r_lat, r, vd) = (d.latent, d.rope, d.v_head);
        let qk = d.head_dim;
        let nope = qk - r;
        let n1 = self.norm(t, t * h);
        let qp = self.lin(t, h, hq * qk);
        let ckv = self.lin(t, h, r_lat + r);
        let kn = self.norm(t, t * r_lat);
        let s = &mut self.sim;
        let xq = s.a(4 * t * hq * r);
        let xk = s.a(4 * t * r);
        let cq = s.a(4 * t * hq * r);
        let qpe = s.a(dt * t * hq * r);
        s.free(cq);
        let ck = s.a(4 * t * r);
        let kpe = s.a(dt * t * r);
        s.f(&[Some(ck), Some(xq), Some(xk)]);
        let cache = self.cache_update(at.span, at.old, at.stored, (r_lat * dt, r * dt));
        let s = &mut self.sim;
        s.f(&[Some(kn), Some(kpe)]);
        let qs = s.a(dt * t * hq * qk);
        let kvb = self.lin(b * at.kv, r_lat, hq * (nope + vd));
        let ks = self.sim.a(dt * b * hq * at.kv * qk);
        let (out, keep) = self.attention(at.q, at.kv, mask, (qk, vd), (hq, hq));
        let o = self.lin(t, hq * vd, h);
        let s = &mut self.sim;
        s.f(&[
            Some(out),
            Some(qp),
            Some(qpe),
            Some(ckv),
            Some(qs),
            Some(ks),
            Some(kvb),
            Some(n1),
        ]);
        (o, [keep, None], cache)
    }

    // ------------------------------------------------------------ MLP

    /// The feed-forward between sandwich norms, on `n2` (the norm's
    /// output, freed once the MLP has read it): the MLP or the experts, or
    /// both side by side (Gemma 4 26B-A4B, `Gemma4TextDecoderLayer.forward`,
    /// transformers 5.23): the MLP's output normed, the router on the
    /// residual (its norm without weight, two scalings, the projection,
    /// an fp32 softmax, top-k, their sum, `per_expert_scale` gathered and
    /// multiplied in), the residual normed for the experts, their output
    /// normed, the two added (the MLP's output freed). Returns the output
    /// and what the layer keeps to its end (the router's probabilities,
    /// weights and indices, both normed halves). Eager attention's weights
    /// (`weights`) are freed when the router's output takes their name
    /// (`_, top_k_weights, top_k_index = self.router(...)`).
    fn sandwich_ffn(
        &mut self,
        t: u128,
        kind: LayerKind,
        n2: Id,
        weights: &mut Option<Id>,
    ) -> (Id, [Option<Id>; 5]) {
        let beside = self.spec.moe.filter(|m| m.dense_beside);
        let (LayerKind::Moe, Some(moe)) = (kind, beside) else {
            let m = self.ffn(t, kind);
            self.sim.free(n2);
            return (m, [None; 5]);
        };
        let (dt, h, e, k) = (self.d.dt, self.d.h, self.d.experts, self.d.top_k);
        let m = self.mlp(t, self.d.ffn);
        self.sim.free(n2);
        self.sim.stage(Stage::Experts);
        let h1 = self.norm(t, t * h);
        let rn = self.scaled_norm(t, t * h, h, false);
        let s = &mut self.sim;
        let s1 = s.a(dt * t * h);
        let s2 = s.a(dt * t * h);
        s.f(&[Some(s1), Some(rn)]);
        let sc = self.lin(t, h, e);
        let s = &mut self.sim;
        let c32 = s.a(4 * t * e);
        let probs = s.a(4 * t * e);
        s.free(c32);
        let tv = s.a(4 * t * k);
        let ti = s.a(8 * t * k);
        let su = s.a(4 * t);
        s.free(su);
        let ix = s.a(dt * t * k);
        let tw = s.a(4 * t * k);
        s.f(&[Some(ix), Some(tv), Some(s2), Some(sc), weights.take()]);
        let n3 = self.norm(t, t * h);
        let ex = if self.batched_decode {
            self.experts_batched(t, t * k, 4, moe)
        } else {
            self.experts_grouped(t, t * k, 4, moe)
        };
        self.sim.free(n3);
        let h2 = self.norm(t, t * h);
        self.sim.free(ex);
        let sum = self.sim.a(dt * t * h);
        self.sim.free(m);
        (sum, [Some(probs), Some(h1), Some(tw), Some(ti), Some(h2)])
    }

    /// The layer's MLP or experts on `T` tokens.
    fn ffn(&mut self, t: u128, kind: LayerKind) -> Id {
        match (kind, self.spec.moe) {
            (LayerKind::Moe, Some(moe)) => {
                self.sim.stage(Stage::Experts);
                self.moe(t, moe)
            }
            (LayerKind::Dense, _) | (LayerKind::Moe, None) => self.mlp(t, self.d.ffn),
        }
    }

    /// A dense MLP of width `f`: gate/up/down (Phi-3 fused), or GPT-2's
    /// c_fc → activation → c_proj.
    fn mlp(&mut self, t: u128, f: u128) -> Id {
        let (dt, h) = (self.d.dt, self.d.h);
        let act = self.spec.act;
        match self.spec.mlp {
            Mlp::GatedFused => {
                let gu = self.lin(t, h, 2 * f);
                let s = &mut self.sim;
                let sg = s.a(dt * t * f);
                let m = s.a(dt * t * f);
                s.free(sg);
                let d = self.lin(t, f, h);
                self.sim.f(&[Some(m), Some(gu)]);
                d
            }
            Mlp::Plain => {
                let fc = self.lin(t, h, f);
                let s = &mut self.sim;
                // transformers' Python gelu_new: pow, tanh and products.
                let extra = match act {
                    Act::GeluNew => [Some(s.a(dt * t * f)), Some(s.a(dt * t * f))],
                    Act::Fused => [None, None],
                };
                let g = s.a(dt * t * f);
                s.f(&extra);
                s.free(fc);
                let d = self.lin(t, f, h);
                self.sim.free(g);
                d
            }
            Mlp::Up => {
                // `ReLUSquaredActivation.forward` (transformers 5.23
                // `activations.py`): `relu`, then `square` (`pow`), each a
                // new tensor (measured: `scripts/measure/infer/NOTES.md`
                // §15).
                let u = self.lin(t, h, f);
                let r = self.sim.a(dt * t * f);
                let sq = self.sim.a(dt * t * f);
                self.sim.f(&[Some(r), Some(u)]);
                let d = self.lin(t, f, h);
                self.sim.free(sq);
                d
            }
            Mlp::Gated => {
                let g = self.lin(t, h, f);
                let sg = self.sim.a(dt * t * f);
                self.sim.free(g);
                let u = self.lin(t, h, f);
                let m = self.sim.a(dt * t * f);
                self.sim.f(&[Some(sg), Some(u)]);
                let d = self.lin(t, f, h);
                self.sim.free(m);
                d
            }
        }
    }

    /// The MoE block's router, by its kind: what it keeps to the block's
    /// end and the bytes of each routing weight the experts read.
    fn router(&mut self, t: u128, moe: Moe) -> ([Option<Id>; 3], u128) {
        let d = self.d;
        let (dt, h, e, k) = (d.dt, d.h, d.experts, d.top_k);
        let s = &mut self.sim;
        match moe.router {
            Router::SigmoidBias if moe.weights_in_logits_dtype => {
                // LFM2-MoE (`Lfm2MoeSparseMoeBlock.route_tokens_to_experts`,
                // measured: `scripts/measure/infer/NOTES.md` §13): logits and
                // their sigmoid in the model's dtype, the fp32 bias added
                // (fp32), its top-k; the chosen scores gathered, their sum
                // and the epsilon added, divided, then scaled (a new
                // tensor); the locals go when the router returns.
                let rl = s.a(dt * t * e);
                let sg = s.a(dt * t * e);
                let biased = s.a(4 * t * e);
                let (tv, ti) = (s.a(4 * t * k), s.a(8 * t * k));
                let gw = s.a(dt * t * k);
                s.free(sg);
                let su = s.a(dt * t);
                let den = s.a(dt * t);
                s.free(su);
                let dv = s.a(dt * t * k);
                s.f(&[Some(den), Some(gw)]);
                let scaled = s.a(dt * t * k);
                s.f(&[Some(dv), Some(biased), Some(tv)]);
                ([Some(rl), Some(scaled), Some(ti)], dt)
            }
            Router::SigmoidBias => {
                // MiniMax-M2: logits in the model's dtype, an fp32 copy,
                // its sigmoid, the biased scores for the choice, top-k,
                // the gathered weights and their sum, divided in place.
                // The prefill's peak matches the measured rows; what
                // generate keeps after it does not, so transformers refuses
                // MiniMax-M2 (`infer::estimate`) and this is not reached.
                let rl = s.a(dt * t * e);
                let rf = s.a(4 * t * e);
                let sm = s.a(4 * t * e);
                s.free(rf);
                let sc = s.a(4 * t * e);
                let tv = s.a(4 * t * k);
                let ti = s.a(8 * t * k);
                s.f(&[Some(tv), Some(sc)]);
                let tw = s.a(4 * t * k);
                let su = s.a(4 * t);
                s.f(&[Some(su), Some(sm)]);
                ([Some(rl), Some(tw), Some(ti)], 4)
            }
            Router::SoftmaxFp32 | Router::SigmoidGrouped => {
                // F.linear(hidden.float(), weight.float())
                let hf = s.a(4 * t * h);
                let wf = s.a(4 * e * h);
                let rl = s.a(4 * t * e);
                s.f(&[Some(hf), Some(wf)]);
                let sm = s.a(4 * t * e);
                let tv = s.a(4 * t * k);
                let ti = s.a(8 * t * k);
                let tw = s.a(4 * t * k);
                s.f(&[Some(tv), Some(sm)]);
                ([Some(rl), Some(tw), Some(ti)], 4)
            }
            Router::SoftmaxGrouped => {
                // Mistral 4 (`Mistral4TopkRouter.forward`, one group as
                // every published config has): logits and their softmax in
                // the model's dtype; the group's top two and their sum, the
                // top group's index, the mask made from it (the expanded
                // mask copied by `reshape`, its bool and its negation) and
                // the masked scores; top-k's indices; the chosen scores
                // gathered, their sum plus 1e-20 (the sum dropped), divided
                // in place, then scaled (a new tensor). The locals go when
                // the router returns.
                let rl = s.a(dt * t * e);
                let sc = s.a(dt * t * e);
                let (gv, gix) = (s.a(dt * t * 2), s.a(8 * t * 2));
                let gs = s.a(dt * t);
                s.f(&[Some(gv), Some(gix)]);
                let (tg, gi) = (s.a(dt * t), s.a(8 * t));
                s.free(tg);
                let gm = s.a(dt * t);
                let mask = s.a(dt * t * e);
                let (b, nb) = (s.a(t * e), s.a(t * e));
                let sfc = s.a(dt * t * e);
                s.f(&[Some(nb), Some(b)]);
                let (tv, ti) = (s.a(dt * t * k), s.a(8 * t * k));
                s.free(tv);
                let tw = s.a(dt * t * k);
                let sum = s.a(dt * t);
                let den = s.a(dt * t);
                s.free(sum);
                let scaled = s.a(dt * t * k);
                s.free(tw);
                s.f(&[Some(sc), Some(gs), Some(gi), Some(gm), Some(mask)]);
                s.f(&[Some(sfc), Some(den)]);
                ([Some(rl), Some(scaled), Some(ti)], dt)
            }
            Router::TopKSigmoid => {
                // Llama 4 (`Llama4Router.forward`): logits, top-k values
                // and indices, a `-inf` copy scattered in place, an fp32
                // copy, its sigmoid, cast back to the logits' dtype; the
                // top-k outputs go when the router returns (measured,
                // `scripts/measure/families/llama4/dense/gen_moe_ops.txt`).
                let rl = s.a(dt * t * e);
                let tv = s.a(dt * t * k);
                let ti = s.a(8 * t * k);
                let sc = s.a(dt * t * e);
                let rf = s.a(4 * t * e);
                let sg = s.a(4 * t * e);
                s.free(rf);
                let rs = s.a(dt * t * e);
                s.f(&[Some(sg), Some(sc), Some(tv), Some(ti)]);
                ([Some(rl), Some(rs), None], dt)
            }
            Router::TopKSoftmaxCast => {
                // Granite 4.0-H (measured: `scripts/measure/infer/NOTES.md`
                // §14): the logits, their fp32 copy (the logits freed),
                // top-k on it, the softmax of the k, cast to the model's
                // dtype; the softmax and the values go at once.
                let rl = s.a(dt * t * e);
                let rf = s.a(4 * t * e);
                s.free(rl);
                let (tv, ti) = (s.a(4 * t * k), s.a(8 * t * k));
                let sm = s.a(4 * t * k);
                let tw = s.a(dt * t * k);
                s.f(&[Some(sm), Some(tv)]);
                ([Some(rf), Some(tw), Some(ti)], dt)
            }
            Router::TopKSoftmax => {
                let rl = s.a(dt * t * e);
                let tv = s.a(dt * t * k);
                let ti = s.a(8 * t * k);
                let tw = s.a(dt * t * k);
                s.free(tv);
                ([Some(rl), Some(ti), Some(tw)], dt)
            }
            // Gemma 4's router runs beside the MLP
            // ([`Forward::sandwich_ffn`]), never here: it stands with the
            // plain softmax.
            Router::Softmax | Router::Scaled => {
                let rl = s.a(dt * t * e);
                let rf = s.a(4 * t * e);
                let sm = s.a(4 * t * e);
                s.free(rf);
                let tv = s.a(4 * t * k);
                let ti = s.a(8 * t * k);
                if moe.normalize_top_k {
                    let su = s.a(4 * t);
                    s.free(su);
                }
                if moe.weights_in_logits_dtype {
                    let tw = s.a(dt * t * k);
                    s.f(&[Some(tv), Some(sm)]);
                    ([Some(rl), Some(ti), Some(tw)], dt)
                } else {
                    s.free(sm);
                    ([Some(rl), Some(tv), Some(ti)], 4)
                }
            }
        }
    }

    /// A sparse MoE block: the router, then the experts (grouped in prefill,
    /// gathered per token in decode on a GPU), and the shared expert.
    fn moe(&mut self, t: u128, moe: Moe) -> Id {
        let d = self.d;
        let (dt, h, k) = (d.dt, d.h, d.top_k);
        let early = (moe.shared_first && d.shared_ffn > 0).then(|| self.mlp(t, d.shared_ffn));
        let (keep, wbytes) = self.router(t, moe);
        if moe.dense_dispatch {
            return self.moe_dense(t, keep);
        }
        let rows = t * k;
        let mut out = if self.batched_decode {
            self.experts_batched(t, rows, wbytes, moe)
        } else {
            self.experts_grouped(t, rows, wbytes, moe)
        };
        if moe.shared_in_layer {
            // The block returns (its router's tensors freed), then the
            // layer adds the shared MLP's output; the routed output stays
            // to the layer's end.
            self.sim.f(&keep);
            let sh = self.mlp(t, d.shared_ffn);
            let y = self.sim.a(dt * t * h);
            self.sim.free(sh);
            self.held = Some(out);
            return y;
        }
        if let Some(sh) = early {
            // `sigmoid(shared_expert_gate(x)) * shared`, then the sum.
            let s = &mut self.sim;
            let gl = s.a(dt * t);
            let sg = s.a(dt * t);
            s.free(gl);
            let scaled = s.a(dt * t * h);
            s.f(&[Some(sg), Some(sh)]);
            let y = s.a(dt * t * h);
            s.f(&[Some(out), Some(scaled)]);
            out = y;
        } else if d.shared_ffn > 0 {
            let sh = self.mlp(t, d.shared_ffn);
            let gate = (moe.shared == Shared::Gated).then(|| self.sim.a(dt * t));
            let y = self.sim.a(dt * t * h);
            self.sim.f(&[Some(sh), Some(out), gate]);
            out = y;
        }
        self.sim.f(&keep);
        out
    }

    /// The rest of a dense-dispatch block (Llama 4) after its router: the
    /// experts, the shared expert (whose output is the block's), and
    /// `out.add_(routed_out.reshape(E, T, h).sum(dim=0))`, the sum freed at
    /// once; the router's tensors, the scaled input and the routed output
    /// go when the block returns (measured,
    /// `scripts/measure/families/llama4/dense/gen_moe_ops.txt`).
    fn moe_dense(&mut self, t: u128, router: [Option<Id>; 3]) -> Id {
        let (dt, h) = (self.d.dt, self.d.h);
        let [scaled, routed] = self.experts_dense(t);
        let out = self.mlp(t, self.d.shared_ffn);
        let sum = self.sim.a(dt * t * h);
        self.sim.free(sum);
        self.sim.f(&[Some(scaled), Some(routed)]);
        self.sim.f(&router);
        out
    }

    /// Every token through every expert (`Moe::dense_dispatch`;
    /// transformers 5.23 `Llama4TextMoe.forward` and
    /// `Llama4TextExperts.forward`): the input repeated once per expert, the
    /// scores' transposed copy, their product (the scaled input, kept to
    /// the block's end), then the batched `gate_up` (2E·T·I), SiLU, the
    /// product and the `down` bmm (E·T·h, kept). Returns the scaled input
    /// and the routed output; the block's moment per token is
    /// `E·dt·max(h + 4I, 2h + 3I)` above the scores (measured,
    /// `scripts/measure/families/llama4/dense/NOTES.md` §4).
    fn experts_dense(&mut self, t: u128) -> [Id; 2] {
        let d = self.d;
        let (dt, h, e, f) = (d.dt, d.h, d.experts, d.moe_ffn);
        let s = &mut self.sim;
        let rep = s.a(dt * e * t * h);
        let sc = s.a(dt * e * t);
        let scaled = s.a(dt * e * t * h);
        s.f(&[Some(sc), Some(rep)]);
        let gu = s.a(dt * e * t * 2 * f);
        let sg = s.a(dt * e * t * f);
        let m = s.a(dt * e * t * f);
        s.free(sg);
        let out = s.a(dt * e * t * h);
        s.f(&[Some(m), Some(gu)]);
        [scaled, out]
    }

    /// The experts' activation: SiLU(gate) × up, or gpt-oss's clamped GLU.
    fn gate_glu(&mut self, rows: u128, moe: Moe) -> Id {
        let (dt, f) = (self.d.dt, self.d.moe_ffn);
        let s = &mut self.sim;
        if moe.clamped_swiglu {
            let g = s.a(dt * rows * f);
            let u = s.a(dt * rows * f);
            let m = s.a(dt * rows * f);
            let sg = s.a(dt * rows * f);
            s.free(m);
            let gl = s.a(dt * rows * f);
            s.free(sg);
            let ad = s.a(dt * rows * f);
            let o = s.a(dt * rows * f);
            s.f(&[Some(ad), Some(g), Some(u), Some(gl)]);
            return o;
        }
        let sg = s.a(dt * rows * f);
        let m = s.a(dt * rows * f);
        s.free(sg);
        m
    }

    /// The width of an expert's up projection: gate and up, or (the
    /// family's MLP `Mlp::Up`, Nemotron 3) up alone.
    fn up_width(&self) -> u128 {
        match self.spec.mlp {
            Mlp::Up => self.d.moe_ffn,
            Mlp::Gated | Mlp::GatedFused | Mlp::Plain => 2 * self.d.moe_ffn,
        }
    }

    /// The experts' activation on `rows` rows: the gated one, or
    /// (`Mlp::Up`) `relu` then its square, the relu freed at the
    /// activation's return.
    fn expert_act(&mut self, rows: u128, moe: Moe) -> Id {
        let (dt, f) = (self.d.dt, self.d.moe_ffn);
        if self.spec.mlp != Mlp::Up {
            return self.gate_glu(rows, moe);
        }
        let s = &mut self.sim;
        let r = s.a(dt * rows * f);
        let sq = s.a(dt * rows * f);
        s.free(r);
        sq
    }

    /// `grouped_mm_experts_forward`: sorted by expert, the tokens gathered
    /// (`rows = T·k`), grouped_mm up, the activation, grouped_mm down,
    /// weighted, un-permuted, summed over k.
    fn experts_grouped(&mut self, t: u128, rows: u128, wbytes: u128, moe: Moe) -> Id {
        let d = self.d;
        let (dt, h, e, f) = (d.dt, d.h, d.experts, d.moe_ffn);
        let s = &mut self.sim;
        let (sv, pm) = (s.a(8 * rows), s.a(8 * rows));
        let fd = s.a(8 * rows);
        let hs = s.a(dt * rows * h);
        s.free(fd);
        let sw = s.a(wbytes * rows);
        let hi = s.a(4 * rows);
        let hc = s.a(4 * e);
        let of = s.a(4 * e);
        let gb = s.a_if(moe.expert_bias, dt * rows * 2 * f);
        let up = self.up_width();
        let s = &mut self.sim;
        let gu = s.a(dt * rows * up);
        let act = self.expert_act(rows, moe);
        let s = &mut self.sim;
        s.free(gu);
        let db = s.a_if(moe.expert_bias, dt * rows * h);
        s.f(&[gb]);
        let dn = s.a(dt * rows * h);
        s.free(act);
        let wo = s.a(wbytes * rows * h);
        let ip = s.a(8 * rows);
        let ar = s.a(8 * rows);
        s.free(ar);
        let ro = s.a(wbytes * rows * h);
        s.free(wo);
        let sm = s.a(wbytes * t * h);
        s.f(&[
            Some(sv),
            Some(pm),
            Some(hs),
            Some(sw),
            Some(hi),
            Some(hc),
            Some(of),
            db,
            Some(dn),
            Some(ro),
            Some(ip),
        ]);
        if wbytes != dt {
            let out = s.a(dt * t * h);
            s.free(sm);
            out
        } else {
            sm
        }
    }

    /// `batched_mm_experts_forward`: every selected expert's weights
    /// gathered per (token, expert) pair; the up and down gathers alive
    /// together.
    fn experts_batched(&mut self, t: u128, rows: u128, wbytes: u128, moe: Moe) -> Id {
        let d = self.d;
        let (dt, h, f) = (d.dt, d.h, d.moe_ffn);
        let s = &mut self.sim;
        let hs = s.a(dt * rows * h);
        let up = self.up_width();
        let s = &mut self.sim;
        let gw = s.a(dt * rows * up * h);
        let gb = s.a_if(moe.expert_bias, dt * rows * 2 * f);
        let bm = s.a(dt * rows * up);
        let act = self.expert_act(rows, moe);
        let s = &mut self.sim;
        s.free(bm);
        let dw = s.a(dt * rows * h * f);
        s.free(gw);
        let db = s.a_if(moe.expert_bias, dt * rows * h);
        s.f(&[gb]);
        let dn = s.a(dt * rows * h);
        s.free(act);
        let wo = s.a(wbytes * rows * h);
        let sm = s.a(wbytes * t * h);
        s.f(&[Some(hs), Some(dw), db, Some(dn), Some(wo)]);
        if wbytes != dt {
            let out = s.a(dt * t * h);
            s.free(sm);
            out
        } else {
            sm
        }
    }

    /// The embeddings of a forward's tokens: returns what the layers read
    /// and what stays to the end (GPT-2 layout: token and position
    /// embeddings; Gemma: the scaled copy replaces the lookup).
    pub fn embed(&mut self, t: u128) -> (Id, [Option<Id>; 2]) {
        let (dt, h) = (self.d.dt, self.d.h);
        let s = &mut self.sim;
        match (self.spec.layout, self.spec.embed_scale) {
            (Layout::Gpt2, _) => {
                let te = s.a(dt * t * h);
                let pe = s.a(dt * t * h);
                let emb = s.a(dt * t * h);
                (emb, [Some(te), Some(pe)])
            }
            (Layout::Llama | Layout::NeoX, _) if self.spec.granite_scales => {
                // `inputs_embeds * embedding_multiplier`: the lookup freed.
                let e = s.a(dt * t * h);
                let emb = s.a(dt * t * h);
                s.free(e);
                (emb, [None, None])
            }
            (Layout::Llama | Layout::NeoX, EmbedScale::Buffer | EmbedScale::PerForward) => {
                let e = s.a(dt * t * h);
                let emb = s.a(dt * t * h);
                s.free(e);
                (emb, [None, None])
            }
            (Layout::Llama | Layout::NeoX, EmbedScale::None) => (s.a(dt * t * h), [None, None]),
        }
    }

    /// The multimodal wrapper's placeholder masks, kept to the forward's
    /// end (`Gemma4Model.forward`, transformers 5.23): one boolean mask
    /// per placeholder kind, their or (each `|` a new mask, the previous
    /// freed), the ids' clone with the placeholders set to the pad id
    /// (`torch.where` over a scalar: the clone freed, the result kept).
    pub fn placeholders(&mut self, t: u128) {
        let kinds = self.spec.placeholder_kinds;
        if kinds == 0 {
            return;
        }
        self.placeholder_masks(kinds, t);
        // Gemma 4 12B's token-type ids (`torch.full`, int64), kept to the
        // forward's end.
        if self.spec.token_type_mask {
            self.sim.a(8 * t);
        }
    }

    fn placeholder_masks(&mut self, kinds: u8, t: u128) {
        let s = &mut self.sim;
        for _ in 0..kinds {
            s.a(t);
        }
        let mut or = None;
        for _ in 1..kinds {
            let o = s.a(t);
            s.f(&[or]);
            or = Some(o);
        }
        let clone = s.a(8 * t);
        let pad = s.a(8);
        s.a(8 * t);
        s.f(&[Some(pad), Some(clone)]);
    }

    /// Gemma 4's per-layer inputs, kept to the forward's end: the
    /// embeddings with placeholders padded (`torch.where`), the per-layer
    /// table's lookup scaled (`get_per_layer_inputs`), the projection of
    /// the embeddings scaled, normed over each layer's slice and added,
    /// scaled (`project_per_layer_inputs`): `T × layers × ple` each.
    pub fn per_layer_inputs(&mut self, t: u128) {
        let (dt, h, ple, layers) = (self.d.dt, self.d.h, self.d.ple, self.d.layers);
        if ple == 0 {
            return;
        }
        let w = t * layers * ple;
        let s = &mut self.sim;
        s.a(dt * t * h);
        let e = s.a(dt * w);
        s.a(dt * w);
        s.free(e);
        let mp = s.a(dt * w);
        let ms = s.a(dt * w);
        s.free(mp);
        let n = self.scaled_norm(t * layers, w, ple, true);
        let s = &mut self.sim;
        s.free(ms);
        let sum = s.a(dt * w);
        s.a(dt * w);
        s.f(&[Some(sum), Some(n)]);
    }

    /// The final norm and the head on the last position
    /// (`logits_to_keep=1`), Gemma 2's final softcapping: frees the last
    /// hidden state `x` and what the forward carried (`rest`), and returns
    /// the logits (B × V, tagged as logits).
    pub fn head(&mut self, t: u128, x: Id, rest: &[Option<Id>]) -> Id {
        let (dt, b, v, h) = (self.d.dt, self.d.b, self.d.vocab, self.d.h);
        self.sim.stage(Stage::Head);
        let nf = self.norm(t, t * h);
        self.sim.free(x);
        self.sim.f(rest);
        self.sim.tag(Cat::Logits);
        let mut logits = self.sim.a(dt * b * v);
        if self.spec.granite_scales || self.spec.logits_fp32 {
            // `logits / logits_scaling`, or `.float()`: the last hidden
            // state alive.
            let bytes = if self.spec.logits_fp32 { 4 } else { dt };
            let dv = self.sim.a(bytes * b * v);
            self.sim.free(logits);
            logits = dv;
        }
        self.sim.free(nf);
        if self.spec.final_softcap {
            let s = &mut self.sim;
            let dd = s.a(dt * b * v);
            s.free(logits);
            let tt = s.a(dt * b * v);
            s.free(dd);
            logits = s.a(dt * b * v);
            s.free(tt);
        }
        self.sim.tag(Cat::Act);
        logits
    }
}

#[cfg(test)]
mod norm_tests {
    use super::{gemma_norm_peak, rms_peak, rms_weight_fp32_peak, scaled_norm_peak};
    use crate::infer::sim::Run;

    /// The op-by-op replay [`rms_peak`] is the closed form of.
    fn rms_replayed(dt: u128, rows: u128, n: u128, weight_first: bool) -> (u128, u128) {
        let mut s = Run::default();
        let c32 = s.a_if(dt != 4, 4 * n);
        let p = s.a(4 * n);
        let m = s.a(4 * rows);
        s.f(&[p]);
        let e = s.a(4 * rows);
        let r = s.a(4 * rows);
        s.f(&[e]);
        let y = s.a(4 * n);
        s.f(&[r, c32]);
        let o = if weight_first {
            let w = s.a(4 * n);
            if dt != 4 {
                let o = s.a(dt * n);
                s.f(&[w]);
                o
            } else {
                w
            }
        } else if dt != 4 {
            let c2 = s.a(dt * n);
            let o = s.a(dt * n);
            s.f(&[c2]);
            o
        } else {
            s.a(4 * n)
        };
        s.f(&[y, m]);
        (s.max(), o)
    }

    /// The op-by-op replay [`rms_weight_fp32_peak`] is the closed form of
    /// (NemotronHRMSNorm, measured: `scripts/measure/infer/NOTES.md` §15).
    fn weight_fp32_replayed(dt: u128, rows: u128, n: u128, width: u128) -> (u128, u128) {
        let half = dt != 4;
        let mut s = Run::default();
        let c = s.a_if(half, 4 * n);
        let p = s.a(4 * n);
        let m = s.a(4 * rows);
        s.f(&[p]);
        let e = s.a(4 * rows);
        let r = s.a(4 * rows);
        s.f(&[e]);
        let x = s.a(4 * n);
        s.f(&[r, c]);
        let wf = s.a_if(half, 4 * width);
        let y = s.a(4 * n);
        s.f(&[wf]);
        let out = if half {
            let o = s.a(dt * n);
            s.f(&[y]);
            o
        } else {
            y
        };
        s.f(&[x, m]);
        (s.max(), out)
    }

    /// The op-by-op replay [`gemma_norm_peak`] is the closed form of.
    fn gemma_replayed(dt: u128, rows: u128, n: u128, width: u128) -> (u128, u128) {
        let mut s = Run::default();
        let c32 = s.a_if(dt != 4, 4 * n);
        let p = s.a(4 * n);
        let m = s.a(4 * rows);
        s.f(&[p]);
        let e = s.a(4 * rows);
        s.f(&[m]);
        let r = s.a(4 * rows);
        s.f(&[e]);
        let y = s.a(4 * n);
        s.f(&[r, c32]);
        let wf = s.a_if(dt != 4, 4 * width);
        let wa = s.a(4 * width);
        s.f(&[wf]);
        let o32 = s.a(4 * n);
        s.f(&[wa, y]);
        let o = if dt != 4 {
            let o = s.a(dt * n);
            s.f(&[o32]);
            o
        } else {
            o32
        };
        (s.max(), o)
    }

    /// The op-by-op replay [`scaled_norm_peak`] is the closed form of
    /// (measured op by op: `scripts/measure/gemma4/`, `GT_DEBUG=1`).
    fn scaled_replayed(dt: u128, rows: u128, n: u128, width: u128, scale: bool) -> (u128, u128) {
        let mut s = Run::default();
        let c32 = s.a_if(dt != 4, 4 * n);
        let p = s.a(4 * n);
        let m = s.a(4 * rows);
        s.f(&[p]);
        let e = s.a(4 * rows);
        s.f(&[m]);
        let r = s.a(4 * rows);
        let x = s.a(4 * n);
        s.f(&[r, c32, e]);
        let y = if scale {
            let wf = s.a_if(dt != 4, 4 * width);
            let y = s.a(4 * n);
            s.f(&[wf, x]);
            y
        } else {
            x
        };
        let o = if dt != 4 {
            let o = s.a(dt * n);
            s.f(&[y]);
            o
        } else {
            y
        };
        (s.max(), o)
    }

    #[test]
    fn the_norms_closed_forms_are_their_replays() {
        let sizes = [0u128, 1, 2, 3, 7, 64, 100, 4096, 1 << 20, 3 << 30];
        for dt in [1, 2, 4] {
            for rows in sizes {
                for n in sizes {
                    for wf in [false, true] {
                        let want = rms_replayed(dt, rows, n, wf);
                        assert_eq!(rms_peak(dt, rows, n, wf), want, "{dt} {rows} {n} {wf}");
                    }
                    for width in sizes {
                        let want = gemma_replayed(dt, rows, n, width);
                        assert_eq!(
                            gemma_norm_peak(dt, rows, n, width),
                            want,
                            "{dt} {rows} {n} {width}"
                        );
                        assert_eq!(
                            rms_weight_fp32_peak(dt, rows, n, width),
                            weight_fp32_replayed(dt, rows, n, width),
                            "{dt} {rows} {n} {width}"
                        );
                        for scale in [false, true] {
                            let want = scaled_replayed(dt, rows, n, width, scale);
                            assert_eq!(
                                scaled_norm_peak(dt, rows, n, width, scale),
                                want,
                                "{dt} {rows} {n} {width} {scale}"
                            );
                        }
                    }
                }
            }
        }
    }
}
