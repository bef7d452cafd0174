//! Will it fit, and what would: the verdict against a capacity, the largest
//! batch and sequence length that fit, and a ranked list of changes with the
//! memory each saves.
//!
//! Every answer re-runs the estimator on a changed query, through the same
//! codec, so a suggestion applied on the page gives exactly the number shown.

use crate::query::{self, RawQuery};
use crate::scenario::{Batch, Dtype, Optimizer, Scenario, SeqLen};
use crate::units::Bytes;
use crate::{Estimate, Estimates};

/// Fits or not, and by how much.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Bytes the GPU offers.
    pub capacity: Bytes,
    /// The estimate's peak, overhead included.
    pub needed: Bytes,
}

impl Verdict {
    pub fn new(needed: Bytes, capacity: Bytes) -> Self {
        Verdict { capacity, needed }
    }

    pub fn fits(&self) -> bool {
        self.needed <= self.capacity
    }

    /// Bytes to spare when it fits.
    pub fn spare(&self) -> Bytes {
        self.capacity.saturating_sub(self.needed)
    }

    /// Bytes missing when it does not.
    pub fn short(&self) -> Bytes {
        self.needed.saturating_sub(self.capacity)
    }
}

/// The peak (overhead included) of the scenario a changed query gives, or
/// `None` when the change is not valid or cannot be estimated.
fn peak_with(s: &Scenario, changes: &[(&str, String)]) -> Option<(Scenario, Bytes)> {
    let mut raw = query::encode(s);
    for (k, v) in changes {
        raw.set(k, v);
    }
    let d = query::decode(&RawQuery::parse(&raw.to_query_string()));
    if !d.notices.is_empty() {
        return None;
    }
    let peak = peak_of(&d.scenario)?;
    Some((d.scenario, peak))
}

/// The primary estimate's peak, overhead included.
pub fn peak_of(s: &Scenario) -> Option<Bytes> {
    Estimates::new(s)
        .primary()
        .ok()
        .map(|e: &Estimate| e.peak_total_bytes)
}

/// The largest value of `key` in `lo..=hi` whose peak fits, by bisection
/// (peaks grow with batch and sequence length; property-tested).
fn largest_fitting(s: &Scenario, key: &str, lo: u32, hi: u32, capacity: Bytes) -> Option<u32> {
    let fits = |v: u32| peak_with(s, &[(key, v.to_string())]).is_some_and(|(_, p)| p <= capacity);
    if !fits(lo) {
        return None;
    }
    let (mut ok, mut bad) = (lo, hi.saturating_add(1));
    if fits(hi) {
        return Some(hi);
    }
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if fits(mid) {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    Some(ok)
}

/// The largest batch size that fits, other settings unchanged.
pub fn max_batch(s: &Scenario, capacity: Bytes) -> Option<u32> {
    largest_fitting(s, "batch", Batch::MIN, Batch::MAX, capacity)
}

/// The largest sequence length that fits, other settings unchanged.
pub fn max_seq(s: &Scenario, capacity: Bytes) -> Option<u32> {
    largest_fitting(s, "seq", SeqLen::MIN, SeqLen::MAX, capacity)
}

/// One change that lowers the peak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// Plain words, e.g. "Turn on gradient checkpointing".
    pub label: String,
    /// Query keys to set, in order.
    pub changes: Vec<(&'static str, String)>,
    /// The peak after the change, overhead included.
    pub peak: Bytes,
    /// How much it saves.
    pub saves: Bytes,
    pub fits: bool,
}

/// Candidate changes that apply to this scenario.
fn candidates(s: &Scenario) -> Vec<(String, Vec<(&'static str, String)>)> {
    let t = &s.train;
    let mut out: Vec<(String, Vec<(&'static str, String)>)> = Vec::new();
    let mut add = |label: &str, ch: &[(&'static str, &str)]| {
        out.push((
            label.to_string(),
            ch.iter().map(|(k, v)| (*k, v.to_string())).collect(),
        ));
    };
    if !t.grad_ckpt.on() {
        add("Turn on gradient checkpointing", &[("grad_ckpt", "true")]);
    }
    if matches!(t.dtype, Dtype::Fp32 | Dtype::AmpBf16 | Dtype::AmpFp16) {
        add("Train in pure bf16", &[("dtype", "bf16")]);
    }
    if matches!(
        t.optim,
        Optimizer::AdamW | Optimizer::AdamWForLoop | Optimizer::AdamWFused
    ) {
        add("Use 8-bit AdamW (bitsandbytes)", &[("optim", "adamw8bit")]);
    }
    if matches!(t.optim, Optimizer::AdamW | Optimizer::AdamWForLoop) {
        add(
            "Use fused AdamW (no step temporaries)",
            &[("optim", "adamw_fused")],
        );
    }
    if t.lora_r.is_none() && s.arch.is_some() {
        add("Fine-tune with LoRA (rank 16)", &[("lora_r", "16")]);
    }
    if t.attn == crate::scenario::Attn::Eager {
        add("Use SDPA attention", &[("attn", "sdpa")]);
    }
    if t.keep_outputs {
        add(
            "Drop the outputs before backward",
            &[("keep_outputs", "false")],
        );
    }
    let (gpus, zero) = (s.parallel.gpus.get(), s.parallel.zero.get());
    if gpus > 1 && zero < 3 {
        let z = (zero + 1).to_string();
        add(&format!("Shard more with ZeRO stage {z}"), &[("zero", &z)]);
    }
    if gpus * 2 <= crate::scenario::Gpus::MAX {
        let g = (gpus * 2).to_string();
        add(
            &format!("Use {g} GPUs with ZeRO-3"),
            &[("gpus", &g), ("zero", "3")],
        );
    }
    let b = t.batch.get();
    if b >= 2 {
        let half = (b / 2).to_string();
        let acc = (t.grad_accum.get() * 2).to_string();
        add(
            &format!("Batch {half} with {acc}× gradient accumulation (same effective batch)"),
            &[("batch", &half), ("grad_accum", &acc)],
        );
    }
    out
}

/// Changes that lower the peak, most saving first. When none fits alone,
/// the last entry combines the changes that help, in that order, until it
/// fits (or all are used).
pub fn suggestions(s: &Scenario, capacity: Bytes) -> Vec<Suggestion> {
    let Some(now) = peak_of(s) else {
        return Vec::new();
    };
    let mut out: Vec<Suggestion> = candidates(s)
        .into_iter()
        .filter_map(|(label, changes)| {
            let (_, peak) = peak_with(s, &changes)?;
            // A change that moves the peak by less than 0.5% is not worth a line.
            let worth = now.get() / 200;
            (peak.get().saturating_add(worth) < now.get()).then(|| Suggestion {
                label,
                saves: now.saturating_sub(peak),
                fits: peak <= capacity,
                peak,
                changes,
            })
        })
        .collect();
    out.sort_by(|a, b| b.saves.cmp(&a.saves).then_with(|| a.label.cmp(&b.label)));
    if now > capacity && !out.is_empty() && !out.iter().any(|x| x.fits) {
        let mut changes: Vec<(&'static str, String)> = Vec::new();
        let mut used = Vec::new();
        let mut best = None;
        for x in &out {
            let mut trial = changes.clone();
            for c in &x.changes {
                trial.retain(|(k, _)| *k != c.0);
                trial.push(c.clone());
            }
            if let Some((_, peak)) = peak_with(s, &trial) {
                if best.is_none_or(|b| peak < b) {
                    changes = trial;
                    used.push(x.label.to_ascii_lowercase());
                    best = Some(peak);
                    if peak <= capacity {
                        break;
                    }
                }
            }
        }
        if let Some(peak) = best.filter(|_| used.len() > 1) {
            out.push(Suggestion {
                label: format!("All together: {}", used.join(", ")),
                saves: now.saturating_sub(peak),
                fits: peak <= capacity,
                peak,
                changes,
            });
        }
    }
    out
}
