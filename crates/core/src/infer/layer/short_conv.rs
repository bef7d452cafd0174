//! LFM2's short-convolution layers under `generate`, op by op.
//!
//! Source: transformers 5.23 `models/lfm2/modeling_lfm2.py`
//! (`Lfm2ShortConv.forward`: `in_proj` to `B`, `C`, `x`, `B·x`, the
//! depthwise `conv1d` of `conv_L_cache` taps with no activation, `C·conv`,
//! `out_proj`; `causal_conv1d_fn` and `causal_conv1d_update`'s torch
//! fallbacks) and `cache_utils.py` (`LinearAttentionLayer`: the
//! convolution state `(B, hidden, conv_L_cache)` in the model's dtype,
//! made at the prefill, updated in place). Transcribed from the
//! measurement's allocation lists (`GT_DEBUG=1
//! scripts/measure/infer/generate.py`, `scripts/measure/infer/NOTES.md`
//! §13), whose rows the replay meets to the byte
//! (`tests/infer_transformers.rs`).

use super::{Forward, LayerAt};
use crate::infer::sim::{Cat, Id};

impl Forward<'_> {
    /// A short-convolution layer on `t` tokens: its output, nothing kept
    /// for later, and its cache (the convolution state; the second state,
    /// a recurrent one elsewhere, is empty).
    pub(super) fn short_conv_block(
        &mut self,
        t: u128,
        at: LayerAt,
    ) -> (Id, [Option<Id>; 2], [Id; 2]) {
        let d = self.d;
        let (dt, h, b, k) = (d.dt, d.h, d.b, d.lin_k);
        let n1 = self.norm(t, t * h);
        let bcx = self.lin(t, h, 3 * h);
        let s = &mut self.sim;
        let bx = s.a(dt * t * h);
        // The convolution: over the state and the token in decode
        // (`causal_conv1d_update`: their `cat`, `conv1d` of two steps);
        // in the prefill over the prompt, left-padded to the kernel when
        // shorter (`update_conv_state`), with `kernel - 1` of padding.
        let (state, conv) = match at.old {
            [Some(state), Some(_)] => {
                let cat = s.a(dt * b * h * (k + 1));
                let conv = s.a(dt * b * h * 2);
                s.f(&[Some(cat), Some(bx)]);
                (state, conv)
            }
            _ => {
                s.tag(Cat::Kv);
                let state = s.a(dt * b * h * k);
                s.tag(Cat::Act);
                let steps = at.q.max(k);
                let padded = s.a_if(at.q < k, dt * b * h * k);
                if padded.is_some() {
                    s.free(bx);
                }
                let conv = s.a(dt * b * h * (steps + k - 1));
                match padded {
                    Some(p) => s.free(p),
                    None => s.free(bx),
                }
                (state, conv)
            }
        };
        let y = s.a(dt * t * h);
        let o = self.lin(t, h, h);
        self.sim.f(&[Some(y), Some(conv), Some(bcx), Some(n1)]);
        // No recurrent state: an empty second state keeps the cache's
        // shape.
        let none = match at.old {
            [_, Some(rec)] => rec,
            [_, None] => {
                self.sim.tag(Cat::Kv);
                let rec = self.sim.a(0);
                self.sim.tag(Cat::Act);
                rec
            }
        };
        (o, [None, None], [state, none])
    }
}
