//! The Gated DeltaNet hybrids' layers under `generate` (Qwen3.5 / 3.6,
//! Qwen3-Next), op by op: the linear-attention layers and the gated
//! full-attention ones, with Qwen3.5's multimodal rotary tables.
//!
//! Qwen3-Next (`models/qwen3_next/modeling_qwen3_next.py`) differs only in
//! its fused input projections (`in_projections` below) and its rotary.
//!
//! Source: transformers 5.23 `models/qwen3_5/modeling_qwen3_5.py`
//! (`Qwen3_5GatedDeltaNet.forward`, `torch_chunk_gated_delta_rule` in
//! the prefill, `torch_recurrent_gated_delta_rule` and
//! `causal_conv1d_update` in decode, `causal_conv1d_fn`,
//! `Qwen3_5RMSNormGated`, `Qwen3_5Attention.forward`,
//! `Qwen3_5TextRotaryEmbedding`) and `cache_utils.py`
//! (`LinearAttentionLayer`): the torch fallbacks transformers runs where
//! flash-linear-attention and causal-conv1d are not installed. Transcribed
//! from the measurement's own allocation lists (`GT_DEBUG=1
//! scripts/measure/infer/generate.py`, `scripts/measure/infer/NOTES.md`
//! §12), whose rows the replay meets to the byte
//! (`tests/infer_transformers.rs`).
//!
//! Lifetimes follow Python's names: a tensor lives until the name holding
//! it is bound again or its function returns. A `.to(dtype)` to the dtype
//! a tensor already has allocates nothing (`to_will_alias`), so an fp32
//! model skips the half model's casts.

use super::{Forward, LayerAt};
use crate::infer::sim::{Cat, Id, Run, Sim};

/// `torch_chunk_gated_delta_rule`'s `chunk_size`.
const CHUNK: u128 = 64;

/// One Gated DeltaNet call's sizes: `t` tokens over `b` sequences.
#[derive(Clone, Copy)]
struct Shape {
    b: u128,
    t: u128,
    hk: u128,
    hv: u128,
    dk: u128,
    dv: u128,
    /// The model's dtype is not fp32: the fp32 casts copy.
    half: bool,
}

impl Shape {
    /// The recurrent state, fp32.
    fn state(&self) -> u128 {
        4 * self.b * self.hv * self.dk * self.dv
    }
}

/// What a DeltaNet layer's input projections leave: the convolution's
/// input, z, b and a, the copies the convolution's split releases and the
/// fused projections kept to the end.
struct InProj {
    mixed: Id,
    z: Option<Id>,
    b: Option<Id>,
    a: Option<Id>,
    copies: [Option<Id>; 3],
    fused: [Option<Id>; 2],
}

/// `x.to(model dtype)` of an fp32 `x` that is not used again: in a half
/// model a copy of `bytes` made and `x` freed; in fp32 `x` itself (the
/// cast aliases).
fn to_model_dtype(s: &mut Sim, half: bool, bytes: u128, x: Id) -> Id {
    if !half {
        return x;
    }
    let o = s.a(bytes);
    s.free(x);
    o
}

impl Forward<'_> {
    /// Qwen3.5's rotary tables of one forward (`t` tokens, `rd` rotated
    /// channels): the positions of three rows in fp32 times the inverse
    /// frequencies, their cos and sin scaled, each recomposed into one
    /// `(B, T, rd)` table by `cat`, cast to the model's dtype.
    pub(super) fn rotary_mrope(&mut self, t: u128, rd: u128) -> [Option<Id>; 2] {
        let dt = self.d.dt;
        let mut s = Run::default();
        let pf = s.a(4 * 3 * t);
        let fr = s.a(4 * 3 * t * rd / 2);
        s.f(&[pf]);
        let c = s.a(4 * 3 * t * rd / 2);
        let cm = s.a(4 * 3 * t * rd / 2);
        s.f(&[c]);
        let sn = s.a(4 * 3 * t * rd / 2);
        let sm = s.a(4 * 3 * t * rd / 2);
        s.f(&[sn]);
        let sc = s.a(4 * t * rd);
        s.f(&[sm]);
        let cc = s.a(4 * t * rd);
        s.f(&[cm]);
        let out = if dt != 4 {
            let cd = s.a(dt * t * rd);
            let sd = s.a(dt * t * rd);
            s.f(&[fr, cc, sc]);
            [cd, sd]
        } else {
            s.f(&[fr]);
            [cc, sc]
        };
        self.sim.burst(s.max(), out).map(Some)
    }

    /// `Qwen3_5Attention.forward`: q_proj makes the queries and their gate
    /// (the gate copied out by `reshape`), per-head zero-centred q/k norms,
    /// the rotary part of q then of k rotated, each concatenated with its
    /// pass-through part, the cache updated, attention, `sigmoid(gate)`
    /// times its output, o_proj.
    pub(super) fn attn_gated(
        &mut self,
        t: u128,
        at: LayerAt,
        mask: bool,
    ) -> (Id, [Option<Id>; 2], [Id; 2]) {
        let d = self.d;
        let (dt, h, hq, hkv, hd) = (d.dt, d.h, d.heads, d.kv_heads, d.head_dim);
        let n1 = self.norm(t, t * h);
        let qp = self.lin(t, h, 2 * hq * hd);
        let gate = self.sim.a(dt * t * hq * hd);
        let qq = self.gemma_norm(t * hq, t * hq * hd, hd);
        self.sim.free(qp);
        let kp = self.lin(t, h, hkv * hd);
        let kk = self.gemma_norm(t * hkv, t * hkv * hd, hd);
        self.sim.free(kp);
        let vp = self.lin(t, h, hkv * hd);
        let qr = self.rotate_part(t * hq * d.rd);
        let kr = self.rotate_part(t * hkv * d.rd);
        let s = &mut self.sim;
        let qe = s.a(dt * t * hq * hd);
        s.free(qr);
        let ke = s.a(dt * t * hkv * hd);
        s.free(kr);
        s.f(&[Some(qq), Some(kk)]);
        let half = (hkv * hd * dt, hkv * hd * dt);
        let cache = self.cache_update(at.span, at.old, at.stored, half);
        self.sim.f(&[Some(ke), Some(vp)]);
        let (out, keep) = self.attention(at.q, at.kv, mask, (hd, hd), (hq, hkv));
        let s = &mut self.sim;
        let sg = s.a(dt * t * hq * hd);
        let gated = s.a(dt * t * hq * hd);
        s.f(&[Some(sg), Some(out)]);
        let o = self.lin(t, hq * hd, h);
        self.sim.f(&[Some(gated), Some(qe), Some(gate), Some(n1)]);
        (o, [keep, None], cache)
    }

    /// `q_rot * cos + rotate_half(q_rot) * sin` on `n` rotated elements:
    /// returns the sum.
    fn rotate_part(&mut self, n: u128) -> Id {
        let mut s = Run::default();
        let qr = super::rotated(&mut s, self.d.dt, n);
        let [qr] = self.sim.burst(s.max(), [qr]);
        qr
    }

    /// A Gated DeltaNet layer's token mixer (`Qwen3_5GatedDeltaNet.
    /// forward`) after the input norm: the input projections, the
    /// causal convolution (its state made in the prefill, updated in
    /// decode), beta and the decay, the gated delta rule (chunked over the
    /// prompt, one step in decode), the gated norm and out_proj. Returns
    /// the output and the layer's convolution and recurrent states.
    pub(super) fn deltanet_block(
        &mut self,
        t: u128,
        at: LayerAt,
    ) -> (Id, [Option<Id>; 2], [Id; 2]) {
        let d = self.d;
        let (dt, h) = (d.dt, d.h);
        let g = Shape {
            b: d.b,
            t,
            hk: d.lin_hk,
            hv: d.lin_hv,
            dk: d.lin_dk,
            dv: d.lin_dv,
            half: dt != 4,
        };
        let vd = g.hv * g.dv;
        let n1 = self.norm(t, t * h);
        let channels = 2 * g.hk * g.dk + vd;
        let p = self.in_projections(g);
        let (conv, mixed) = match at.old {
            [Some(conv), Some(_)] => (conv, self.conv_step(channels, p.mixed)),
            _ => self.conv_prefill(at.q, channels, p.mixed),
        };
        // `query, key, value = torch.split(...)` drops the copies.
        self.sim.f(&p.copies);
        let beta = self.sim.a(dt * t * g.hv);
        let decay = self.decay(g);
        let (core, state) = match at.old {
            [Some(_), Some(_)] => self.recurrent_rule(g),
            _ => self.chunk_rule(g, at.q),
        };
        let rec = match at.old {
            [Some(_), Some(rec)] => rec,
            _ => {
                self.sim.tag(Cat::Kv);
                let rec = self.sim.a(g.state());
                self.sim.tag(Cat::Act);
                rec
            }
        };
        // fp32: the prefill's output is a transposed view, which
        // `reshape(-1, head_v_dim)` copies.
        let x = if !g.half && at.old[1].is_none() {
            let c = self.sim.a(4 * t * vd);
            self.sim.free(core);
            c
        } else {
            core
        };
        let normed = self.norm_gated(g, t * g.hv);
        self.sim.free(x);
        let o = self.lin(t, vd, h);
        self.sim.f(&p.fused);
        self.sim.f(&[
            p.z,
            p.b,
            p.a,
            Some(mixed),
            Some(beta),
            Some(decay),
            Some(normed),
            Some(state),
            Some(n1),
        ]);
        (o, [None, None], [conv, rec])
    }

    /// The input projections: Qwen3.5's four (`in_proj_qkv`, `in_proj_z`,
    /// `in_proj_b`, `in_proj_a`), or Qwen3-Next's two fused ones
    /// (`in_proj_qkvz`, `in_proj_ba`, kept to the end of the forward) cut
    /// by `fix_query_key_value_ordering`, whose `reshape`s copy each
    /// strided piece (value, z, b and a when a key head serves several
    /// value heads, then query and key always), and the pieces `cat` into
    /// the convolution's input.
    fn in_projections(&mut self, g: Shape) -> InProj {
        let (t, h, dt) = (g.t, self.d.h, self.d.dt);
        let (kd, vd) = (g.hk * g.dk, g.hv * g.dv);
        let fused = self.spec.linear.is_some_and(|l| l.fused_in_proj);
        if !fused {
            return InProj {
                mixed: self.lin(t, h, 2 * kd + vd),
                z: Some(self.lin(t, h, vd)),
                b: Some(self.lin(t, h, g.hv)),
                a: Some(self.lin(t, h, g.hv)),
                copies: [None; 3],
                fused: [None; 2],
            };
        }
        let qkvz = self.lin(t, h, 2 * kd + 2 * vd);
        let ba = self.lin(t, h, 2 * g.hv);
        let s = &mut self.sim;
        // One value head a key head: the merged dimension is 1, a view.
        let grouped = g.hv != g.hk;
        let v = s.a_if(grouped, dt * t * vd);
        let z = s.a_if(grouped, dt * t * vd);
        let b = s.a_if(grouped, dt * t * g.hv);
        let a = s.a_if(grouped, dt * t * g.hv);
        let q = s.a(dt * t * kd);
        let k = s.a(dt * t * kd);
        InProj {
            mixed: s.a(dt * t * (2 * kd + vd)),
            z,
            b,
            a,
            copies: [Some(q), Some(k), v],
            fused: [Some(qkvz), Some(ba)],
        }
    }

    /// The prefill's convolution: the cache's convolution state made
    /// (zeros, `kernel` steps), the input left-padded to the kernel when
    /// the prompt is shorter (`update_conv_state`), `conv1d` over it with
    /// `kernel - 1` of padding, its first steps through SiLU. Returns the
    /// state and SiLU's output (q, k and v are views of it).
    fn conv_prefill(&mut self, q: u128, channels: u128, qkv: Id) -> (Id, Id) {
        let d = self.d;
        let (b, dt, k) = (d.b, d.dt, d.lin_k);
        let s = &mut self.sim;
        s.tag(Cat::Kv);
        let state = s.a(dt * b * channels * k);
        s.tag(Cat::Act);
        let short = q < k;
        let steps = q.max(k);
        let padded = s.a_if(short, dt * b * channels * k);
        if short {
            s.free(qkv);
        }
        let conv = s.a(dt * b * channels * (steps + k - 1));
        let mixed = s.a(dt * b * channels * steps);
        s.free(conv);
        match padded {
            Some(p) => s.free(p),
            None => s.free(qkv),
        }
        (state, mixed)
    }

    /// A decode step's convolution (`causal_conv1d_update`): the state
    /// and the token concatenated, `conv1d` over them, SiLU of the last
    /// step. Returns SiLU's output.
    fn conv_step(&mut self, channels: u128, qkv: Id) -> Id {
        let d = self.d;
        let (b, dt, k) = (d.b, d.dt, d.lin_k);
        let s = &mut self.sim;
        let cat = s.a(dt * b * channels * (k + 1));
        let conv = s.a(dt * b * channels * 2);
        let mixed = s.a(dt * b * channels);
        s.f(&[Some(conv), Some(cat), Some(qkv)]);
        mixed
    }

    /// `g = -A_log.float().exp() * softplus(a.float() + dt_bias)`, fp32.
    fn decay(&mut self, g: Shape) -> Id {
        let (t, hv) = (g.t, g.hv);
        let s = &mut self.sim;
        let af = s.a_if(g.half, 4 * hv);
        let e = s.a(4 * hv);
        s.f(&[af]);
        let ng = s.a(4 * hv);
        s.free(e);
        let xf = s.a_if(g.half, 4 * t * hv);
        let add = s.a(4 * t * hv);
        s.f(&[xf]);
        let sp = s.a(4 * t * hv);
        s.free(add);
        let out = s.a(4 * t * hv);
        s.f(&[Some(ng), Some(sp)]);
        out
    }

    /// `l2norm` over `rows` rows of `n` fp32 elements in all:
    /// `x * rsqrt((x * x).sum(-1) + eps)`. Returns its output.
    fn l2norm(&mut self, rows: u128, n: u128) -> Id {
        let s = &mut self.sim;
        let sq = s.a(4 * n);
        let sum = s.a(4 * rows);
        s.free(sq);
        let add = s.a(4 * rows);
        s.free(sum);
        let rs = s.a(4 * rows);
        s.free(add);
        let out = s.a(4 * n);
        s.free(rs);
        out
    }

    /// The rules' common start: keys and queries repeated to the value
    /// heads (`repeat_interleave`), the fp32 copies of q, k, v and beta
    /// (none in fp32: the casts alias), q and k L2-normalised. Returns the
    /// normalised q and k and the fp32 v and beta copies.
    fn rule_inputs(&mut self, g: Shape) -> [Option<Id>; 4] {
        let (t, hv, dk, dt) = (g.t, g.hv, g.dk, self.d.dt);
        let s = &mut self.sim;
        let rep = g.hk != g.hv;
        let qr = s.a_if(rep, dt * t * hv * dk);
        let kr = s.a_if(rep, dt * t * hv * dk);
        let q32 = s.a_if(g.half, 4 * t * hv * dk);
        let k32 = s.a_if(g.half, 4 * t * hv * dk);
        let v32 = s.a_if(g.half, 4 * t * hv * g.dv);
        let b32 = s.a_if(g.half, 4 * t * hv);
        let (q_src, k_src) = if g.half {
            s.f(&[qr, kr]);
            (q32, k32)
        } else {
            (qr, kr)
        };
        let qn = self.l2norm(t * hv, t * hv * dk);
        self.sim.f(&[q_src]);
        let kn = self.l2norm(t * hv, t * hv * dk);
        self.sim.f(&[k_src]);
        [Some(qn), Some(kn), v32, b32]
    }

    /// `torch_chunk_gated_delta_rule` over the prompt (`q` tokens a
    /// sequence, padded to whole chunks of 64): the padded fp32 inputs,
    /// the per-chunk decay, attention and triangular systems, then the
    /// scan over chunks (its second chunk holds what every later one
    /// does). Returns the output in the model's dtype and the final state.
    fn chunk_rule(&mut self, g: Shape, q: u128) -> (Id, Id) {
        let (b, hv, dk, dv) = (g.b, g.hv, g.dk, g.dv);
        let padded = q.div_ceil(CHUNK) * CHUNK;
        let chunks = padded / CHUNK;
        let [qn, kn, v32, b32] = self.rule_inputs(g);
        // Bytes of one fp32 (B, Hv, padded) row, of its key-wide and
        // value-wide tensors, and of a chunk's square.
        let x = 4 * b * hv * padded;
        let (xk, xv, y) = (x * dk, x * dv, x * CHUNK);
        let s = &mut self.sim;
        let qs = s.a(4 * g.t * hv * dk);
        s.f(&[qn]);
        let (qp, kp, vp) = (s.a(xk), s.a(xk), s.a(xv));
        s.f(&[Some(qs), kn, v32]);
        let (bp, dp) = (s.a(x), s.a(x));
        s.f(&[b32]);
        let (vb, kb) = (s.a(xv), s.a(xk));
        let ones = s.a(CHUNK * CHUNK);
        let mask = s.a(CHUNK * CHUNK);
        s.free(ones);
        let cum = s.a(x);
        let (s1, s2) = (s.a(y), s.a(y));
        s.free(s1);
        let pair = s.a(y);
        s.free(s2);
        let mm = s.a(y);
        let ut = s.a(y);
        s.free(mm);
        let mm = s.a(y);
        let intra = s.a(y);
        s.free(mm);
        let e = s.a(x);
        let dkb = s.a(xk);
        s.free(e);
        let (nv, kc) = (s.a(xv), s.a(xk));
        let mut state = s.a(g.state());
        let core = s.a(xv);
        let e = s.a(x);
        let q2 = s.a(xk);
        s.f(&[Some(e), Some(qp)]);
        let sub = s.a(x);
        let e = s.a(x);
        s.free(sub);
        let k2 = s.a(xk);
        s.f(&[Some(e), Some(kp)]);
        let cd = s.a(4 * b * hv * chunks);
        let (mut v_new, mut inter) = (None, None);
        for _ in 0..chunks.min(2) {
            let (v, i, next) = self.chunk_step(g, state, [v_new, inter]);
            (v_new, inter, state) = (Some(v), Some(i), next);
        }
        let s = &mut self.sim;
        let flat = s.a(xv);
        s.free(core);
        let out = to_model_dtype(s, g.half, self.d.dt * g.t * hv * dv, flat);
        s.f(&[
            Some(q2),
            Some(k2),
            Some(vp),
            Some(bp),
            Some(dp),
            Some(vb),
            Some(kb),
            Some(mask),
            Some(cum),
            Some(pair),
            Some(ut),
            Some(intra),
            Some(dkb),
            Some(nv),
            Some(kc),
            Some(cd),
            v_new,
            inter,
        ]);
        (out, state)
    }

    /// One chunk of the scan: `v_new` from the state, the state's read
    /// (`inter_chunk_attn`) kept to the next chunk, the chunk's output
    /// written in place, the state decayed and updated. `last` are the
    /// previous chunk's `v_new` and read, freed as their names are bound
    /// again. Returns the new `v_new`, read and state.
    fn chunk_step(&mut self, g: Shape, state: Id, last: [Option<Id>; 2]) -> (Id, Id, Id) {
        let v = 4 * g.b * g.hv * CHUNK * g.dv;
        let st = g.state();
        let s = &mut self.sim;
        let mm = s.a(v);
        let v_new = s.a(v);
        s.free(mm);
        s.f(&last[..1]);
        let inter = s.a(v);
        s.f(&last[1..]);
        let mm = s.a(v);
        let sum = s.a(v);
        s.f(&[Some(mm), Some(sum)]);
        let decayed = s.a(st);
        let mm = s.a(st);
        let next = s.a(st);
        s.f(&[Some(decayed), Some(mm), Some(state)]);
        (v_new, inter, next)
    }

    /// `torch_recurrent_gated_delta_rule` for one token (decode), from the
    /// cache's state (aliased, never freed here): q scaled, the state
    /// decayed, read, corrected by the delta and read by q. Returns the
    /// output in the model's dtype and the new state.
    fn recurrent_rule(&mut self, g: Shape) -> (Id, Id) {
        let (t, hv, dk, dv) = (g.t, g.hv, g.dk, g.dv);
        let [qn, kn, v32, b32] = self.rule_inputs(g);
        let st = g.state();
        let row = 4 * g.b * hv * dv;
        let s = &mut self.sim;
        let qd = s.a(4 * t * hv * dk);
        s.f(&[qn]);
        let core = s.a(4 * t * hv * dv);
        let e = s.a(4 * g.b * hv);
        let decayed = s.a(st);
        let mm = s.a(st);
        let kv_mem = s.a(row);
        s.free(mm);
        let sub = s.a(row);
        let delta = s.a(row);
        s.free(sub);
        let mm = s.a(st);
        let next = s.a(st);
        s.f(&[Some(mm), Some(decayed)]);
        let mm = s.a(st);
        let sum = s.a(row);
        s.f(&[Some(mm), Some(sum)]);
        let out = to_model_dtype(s, g.half, self.d.dt * t * hv * dv, core);
        s.f(&[Some(qd), kn, v32, Some(e), b32, Some(kv_mem), Some(delta)]);
        (out, next)
    }

    /// `Qwen3_5RMSNormGated` on `rows` rows of `g.dv` (the rule's output,
    /// alive in the caller): normalised in fp32, cast back, weighted,
    /// times `silu(z)` in fp32, cast back. Returns its output.
    fn norm_gated(&mut self, g: Shape, rows: u128) -> Id {
        let (dt, n) = (self.d.dt, rows * g.dv);
        let s = &mut self.sim;
        let x32 = s.a_if(g.half, 4 * n);
        let sq = s.a(4 * n);
        let mean = s.a(4 * rows);
        s.free(sq);
        let add = s.a(4 * rows);
        let rs = s.a(4 * rows);
        s.free(add);
        let normed = s.a(4 * n);
        s.free(rs);
        s.f(&[x32]);
        let cast = s.a_if(g.half, dt * n);
        let weighted = s.a(dt * n);
        s.f(&[cast, Some(normed)]);
        let z32 = s.a_if(g.half, 4 * n);
        let act = s.a(4 * n);
        s.f(&[z32]);
        let gated = s.a(4 * n);
        s.f(&[Some(act), Some(weighted)]);
        let out = to_model_dtype(s, g.half, dt * n, gated);
        s.free(mean);
        out
    }
}
