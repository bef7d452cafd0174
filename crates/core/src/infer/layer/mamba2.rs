//! Granite 4.0-H's Mamba-2 layers under `generate`, op by op: the torch
//! fallbacks transformers runs where mamba-ssm and causal-conv1d are not
//! installed.
//!
//! Source: transformers 5.23
//! `models/granitemoehybrid/modeling_granitemoehybrid.py`
//! (`GraniteMoeHybridMambaLayer.forward`; in the prompt's forward
//! `causal_conv1d_fn` and `mamba2_chunk_scan` with `segment_sum`, in
//! decode `causal_conv1d_update` and `mamba2_selective_state_update`;
//! `GraniteMoeHybridRMSNormGated`) and `cache_utils.py`
//! (`LinearAttentionLayer`: the convolution state `(B, conv, kernel)` in
//! the model's dtype, made and padded at the prefill; the recurrent state
//! `(B, heads, head dim, state)` in fp32, a `zeros_like` of the scan's
//! final state, copied in; both updated in place after). Transcribed
//! from the measurement's allocation lists (`GT_DEBUG=1
//! scripts/measure/infer/generate.py`, `scripts/measure/infer/NOTES.md`
//! §14), whose rows the replay meets to the byte
//! (`tests/infer_transformers.rs`).
//!
//! Lifetimes follow Python's names, as in [`super::deltanet`]: a `.to()`
//! or `.float()` to the dtype a tensor has allocates nothing, so an fp32
//! model skips the half model's casts.

use super::{Forward, LayerAt};
use crate::infer::sim::{Cat, Id, Sim};

/// One Mamba-2 call's sizes: `q` tokens in each of `b` sequences.
#[derive(Clone, Copy)]
struct Shape {
    b: u128,
    q: u128,
    /// Groups, heads, head width, state width.
    g: u128,
    heads: u128,
    p: u128,
    n: u128,
    /// The convolution's channels (`heads·p + 2·g·n`) and kernel.
    conv: u128,
    k: u128,
    /// Bytes per element of the model's dtype.
    dt: u128,
}

impl Shape {
    fn t(&self) -> u128 {
        self.b * self.q
    }

    fn inner(&self) -> u128 {
        self.heads * self.p
    }

    fn half(&self) -> bool {
        self.dt != 4
    }
}

/// `x.float()` of `n` elements: a copy in a half model, nothing in fp32.
fn to_fp32(s: &mut Sim, sh: Shape, n: u128) -> Option<Id> {
    s.a_if(sh.half(), 4 * n)
}

/// `segment_sum` of `rows` rows of `c` and its `exp`: the boolean masks
/// (`ones`, `tril`, `~`), the masked copy, its cumsum, the second mask
/// and masked copy; `input` (a temporary only its expanded view holds) is
/// freed when the first masked copy takes its name. Returns the `exp`.
fn segment_sum_exp(s: &mut Sim, rows: u128, c: u128, input: Option<Id>) -> Id {
    let (mask, big) = (c * c, 4 * rows * c * c);
    let ones = s.a(mask);
    let tril = s.a(mask);
    s.free(ones);
    let not = s.a(mask);
    let masked = s.a(big);
    s.free(not);
    s.f(&[input]);
    let sums = s.a(big);
    let ones = s.a(mask);
    let tril2 = s.a(mask);
    s.f(&[Some(ones), Some(tril)]);
    let not = s.a(mask);
    let masked2 = s.a(big);
    s.f(&[Some(not), Some(sums), Some(masked), Some(tril2)]);
    let exp = s.a(big);
    s.free(masked2);
    exp
}

impl Forward<'_> {
    /// A Mamba-2 layer on `t` tokens: its output, nothing kept for later,
    /// and its cache (the convolution and recurrent states).
    pub(super) fn mamba2_block(&mut self, t: u128, at: LayerAt) -> (Id, [Option<Id>; 2], [Id; 2]) {
        let d = self.d;
        let sh = Shape {
            b: d.b,
            q: at.q,
            g: d.lin_hk,
            heads: d.lin_hv,
            p: d.lin_dv,
            n: d.lin_dk,
            conv: d.lin_hv * d.lin_dv + 2 * d.lin_hk * d.lin_dk,
            k: d.lin_k,
            dt: d.dt,
        };
        let n1 = self.norm(t, t * d.h);
        let zx = self.lin(t, d.h, sh.inner() + sh.conv + sh.heads);
        // `A = -torch.exp(self.A_log.float())`.
        let s = &mut self.sim;
        let c = to_fp32(s, sh, sh.heads);
        let e = s.a(4 * sh.heads);
        s.f(&[c]);
        let a = s.a(4 * sh.heads);
        s.free(e);
        let (y, xbytes, cache, rest) = match at.old {
            [Some(conv), Some(state)] => {
                let si = self.mamba_conv_update(sh);
                let y = self.selective_update(sh);
                (y, sh.dt, [conv, state], [Some(si), None])
            }
            _ => {
                let (conv, si) = self.mamba_conv_prefill(sh);
                let (y, ns, state) = self.chunk_scan(sh);
                (y, 4, [conv, state], [Some(si), Some(ns)])
            }
        };
        let normed = self.gated_norm(sh, xbytes);
        // In decode the scan's output goes when the norm's takes its name;
        // in the prefill the scan's result holds it to the return.
        let s = &mut self.sim;
        let kept = if rest[1].is_none() {
            s.free(y);
            None
        } else {
            Some(y)
        };
        let cast = s.a_if(xbytes != sh.dt, sh.dt * t * sh.inner());
        let o = self.lin(t, sh.inner(), d.h);
        let s = &mut self.sim;
        s.f(&[
            cast,
            Some(a),
            Some(zx),
            rest[0],
            Some(normed),
            kept,
            rest[1],
        ]);
        s.free(n1);
        (o, [None, None], cache)
    }

    /// The prompt's convolution (`update_conv_state` then
    /// `causal_conv1d_fn`): the state made (`torch.zeros`), a prompt
    /// shorter than the kernel left-padded to it, the depthwise `conv1d`
    /// with `kernel - 1` of padding, SiLU over the (padded) prompt.
    /// Returns the state and the activation.
    fn mamba_conv_prefill(&mut self, sh: Shape) -> (Id, Id) {
        let (dt, b, conv, k) = (sh.dt, sh.b, sh.conv, sh.k);
        let s = &mut self.sim;
        s.tag(Cat::Kv);
        let state = s.a(dt * b * conv * k);
        s.tag(Cat::Act);
        let padded = s.a_if(sh.q < k, dt * b * conv * k);
        let steps = sh.q.max(k);
        let cv = s.a(dt * b * conv * (steps + k - 1));
        let si = s.a(dt * b * conv * steps);
        s.f(&[Some(cv), padded]);
        (state, si)
    }

    /// `causal_conv1d_update`: the state and the token concatenated, the
    /// `conv1d` over them (two steps), SiLU of the last.
    fn mamba_conv_update(&mut self, sh: Shape) -> Id {
        let (dt, b, conv, k) = (sh.dt, sh.b, sh.conv, sh.k);
        let s = &mut self.sim;
        let cat = s.a(dt * b * conv * (k + 1));
        let cv = s.a(dt * b * conv * 2);
        let si = s.a(dt * b * conv);
        s.f(&[Some(cv), Some(cat)]);
        si
    }

    /// `mamba2_chunk_scan` over the prompt, in fp32 chunks of
    /// `lin_chunk` tokens (the prompt padded to whole chunks). Returns
    /// its output (`B × padded × inner`, fp32), the new states it is a
    /// view of the last of (both held by the caller's names to its
    /// return) and the cache's recurrent state.
    fn chunk_scan(&mut self, sh: Shape) -> (Id, Id, Id) {
        let (b, t, heads, n) = (sh.b, sh.t(), sh.heads, sh.n);
        let chunk = self.d.lin_chunk.max(1);
        let chunks = sh.q.div_ceil(chunk);
        let tp = b * chunks * chunk;
        let (inner, dt) = (sh.inner(), sh.dt);
        let s = &mut self.sim;
        // `dt + dt_bias`, softplus, clamp (kept to the return).
        let add = s.a(dt * t * heads);
        let sp = s.a(dt * t * heads);
        s.free(add);
        let dtc = s.a(dt * t * heads);
        s.free(sp);
        // The inputs in fp32; B and C repeated to every head.
        let xf = to_fp32(s, sh, t * inner);
        let [bh, ch] = [0, 1].map(|_| {
            let f = to_fp32(s, sh, t * sh.g * n);
            let r = s.a(4 * t * heads * n);
            s.f(&[f]);
            r
        });
        // `D * pad(x)`; then x and A discretized.
        let pad = s.a(4 * tp * inner);
        let dres = s.a(4 * tp * inner);
        s.free(pad);
        let df = to_fp32(s, sh, t * heads);
        let xm = s.a(4 * t * inner);
        s.f(&[df, xf]);
        let df = to_fp32(s, sh, t * heads);
        let am = s.a(4 * t * heads);
        s.f(&[df]);
        // `reshape_into_chunks` pads all four.
        let xc = s.a(4 * tp * inner);
        let ac = s.a(4 * tp * heads);
        let bc = s.a(4 * tp * heads * n);
        let cc = s.a(4 * tp * heads * n);
        s.f(&[Some(xm), Some(am), Some(bh), Some(ch)]);
        let cum = s.a(4 * tp * heads);
        let l = segment_sum_exp(s, b * heads * chunks, chunk, None);
        let temps = self.intra_chunk(sh, tp, chunks, chunk);
        let s = &mut self.sim;
        // The states at the chunks' boundaries, from zeros.
        let st = [b * chunks, b * (chunks + 1), b].map(|rows| 4 * rows * heads * sh.p * n);
        let prev = s.a(st[2]);
        let cat = s.a(st[1]);
        s.free(temps[4]);
        let pd = s.a(4 * b * heads * (chunks + 1));
        let dc = segment_sum_exp(s, b * heads, chunks + 1, Some(pd));
        let sc = s.a(st[1]);
        let ns = s.a(st[1]);
        s.f(&[Some(sc), Some(cat)]);
        // The state's contribution to each chunk's output, and the sum.
        let sdo = s.a(4 * tp * heads);
        let c2 = s.a(4 * tp * heads * n);
        let s2 = s.a(st[0]);
        let cts = s.a(4 * tp * inner);
        s.f(&[Some(s2), Some(c2)]);
        let yoff = s.a(4 * tp * inner);
        let sum = s.a(4 * tp * inner);
        let contiguous = s.a(4 * tp * inner);
        s.free(sum);
        let out = s.a(4 * tp * inner);
        s.free(contiguous);
        s.f(&[
            Some(xc),
            Some(dtc),
            Some(ac),
            Some(bc),
            Some(cc),
            Some(dres),
        ]);
        s.f(&[
            Some(cum),
            Some(l),
            Some(temps[0]),
            Some(temps[1]),
            Some(temps[2]),
        ]);
        s.f(&[
            Some(temps[3]),
            Some(temps[5]),
            Some(prev),
            Some(dc),
            Some(sdo),
        ]);
        s.f(&[Some(cts), Some(yoff)]);
        // `update_recurrent_state`: a `zeros_like` of the final state.
        s.tag(Cat::Kv);
        let state = s.a(4 * b * heads * sh.p * n);
        s.tag(Cat::Act);
        (out, ns, state)
    }

    /// Within the chunks: `G = C·B` (both copied into `bmm`'s layout),
    /// `M = G·L`, `Y_diag = M·x` (x copied), the decay to each chunk's end,
    /// `B·decay`, and the states `B_decay·x` (both copied). Returns G, M,
    /// `Y_diag`, the decay, the states (freed by the caller's `cat`) and
    /// `B_decay`.
    fn intra_chunk(&mut self, sh: Shape, tp: u128, chunks: u128, chunk: u128) -> [Id; 6] {
        let (b, heads, n, inner) = (sh.b, sh.heads, sh.n, sh.inner());
        let s = &mut self.sim;
        let cb = [s.a(4 * tp * heads * n), s.a(4 * tp * heads * n)];
        let g = s.a(4 * b * chunks * heads * chunk * chunk);
        s.f(&[Some(cb[1]), Some(cb[0])]);
        let m = s.a(4 * b * chunks * heads * chunk * chunk);
        let xc = s.a(4 * tp * inner);
        let yd = s.a(4 * tp * inner);
        s.free(xc);
        let sub = s.a(4 * tp * heads);
        let decay = s.a(4 * tp * heads);
        s.free(sub);
        let bd = s.a(4 * tp * heads * n);
        let xc = s.a(4 * tp * inner);
        let bdc = s.a(4 * tp * heads * n);
        let states = s.a(4 * b * chunks * heads * sh.p * n);
        s.f(&[Some(bdc), Some(xc)]);
        [g, m, yd, decay, states, bd]
    }

    /// `mamba2_selective_state_update` for one token: `dt + dt_bias` and
    /// softplus over the heads' widths, `exp(dt·A)` in fp32, B and C
    /// expanded to every head (copies), `dt·B`, `·x`, the new state
    /// (`state·dA + dBx`, fp32, copied in place), cast to the model's dtype
    /// for the `bmm` with C, `+ x·D`. Returns the output (model dtype).
    fn selective_update(&mut self, sh: Shape) -> Id {
        let (dt, b, heads, p, n) = (sh.dt, sh.b, sh.heads, sh.p, sh.n);
        let (hp, big) = (b * heads * p, b * heads * p * n);
        let s = &mut self.sim;
        let add = s.a(dt * hp);
        let sp = s.a(dt * hp);
        s.free(add);
        let df = to_fp32(s, sh, hp);
        let prod = s.a(4 * big);
        s.f(&[df]);
        let da = s.a(4 * big);
        s.free(prod);
        let bh = s.a(dt * b * heads * n);
        let db = s.a(dt * big);
        let dbx = s.a(dt * big);
        let sa = s.a(4 * big);
        let ss = s.a(4 * big);
        s.free(sa);
        let chh = s.a(dt * b * heads * n);
        let cast = s.a_if(sh.half(), dt * big);
        if cast.is_some() {
            s.free(ss);
        }
        let bm = s.a(dt * hp);
        let xd = s.a(dt * hp);
        let out = s.a(dt * hp);
        s.f(&[
            Some(xd),
            Some(bm),
            Some(sp),
            Some(bh),
            Some(da),
            Some(db),
            Some(dbx),
        ]);
        let state = cast.unwrap_or(ss);
        s.f(&[Some(state), Some(chh)]);
        out
    }

    /// `GraniteMoeHybridRMSNormGated` over the scan's output (`x` bytes
    /// per element: fp32 from the chunked scan, the model's dtype from the
    /// state update) gated by `silu(gate)` in fp32, normalised per group,
    /// times the weight in the output's dtype. Returns its output, of the
    /// scan output's dtype.
    fn gated_norm(&mut self, sh: Shape, x: u128) -> Id {
        let (t, g, inner) = (sh.t(), sh.g, sh.inner());
        let n = t * inner;
        let s = &mut self.sim;
        let xf = s.a_if(x != 4, 4 * n);
        let gf = to_fp32(s, sh, n);
        let sg = s.a(4 * n);
        s.f(&[gf]);
        let mu = s.a(4 * n);
        s.f(&[Some(sg), xf]);
        let pw = s.a(4 * n);
        let mean = s.a(4 * t * g);
        s.free(pw);
        let add = s.a(4 * t * g);
        let rs = s.a(4 * t * g);
        s.free(add);
        let nx = s.a(4 * n);
        s.f(&[Some(rs), Some(mu)]);
        let cast = s.a_if(x != 4, x * n);
        let out = s.a(x * n);
        s.f(&[cast, Some(nx), Some(mean)]);
        out
    }
}
