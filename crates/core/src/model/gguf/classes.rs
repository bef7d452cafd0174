//! [`predict_each`](super::predict_each)'s file with its repeating layers
//! folded: each class of layer (layers whose every tensor gets one type)
//! typed once, and the [`Run`]s saying which class each layer is.
//!
//! `llama-quantize` types the tensors in file order
//! (`llama_model_quantize_impl`), and a layer's types depend on its index
//! only through `quantize_state_impl`'s running counters (or, with
//! experts, the index itself, `layer_info`), compared with a few
//! thresholds and, between an eighth and seven eighths of a count, taken
//! modulo 3 (`use_more_bits`; [`thresholds`]). Each counter moves by the
//! same step in every layer of one kind (dense, MoE), so its value at a
//! layer's start is known without typing the layers before it. Between
//! two thresholds the classes repeat every three layers, and where no
//! index is in a middle every layer is of one class: a layer is typed
//! only where its class may change (7 of a Q4_K_M's 80 layers).
//! `tests/gguf.rs` holds the fold to `predict_each`, tensor by tensor.

use super::super::arch::{Architecture, LayerKind};
use super::super::family::Blocks;
use super::ftype::FileType;
use super::layout::{Layout, Slot};
use super::predict::{quantizer, typed, PredictError, Recipe, TensorBytes};
use super::quant::{thresholds, Counters, Quantizer};
use super::runs::{push_run, Run};
use super::types::GgmlType;

/// The GGUF file of `a` in file type `ft` made as `recipe` says, as
/// [`predict_each`](super::predict_each) predicts it, its layers folded:
/// `each` is told the tensors outside the layers (class `None`) and then
/// each class's tensors once, in file order (`layer`: the first layer of
/// the class); the runs say which class each layer is. The same errors as
/// `predict_each`, for the same first tensor (bar a file whose bytes
/// exceed 2^128, which no architecture the codec accepts makes).
pub fn predict_folded(
    a: &Architecture,
    ft: FileType,
    recipe: Recipe,
    each: &mut dyn FnMut(Option<u16>, TensorBytes<'_>),
) -> Result<Vec<Run>, PredictError> {
    super::predict::predictable(a)?;
    let layout = Layout::of(a, recipe.rope_tables);
    let mut q = quantizer(a, ft, recipe, &layout);
    for s in &layout.outside {
        let (ty, bytes) = typed(&mut q, s, 0)?;
        each(None, tensor(s, None, ty, bytes));
    }
    // Room for what a file usually has: a few classes and runs, a few
    // dozen tensors a layer.
    let mut f = Folder {
        q,
        classes: Vec::with_capacity(8),
        types: Vec::with_capacity(32),
        layer: Vec::with_capacity(32),
        runs: Vec::with_capacity(8),
        each,
    };
    if a.family.spec().blocks == Blocks::Single {
        // Nemotron-H: attention, Mamba-2 and MLP layers, each folded on
        // its own (build 6, 7, 8).
        for l in 0..a.layers {
            let build = 6 + Layout::single(a, l) as u8;
            f.fold_kind((a.kind_of(l), build), layout.slots(a, l), l, l + 1)?;
        }
        return Ok(f.runs);
    }
    if a.linear_layers > 0 && a.family.spec().linear.is_some() {
        // A hybrid: its layers of one kind alternate between attention and
        // a Gated DeltaNet, each folded on its own (the classes still
        // gather the layers typed alike).
        for l in 0..a.layers {
            let linear = u8::from(a.linear_at(l));
            f.fold_kind((a.kind_of(l), linear), layout.slots(a, l), l, l + 1)?;
        }
        return Ok(f.runs);
    }
    if a.family.spec().varies_by_layer() {
        // Gemma 4: sliding and global layers, some double-wide, each
        // folded on its own.
        for l in 0..a.layers {
            let build = 2 + Layout::variant(a, l) as u8;
            f.fold_kind((a.kind_of(l), build), layout.slots(a, l), l, l + 1)?;
        }
        return Ok(f.runs);
    }
    if a.moe_step > 1 {
        // Llama 4 Maverick: experts on every `moe_step`-th layer, each
        // layer folded on its own.
        for l in 0..a.layers {
            f.fold_kind((a.kind_of(l), 0), layout.slots(a, l), l, l + 1)?;
        }
        return Ok(f.runs);
    }
    // Dense layers first, then MoE ones (`Architecture::kind_of`).
    let [(_, dense), _] = a.layer_kinds();
    let dense = u32::try_from(dense).unwrap_or(a.layers);
    f.fold_kind((LayerKind::Dense, 0), &layout.dense, 0, dense)?;
    f.fold_kind((LayerKind::Moe, 0), &layout.moe, dense, a.layers)?;
    Ok(f.runs)
}

fn tensor(s: &Slot, layer: Option<u32>, ty: GgmlType, bytes: u128) -> TensorBytes<'static> {
    TensorBytes {
        layer,
        name: s.name,
        ty,
        ne0: s.ne[0],
        bytes,
    }
}

/// A class: its layers' kind and build (0 plain, 1 a Gated DeltaNet in
/// place of attention, 2 to 5 Gemma 4's [`Layout::variant`] + 2, 6 to 8
/// Nemotron-H's [`Layout::single`] + 6), and
/// where its variable tensors' types are in [`Folder::types`].
struct Class {
    kind: (LayerKind, u8),
    types: std::ops::Range<usize>,
}

/// The fold under way.
struct Folder<'e> {
    q: Quantizer,
    classes: Vec<Class>,
    /// The types of each class's variable tensors, one class after the
    /// other.
    types: Vec<GgmlType>,
    /// The layer last typed: each tensor's type and bytes.
    layer: Vec<(GgmlType, u128)>,
    runs: Vec<Run>,
    each: &'e mut dyn FnMut(Option<u16>, TensorBytes<'_>),
}

/// Layers of one kind, `lo..hi`, whose tensors are `slots`; `start`: the
/// counters at layer `lo`, `step`: what each layer adds to them;
/// `variable`: the slots whose typing moves a counter (bit `i` for slot
/// `i`; slots past 64 are all taken as variable), the only ones whose type
/// a layer's index can change.
struct Stretch<'s> {
    kind: (LayerKind, u8),
    slots: &'s [Slot],
    lo: u32,
    hi: u32,
    start: Counters,
    step: Counters,
    variable: u64,
}

impl<'s> Stretch<'s> {
    /// Whether slot `i`'s type may change with the layer.
    const fn is_variable(&self, i: usize) -> bool {
        i >= 64 || self.variable & (1 << i) != 0
    }

    /// The slots whose type may change with the layer, in order.
    fn variables(&self) -> impl Iterator<Item = usize> + '_ {
        let mut bits = self.variable;
        let flagged = std::iter::from_fn(move || {
            let i = bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
            (i < 64).then_some(i)
        });
        flagged.chain(64..self.slots.len().max(64))
    }

    /// The counters at the start of layer `l`.
    const fn at(&self, l: u32) -> Counters {
        self.start.after(self.step, (l - self.lo) as u64)
    }

    /// The index ranges the rules may read in layers `a..b` (`a < b`):
    /// each moving counter's, and the layer's own.
    fn indices(&self, a: u32, b: u32) -> impl Iterator<Item = (u64, u64)> {
        let (first, end) = (self.at(a).all(), self.at(b).all());
        let steps = self.step.all();
        (0..4)
            .filter(move |&k| steps[k] > 0)
            .map(move |k| (first[k], end[k] - 1))
            .chain([(u64::from(a), u64::from(b) - 1)])
    }
}

impl Folder<'_> {
    /// Folds the layers `lo..hi` of kind `kind`, whose tensors are `slots`.
    fn fold_kind(
        &mut self,
        kind: (LayerKind, u8),
        slots: &[Slot],
        lo: u32,
        hi: u32,
    ) -> Result<(), PredictError> {
        if hi <= lo {
            return Ok(());
        }
        let st = self.first_layer(kind, slots, lo, hi)?;
        let counts = self.q.counts();
        for (a, b) in Cuts::of(&st, counts).stretches() {
            let periodic = b - a > 1 && st.indices(a, b).any(|r| in_a_middle(r, counts));
            let mut run = Run::same(a, b, 0);
            for l in a..b.min(a + if periodic { 3 } else { 1 }) {
                let class = self.class_of(&st, l)?;
                if periodic {
                    run.kinds[(l % 3) as usize] = class;
                } else {
                    run = Run::same(a, b, class);
                }
            }
            push_run(&mut self.runs, run);
        }
        self.q.set_counters(st.at(hi));
        Ok(())
    }

    /// Types layer `lo`, the first of `lo..hi` of kind `kind`, whole (so
    /// that the first tensor `llama-quantize` refuses is the one named):
    /// each tensor's type and bytes, and what each moves of the counters.
    fn first_layer<'s>(
        &mut self,
        kind: (LayerKind, u8),
        slots: &'s [Slot],
        lo: u32,
        hi: u32,
    ) -> Result<Stretch<'s>, PredictError> {
        let start = self.q.counters();
        let mut variable = 0;
        self.layer.clear();
        for (i, s) in slots.iter().enumerate() {
            let before = self.q.counters();
            let t = typed(&mut self.q, s, u64::from(lo))?;
            if self.q.counters() != before {
                variable |= 1u64.checked_shl(i as u32).unwrap_or(0);
            }
            self.layer.push(t);
        }
        Ok(Stretch {
            kind,
            slots,
            lo,
            hi,
            start,
            step: self.q.counters().since(start),
            variable,
        })
    }

    /// The class of layer `l`: its variable tensors typed (the kind's
    /// first layer is typed already, [`Folder::first_layer`]; its other
    /// tensors are the same in every layer of the kind), and when no class
    /// of its kind has their types, a new class, its tensors told to
    /// `each`.
    fn class_of(&mut self, st: &Stretch, l: u32) -> Result<u16, PredictError> {
        if l > st.lo {
            self.q.set_counters(st.at(l));
            for i in st.variables() {
                self.layer[i] = typed(&mut self.q, &st.slots[i], u64::from(l))?;
            }
        }
        let known = self
            .classes
            .iter()
            .position(|c| c.kind == st.kind && self.same_types(c, st));
        if let Some(k) = known {
            return Ok(u16::try_from(k).unwrap_or(u16::MAX));
        }
        let class = u16::try_from(self.classes.len()).unwrap_or(u16::MAX);
        let from = self.types.len();
        let mut bytes_of_layer = 0u128;
        for (i, (s, &(ty, bytes))) in st.slots.iter().zip(&self.layer).enumerate() {
            if st.is_variable(i) {
                self.types.push(ty);
            }
            (self.each)(Some(class), tensor(s, Some(l), ty, bytes));
            bytes_of_layer = bytes_of_layer
                .checked_add(bytes)
                .ok_or(PredictError::TooLarge)?;
        }
        self.classes.push(Class {
            kind: st.kind,
            types: from..self.types.len(),
        });
        Ok(class)
    }

    /// Whether class `c`'s variable tensors have the types the layer just
    /// typed has.
    fn same_types(&self, c: &Class, st: &Stretch) -> bool {
        let now = st.variables().map(|i| self.layer[i].0);
        self.types[c.types.clone()].iter().copied().eq(now)
    }
}

/// Whether an index range `(first, last)` reaches the middle of a count,
/// where `use_more_bits` alternates.
fn in_a_middle((first, last): (u64, u64), counts: [u64; 2]) -> bool {
    counts.iter().any(|&n| {
        let [.., eighth, seven_eighths] = thresholds(n);
        first < seven_eighths && last >= eighth
    })
}

/// The most cuts a stretch can have: its end, and for each of the two
/// counts' five thresholds the layer's index and each of four counters'
/// two layers (an upper bound: repeated thresholds and counters that move
/// alike are counted once).
const MAX_CUTS: usize = 1 + 2 * 5 * (1 + 4 * 2);

/// Where a stretch of layers is cut: each layer where an index the rules
/// read crosses a threshold ([`thresholds`]), in order.
struct Cuts {
    at: [u32; MAX_CUTS],
    n: usize,
    lo: u32,
}

impl Cuts {
    fn of(st: &Stretch, counts: [u64; 2]) -> Cuts {
        let mut c = Cuts {
            at: [0; MAX_CUTS],
            n: 0,
            lo: st.lo,
        };
        c.add(st.hi, st);
        let mut ts = [0u64; 10];
        let mut n_ts = 0;
        for t in counts.iter().flat_map(|&n| thresholds(n)) {
            if !ts[..n_ts].contains(&t) {
                ts[n_ts] = t;
                n_ts += 1;
            }
        }
        // Each index the rules read, as its value at the stretch's first
        // layer and its step per layer: the layer's own, and each moving
        // counter's (the same ones once).
        let mut indices = [(u64::from(st.lo), 1u64); 5];
        let mut n_indices = 1;
        for (start, step) in st.start.all().into_iter().zip(st.step.all()) {
            if step > 0 && !indices[..n_indices].contains(&(start, step)) {
                indices[n_indices] = (start, step);
                n_indices += 1;
            }
        }
        for &t in &ts[..n_ts] {
            for &(start, step) in &indices[..n_indices] {
                // The first layer where the index's last value in the
                // layer reaches `t`, and where its first does.
                for reach in [step - 1, 0] {
                    let need = t.saturating_sub(start + reach).div_ceil(step);
                    let l = u64::from(st.lo).saturating_add(need);
                    c.add(u32::try_from(l).unwrap_or(u32::MAX), st);
                }
            }
        }
        c
    }

    /// Adds a cut at layer `l` when it falls inside the stretch.
    fn add(&mut self, l: u32, st: &Stretch) {
        let l = l.min(st.hi);
        if l <= st.lo || self.at[..self.n].contains(&l) {
            return;
        }
        // At most MAX_CUTS distinct layers are ever added.
        let i = self.at[..self.n].partition_point(|&x| x < l);
        if self.n < MAX_CUTS {
            self.at.copy_within(i..self.n, i + 1);
            self.at[i] = l;
            self.n += 1;
        }
    }

    /// The stretches between the cuts.
    fn stretches(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let starts = std::iter::once(self.lo).chain(self.at[..self.n].iter().copied());
        starts.zip(self.at[..self.n].iter().copied())
    }
}
