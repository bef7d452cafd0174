//! Where llama.cpp puts each layer: `-ngl`'s layers from the back, the
//! output layer with them, the split over GPUs, and the partial layers
//! `--fit`'s tensor overrides make.
//!
//! `llama_model::load_tensors` (`src/llama-model.cpp:1320-1379`, b10488).

use super::params::{builds, Gpu, LlamaCpp, MAX_DEVICES};
use super::weights::Fraction;

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Host memory (the CPU backend).
    Host,
    /// A GPU, by its index.
    Gpu(usize),
}

/// Layers of one GPU that keep only part of their tensors (`--fit`'s
/// overrides, `common/fit.cpp: set_ngl_tensor_split_tbo`, `:435-470`):
/// layers `lo..hi`; `lo` keeps `first`, the others [`Fraction::Moe`]; what
/// `lo` sheds goes to the next GPU when `first_to_next`, else to the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partial {
    pub lo: u32,
    pub hi: u32,
    pub first: Fraction,
    pub first_to_next: bool,
}

impl Partial {
    /// No partial layer.
    pub const NONE: Partial = Partial {
        lo: 0,
        hi: 0,
        first: Fraction::Moe,
        first_to_next: false,
    };
}

/// The layers' placement knobs: `-ngl`, `-ts`, and `--fit`'s overrides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// Layers on GPUs, the output layer counted (`n_layer + 1`: all).
    pub n_gpu_layers: u32,
    /// `-ts` proportions (all 0: by each GPU's free memory).
    pub split: [f32; MAX_DEVICES],
    pub partial: [Partial; MAX_DEVICES],
}

impl Placement {
    /// `ngl` layers split by `split`, no partial layer.
    pub const fn layers(ngl: u32, split: [f32; MAX_DEVICES]) -> Placement {
        Placement {
            n_gpu_layers: ngl,
            split,
            partial: [Partial::NONE; MAX_DEVICES],
        }
    }

    /// The placement the arguments ask for: `-ngl`'s layers (every layer
    /// and the output, `hp_ngl + 1`, when not given), `-ts`, and the
    /// routed experts' overrides to the CPU: `--n-cpu-moe N`
    /// (`common/arg.cpp`, b10488, adds `llm_ffn_exps_block_regex(i)` → the
    /// CPU for each `i < N`, the tensors `ffn_(up|down|gate_up|gate)_(ch|)exps`,
    /// what [`Fraction::Moe`] leaves out; `--cpu-moe` every layer) and `-ot`
    /// patterns that match the same tensors of a run of layers.
    pub fn asked(p: &LlamaCpp, hp_ngl: u32) -> Placement {
        let mut asked = Placement::layers(p.n_gpu_layers.unwrap_or(hp_ngl + 1), p.tensor_split);
        let (lo, hi) = p.host_experts;
        if hi > lo {
            asked.partial[0] = Partial {
                lo: lo.min(hp_ngl),
                hi: hi.min(hp_ngl),
                first: Fraction::Moe,
                first_to_next: false,
            };
        }
        asked
    }

    /// Whether any layer keeps only part of its tensors (tensor overrides
    /// turn pipeline parallelism off).
    pub fn has_overrides(&self) -> bool {
        self.partial.iter().any(|p| p.hi > p.lo)
    }

    /// Whether `other` loads as this one does on `n_gpus` GPUs: the same
    /// layers, and the same split and partial layers of those GPUs (a
    /// range that holds no layer is none; [`Layout`] reads no other GPU's).
    pub fn loads_like(&self, other: &Placement, n_gpus: usize) -> bool {
        let n = n_gpus.min(MAX_DEVICES);
        let same_partial = |(a, b): (&Partial, &Partial)| (a.hi <= a.lo && b.hi <= b.lo) || a == b;
        self.n_gpu_layers == other.n_gpu_layers
            && self.split[..n] == other.split[..n]
            && self.partial[..n]
                .iter()
                .zip(&other.partial[..n])
                .all(same_partial)
    }
}

/// The placement worked out for a model of `n_layer` layers on `gpus`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    n_layer: u32,
    start: u32,
    act: u32,
    /// Cumulative split points, normalised (`splits[i] /= split_sum`).
    cuts: [f32; MAX_DEVICES],
    n_gpus: usize,
    partial: [Partial; MAX_DEVICES],
    /// GPU `d` holds layers `ends[d - 1]..ends[d]` (GPU 0 from `start`),
    /// the output layer counted as layer `n_layer`.
    ends: [u32; MAX_DEVICES],
}

impl Layout {
    /// `i_gpu_start = max(n_layer + 1 - n_gpu_layers, 0)` and
    /// `act_gpu_layers = min(n_gpu_layers, n_layer + 1)` (`:1354-1355`):
    /// layer `il` (the output layer as `il = n_layer`) is on a GPU iff
    /// `il >= i_gpu_start`. Before b7467 `i_gpu_start = max(n_layer -
    /// n_gpu_layers, 0)`: the last `k` repeating layers, the output layer
    /// only when `k > n_layer`. The GPU is the first whose cumulative split
    /// exceeds `(il - i_gpu_start) / act_gpu_layers` (`std::upper_bound`, in
    /// `float`, `:1362`); the default split is each GPU's free memory
    /// (`:1322-1340`).
    pub fn new(n_layer: u32, build: u32, p: &Placement, gpus: &[Gpu]) -> Layout {
        let n_gpus = gpus.len().min(MAX_DEVICES);
        let ngl = p.n_gpu_layers;
        let all = n_layer.saturating_add(1);
        let start = if build >= builds::OUTPUT_FIRST {
            all.saturating_sub(ngl)
        } else {
            n_layer.saturating_sub(ngl)
        };
        let act = if n_gpus == 0 { 0 } else { ngl.min(all) };
        let mut l = Layout {
            n_layer,
            start,
            act,
            cuts: cuts(p, &gpus[..n_gpus]),
            n_gpus,
            partial: p.partial,
            ends: [start; MAX_DEVICES],
        };
        l.ends = l.gpu_ends();
        l
    }

    /// Where each GPU's layers end: the GPU of a layer never decreases
    /// with the layer (its cumulative split exceeds a fraction that grows),
    /// so each end is found by bisection on [`Layout::gpu_of`].
    fn gpu_ends(&self) -> [u32; MAX_DEVICES] {
        let end = self.start.saturating_add(self.act);
        let mut ends = [end; MAX_DEVICES];
        let mut lo = self.start;
        // The last GPU takes every layer to the end (one GPU: all).
        for (d, e) in ends
            .iter_mut()
            .enumerate()
            .take(self.n_gpus.saturating_sub(1))
        {
            lo = first_where(lo, end, |il| self.gpu_of(il) > d);
            *e = lo;
        }
        ends
    }

    /// The GPU of layer `il`, one of the `act` layers from `start`: the
    /// first whose cumulative split exceeds `(il - start) / act`.
    fn gpu_of(&self, il: u32) -> usize {
        #[allow(clippy::cast_precision_loss)]
        let x = (il - self.start) as f32 / self.act as f32;
        self.cuts[..self.n_gpus]
            .iter()
            .position(|&c| c > x)
            .unwrap_or(self.n_gpus - 1)
    }

    /// GPU `d`'s layers (the output layer as layer `n_layer`).
    pub fn span(&self, d: usize) -> (u32, u32) {
        let lo = match d {
            0 => self.start,
            _ => self.ends[d - 1],
        };
        (lo, self.ends[d])
    }

    /// The GPUs.
    pub const fn n_gpus(&self) -> usize {
        self.n_gpus
    }

    /// Where layer `il` is (`il = n_layer`: the output layer).
    pub fn place(&self, il: u32) -> Place {
        if il < self.start || il - self.start >= self.act || self.n_gpus == 0 {
            return Place::Host;
        }
        Place::Gpu(self.gpu_of(il))
    }

    /// What of layer `il` stays where the layer is, and where the rest
    /// goes.
    pub fn fraction(&self, il: u32) -> (Fraction, Place) {
        for (d, p) in self.partial.iter().enumerate().take(self.n_gpus) {
            if il >= p.lo && il < p.hi {
                return if il == p.lo {
                    let to = if p.first_to_next && d + 1 < self.n_gpus {
                        Place::Gpu(d + 1)
                    } else {
                        Place::Host
                    };
                    (p.first, to)
                } else {
                    (Fraction::Moe, Place::Host)
                };
            }
        }
        (Fraction::Full, Place::Host)
    }

    /// Repeating layers on each GPU, and on the host.
    pub fn counts(&self) -> ([u32; MAX_DEVICES], u32) {
        let mut on = [0u32; MAX_DEVICES];
        let mut host = self.n_layer;
        for (d, n) in on.iter_mut().enumerate().take(self.n_gpus) {
            let (lo, hi) = self.span(d);
            *n = hi.min(self.n_layer).saturating_sub(lo);
            host -= *n;
        }
        (on, host)
    }

    /// The repeating layers cut where their place or their fraction
    /// changes: each stretch's layers are all in one place, with one
    /// fraction and one overflow place (the first of each, asked of
    /// [`Layout::place`] and [`Layout::fraction`], speaks for all).
    pub fn stretches(&self) -> Stretches {
        let mut cuts = [0u32; MAX_STRETCHES];
        let mut n = 0;
        let mut cut = |x: u32| {
            cuts[n] = x.min(self.n_layer);
            n += 1;
        };
        cut(self.start);
        cut(self.n_layer);
        for d in 0..self.n_gpus {
            let p = self.partial[d];
            cut(self.ends[d]);
            // A range that holds no layer changes no fraction.
            if p.hi > p.lo {
                cut(p.lo);
                cut(p.lo.saturating_add(1));
                cut(p.hi);
            }
        }
        let cuts = &mut cuts[..n];
        crate::sort::by_key(cuts, |c| *c);
        let mut out = Stretches {
            at: [(0, 0); MAX_STRETCHES],
            n: 0,
        };
        let mut lo = 0;
        for &c in cuts.iter() {
            if c > lo {
                out.at[out.n] = (lo, c);
                out.n += 1;
                lo = c;
            }
        }
        out
    }

    /// Where the output layer is.
    pub fn output(&self) -> Place {
        self.place(self.n_layer)
    }
}

/// The most stretches: cut at the GPUs' start and the layers' end, and
/// at each GPU's end and its partial layers' three bounds.
const MAX_STRETCHES: usize = 2 + 4 * MAX_DEVICES;

/// Stretches of layers `lo..hi` in one place with one fraction
/// ([`Layout::stretches`]).
pub struct Stretches {
    at: [(u32, u32); MAX_STRETCHES],
    n: usize,
}

impl Stretches {
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.at[..self.n].iter().copied()
    }
}

/// The first of `lo..hi` where `pred` holds, `pred` holding from some
/// point on (`hi` when it never does).
fn first_where(mut lo: u32, mut hi: u32, pred: impl Fn(u32) -> bool) -> u32 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The split points: `-ts` if any is set, else free memory; summed and
/// normalised in `float` as `load_tensors` does.
fn cuts(p: &Placement, gpus: &[Gpu]) -> [f32; MAX_DEVICES] {
    let mut c = [0f32; MAX_DEVICES];
    let given = p.split[..gpus.len()].iter().any(|&s| s > 0.0);
    let mut sum = 0f32;
    for (i, g) in gpus.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let w = if given { p.split[i] } else { g.free as f32 };
        sum += w;
        c[i] = sum;
    }
    if sum > 0.0 {
        for x in c.iter_mut().take(gpus.len()) {
            *x /= sum;
        }
    } else if let Some(last) = c[..gpus.len()].last_mut() {
        *last = 1.0;
    }
    c
}
