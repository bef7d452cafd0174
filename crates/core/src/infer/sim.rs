//! Live bytes in program order: each allocation adds, each free takes away,
//! and the highest total is kept with what it was made of. The inference
//! workload replays one decoder layer (and one token step) of a forward
//! pass through it, as the training ledger replays what a layer saves:
//! exact where a closed form would have to guess which of a dozen
//! transients overlap.

/// What a live byte is for, as the estimate reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cat {
    /// Weights and buffers.
    Weights,
    /// The key/value cache.
    Kv,
    /// A forward pass's transients.
    Act,
    /// Logits, their fp32 copies and the logits processors' outputs.
    Logits,
    /// The engine's own tensors: the caller's ids and mask, generate's
    /// position ids, token ids and flags.
    Engine,
}

/// Live bytes by [`Cat`], in its order.
pub type Parts = [u128; 5];

/// A handle to one allocation: its slot and what it is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Id {
    slot: u8,
    cat: Cat,
}

/// Room for the allocations alive at once in one layer's replay (a freed
/// slot is reused; a test holds every preset's layers well within it).
const SLOTS: usize = 64;

/// Live bytes and their peak, from a starting total.
#[derive(Clone, Debug)]
pub struct Sim {
    live: [u128; SLOTS],
    /// Slots never used yet start here.
    next: usize,
    /// Freed slots, to reuse first.
    freed: [u8; SLOTS],
    nfreed: usize,
    /// Debug builds check that nothing is freed twice.
    #[cfg(debug_assertions)]
    occupied: [bool; SLOTS],
    tag: Cat,
    now: Parts,
    cur: u128,
    peak: u128,
    /// What the peak was made of, copied when the first free after a new
    /// peak comes (until then `now` is the peak's).
    at_peak: Parts,
    at_peak_stale: bool,
    stage: Stage,
    peak_stage: Stage,
}

/// Where in a forward pass or a token step an allocation happens (for
/// saying where a peak is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `generate`'s set-up: special tokens, position ids, the ids' clone.
    Preamble,
    /// The embeddings, the masks and the rotary tables of a forward.
    Inputs,
    Attention,
    Mlp,
    Experts,
    /// The final norm and the output head.
    Head,
    /// The token step: the fp32 logits, the logits processors, the next
    /// ids.
    TokenStep,
}

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Preamble => "generate's preamble (position ids, the ids' clone)",
            Stage::Inputs => "the embeddings, masks and rotary tables",
            Stage::Attention => "attention",
            Stage::Mlp => "the MLP",
            Stage::Experts => "the experts",
            Stage::Head => "the final norm and the output head",
            Stage::TokenStep => "the token step (fp32 logits, logits processors, next ids)",
        }
    }
}

impl Sim {
    /// A simulation starting with `base` bytes alive; allocations are
    /// activations until [`Sim::tag`] says otherwise.
    pub fn new(base: Parts) -> Sim {
        let cur = base.iter().sum();
        Sim {
            live: [0; SLOTS],
            next: 0,
            freed: [0; SLOTS],
            nfreed: 0,
            #[cfg(debug_assertions)]
            occupied: [false; SLOTS],
            tag: Cat::Act,
            now: base,
            cur,
            peak: cur,
            at_peak: base,
            at_peak_stale: false,
            stage: Stage::Inputs,
            peak_stage: Stage::Inputs,
        }
    }

    /// What the next allocations are for.
    pub fn tag(&mut self, cat: Cat) {
        self.tag = cat;
    }

    /// Where the next allocations happen.
    pub fn stage(&mut self, stage: Stage) {
        self.stage = stage;
    }

    /// Where the highest total was reached.
    pub fn peak_stage(&self) -> Stage {
        self.peak_stage
    }

    /// Allocates `bytes`.
    pub fn a(&mut self, bytes: u128) -> Id {
        // A full arena adds to its last slot rather than panic (a test
        // holds every layer well within it).
        let i = if self.nfreed > 0 {
            self.nfreed -= 1;
            usize::from(self.freed[self.nfreed])
        } else {
            let i = self.next.min(SLOTS - 1);
            self.next = (self.next + 1).min(SLOTS);
            i
        };
        self.live[i] += bytes;
        #[cfg(debug_assertions)]
        {
            self.occupied[i] = true;
        }
        // No sum wraps: every size is a product of validated inputs, far
        // below 2^100, and a replay makes fewer than 2^20 allocations.
        self.now[self.tag as usize] += bytes;
        self.cur += bytes;
        if self.cur > self.peak {
            self.peak = self.cur;
            self.at_peak_stale = true;
            self.peak_stage = self.stage;
        }
        Id {
            slot: i as u8,
            cat: self.tag,
        }
    }

    /// Allocates `bytes` when `on`.
    pub fn a_if(&mut self, on: bool, bytes: u128) -> Option<Id> {
        on.then(|| self.a(bytes))
    }

    /// Frees each allocation given (once; `None`s are skipped).
    pub fn f(&mut self, ids: &[Option<Id>]) {
        for id in ids.iter().flatten() {
            // The peak's parts are copied before the first free after it
            // (here, not in a scan of `ids` ahead of the loop).
            if self.at_peak_stale {
                self.at_peak = self.now;
                self.at_peak_stale = false;
            }
            let slot = usize::from(id.slot);
            // Every allocation is freed once (as in the Python replay,
            // whose dictionary would raise on a second free).
            #[cfg(debug_assertions)]
            {
                assert!(self.occupied[slot], "slot {slot} freed twice");
                self.occupied[slot] = false;
            }
            let b = std::mem::take(&mut self.live[slot]);
            self.now[id.cat as usize] -= b;
            self.cur -= b;
            // The last slot may hold several allocations once the arena is
            // full: it is never reused.
            if slot < SLOTS - 1 {
                self.freed[self.nfreed] = id.slot;
                self.nfreed += 1;
            }
        }
    }

    /// Frees one allocation.
    pub fn free(&mut self, id: Id) {
        self.f(&[Some(id)]);
    }

    /// Bytes of an allocation still alive (0 once freed).
    pub fn size(&self, id: Id) -> u128 {
        self.live[usize::from(id.slot)]
    }

    /// Live bytes now.
    pub fn now(&self) -> u128 {
        self.cur
    }

    /// Live bytes now, by category.
    pub fn parts(&self) -> Parts {
        self.now
    }

    /// The highest total so far.
    pub fn peak(&self) -> u128 {
        self.peak
    }

    /// What the highest total was made of.
    pub fn peak_parts(&self) -> Parts {
        if self.at_peak_stale {
            self.now
        } else {
            self.at_peak
        }
    }

    /// The most slots used at once so far.
    pub fn used(&self) -> usize {
        self.next
    }
}

/// A straight run of allocations whose sizes the caller keeps (a handle is
/// the size itself): its highest total over where it started. A norm's
/// or a rotary table's dozen steps, replayed in a few instructions, then
/// put in the [`Sim`] as one [`Sim::burst`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Run {
    cur: u128,
    max: u128,
}

impl Run {
    /// Allocates `bytes`; returns them as the handle.
    pub fn a(&mut self, bytes: u128) -> u128 {
        self.cur += bytes;
        self.max = self.max.max(self.cur);
        bytes
    }

    /// Allocates `bytes` when `on` (0 otherwise).
    pub fn a_if(&mut self, on: bool, bytes: u128) -> u128 {
        if on {
            self.a(bytes)
        } else {
            0
        }
    }

    /// Frees the allocations of these sizes.
    pub fn f(&mut self, sizes: &[u128]) {
        for b in sizes {
            self.cur -= b;
        }
    }

    /// The highest total above the start.
    pub fn max(&self) -> u128 {
        self.max
    }
}

impl Sim {
    /// A [`Run`] that peaked `peak` above its start and left `outs` alive:
    /// the outputs allocated, then the rest of the peak for a moment.
    pub fn burst<const N: usize>(&mut self, peak: u128, outs: [u128; N]) -> [Id; N] {
        let ids = outs.map(|b| self.a(b));
        let rest = peak.saturating_sub(outs.iter().sum());
        let t = self.a(rest);
        self.free(t);
        ids
    }
}
