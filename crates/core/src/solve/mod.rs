//! Will it fit, and what would: the verdict against a capacity, the largest
//! batch and sequence length that fit, and a ranked list of changes with the
//! memory each saves.
//!
//! Every answer re-runs the estimator on a changed query, through the same
//! codec, so a suggestion applied on the page gives exactly the number shown.
//!
//! Shared at the top: the verdict and the search machinery are any
//! workload's; the changes worth trying are the workload's own
//! ([`candidates`]), in `train.rs` and `infer.rs`. Imports the codec, the
//! scenario and the workloads.

mod infer;
mod train;

pub use infer::{answers, max_context, weights_that_fit, Answers};
pub use train::max_seq;

use crate::inputs::Batch;
use crate::query::{self, Key};
use crate::scenario::{Scenario, Task};
use crate::units::{Bytes, DisplayUnit};
use crate::{Estimate, Estimates};

/// Fits or not, and by how much: the one verdict the page's answer, its
/// pinned summary and the solver's suggestions all read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Bytes the GPU offers.
    pub capacity: Bytes,
    /// The estimate's peak, overhead included.
    pub needed: Bytes,
    /// Bytes of the peak that can page out to host memory when the GPU
    /// runs short (bitsandbytes' paged optimizer state).
    pub pageable: Bytes,
}

impl Verdict {
    /// `needed` against `capacity`, nothing pageable.
    pub fn new(needed: Bytes, capacity: Bytes) -> Self {
        Verdict {
            capacity,
            needed,
            pageable: Bytes::ZERO,
        }
    }

    /// An estimate against a GPU of `capacity`: what the run needs
    /// against what the GPU gives it (vLLM: its share of the GPU).
    pub fn of(e: &Estimate, capacity: Bytes) -> Self {
        Verdict {
            pageable: e.pageable_bytes,
            ..Verdict::new(e.needed(), e.budget(capacity))
        }
    }

    /// Fits as it is, only once the pageable state pages out to host
    /// memory, or not.
    pub fn fit(&self) -> Fit {
        if self.needed <= self.capacity {
            Fit::Yes
        } else if self.short() <= self.pageable {
            Fit::Paging
        } else {
            Fit::No
        }
    }

    pub fn fits(&self) -> bool {
        self.fit() == Fit::Yes
    }

    /// Bytes to spare when it fits.
    pub fn spare(&self) -> Bytes {
        self.capacity.saturating_sub(self.needed)
    }

    /// Bytes missing when it does not (what pages out when it fits by
    /// paging).
    pub fn short(&self) -> Bytes {
        self.needed.saturating_sub(self.capacity)
    }

    /// The answer in a sentence, e.g. "Fits, with 1.20 GiB to spare".
    pub fn headline(&self, unit: DisplayUnit) -> String {
        match self.fit() {
            Fit::Yes => format!("Fits, with {} to spare", self.spare().display(unit)),
            Fit::Paging => format!(
                "Fits only by paging {} of optimizer state to host memory: slower steps",
                self.short().display(unit)
            ),
            Fit::No => format!("Does not fit: short by {}", self.short().display(unit)),
        }
    }

    /// The answer in a few words, for the pinned summary: "fits, 1.20 GiB
    /// spare", "fits by paging 0.50 GiB", "short by 3.00 GiB".
    pub fn summary(&self, unit: DisplayUnit) -> String {
        match self.fit() {
            Fit::Yes => format!("fits, {} spare", self.spare().display(unit)),
            Fit::Paging => format!("fits by paging {}", self.short().display(unit)),
            Fit::No => format!("short by {}", self.short().display(unit)),
        }
    }
}

/// What a changed query gives: its scenario and its estimate's peak
/// (overhead included), host memory and pageable bytes; `None` when the
/// change is not valid or cannot be estimated.
fn outcome(s: &Scenario, changes: &[(Key, String)]) -> Option<Outcome> {
    let t = applied(s, changes)?;
    let e = Estimates::primary_of(&t).ok()?;
    Some(Outcome {
        peak: e.needed(),
        budget_share: e.budget_share,
        host: e.host_bytes,
        pageable: e.pageable_bytes,
        scenario: t,
    })
}

/// `s` with `changes` typed in as the page types them (`query::edit`, in
/// order), when the result decodes with no notice.
pub fn applied(s: &Scenario, changes: &[(Key, String)]) -> Option<Scenario> {
    let mut form = query::encode(s);
    for (k, v) in changes {
        query::edit(&mut form, *k, v);
    }
    let d = query::decode(&form);
    d.notices.is_empty().then_some(d.scenario)
}

/// A changed scenario's numbers: what it needs (its peak, or vLLM's
/// least), and what it may take of a GPU.
#[derive(Clone)]
struct Outcome {
    scenario: Scenario,
    peak: Bytes,
    budget_share: Option<u16>,
    host: Bytes,
    pageable: Bytes,
}

impl Outcome {
    /// Fits as it is, or once the pageable state pages out to host memory.
    fn fit(&self, capacity: Bytes) -> Fit {
        Verdict {
            capacity: self.budget(capacity),
            needed: self.peak,
            pageable: self.pageable,
        }
        .fit()
    }

    /// What a GPU of `capacity` gives the run ([`Estimate::budget`]).
    fn budget(&self, capacity: Bytes) -> Bytes {
        crate::report::budget(self.budget_share, capacity)
    }
}

/// What the primary estimate needs ([`Estimate::needed`]).
pub fn peak_of(s: &Scenario) -> Option<Bytes> {
    Estimates::primary_of(s).ok().map(|e: Estimate| e.needed())
}

/// Whether `s` with `changes` fits a GPU of `capacity` as it is, by the
/// verdict the page shows for it ([`Verdict::of`]: vLLM's share of the
/// GPU and the pool one request needs).
fn fits_with(s: &Scenario, changes: &[(Key, String)], capacity: Bytes) -> bool {
    outcome(s, changes).is_some_and(|o| o.fit(capacity) == Fit::Yes)
}

/// An answer the page offers with a button: its value, and the query keys
/// that apply it. Applied as typed, the run fits by the page's verdict
/// ([`Verdict::of`]): the same keys were estimated to find it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer<T> {
    pub value: T,
    pub changes: Vec<(Key, String)>,
}

impl<T> Answer<T> {
    /// Whether `s` has this answer already: applying its keys changes
    /// nothing.
    pub fn in_effect(&self, s: &Scenario) -> bool {
        applied(s, &self.changes).is_some_and(|t| t == *s)
    }
}

/// The largest value of `key` in `lo..=hi` that fits, by bisection (needs
/// grow with batch, sequence and context lengths; property-tested).
fn largest_fitting(s: &Scenario, key: Key, lo: u32, hi: u32, capacity: Bytes) -> Option<u32> {
    largest(lo, hi, |v: u32| {
        fits_with(s, &[(key, v.to_string())], capacity)
    })
}

/// The largest value in `lo..=hi` for which `fits` holds (monotone).
fn largest(lo: u32, hi: u32, fits: impl Fn(u32) -> bool) -> Option<u32> {
    if !fits(lo) {
        return None;
    }
    if fits(hi) {
        return Some(hi);
    }
    Some(bisect(lo, hi.saturating_add(1), fits))
}

/// The smallest value of `key` in `lo..=hi` that fits, by bisection, for
/// a key whose need falls as it grows (llama.cpp's `--n-cpu-moe`).
fn smallest_fitting(s: &Scenario, key: Key, lo: u32, hi: u32, capacity: Bytes) -> Option<u32> {
    let fits = |v: u32| fits_with(s, &[(key, v.to_string())], capacity);
    if lo > hi || !fits(hi) {
        return None;
    }
    if fits(lo) {
        return Some(lo);
    }
    Some(bisect(hi, lo, fits))
}

/// Narrows a value that fits (`good`) and one that does not (`bad`), on
/// either side of it, until they are adjacent: the fitting value nearest
/// the boundary (`fits` monotone between them).
fn bisect(mut good: u32, mut bad: u32, fits: impl Fn(u32) -> bool) -> u32 {
    while good.abs_diff(bad) > 1 {
        let mid = good.min(bad) + good.abs_diff(bad) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

/// The largest batch size that fits, other settings unchanged. A
/// pipeline's batch is whole micro-batches (the codec refuses others), so
/// its multiples of `micro_batches` are searched.
pub fn max_batch(s: &Scenario, capacity: Bytes) -> Option<u32> {
    let m = match (s.task, s.parallel.pp.get()) {
        (Task::Train, 2..) => s.parallel.micro_batches.get(),
        _ => 1,
    };
    let fits = |k: u32| fits_with(s, &[(Key::Batch, (k * m).to_string())], capacity);
    largest(Batch::MIN, Batch::MAX / m, fits).map(|k| k * m)
}

fn owned(changes: &[(Key, &str)]) -> Vec<(Key, String)> {
    changes.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

/// Whether a run fits a capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    Yes,
    /// Only once bitsandbytes pages optimizer state out to host memory.
    Paging,
    No,
}

/// One change that lowers the peak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// Plain words, e.g. "Turn on gradient checkpointing".
    pub label: String,
    /// What it costs, in a sentence.
    pub cost: String,
    /// Query keys to set, in order.
    pub changes: Vec<(Key, String)>,
    /// The peak after the change, overhead included.
    pub peak: Bytes,
    /// How much it saves.
    pub saves: Bytes,
    /// Host memory the changed run needs (offload).
    pub host: Bytes,
    /// GPUs the changed run uses.
    pub gpus: u32,
    /// Fits as it is (`peak <= capacity`).
    pub fits: bool,
    /// Fits only by paging optimizer state to host memory.
    pub fits_paging: bool,
}

/// A candidate change: label, cost, query keys.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub label: String,
    pub cost: String,
    pub changes: Vec<(Key, String)>,
}

/// Candidate changes that apply to this scenario, each with what it costs.
///
/// Sources for the costs: checkpointing recomputes each layer's forward
/// (Chen et al. 2016: one more forward pass); QLoRA (Dettmers et al. 2023)
/// dequantizes each 4-bit weight per use and reports 16-bit LoRA quality
/// with NF4 and double quantization; ZeRO-Offload (Ren et al. 2021) runs
/// the step on the CPU; paged optimizers page state over PCIe only when
/// the GPU runs short.
pub fn candidates(s: &Scenario) -> Vec<Candidate> {
    match s.task {
        Task::Train => train::train_candidates(s),
        Task::Infer => infer::infer_candidates(s),
    }
}

/// Changes sized to the GPU (a search each), for a run that does not fit
/// (`now` its need): inference's only.
fn sized_candidates(s: &Scenario, now: Bytes, capacity: Bytes) -> Vec<Candidate> {
    match s.task {
        Task::Infer if now > capacity => infer::sized_candidates(s, capacity),
        Task::Train | Task::Infer => Vec::new(),
    }
}

/// A run's changes worth trying, as label, cost and query keys.
struct Changes(Vec<Candidate>);

impl Changes {
    fn add(&mut self, label: &str, cost: &str, ch: &[(Key, &str)]) {
        self.0.push(Candidate {
            label: label.to_string(),
            cost: cost.to_string(),
            changes: owned(ch),
        });
    }
}

/// Whether a peak of `after` lowers `before` by at least 0.5% (less is
/// not worth a line).
fn lowers(before: Bytes, after: Bytes) -> bool {
    after.get().saturating_add(before.get() / 200) < before.get()
}

impl Outcome {
    /// This result as a suggestion to a run now peaking at `now`; its cost
    /// says the host memory the changed run needs.
    fn suggestion(
        &self,
        now: Bytes,
        capacity: Bytes,
        label: String,
        cost: String,
        changes: Vec<(Key, String)>,
    ) -> Suggestion {
        let fit = self.fit(capacity);
        Suggestion {
            label,
            cost: if self.host.get() > 0 {
                format!("{cost}; needs {} of host memory", self.host)
            } else {
                cost
            },
            saves: now.saturating_sub(self.peak),
            fits: fit == Fit::Yes,
            fits_paging: fit == Fit::Paging,
            peak: self.peak,
            host: self.host,
            gpus: self.scenario.parallel.gpus.get(),
            changes,
        }
    }
}

/// Changes that lower the peak: on one GPU, the changes that keep it first;
/// then most saving first. When none fits alone, a recipe follows: from
/// the run as it is, the change that lowers the peak most is applied, again
/// and again, until the run fits (on the user's one GPU when that can be
/// done), each step a change the page can apply.
pub fn suggestions(s: &Scenario, capacity: Bytes) -> Vec<Suggestion> {
    peak_of(s).map_or_else(Vec::new, |now| suggestions_from(s, now, capacity))
}

/// [`suggestions`] for a run whose peak `now` is known
/// ([`Estimate::needed`] of its primary estimate, which [`peak_of`] would
/// compute again): the page has estimated the run already, and a second
/// estimate of a llama.cpp or Ollama run is a second `--fit` search.
pub fn suggestions_from(s: &Scenario, now: Bytes, capacity: Bytes) -> Vec<Suggestion> {
    let gpus = s.parallel.gpus.get();
    // Each candidate estimated once: the list and the recipes' first step.
    let first: Vec<(Candidate, Outcome)> = candidates(s)
        .into_iter()
        .chain(sized_candidates(s, now, capacity))
        .filter_map(|c| outcome(s, &c.changes).map(|o| (c, o)))
        .collect();
    let mut out: Vec<Suggestion> = first
        .iter()
        .filter(|(_, o)| lowers(now, o.peak))
        .map(|(c, o)| {
            o.suggestion(
                now,
                capacity,
                c.label.clone(),
                c.cost.clone(),
                c.changes.clone(),
            )
        })
        .collect();
    let more_gpus = |x: &Suggestion| x.gpus > gpus;
    crate::sort::by(&mut out, &mut |a, b| {
        more_gpus(a)
            .cmp(&more_gpus(b))
            .then_with(|| b.saves.cmp(&a.saves))
            .then_with(|| a.label.cmp(&b.label))
    });
    let fits_alone = out.iter().any(|x| x.fits || x.fits_paging);
    if now > capacity && !fits_alone {
        let recipe = recipe(s, now, capacity, true, &first)
            .filter(|r| r.fits || r.fits_paging)
            .or_else(|| recipe(s, now, capacity, false, &first));
        out.extend(recipe.filter(|r| r.changes.len() > 1 && r.saves.get() > 0));
    }
    out
}

/// The most changes a recipe combines.
const RECIPE_STEPS: usize = 8;

/// Greedy: apply the change that lowers the peak most, then again from
/// there, until the run fits or nothing helps. `same_gpus` keeps the GPU
/// count; `now` is the peak of `s` and `first` every candidate of `s`
/// already estimated.
fn recipe(
    s: &Scenario,
    now: Bytes,
    capacity: Bytes,
    same_gpus: bool,
    first: &[(Candidate, Outcome)],
) -> Option<Suggestion> {
    let gpus = s.parallel.gpus.get();
    let mut changes: Vec<(Key, String)> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut costs: Vec<String> = Vec::new();
    let mut cur = *s;
    let mut best: Option<Outcome> = None;
    for _ in 0..RECIPE_STEPS {
        let peak_now = best.as_ref().map_or(now, |o| o.peak);
        let evaluated: Vec<(Candidate, Outcome)> = if best.is_none() {
            first.to_vec()
        } else {
            candidates(&cur)
                .into_iter()
                .filter_map(|c| outcome(&cur, &c.changes).map(|o| (c, o)))
                .collect()
        };
        let step = evaluated
            .into_iter()
            .filter(|(_, o)| !same_gpus || o.scenario.parallel.gpus.get() == gpus)
            .filter(|(_, o)| lowers(peak_now, o.peak))
            .min_by_key(|(_, o)| o.peak);
        let Some((c, o)) = step else {
            break;
        };
        for ch in c.changes {
            changes.retain(|(k, _)| *k != ch.0);
            changes.push(ch);
        }
        labels.push(mid_sentence(&c.label));
        if !costs.contains(&c.cost) {
            costs.push(c.cost);
        }
        cur = o.scenario;
        let done = o.fit(capacity) != Fit::No;
        best = Some(o);
        if done {
            break;
        }
    }
    let o = best?;
    Some(o.suggestion(
        now,
        capacity,
        format!("Recipe: {}", labels.join(", then ")),
        costs.join("; "),
        changes,
    ))
}

/// A suggestion's label inside the recipe's sentence: its first word in
/// lower case unless it is an acronym or a name ("Turn on…" → "turn on…",
/// "QLoRA: …" and "LoRA…" stay).
fn mid_sentence(label: &str) -> String {
    let mut chars = label.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second))
            if first.is_ascii_uppercase() && !second.is_ascii_uppercase() =>
        {
            let mut out = String::with_capacity(label.len());
            out.push(first.to_ascii_lowercase());
            out.push_str(&label[1..]);
            out
        }
        _ => label.to_string(),
    }
}

/// A change offered as words: its label, its cost and the keys it sets.
pub(super) type Offer = (&'static str, &'static str, &'static [(Key, &'static str)]);

/// PyTorch's caching allocator with expandable segments, where the run
/// takes the measured reserve (not one the link gives): the reserve falls
/// from [`Overhead::RESERVE_PLAIN`]% to [`Overhead::RESERVE_EXPANDABLE`]%
/// of the allocated peak (`scripts/measure/allocator/NOTES.md`).
///
/// [`Overhead::RESERVE_PLAIN`]: crate::inputs::Overhead::RESERVE_PLAIN
/// [`Overhead::RESERVE_EXPANDABLE`]: crate::inputs::Overhead::RESERVE_EXPANDABLE
pub(super) fn expandable(s: &Scenario) -> Option<Offer> {
    let o = &s.overhead;
    (!o.expandable_segments && o.reserve_pct.is_none()).then_some((
        "Set expandable_segments:True in PYTORCH_CUDA_ALLOC_CONF",
        "none measured: PyTorch's allocator grows its segments in place, so less is lost between blocks (2% above the allocated peak instead of 5%)",
        &[(Key::ExpandableSegments, "true")],
    ))
}
