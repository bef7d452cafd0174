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

/// A handle to one allocation: its size and what it is for (freeing it
/// needs nothing else; debug builds also give it a slot, to catch a
/// second free).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Id {
    bytes: u128,
    cat: Cat,
    #[cfg(debug_assertions)]
    slot: u8,
}

/// Room for the allocations alive at once in one layer's replay, as debug
/// builds check it (a test holds every preset's layers well within it).
#[cfg(debug_assertions)]
const SLOTS: usize = 64;

/// Debug builds' arena: which slots hold an allocation, so that nothing is
/// freed twice (as in the Python replay, whose dictionary would raise on a
/// second free).
#[cfg(debug_assertions)]
#[derive(Clone, Debug)]
struct Slots {
    occupied: [bool; SLOTS],
    /// Freed slots, to reuse first.
    freed: [u8; SLOTS],
    nfreed: usize,
    /// Slots never used yet start here.
    next: usize,
}

#[cfg(debug_assertions)]
impl Slots {
    fn take(&mut self) -> u8 {
        let i = if self.nfreed > 0 {
            self.nfreed -= 1;
            usize::from(self.freed[self.nfreed])
        } else {
            assert!(self.next < SLOTS, "more than {SLOTS} allocations alive");
            self.next += 1;
            self.next - 1
        };
        self.occupied[i] = true;
        i as u8
    }

    fn give_back(&mut self, slot: u8) {
        let i = usize::from(slot);
        assert!(self.occupied[i], "slot {i} freed twice");
        self.occupied[i] = false;
        self.freed[self.nfreed] = slot;
        self.nfreed += 1;
    }
}

/// Live bytes and their peak, from a starting total.
#[derive(Clone, Debug)]
pub struct Sim {
    /// Allocations alive now, and the most alive at once.
    alive: usize,
    most: usize,
    #[cfg(debug_assertions)]
    slots: Slots,
    tag: Cat,
    /// Live bytes by category, but for activations (most allocations):
    /// theirs are the total less the others ([`Sim::with_act`]).
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
            alive: 0,
            most: 0,
            #[cfg(debug_assertions)]
            slots: Slots {
                occupied: [false; SLOTS],
                freed: [0; SLOTS],
                nfreed: 0,
                next: 0,
            },
            tag: Cat::Act,
            now: [base[0], base[1], 0, base[3], base[4]],
            cur,
            peak: cur,
            at_peak: [base[0], base[1], 0, base[3], base[4]],
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
        self.alive += 1;
        self.most = self.most.max(self.alive);
        // No sum wraps: every size is a product of validated inputs, far
        // below 2^100, and a replay makes fewer than 2^20 allocations.
        if self.tag != Cat::Act {
            self.now[self.tag as usize] += bytes;
        }
        self.cur += bytes;
        if self.cur > self.peak {
            self.peak = self.cur;
            self.at_peak_stale = true;
            self.peak_stage = self.stage;
        }
        Id {
            bytes,
            cat: self.tag,
            #[cfg(debug_assertions)]
            slot: self.slots.take(),
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
            #[cfg(debug_assertions)]
            self.slots.give_back(id.slot);
            self.alive -= 1;
            if id.cat != Cat::Act {
                self.now[id.cat as usize] -= id.bytes;
            }
            self.cur -= id.bytes;
        }
    }

    /// Frees one allocation.
    pub fn free(&mut self, id: Id) {
        self.f(&[Some(id)]);
    }

    /// Bytes of an allocation (as made: whether it is still alive is the
    /// caller's to know).
    pub fn size(&self, id: Id) -> u128 {
        id.bytes
    }

    /// Live bytes now.
    pub fn now(&self) -> u128 {
        self.cur
    }

    /// Live bytes now, by category.
    pub fn parts(&self) -> Parts {
        Sim::with_act(self.now, self.cur)
    }

    /// The highest total so far.
    pub fn peak(&self) -> u128 {
        self.peak
    }

    /// What the highest total was made of.
    pub fn peak_parts(&self) -> Parts {
        if self.at_peak_stale {
            Sim::with_act(self.now, self.cur)
        } else {
            Sim::with_act(self.at_peak, self.peak)
        }
    }

    /// `parts` (activations left out) with the activations filled in as
    /// what `total` holds beyond the other categories.
    fn with_act(mut parts: Parts, total: u128) -> Parts {
        parts[Cat::Act as usize] = total - parts.iter().sum::<u128>();
        parts
    }

    /// The most allocations alive at once so far.
    pub fn used(&self) -> usize {
        self.most
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
