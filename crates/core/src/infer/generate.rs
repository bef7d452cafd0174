//! transformers' `model.generate()`: what one call holds, phase by phase.
//!
//! Source: transformers 5.23 `generation/utils.py` (`generate`, `_sample`,
//! `_prepare_cache_for_generation`, `_update_model_kwargs_for_generation`,
//! `prepare_inputs_for_generation`), `cache_utils.py` (`DynamicLayer`,
//! `DynamicSlidingWindowLayer`), `generation/logits_process.py`; measured
//! op by op and replayed to the byte in `scripts/measure/infer/` (its
//! NOTES.md has the closed forms; the rows are
//! `tests/fixtures/infer_transformers.jsonl`).
//!
//! Greedy decoding, no padding, the default dynamic cache; `N` new tokens
//! take `N` forwards (the prompt's, then `N - 1` decode steps).
//!
//! Exact without replaying every layer of every step: within a forward,
//! layers of the same span and kind allocate the same, and the cache alive
//! beside them changes by the same amount from one layer to the next (it
//! grows; in the first decode step a sliding layer shrinks from the whole
//! prompt to its window), so the first or the last layer of each (span,
//! kind) holds that class's highest moment; over the decode steps
//! everything grows but that first step's sliding storage, so the first or
//! the last step holds the decode's. A test replays every layer of every
//! step and agrees.

use super::layer::{Dequant, Dims, Forward, LayerAt, Span};
use super::sim::{Cat, Id, Parts, Sim, Stage};
use crate::inputs::Attn;
use crate::model::family::Layout;
use crate::model::{Architecture, LayerKind, Spec};

/// What `generate` is asked to do.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Sequences, prompt tokens each, new tokens each.
    pub batch: u128,
    pub prompt: u128,
    pub new: u128,
    /// Bytes per element of the model's dtype.
    pub dtype_bytes: u128,
    /// Weights and buffers, bytes.
    pub weights: u128,
    pub attn: Attn,
    /// `min_new_tokens` is set (with the EOS id every released model has,
    /// generate adds two logits processors that copy the scores).
    pub min_new: bool,
    /// The decoder layers' linears are bitsandbytes 4-bit.
    pub dequant: Option<Dequant>,
}

/// Special-token scalars `_prepare_special_tokens` keeps (pad, EOS, BOS).
const SPECIAL_TOKENS: u128 = 3;

/// The highest moment of a phase or the state at its end: bytes by
/// category, and where it happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moment {
    pub parts: Parts,
    /// The forward (0: the prompt's) and the layer (`None`: outside the
    /// layers).
    pub step: u128,
    pub layer: Option<u32>,
    pub stage: Stage,
}

impl Moment {
    pub fn total(&self) -> u128 {
        self.parts.iter().sum()
    }

    fn of(sim: &Sim, step: u128, layer: Option<u32>) -> Moment {
        Moment {
            parts: sim.peak_parts(),
            step,
            layer,
            stage: sim.peak_stage(),
        }
    }

    fn max(self, other: Moment) -> Moment {
        if other.total() > self.total() {
            other
        } else {
            self
        }
    }
}

/// One `generate` call's phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The preamble, the prompt's forward and its token step.
    pub prefill: Moment,
    /// After the prefill's token step.
    pub prefill_end: Parts,
    /// The last decode step's highest moment (`None` for one new token).
    pub decode: Option<Moment>,
    /// After `generate` returns: the weights, the caller's ids and mask and
    /// the returned sequences.
    pub end: Parts,
    /// The keys and values after the last forward.
    pub kv_cache: u128,
    /// The Gated DeltaNet layers' convolution and recurrent states (the
    /// same from the prefill on).
    pub state: u128,
}

/// One layer of a (span or Gated DeltaNet, kind) class: its first or its
/// last.
#[derive(Clone, Copy, Debug)]
struct Class {
    span: Span,
    kind: LayerKind,
    /// A Gated DeltaNet layer (its span is not read).
    linear: bool,
    /// A layer reusing an earlier layer's keys and values (Gemma 4's last
    /// layers): no cache of its own.
    shared: bool,
    /// An MLP (or experts) alone (Nemotron-H's `-` layers): no cache.
    ffn_only: bool,
    /// The layer's index.
    last: u32,
    /// Attention layers before it, by span.
    before: [u128; 2],
    /// Gated DeltaNet layers before it.
    before_linear: u128,
}

/// The replay of one `generate` call on one model.
pub struct Generate {
    spec: &'static Spec,
    d: Dims,
    r: Request,
    /// Bytes per token per layer of the cache's keys and of its values, by
    /// span (Gemma 4's global layers have their own).
    kv: [(u128, u128); 2],
    /// Attention layers with a cache of their own, by span.
    spans: [u128; 2],
    /// Gated DeltaNet layers, and one's convolution and recurrent states
    /// for the batch.
    linear: u128,
    state: (u128, u128),
    /// The first and the last layer of each (full, sliding or DeltaNet,
    /// kind, reusing keys and values or not) class.
    classes: [Option<Class>; 32],
    /// The first layer reusing keys and values: from it on, the prompt's
    /// forward runs on its last position only
    /// (`Gemma4TextModel._maybe_slice_kv_shared_inputs`: `logits_to_keep`
    /// is 1 under `generate`, the views keep the full input alive through
    /// that layer).
    first_shared: Option<u32>,
    /// Only the recurrent layers' count is known, not their places.
    order_unknown: bool,
}

impl Generate {
    pub fn new(a: &Architecture, r: Request) -> Generate {
        let spec = a.spec();
        let d = Dims::of(a, r.batch, r.prompt, r.dtype_bytes);
        let latent = spec.qkv == crate::model::family::Qkv::Latent;
        // DeepSeek caches the latent (keys) and the rotary key (values);
        // others a key and a value per key/value head.
        let kv = [Span::Full, Span::Sliding].map(|span| {
            if latent {
                (d.latent * d.dt, d.rope * d.dt)
            } else {
                let half = d.at(span, false).kv_token_bytes(false) / 2;
                (half, half)
            }
        });
        let mut spans = [0u128; 2];
        let mut linear = 0u128;
        let single = spec.blocks == crate::model::family::Blocks::Single;
        let mut classes: [Option<Class>; 32] = [None; 32];
        for l in 0..a.layers {
            let span = if a.slides(l) {
                Span::Sliding
            } else {
                Span::Full
            };
            let is_linear = a.linear_at(l);
            let shared = a.kv_shared_at(l);
            let ffn_only = single && a.ffn_only_at(l);
            let group = match (is_linear, ffn_only) {
                (true, _) => 2,
                (false, true) => 3,
                (false, false) => span as usize,
            };
            let kind = a.kind_of(l);
            let slot =
                2 * ((group * 2 + usize::from(kind == LayerKind::Moe)) * 2 + usize::from(shared));
            let here = Some(Class {
                span,
                kind,
                linear: is_linear,
                shared,
                ffn_only,
                last: l,
                before: spans,
                before_linear: linear,
            });
            if classes[slot].is_none() {
                classes[slot] = here;
            }
            classes[slot + 1] = here;
            if is_linear {
                linear += 1;
            } else if !shared && !ffn_only {
                spans[span as usize] += 1;
            }
        }
        let state = d.linear_state();
        Generate {
            spec,
            d,
            r,
            kv,
            spans,
            linear,
            state,
            classes,
            first_shared: a.first_kv_shared(),
            order_unknown: a.linear_by_count(),
        }
    }

    /// Tokens a layer's storage holds after forward `i`: a sliding layer
    /// keeps the whole prompt after the prefill (the cat's output, of which
    /// the window is a view), then at most the window.
    fn stored(&self, span: Span, i: u128) -> u128 {
        let p = self.r.prompt;
        match span {
            Span::Sliding if i > 0 => (p + i).min(self.d.window),
            Span::Full | Span::Sliding => p + i,
        }
    }

    /// Key positions attention sees in forward `i`.
    fn kv_len(&self, span: Span, i: u128) -> u128 {
        self.stored(span, i)
    }

    /// Cache bytes of `layers` layers of `span` after forward `i`.
    fn cache(&self, span: Span, layers: u128, i: u128) -> u128 {
        let (k, v) = self.kv[span as usize];
        self.r.batch * (k + v) * self.stored(span, i) * layers
    }

    /// The keys and values after forward `i`.
    pub fn kv_after(&self, i: u128) -> u128 {
        self.cache(Span::Full, self.spans[0], i) + self.cache(Span::Sliding, self.spans[1], i)
    }

    /// One Gated DeltaNet layer's states (convolution and recurrent).
    fn layer_state(&self) -> u128 {
        self.state.0 + self.state.1
    }

    /// The whole cache after forward `i`: keys and values, and every
    /// DeltaNet layer's states (made in the prefill, then updated in
    /// place).
    pub fn cache_after(&self, i: u128) -> u128 {
        self.kv_after(i) + self.linear * self.layer_state()
    }

    /// The caller's ids and mask, the special tokens, each sliding layer's
    /// window scalar and the first position ids: alive from generate's
    /// start to its end.
    fn fixed(&self) -> u128 {
        let (b, p) = (self.r.batch, self.r.prompt);
        16 * b * p + 8 * SPECIAL_TOKENS + 8 * self.spans[1] + 8 * b * p
    }

    /// Weights at the start of a phase.
    fn base(&self, kv: u128, engine: u128, logits: u128) -> Parts {
        [self.r.weights, kv, 0, logits, engine]
    }

    /// Generate's tensors at the start of forward `i`, by category
    /// (engine, logits): the prefill's clone of the ids, or from the first
    /// decode step the position and token ids so far, the last step's
    /// clones, next tokens, fp32 logits and processed scores.
    fn state(&self, i: u128) -> (u128, u128) {
        let (b, p, v) = (self.r.batch, self.r.prompt, self.d.vocab);
        let unfinished = 8 * b;
        if i == 0 {
            return (self.fixed() + unfinished + 8 * b * p, 0);
        }
        let ids = 2 * 8 * b * (p + i);
        let scores = if self.r.min_new { 4 * b * v } else { 0 };
        (
            self.fixed() + unfinished + ids + 16 * b + 8 * b,
            4 * b * v + scores,
        )
    }

    /// The preamble: position ids from the mask's cumsum, the ids' clone.
    fn preamble(&self) -> Moment {
        let (b, p) = (self.r.batch, self.r.prompt);
        let mut s = Sim::new(self.base(0, 0, 0));
        s.stage(Stage::Preamble);
        s.tag(Cat::Engine);
        s.a(16 * b * p + 8 * SPECIAL_TOKENS);
        let cs = s.a(8 * b * p);
        let sb = s.a(8 * b * p);
        s.free(cs);
        let eq = s.a(b * p);
        s.a(8 * b * p);
        s.f(&[Some(eq), Some(sb)]);
        for _ in 0..2 {
            let t = s.a(b * p);
            s.free(t);
        }
        s.a(8 * b + 8 * b * p + 8 * self.spans[1]);
        Moment::of(&s, 0, None)
    }

    /// A forward's inputs (the embeddings, the masks, the rotary tables),
    /// replayed once per forward: their highest total over the start, and
    /// what stays alive to the head.
    fn prelude(&self, i: u128) -> Prelude {
        let q = self.q(i);
        let t = self.r.batch * q;
        let mut f = self.forward_sim(&self.d, [0; 5], i);
        f.placeholders(t);
        let (emb, carried) = f.embed(t);
        f.per_layer_inputs(t);
        let mut spans = [(Span::Full, 0), (Span::Sliding, 0)];
        let mut n = 0;
        for span in [Span::Full, Span::Sliding] {
            if self.spans[span as usize] > 0 {
                spans[n] = (span, self.kv_len(span, i));
                n += 1;
            }
        }
        let masks = f.masks(q, &spans[..n]).masks;
        f.rotary_tables(t);
        let _ = carried;
        let emb = f.sim.size(emb);
        Prelude {
            peak: f.sim.peak(),
            emb,
            rest: f.sim.now() - emb,
            masks: masks.map(|m| m.is_some()),
        }
    }

    /// The inputs of forward `i` in `f` (replayed by [`Generate::prelude`]),
    /// then the hidden state entering layer `last` (the embeddings
    /// themselves for layer 0; `None`: the head's input).
    fn inputs(&self, f: &mut Forward, p: &Prelude, i: u128, last: Option<u32>) -> Inputs {
        // The first layer reusing keys and values reads the whole output
        // of the one before it; the next ones and the head its last
        // position.
        let sliced = i == 0
            && self
                .first_shared
                .is_some_and(|s| last.is_none_or(|l| l > s));
        let t = self.r.batch * if sliced { 1 } else { self.q(i) };
        f.sim.stage(Stage::Inputs);
        let [emb, rest] = f.sim.burst(p.peak, [p.emb, p.rest]);
        let mut keep = [Some(rest), None];
        let x = if last == Some(0) {
            emb
        } else {
            // GPT-2's layout frees the embeddings' sum after layer 0; the
            // others keep it to the head.
            if self.spec.layout == Layout::Gpt2 {
                f.sim.free(emb);
            } else {
                keep[1] = Some(emb);
            }
            f.sim.a(self.d.dt * t * self.d.h)
        };
        Inputs { x, rest: keep }
    }

    fn q(&self, i: u128) -> u128 {
        if i == 0 {
            self.r.prompt
        } else {
            1
        }
    }

    /// Query tokens per sequence of layer `l` (`None`: the head) in
    /// forward `i`: the prompt's forward runs the layers reusing keys and
    /// values, and the head, on the last position (decode on one anyway).
    fn q_at(&self, l: Option<u32>, i: u128) -> u128 {
        let sliced = self.first_shared.is_some_and(|s| l.is_none_or(|l| l >= s));
        if sliced {
            1
        } else {
            self.q(i)
        }
    }

    fn forward_sim<'a>(&'a self, d: &'a Dims, base: Parts, i: u128) -> Forward<'a> {
        Forward {
            d,
            spec: self.spec,
            attn: self.r.attn,
            sim: Sim::new(base),
            batched_decode: i > 0,
            dequant: self.r.dequant,
            held: None,
        }
    }

    /// The cache alive beside layer `c` in forward `i`: the layers before
    /// it at step `i`, those after it at step `i - 1` (none in the
    /// prefill). Where only the recurrent layers' count is known
    /// ([`Architecture::linear_by_count`]), every layer of the other kind
    /// is taken as run before it, and every layer before an MLP-only one
    /// (Nemotron-H): an upper bound on any order, exact where no attention
    /// layer follows the last recurrent one (Granite 4.0-H's last layer is
    /// a Mamba-2 one, the one whose prompt's forward holds the peak;
    /// Nemotron-H's last is an MLP or experts, after its last Mamba-2).
    fn class_kv(&self, c: &Class, i: u128) -> u128 {
        let c = self.counted(*c);
        let mut kv =
            self.cache(Span::Full, c.before[0], i) + self.cache(Span::Sliding, c.before[1], i);
        // DeltaNet states: in the prefill those of the layers run, then
        // every layer's (the running one's own is replayed with it).
        let states = if i == 0 {
            c.before_linear
        } else {
            self.linear - u128::from(c.linear)
        };
        kv += states * self.layer_state();
        if i > 0 {
            let mut behind = [0u128; 2];
            let own = !c.linear && !c.shared && !c.ffn_only;
            for span in [Span::Full, Span::Sliding] {
                let s = span as usize;
                behind[s] = self.spans[s] - c.before[s] - u128::from(own && span == c.span);
            }
            kv += self.cache(Span::Full, behind[0], i - 1)
                + self.cache(Span::Sliding, behind[1], i - 1);
        }
        kv
    }

    /// Layer `c` with the layers counted beside it ([`Generate::class_kv`]):
    /// where the order is not known, every attention layer before a
    /// recurrent or MLP-only one, every recurrent layer before any other.
    fn counted(&self, mut c: Class) -> Class {
        if self.order_unknown {
            if c.linear || c.ffn_only {
                c.before = self.spans;
            }
            if !c.linear {
                c.before_linear = self.linear;
            }
        }
        c
    }

    /// The highest moment of forward `i` in layer `c`: the layers before
    /// it have their cache at step `i`, those after it at step `i - 1`
    /// (none in the prefill).
    fn class_peak(&self, c: &Class, p: &Prelude, i: u128) -> Moment {
        let (engine, logits) = self.state(i);
        let kv = self.class_kv(c, i);
        let d = self.d.at(c.span, c.shared);
        let mut f = self.forward_sim(&d, self.base(kv, engine, logits), i);
        let mut old = [None, None];
        if i > 0 && !c.shared && !c.ffn_only {
            // The layer's cache from the last step: its keys and values,
            // or its DeltaNet states.
            let (a, b) = if c.linear {
                self.state
            } else {
                let tok = self.stored(c.span, i - 1) * self.r.batch;
                let (k, v) = self.kv[c.span as usize];
                (k * tok, v * tok)
            };
            f.sim.tag(Cat::Kv);
            old = [Some(f.sim.a(a)), Some(f.sim.a(b))];
            f.sim.tag(Cat::Act);
        }
        self.inputs(&mut f, p, i, Some(c.last));
        let at = LayerAt {
            span: c.span,
            kind: c.kind,
            q: self.q_at(Some(c.last), i),
            stored: self.stored(c.span, i),
            kv: self.kv_len(c.span, i),
            old,
            linear: c.linear,
            shared: c.shared,
            ffn_only: c.ffn_only,
        };
        f.layer(at, p.masks);
        Moment::of(&f.sim, i, Some(c.last))
    }

    /// The head of forward `i` (the whole cache at step `i`): returns its
    /// highest moment.
    fn head_peak(&self, p: &Prelude, i: u128) -> Moment {
        let (engine, logits) = self.state(i);
        let base = self.base(self.cache_after(i), engine, logits);
        let mut f = self.forward_sim(&self.d, base, i);
        let inputs = self.inputs(&mut f, p, i, None);
        f.head(self.r.batch * self.q_at(None, i), inputs.x, &inputs.rest);
        Moment::of(&f.sim, i, None)
    }

    /// Whether the sliding layers' storage shrinks in forward `i` (the
    /// first decode step of a prompt at least as long as the window): then
    /// a class's first layer has more of the cache beside it than its
    /// last.
    fn shrinks(&self, i: u128) -> bool {
        i == 1 && self.spans[1] > 0 && self.stored(Span::Sliding, 0) > self.stored(Span::Sliding, 1)
    }

    /// The highest moment of forward `i`: each class's last layer, and its
    /// first when the cache shrinks (the last's replay shifted, but for
    /// layer 0).
    fn forward_peak(&self, i: u128) -> Moment {
        let shrinks = self.shrinks(i);
        let p = self.prelude(i);
        let mut top = self.head_peak(&p, i);
        for pair in self.classes.chunks_exact(2) {
            let (Some(first), Some(last)) = (pair[0], pair[1]) else {
                continue;
            };
            let m = self.class_peak(&last, &p, i);
            top = top.max(m);
            if i == 0 && first.shared && first.last != last.last {
                // The first layer reusing keys and values may be the one
                // reading the prompt's whole hidden state.
                top = top.max(self.class_peak(&first, &p, i));
                continue;
            }
            if !shrinks || first.last == last.last {
                continue;
            }
            // The first layer's replay is the last's from another start
            // (only the cache beside it differs), but for layer 0, whose
            // input is the embeddings themselves: its moment is the
            // last's, shifted by the difference in cache.
            top = top.max(if first.last == 0 {
                self.class_peak(&first, &p, i)
            } else {
                let mut shifted = m;
                shifted.parts[1] = m.parts[1] - self.class_kv(&last, i) + self.class_kv(&first, i);
                shifted.layer = Some(first.last);
                shifted
            });
        }
        top
    }
}

impl Generate {
    /// The token step after forward `i` (`_sample`): position ids grown by
    /// cat, the last position's logits copied to fp32, the two min-length
    /// processors (each an `arange(V)`, an `isin`, a clone and a `where`),
    /// the argmax, the ids grown by cat, the stopping criteria, the next
    /// step's input clones. Returns its highest moment and the state after.
    fn token_step(&self, i: u128) -> (Moment, Parts) {
        let (b, p, v, dt) = (self.r.batch, self.r.prompt, self.d.vocab, self.d.dt);
        let procs = self.r.min_new;
        let mut s = Sim::new(self.base(self.cache_after(i), self.fixed(), 0));
        s.stage(Stage::TokenStep);
        s.tag(Cat::Engine);
        let unf = s.a(8 * b);
        let (pos, ids, nt) = if i > 0 {
            let (pos, ids) = (s.a(8 * b * (p + i)), s.a(8 * b * (p + i)));
            (Some(pos), Some(ids), Some(s.a(8 * b)))
        } else {
            (None, None, None)
        };
        let clones = s.a(if i == 0 { 8 * b * p } else { 16 * b });
        s.tag(Cat::Logits);
        let lf = s.a_if(i > 0, 4 * b * v);
        let sc = s.a_if(i > 0 && procs, 4 * b * v);
        let lb = if self.spec.logits_fp32 { 4 } else { dt };
        let logits = s.a(lb * b * v);
        s.tag(Cat::Engine);
        if i == 0 {
            s.free(clones);
        }
        self.grow(&mut s, 8 * b * (p + i + 1), pos);
        s.tag(Cat::Logits);
        s.a(4 * b * v);
        s.f(&[lf]);
        if procs {
            let w1 = self.processor(&mut s, None);
            self.processor(&mut s, Some(w1));
            s.f(&[sc]);
        }
        s.tag(Cat::Engine);
        let am = s.a(8 * b);
        s.f(&[nt]);
        if procs {
            let (m1, r) = (s.a(8 * b), s.a(8 * b));
            let m2 = s.a(8 * b);
            s.free(r);
            s.a(8 * b);
            s.f(&[Some(m1), Some(m2), Some(am)]);
        }
        s.a(8 * b * (p + i + 1));
        s.f(&[ids]);
        self.stopping(&mut s, unf);
        s.free(logits);
        if i + 1 < self.r.new {
            s.a(16 * b);
            if i > 0 {
                s.free(clones);
            }
        }
        (Moment::of(&s, i, None), s.parts())
    }

    /// `position_ids` grown by one column (`cat` of the last plus one).
    fn grow(&self, s: &mut Sim, bytes: u128, old: Option<Id>) {
        let b = self.r.batch;
        let ar = s.a(8);
        let a1 = s.a(8 * b);
        s.free(ar);
        let a2 = s.a(8 * b);
        s.free(a1);
        s.a(bytes);
        s.free(a2);
        s.f(&[old]);
    }

    /// One min-length logits processor: `arange(V)`, `isin`, the scores'
    /// clone, `where`; frees `prev` (the first one's output) once the
    /// second's is made. Returns its output.
    fn processor(&self, s: &mut Sim, prev: Option<Id>) -> Id {
        let (b, v) = (self.r.batch, self.d.vocab);
        let (ar, isn, cl, s4, w) = if prev.is_none() {
            let (ar, isn) = (s.a(8 * v), s.a(v));
            let (cl, s4) = (s.a(4 * b * v), s.a(4));
            (ar, isn, cl, s4, s.a(4 * b * v))
        } else {
            let (cl, ar) = (s.a(4 * b * v), s.a(8 * v));
            let (isn, s4) = (s.a(v), s.a(4));
            (ar, isn, cl, s4, s.a(4 * b * v))
        };
        s.f(&[Some(s4), Some(cl), Some(ar), Some(isn), prev]);
        w
    }

    /// The stopping criteria and `unfinished_sequences &= ~is_done`.
    fn stopping(&self, s: &mut Sim, unfinished: Id) {
        let b = self.r.batch;
        let (f1, f2) = (s.a(b), s.a(b));
        let mut o1 = s.a(b);
        s.f(&[Some(f2), Some(f1)]);
        if self.r.min_new {
            let (i1, i2) = (s.a(b), s.a(b));
            s.free(i1);
            let o2 = s.a(b);
            s.f(&[Some(i2), Some(o1)]);
            o1 = o2;
        }
        let nn = s.a(b);
        s.free(o1);
        s.a(8 * b);
        s.f(&[Some(nn), Some(unfinished)]);
        let (mx, e1) = (s.a(8), s.a(1));
        s.f(&[Some(mx), Some(e1)]);
    }

    /// The whole call.
    pub fn run(&self) -> Generated {
        let (b, p, n) = (self.r.batch, self.r.prompt, self.r.new);
        let (post0, prefill_end) = self.token_step(0);
        let prefill = self.preamble().max(self.forward_peak(0)).max(post0);
        // Everything grows from step to step, but for the sliding layers'
        // storage: the first decode step still holds the whole prompt's
        // (the prefill's cat output) while it trims it to the window.
        let step = |i: u128| self.forward_peak(i).max(self.token_step(i).0);
        let decode = match n {
            0 | 1 => None,
            2 => Some(step(1)),
            _ if self.shrinks(1) => Some(step(1).max(step(n - 1))),
            _ => Some(step(n - 1)),
        };
        let end = self.base(0, 16 * b * p + 8 * b * (p + n), 0);
        Generated {
            prefill,
            prefill_end: if n > 1 { prefill_end } else { end },
            decode,
            end,
            kv_cache: self.kv_after(n - 1),
            state: self.linear * self.layer_state(),
        }
    }
}

/// The cache at a moment, by the layers' place relative to the one
/// running: (layers, tokens each) per group, and the running layer's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvSplit {
    /// Sequences and bytes per token per layer (keys and values) of the
    /// full-attention layers and of the sliding ones.
    pub batch: u128,
    pub token_bytes: [u128; 2],
    /// Full-attention and sliding layers already run this step, at this
    /// step's tokens.
    pub full: (u128, u128),
    pub sliding: (u128, u128),
    /// Layers not reached yet, at the last step's tokens.
    pub full_behind: (u128, u128),
    pub sliding_behind: (u128, u128),
    /// Gated DeltaNet layers whose states are made, and one layer's
    /// states (bytes), but the running layer's.
    pub recurrent: (u128, u128),
    /// The running layer's old and new storage alive at the moment.
    pub growing: u128,
}

impl Generate {
    /// How the cache alive at `m` splits (its total is `m.parts[1]`).
    pub fn kv_split(&self, a: &Architecture, m: &Moment) -> KvSplit {
        let i = m.step;
        let mut before = [0u128; 2];
        let single = self.spec.blocks == crate::model::family::Blocks::Single;
        let ffn_only = |j: u32| single && a.ffn_only_at(j);
        let cached = |j: u32| !a.linear_at(j) && !a.kv_shared_at(j) && !ffn_only(j);
        let sliding = a.sliding_window > 0 && a.sliding_layers > 0;
        if let (Some(l), false, None, false) = (m.layer, sliding, a.first_kv_shared(), single) {
            // No layer slides or shares: every layer before `l` but the
            // recurrent ones, in closed form.
            before[0] = u128::from(l - a.linear_in(0, l));
        } else if let Some(l) = m.layer {
            for j in (0..l).filter(|&j| cached(j)) {
                before[usize::from(a.slides(j))] += 1;
            }
        } else {
            before = self.spans;
        }
        let mut states = match (i, m.layer) {
            (_, None) => self.linear,
            (0, Some(l)) => u128::from(a.linear_in(0, l)),
            (_, Some(l)) => self.linear - u128::from(a.linear_at(l)),
        };
        if let Some(l) = m.layer {
            let c = self.counted(Class {
                span: if a.slides(l) {
                    Span::Sliding
                } else {
                    Span::Full
                },
                kind: a.kind_of(l),
                linear: a.linear_at(l),
                shared: a.kv_shared_at(l),
                ffn_only: ffn_only(l),
                last: l,
                before,
                before_linear: states,
            });
            before = c.before;
            if i == 0 {
                states = c.before_linear;
            }
        }
        let mut behind = [0u128; 2];
        if let (Some(l), true) = (m.layer, i > 0) {
            let own = usize::from(a.slides(l));
            for s in 0..2 {
                behind[s] = self.spans[s] - before[s] - u128::from(cached(l) && s == own);
            }
        }
        let last = i.saturating_sub(1);
        let mut split = KvSplit {
            batch: self.r.batch,
            token_bytes: self.kv.map(|(k, v)| k + v),
            full: (before[0], self.stored(Span::Full, i)),
            sliding: (before[1], self.stored(Span::Sliding, i)),
            full_behind: (behind[0], self.stored(Span::Full, last)),
            sliding_behind: (behind[1], self.stored(Span::Sliding, last)),
            recurrent: (states, self.layer_state()),
            growing: 0,
        };
        let counted: u128 = split
            .groups()
            .iter()
            .map(|&((layers, tokens), each)| layers * tokens * split.batch * each)
            .sum::<u128>()
            + split.recurrent.0 * split.recurrent.1;
        split.growing = m.parts[1].saturating_sub(counted);
        split
    }
}

impl KvSplit {
    /// The four groups of layers (full and sliding already run, full and
    /// sliding not reached yet), each with its bytes per token per layer.
    pub fn groups(&self) -> [((u128, u128), u128); 4] {
        let [full, sliding] = self.token_bytes;
        [
            (self.full, full),
            (self.sliding, sliding),
            (self.full_behind, full),
            (self.sliding_behind, sliding),
        ]
    }
}

/// A forward's inputs, replayed once: the highest total over the start,
/// the embeddings the layers read and the rest kept to the head
/// (GPT-2's position and token embeddings, the rotary tables, the masks),
/// and which masks exist (full attention, sliding).
#[derive(Clone, Copy, Debug)]
struct Prelude {
    peak: u128,
    emb: u128,
    rest: u128,
    masks: [bool; 2],
}

/// What a forward's inputs leave alive.
struct Inputs {
    /// The hidden state entering the layer replayed.
    x: Id,
    /// What the head frees: the rest of the inputs and the embeddings.
    rest: [Option<Id>; 2],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::presets::PRESETS;

    impl Generate {
        /// Every layer of forward `i` (the replay the shortcut skips).
        fn forward_all(&self, a: &Architecture, i: u128) -> Moment {
            let mut before = [0u128; 2];
            let mut before_linear = 0;
            let p = self.prelude(i);
            let mut top = self.head_peak(&p, i);
            for l in 0..a.layers {
                let span = if a.slides(l) {
                    Span::Sliding
                } else {
                    Span::Full
                };
                let linear = a.linear_at(l);
                let shared = a.kv_shared_at(l);
                let ffn_only =
                    self.spec.blocks == crate::model::family::Blocks::Single && a.ffn_only_at(l);
                let c = Class {
                    span,
                    kind: a.kind_of(l),
                    linear,
                    shared,
                    ffn_only,
                    last: l,
                    before,
                    before_linear,
                };
                top = top.max(self.class_peak(&c, &p, i));
                if linear {
                    before_linear += 1;
                } else if !shared && !ffn_only {
                    before[span as usize] += 1;
                }
            }
            top
        }
    }

    /// The shortcut (first and last layer of each class; first and last
    /// decode step) against every layer of every step, on every preset
    /// with windows small enough to be crossed in the prefill, in decode,
    /// or not at all.
    #[test]
    fn the_shortcut_is_the_full_replay() {
        let mut checked = 0;
        for p in PRESETS {
            for (b, prompt, new, window) in [(1, 5, 6, 8), (2, 37, 9, 40), (3, 12, 4, 3)] {
                let mut a = p.arch;
                if a.sliding_window > 0 {
                    a.sliding_window = window;
                }
                for attn in [Attn::Sdpa, Attn::Eager] {
                    let r = Request {
                        batch: b,
                        prompt,
                        new,
                        dtype_bytes: 2,
                        weights: 1000,
                        attn,
                        min_new: b != 2,
                        dequant: (b == 3).then_some(Dequant { double_quant: true }),
                    };
                    let g = Generate::new(&a, r);
                    let run = g.run();
                    let prefill = g
                        .preamble()
                        .max(g.forward_all(&a, 0))
                        .max(g.token_step(0).0);
                    assert_eq!(run.prefill.total(), prefill.total(), "{} {r:?}", p.id);
                    let decode = (1..new)
                        .map(|i| g.forward_all(&a, i).max(g.token_step(i).0).total())
                        .max();
                    assert_eq!(run.decode.map(|d| d.total()), decode, "{} {r:?}", p.id);
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    /// One layer's allocations fit the simulation's arena.
    #[test]
    fn every_layer_fits_the_arena() {
        for p in PRESETS {
            let r = Request {
                batch: 2,
                prompt: 9,
                new: 3,
                dtype_bytes: 2,
                weights: 0,
                attn: Attn::Eager,
                min_new: true,
                dequant: Some(Dequant { double_quant: true }),
            };
            let g = Generate::new(&p.arch, r);
            for c in g.classes.iter().flatten() {
                for i in [0, 1] {
                    let (engine, logits) = g.state(i);
                    let d = g.d.at(c.span, c.shared);
                    let mut f = g.forward_sim(&d, g.base(0, engine, logits), i);
                    let pre = g.prelude(i);
                    g.inputs(&mut f, &pre, i, Some(c.last));
                    // A DeltaNet layer's decode reads its states.
                    let old = if c.linear && !c.shared && i > 0 {
                        [Some(f.sim.a(g.state.0)), Some(f.sim.a(g.state.1))]
                    } else {
                        [None, None]
                    };
                    let at = LayerAt {
                        span: c.span,
                        kind: c.kind,
                        q: g.q_at(Some(c.last), i),
                        stored: g.stored(c.span, i),
                        kv: g.kv_len(c.span, i),
                        old,
                        linear: c.linear,
                        shared: c.shared,
                        ffn_only: c.ffn_only,
                    };
                    f.layer(at, pre.masks);
                    assert!(f.sim.used() < 48, "{} uses {}", p.id, f.sim.used());
                }
            }
        }
    }
}
