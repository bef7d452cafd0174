//! What a training forward pass keeps alive for backward, tensor by tensor.
//!
//! A tiny symbolic autograd: each tensor has a width per token (or per token
//! per key position, for attention scores), a dtype size and a
//! requires-grad flag; each op marks what it saves for backward following
//! PyTorch's derivative formulas (`tools/autograd/derivatives.yaml`: `mul`
//! saves `other` only when `self` needs a gradient, a frozen `linear` keeps
//! no input, ...) and the Hugging Face modeling code it mirrors. A tensor
//! saved by several ops counts once.
//!
//! Source of truth: the measured `activation_bytes_end_fwd` of every row of
//! the ground truth (`tests/fixtures/pytorch_training_memory.jsonl`), which
//! this ledger reproduces to within the loss's few scalar bytes; the rules
//! below are the mechanism behind those numbers, so they extend to sizes
//! and options the file does not hold.

use crate::arch::{Architecture, Lora, Proj};
use crate::families::{AttnBias, Layout, Mlp, Norm, Positions, Qkv, Spec};
use crate::scenario::{Attn, Dtype, Training};

/// Number formats of the forward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Everything fp32.
    Fp32,
    /// Weights and activations in bf16/fp16.
    Half,
    /// fp32 weights; matmuls in bf16 under `torch.autocast`.
    Amp,
}

impl Mode {
    pub fn of(dtype: Dtype) -> Mode {
        match dtype {
            Dtype::Fp32 => Mode::Fp32,
            Dtype::Bf16 | Dtype::Fp16 | Dtype::MixedBf16 => Mode::Half,
            Dtype::AmpBf16 | Dtype::AmpFp16 => Mode::Amp,
        }
    }

    /// Bytes per element of matmul outputs.
    pub fn act(self) -> u64 {
        match self {
            Mode::Fp32 => 4,
            Mode::Half | Mode::Amp => 2,
        }
    }

    /// Bytes per element of the residual stream (fp32 under autocast: the
    /// embedding and the residual adds stay fp32).
    pub fn residual(self) -> u64 {
        match self {
            Mode::Half => 2,
            Mode::Fp32 | Mode::Amp => 4,
        }
    }
}

/// Where a saved tensor belongs, for the per-layer breakdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// The residual stream between sub-layers.
    Residual,
    /// Norm inputs, normalised values and outputs.
    Norm,
    /// q, k, v, the attention output and its logsumexp.
    Attention,
    /// Attention scores and probabilities (batch × heads × seq²).
    Scores,
    /// MLP intermediates.
    Mlp,
    /// Dropout masks.
    Dropout,
    /// Autocast's bf16 copies of activations fed to matmuls.
    Casts,
    /// LoRA adapter inputs and rank-r intermediates.
    Lora,
}

impl Part {
    pub const ALL: [Part; 8] = [
        Part::Residual,
        Part::Norm,
        Part::Attention,
        Part::Scores,
        Part::Mlp,
        Part::Dropout,
        Part::Casts,
        Part::Lora,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Part::Residual => "residual stream",
            Part::Norm => "norms",
            Part::Attention => "attention (q, k, v, output)",
            Part::Scores => "attention scores (seq²)",
            Part::Mlp => "MLP",
            Part::Dropout => "dropout masks",
            Part::Casts => "autocast input copies",
            Part::Lora => "LoRA adapters",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Saved bytes of one layer (or of the parts outside the layers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// Bytes per token, by [`Part`].
    pub per_token: [u64; 8],
    /// Bytes per token per key position (multiply by tokens × seq).
    pub per_token_key: u64,
    /// Copies of trainable weights saved for backward (autocast), bytes.
    pub weight_copies: u64,
    /// Copies of frozen weights saved for backward (autocast, LoRA), bytes:
    /// autocast does not cache them (its cache only takes leaf tensors that
    /// require grad), so gradient checkpointing drops them with the layer.
    pub weight_copies_frozen: u64,
    /// Weight copies that only live until autocast exits (cached casts
    /// nothing saved: biases, frozen-input adapters).
    pub weight_copies_transient: u64,
}

impl Saved {
    pub fn token_bytes(&self) -> u64 {
        self.per_token.iter().sum()
    }

    /// Bytes for `tokens` tokens of sequence length `seq`.
    pub fn bytes(&self, tokens: u128, seq: u128) -> u128 {
        tokens * u128::from(self.token_bytes()) + tokens * seq * u128::from(self.per_token_key)
    }
}

/// One tensor of the ledger: 16 bytes, so a layer's ledger is cheap to
/// set up (the estimate runs on every keystroke).
#[derive(Clone, Copy, Debug)]
struct T {
    /// Elements per token.
    width: u64,
    /// Elements per token per key position (attention scores: heads).
    keyed: u32,
    /// Bytes per element.
    dt: u8,
    rg: bool,
    saved: bool,
    part: Part,
}

/// Room for the tensors one layer creates (at most ~50: a LoRA'd Llama
/// layer under autocast with eager attention; see the test below).
const MAX_TENSORS: usize = 80;

/// The forward ledger of one layer (or the outer parts). A fixed array:
/// the estimate runs on every keystroke and allocates nothing here.
struct Ledger<'a> {
    c: &'a Ctx,
    ts: [T; MAX_TENSORS],
    len: usize,
    weight_copies: u64,
    weight_copies_frozen: u64,
    weight_copies_transient: u64,
}

const EMPTY: T = T {
    width: 0,
    dt: 0,
    keyed: 0,
    rg: false,
    saved: false,
    part: Part::Residual,
};

type Id = usize;

/// What the ops need to know about the run.
pub struct Ctx {
    pub arch: Architecture,
    pub spec: Spec,
    pub mode: Mode,
    /// Base weights train (full fine-tuning); false under LoRA.
    pub full: bool,
    /// LoRA's adapters (none in full fine-tuning), and whether its dropout
    /// is on.
    pub lora: Option<Lora>,
    pub lora_dropout: bool,
    pub cuda: bool,
    pub attn: Attn,
    /// Dropout on attention probabilities.
    pub p_attn: bool,
    /// Dropout after attention and MLP (GPT-2's resid_pdrop).
    pub p_resid: bool,
    /// Dropout on the embeddings (GPT-2's embd_pdrop).
    pub p_embd: bool,
}

impl Ctx {
    pub fn new(arch: &Architecture, t: &Training) -> Ctx {
        let spec = arch.family.spec();
        // The model's own dropout (GPT-2 0.1 everywhere; others none), or
        // the one given: on attention probabilities, and for families with
        // residual dropout (GPT-2) on the residual branches and embedding.
        let own = spec.dropout > 0;
        let (attn, other) = match t.dropout {
            Some(p) => (p.get() > 0, own && p.get() > 0),
            None => (own, own),
        };
        Ctx {
            arch: *arch,
            spec,
            mode: Mode::of(t.dtype),
            full: t.lora_r.is_none(),
            lora: t.lora_r.map(|r| Lora {
                r: u64::from(r.get()),
                targets: t.lora_targets,
            }),
            lora_dropout: t.lora_dropout.get() > 0,
            cuda: t.cuda_like,
            attn: t.attn,
            p_attn: attn,
            p_resid: other,
            p_embd: other,
        }
    }

    /// Whether LoRA adapts a module computing `proj`.
    fn adapts(&self, proj: Proj) -> bool {
        self.lora.is_some_and(|l| l.adapts(proj))
    }
}

impl<'a> Ledger<'a> {
    fn new(c: &'a Ctx) -> Self {
        Ledger {
            c,
            ts: [EMPTY; MAX_TENSORS],
            len: 0,
            weight_copies: 0,
            weight_copies_frozen: 0,
            weight_copies_transient: 0,
        }
    }

    fn push(&mut self, t: T) -> Id {
        // The layer functions create a fixed, small number of tensors (tested
        // for every family and option); a full ledger reuses its last slot
        // rather than panic.
        let id = self.len.min(MAX_TENSORS - 1);
        self.ts[id] = t;
        self.len = (self.len + 1).min(MAX_TENSORS);
        id
    }

    fn new_t(&mut self, width: u64, dt: u64, rg: bool, part: Part) -> Id {
        self.push(T {
            width,
            dt: dt as u8,
            keyed: 0,
            rg,
            saved: false,
            part,
        })
    }

    /// Attention scores: `heads` elements per token per key position.
    fn keyed(&mut self, heads: u64, dt: u64, rg: bool) -> Id {
        self.push(T {
            width: 0,
            dt: dt as u8,
            keyed: u32::try_from(heads).unwrap_or(u32::MAX),
            rg,
            saved: false,
            part: Part::Scores,
        })
    }

    fn save(&mut self, id: Id) {
        self.ts[id].saved = true;
    }

    fn rg(&self, id: Id) -> bool {
        self.ts[id].rg
    }

    fn dt(&self, id: Id) -> u64 {
        u64::from(self.ts[id].dt)
    }

    fn result(&self) -> Saved {
        let mut s = Saved {
            weight_copies: self.weight_copies,
            weight_copies_frozen: self.weight_copies_frozen,
            weight_copies_transient: self.weight_copies_transient,
            ..Saved::default()
        };
        for t in self.ts[..self.len].iter().filter(|t| t.saved) {
            s.per_token[t.part.index()] += t.width * u64::from(t.dt);
            s.per_token_key += u64::from(t.keyed) * u64::from(t.dt);
        }
        s
    }

    /// `F.linear` / `addmm` of a module computing `proj` (with peft's LoRA
    /// on top when the targets include it).
    ///
    /// A trainable weight needs the input for its gradient; the input's
    /// gradient needs the weight, which under autocast is a saved bf16 copy
    /// (autocast caches copies of leaf weights that require grad until it
    /// exits; a frozen weight's copy lives only while it is saved; a bias
    /// copy is never saved). LoRA adapters are fp32 (peft's
    /// `autocast_adapter_dtype`): peft casts the input to fp32 for `lora_A`
    /// (bf16 again under autocast), which saves it with the rank-r
    /// intermediate. With `lora_dropout`, the dropped copy is what `lora_A`
    /// saves, and dropout keeps a mask when its input needs a gradient.
    ///
    /// Source: peft 0.21 `tuners/lora/layer.py` `Linear.forward`; measured
    /// rows in `tests/fixtures/lora_rows.jsonl` (targets, dropout, amp with
    /// checkpointing).
    fn linear(&mut self, x: Id, n_in: u64, n_out: u64, bias: u64, proj: Proj) -> Id {
        let c = self.c;
        let w_tr = c.full;
        let x_rg = self.rg(x);
        let out_rg = x_rg || w_tr;
        let lora_on = c.adapts(proj);
        let out = if c.mode == Mode::Amp {
            let xc = if self.dt(x) == 2 {
                x
            } else {
                self.new_t(n_in, 2, x_rg, Part::Casts)
            };
            if w_tr {
                self.save(xc);
            }
            if x_rg && w_tr {
                self.weight_copies += 2 * n_in * n_out;
            } else if x_rg {
                self.weight_copies_frozen += 2 * n_in * n_out;
            } else if w_tr {
                self.weight_copies_transient += 2 * n_in * n_out;
            }
            if w_tr {
                self.weight_copies_transient += 2 * bias;
            }
            self.new_t(n_out, 2, out_rg || lora_on, Part::Attention)
        } else {
            if w_tr {
                self.save(x);
            }
            self.new_t(n_out, c.mode.act(), out_rg || lora_on, Part::Attention)
        };
        if lora_on {
            let r = c.lora.map_or(0, |l| l.r);
            if c.lora_dropout && x_rg {
                let mask = self.new_t(n_in, if c.cuda { 1 } else { 4 }, true, Part::Dropout);
                self.save(mask);
            }
            if c.mode == Mode::Amp {
                // Autocast casts the (dropped) input to bf16 for lora_A.
                let xa = self.new_t(n_in, 2, x_rg, Part::Lora);
                self.save(xa);
                if x_rg {
                    self.weight_copies += 2 * r * n_in;
                } else {
                    self.weight_copies_transient += 2 * r * n_in;
                }
                self.weight_copies += 2 * r * n_out;
                let a = self.new_t(r, 2, true, Part::Lora);
                self.save(a);
            } else {
                if self.dt(x) == 4 && !c.lora_dropout {
                    self.save(x);
                } else {
                    // The fp32 cast (or the dropped copy of it).
                    let xa = self.new_t(n_in, 4, x_rg, Part::Lora);
                    self.save(xa);
                }
                let a = self.new_t(r, 4, true, Part::Lora);
                self.save(a);
            }
        }
        out
    }

    /// Llama's RMSNorm: `x.to(fp32)`, `pow(2).mean`, `x * rsqrt(var + eps)`,
    /// `weight * hs.to(dtype)`. Gemma's: `x.float()` normalised, times
    /// `(1 + weight.float())`, then `type_as(x)`.
    fn rms_norm(&mut self, x: Id, h: u64, gemma: bool) -> Id {
        let c = self.c;
        let x_rg = self.rg(x);
        let w_tr = c.full;
        let out_rg = x_rg || w_tr;
        let half = c.mode == Mode::Half;
        let xf = if half {
            self.new_t(h, 4, x_rg, Part::Norm)
        } else {
            x
        };
        if x_rg {
            self.save(xf);
            let r = self.new_t(1, 4, true, Part::Norm);
            self.save(r);
        }
        let hs = if half && !gemma {
            self.new_t(h, 2, x_rg, Part::Norm)
        } else {
            self.new_t(h, 4, x_rg, Part::Norm)
        };
        if w_tr {
            self.save(hs);
        }
        let out_dt = if half { 2 } else { 4 };
        self.new_t(h, out_dt, out_rg, Part::Norm)
    }

    /// `nn.LayerNorm` (GPT-2): the native kernel saves the input and the
    /// fp32 mean and rstd (CUDA's accumulate type).
    fn layer_norm(&mut self, x: Id, h: u64) -> Id {
        let c = self.c;
        let rg = self.rg(x) || c.full;
        if rg {
            self.save(x);
            let stats = self.new_t(2, 4, true, Part::Norm);
            self.save(stats);
        }
        let dt = if c.mode == Mode::Half { 2 } else { 4 };
        self.new_t(h, dt, rg, Part::Norm)
    }

    /// Dropout on attention probabilities (eager or math attention): the
    /// mask (1 byte on CUDA, the probabilities' dtype on CPU) and the
    /// dropped probabilities, saved by the matmul with v.
    fn probs_dropout(&mut self, heads: u64, dt: u64, rg: bool) {
        if self.c.p_attn {
            let m = self.keyed(heads, if self.c.cuda { 1 } else { dt }, rg);
            let d = self.keyed(heads, dt, rg);
            self.save(m);
            self.save(d);
        }
    }

    /// `nn.Dropout` with p > 0: CUDA's fused kernel saves a 1-byte mask; the
    /// CPU kernel saves a mask of the input's dtype.
    fn dropout(&mut self, x: Id, n: u64, on: bool) -> Id {
        if !on {
            return x;
        }
        let (rg, dt) = (self.rg(x), self.dt(x));
        if rg {
            let m = self.new_t(n, if self.c.cuda { 1 } else { dt }, true, Part::Dropout);
            self.save(m);
        }
        self.new_t(n, dt, rg, Part::Residual)
    }
}

/// One decoder layer's saved tensors, given whether its input needs a
/// gradient (not for layer 0 when the embedding is frozen, under LoRA).
pub fn layer(c: &Ctx, input_rg: bool) -> Saved {
    let mut l = Ledger::new(c);
    let h = u64::from(c.arch.hidden);
    let x = l.new_t(h, c.mode.residual(), input_rg, Part::Residual);
    if c.spec.layout == Layout::Gpt2 {
        gpt2_layer(&mut l, x);
    } else {
        llama_layer(&mut l, x);
    }
    l.result()
}

/// Attention for Llama-likes, after q, k, v projections and RoPE.
///
/// SDPA (flash / memory-efficient, with or without dropout on CUDA) saves
/// q, k, v, its output and an fp32 logsumexp per head (transformers passes
/// `enable_gqa`, so k and v are not repeated). Eager repeats k and v to all
/// heads and keeps the fp32 softmax and its cast to the compute dtype,
/// plus dropout's mask and output when p > 0.
fn llama_attention(l: &mut Ledger, q: Id, k: Id, v: Id) -> Id {
    let c = l.c;
    let a = c.arch;
    let (qd, nh) = (a.q_dim(), u64::from(a.heads));
    let rg = l.rg(q);
    let ab = l.dt(q);
    match c.attn {
        Attn::Sdpa => {
            let o = l.new_t(qd, ab, rg, Part::Attention);
            let lse = l.new_t(nh, 4, rg, Part::Attention);
            if rg {
                for id in [q, k, v, o, lse] {
                    l.save(id);
                }
            }
            o
        }
        Attn::Eager => {
            let kr = l.new_t(qd, ab, rg, Part::Attention);
            let vr = l.new_t(qd, ab, rg, Part::Attention);
            let p32 = l.keyed(nh, 4, rg);
            if rg {
                for id in [q, kr, vr, p32] {
                    l.save(id);
                }
                if ab == 2 {
                    let p = l.keyed(nh, 2, rg);
                    l.save(p);
                }
                l.probs_dropout(nh, ab, rg);
            }
            // transpose(1, 2).contiguous(): saved by o_proj.
            l.new_t(qd, ab, rg, Part::Attention)
        }
    }
}

/// `LlamaDecoderLayer` (and Qwen2, Mistral, Phi-3, Gemma, generic):
/// norm → q, k, v (+ RoPE) → attention → o → residual → norm → gate, up →
/// act(gate) × up → down → residual.
fn llama_layer(l: &mut Ledger, x: Id) {
    let c = l.c;
    let a = c.arch;
    let (h, qd, kvd, f) = (u64::from(a.hidden), a.q_dim(), a.kv_dim(), u64::from(a.ffn));
    let spec = c.spec;
    let gemma = spec.norm == Norm::RmsPlusOne;
    let bias = spec.attn_bias != AttnBias::None;
    let n1 = l.rms_norm(x, h, gemma);
    let (q, k, v) = if spec.qkv == Qkv::Fused {
        // Fused qkv_proj: q, k, v are slices of one output; v's view keeps
        // the whole storage alive.
        let qkv = l.linear(n1, h, qd + 2 * kvd, 0, Proj::Q.or(Proj::K).or(Proj::V));
        let (rg, dt) = (l.rg(qkv), l.dt(qkv));
        let q = l.new_t(qd, dt, rg, Part::Attention);
        let k = l.new_t(kvd, dt, rg, Part::Attention);
        (q, k, qkv)
    } else {
        let q = l.linear(n1, h, qd, if bias { qd } else { 0 }, Proj::Q);
        l.linear(n1, h, kvd, if bias { kvd } else { 0 }, Proj::K);
        let v = l.linear(n1, h, kvd, if bias { kvd } else { 0 }, Proj::V);
        // RoPE: q * cos + rotate_half(q) * sin saves only cos and sin.
        let (rg, dt) = (l.rg(q), l.dt(q));
        let qe = l.new_t(qd, dt, rg, Part::Attention);
        let ke = l.new_t(kvd, dt, rg, Part::Attention);
        (qe, ke, v)
    };
    let o = llama_attention(l, q, k, v);
    let proj = l.linear(o, qd, h, 0, Proj::O);
    let r1 = l.new_t(h, c.mode.residual(), l.rg(x) || l.rg(proj), Part::Residual);
    let n2 = l.rms_norm(r1, h, gemma);
    let (gate, up) = if spec.mlp == Mlp::GatedFused {
        let gu = l.linear(n2, h, 2 * f, 0, Proj::GATE.or(Proj::UP));
        let (rg, dt) = (l.rg(gu), l.dt(gu));
        // chunk(2): both halves are views of gate_up's storage.
        if rg {
            l.save(gu);
        }
        (l.new_t(0, dt, rg, Part::Mlp), l.new_t(0, dt, rg, Part::Mlp))
    } else {
        (
            l.linear(n2, h, f, 0, Proj::GATE),
            l.linear(n2, h, f, 0, Proj::UP),
        )
    };
    let gb = l.dt(gate).max(l.dt(up));
    let rg = l.rg(gate) || l.rg(up);
    // act(gate) saves gate; the product saves act(gate) and up.
    let act = l.new_t(f, gb, rg, Part::Mlp);
    if rg {
        for id in [gate, act, up] {
            l.ts[id].part = Part::Mlp;
            l.save(id);
        }
    }
    let prod = l.new_t(f, gb, rg, Part::Mlp);
    l.linear(prod, f, h, 0, Proj::DOWN);
}

/// `GPT2Block`: LayerNorm → `c_attn` (addmm, h→3h) → attention → `c_proj` →
/// dropout → residual → LayerNorm → `c_fc` → `gelu_new` → `c_proj` →
/// dropout → residual.
fn gpt2_layer(l: &mut Ledger, x: Id) {
    let c = l.c;
    let a = c.arch;
    let (h, f, nh) = (u64::from(a.hidden), u64::from(a.ffn), u64::from(a.heads));
    let n1 = l.layer_norm(x, h);
    let qkv = l.linear(n1, h, 3 * h, 3 * h, Proj::Q.or(Proj::K).or(Proj::V));
    let rg = l.rg(qkv);
    let ab = l.dt(qkv);
    // SDPA keeps its fused kernel (no mask, RNG state only) with dropout on
    // CUDA; on CPU dropout sends it to the math path, which upcasts half
    // inputs to fp32 and materialises probabilities, mask and output.
    let fused = c.attn == Attn::Sdpa && (c.cuda || !c.p_attn);
    let o = if fused {
        let o = l.new_t(h, ab, rg, Part::Attention);
        let lse = l.new_t(nh, 4, rg, Part::Attention);
        if rg {
            l.save(qkv);
            l.save(o);
            l.save(lse);
        }
        o
    } else {
        let upcast = c.attn == Attn::Sdpa && ab == 2;
        let pb = if upcast { 4 } else { ab };
        if rg {
            let kept = if upcast {
                l.new_t(3 * h, 4, rg, Part::Attention)
            } else {
                qkv
            };
            l.save(kept);
            let p = l.keyed(nh, pb, rg);
            l.save(p);
            l.probs_dropout(nh, pb, rg);
        }
        l.new_t(h, ab, rg, Part::Attention)
    };
    let proj = l.linear(o, h, h, h, Proj::O);
    let d1 = l.dropout(proj, h, c.p_resid);
    let r1 = l.new_t(h, c.mode.residual(), l.rg(x) || l.rg(d1), Part::Residual);
    let n2 = l.layer_norm(r1, h);
    let fc = l.linear(n2, h, f, f, Proj::UP);
    let (rg, gb) = (l.rg(fc), l.dt(fc));
    // gelu_new in Python: pow saves x, tanh saves its output, and
    // (0.5 * x) * (1 + tanh(...)) saves both factors.
    if rg {
        l.ts[fc].part = Part::Mlp;
        l.save(fc);
        for _ in 0..3 {
            let t = l.new_t(f, gb, true, Part::Mlp);
            l.save(t);
        }
    }
    let g = l.new_t(f, gb, rg, Part::Mlp);
    let proj2 = l.linear(g, f, h, h, Proj::DOWN);
    l.dropout(proj2, h, c.p_resid);
}

/// The parts outside the layers: embedding, final norm and the output
/// head's input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outer {
    /// Saved per token (embedding dropout mask, final norm, head input).
    pub saved: Saved,
    /// Bytes per token of the final hidden state when nothing saves it: it
    /// is still alive while the loss is computed (the forward peak).
    pub final_hidden_transient: u64,
    /// Bytes per sequence position saved once (RoPE's cos/sin for position
    /// ids of batch 1; GPT-2's int64 position ids).
    pub per_position: u64,
}

/// The embedding and the head: what they save.
pub fn outer(c: &Ctx) -> Outer {
    let a = c.arch;
    let h = u64::from(a.hidden);
    let mut l = Ledger::new(c);
    let mut per_position = 0;
    let last = if c.spec.positions == Positions::Learned {
        // wte(ids) + wpe(pos): the sum, then embd dropout; wpe's backward
        // keeps the int64 position ids.
        let sum = l.new_t(h, c.mode.residual(), c.full, Part::Residual);
        l.dropout(sum, h, c.p_embd);
        if c.full {
            per_position += 8;
        }
        l.new_t(h, c.mode.residual(), true, Part::Residual)
    } else {
        // cos and sin of shape (1, seq, head_dim): fp32 unless pure half.
        per_position += 2 * u64::from(a.head_dim) * if c.mode == Mode::Half { 2 } else { 4 };
        l.new_t(h, c.mode.residual(), true, Part::Residual)
    };
    let n = if c.spec.norm == Norm::LayerNorm {
        l.layer_norm(last, h)
    } else {
        l.rms_norm(last, h, c.spec.norm == Norm::RmsPlusOne)
    };
    // The last layer's output is the final norm's input: count it here.
    l.ts[last].part = Part::Residual;
    let head = l.linear(n, h, u64::from(a.vocab), 0, Proj::NONE);
    let _ = head;
    let final_hidden_transient = if l.ts[n].saved {
        0
    } else {
        l.ts[n].width * l.dt(n)
    };
    Outer {
        saved: l.result(),
        final_hidden_transient,
        per_position,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::PRESETS;
    use crate::scenario::{LoraRank, Prob, Training};

    /// Every family, precision and option fits the fixed ledger with room
    /// to spare, so `push` never has to reuse its last slot.
    #[test]
    fn ledgers_never_fill_up() {
        let mut most = 0;
        for p in PRESETS {
            for dtype in Dtype::ALL {
                for attn in Attn::ALL {
                    for lora in [None, LoraRank::new(8)] {
                        for cuda in [true, false] {
                            let t = Training {
                                dtype: *dtype,
                                attn: *attn,
                                lora_r: lora,
                                cuda_like: cuda,
                                dropout: Prob::new(1000),
                                ..Training::default()
                            };
                            let c = Ctx::new(&p.arch, &t);
                            for rg in [true, false] {
                                let mut l = Ledger::new(&c);
                                let x = l.new_t(1, 4, rg, Part::Residual);
                                if p.arch.family.spec().layout == Layout::Gpt2 {
                                    gpt2_layer(&mut l, x);
                                } else {
                                    llama_layer(&mut l, x);
                                }
                                most = most.max(l.len);
                            }
                        }
                    }
                }
            }
        }
        assert!(
            most + 16 <= MAX_TENSORS,
            "a layer used {most} of {MAX_TENSORS} slots"
        );
    }
}
