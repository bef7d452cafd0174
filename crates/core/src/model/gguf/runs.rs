//! A file's repeating layers folded into the kinds they come in: each kind
//! of layer once, and runs of layers saying which kind each one is. A run
//! may alternate with a period of three layers: `llama-quantize` gives
//! every third layer of the middle three quarters more bits
//! (`use_more_bits`, `src/llama-quant.cpp`), so a Q4_K_M file's 80 layers
//! are three runs (the first eighth, the middle, the last eighth) of two
//! kinds rather than 80 layers or 47 runs of one kind each.

/// Layers `lo..hi`; layer `l` is of kind `kinds[l % 3]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub lo: u32,
    pub hi: u32,
    pub kinds: [u16; 3],
}

/// How many of `0..x` are `r` modulo 3 (`r < 3`).
const fn below(x: u32, r: u32) -> u32 {
    if x > r {
        (x - r).div_ceil(3)
    } else {
        0
    }
}

/// How many of `lo..hi` are `r` modulo 3 (`r < 3`).
const fn residues(lo: u32, hi: u32, r: u32) -> u32 {
    if hi <= lo {
        0
    } else {
        below(hi, r) - below(lo, r)
    }
}

impl Run {
    /// Layers `lo..hi` all of kind `kind`.
    pub const fn same(lo: u32, hi: u32, kind: u16) -> Run {
        Run {
            lo,
            hi,
            kinds: [kind; 3],
        }
    }

    /// The kind of layer `l` (one of this run's).
    pub const fn kind_of(&self, l: u32) -> u16 {
        self.kinds[(l % 3) as usize]
    }

    /// Each kind this run has among layers `lo..hi`, with how many of
    /// those layers are of it (a kind may come twice: two residues).
    pub fn kinds_in(&self, lo: u32, hi: u32) -> impl Iterator<Item = (u16, u32)> + '_ {
        let (lo, hi) = (lo.max(self.lo), hi.min(self.hi));
        let [a, b, c] = self.kinds;
        // A run of one kind: all its layers at once.
        let one = a == b && b == c;
        let first = (a, if one { hi.saturating_sub(lo) } else { 0 });
        let each = (0..3u32)
            .filter(move |_| !one)
            .map(move |r| (self.kinds[r as usize], residues(lo, hi, r)));
        std::iter::once(first).chain(each).filter(|&(_, n)| n > 0)
    }

    /// Whether residue `r` occurs in the run.
    const fn has(&self, r: u32) -> bool {
        residues(self.lo, self.hi, r) > 0
    }

    /// `next` appended to this run when the layers both have of each
    /// residue are of one kind (`next` starts where this run ends).
    fn joined(&self, next: &Run) -> Option<Run> {
        let mut kinds = self.kinds;
        for r in 0..3u32 {
            let i = r as usize;
            match (self.has(r), next.has(r)) {
                (true, true) if self.kinds[i] != next.kinds[i] => return None,
                (false, true) => kinds[i] = next.kinds[i],
                (true, true) | (true, false) | (false, false) => {}
            }
        }
        Some(Run {
            lo: self.lo,
            hi: next.hi,
            kinds,
        })
    }
}

/// Appends `run` to `runs`, joined to the last run when it continues its
/// pattern.
pub fn push_run(runs: &mut Vec<Run>, run: Run) {
    if run.hi <= run.lo {
        return;
    }
    if let Some(joined) = runs.last().and_then(|last| last.joined(&run)) {
        if let Some(last) = runs.last_mut() {
            *last = joined;
        }
        return;
    }
    runs.push(run);
}

/// The runs of a list of layers' kinds, in layer order.
pub fn runs_of(kinds: impl IntoIterator<Item = u16>) -> Vec<Run> {
    let mut runs = Vec::new();
    for (l, k) in kinds.into_iter().enumerate() {
        let l = u32::try_from(l).unwrap_or(u32::MAX);
        push_run(&mut runs, Run::same(l, l.saturating_add(1), k));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unfold(runs: &[Run]) -> Vec<u16> {
        let mut out = Vec::new();
        for r in runs {
            for l in r.lo..r.hi {
                out.push(r.kind_of(l));
            }
        }
        out
    }

    #[test]
    fn residues_count_each_third() {
        for lo in 0..12 {
            for hi in 0..14 {
                for r in 0..3 {
                    let n = (lo..hi).filter(|l| l % 3 == r).count() as u32;
                    assert_eq!(residues(lo, hi, r), n, "{lo}..{hi} r{r}");
                }
            }
        }
    }

    #[test]
    fn runs_fold_and_unfold() {
        // Q4_K_M's 80 layers: the first and last eighth and every third
        // of the middle from layer 12 have more bits.
        let q4km: Vec<u16> = (0..80u32)
            .map(|i| u16::from(!(10..70).contains(&i) || (i - 10) % 3 == 2))
            .collect();
        let runs = runs_of(q4km.iter().copied());
        assert_eq!(runs.len(), 3, "{runs:?}");
        assert_eq!(unfold(&runs), q4km);
        for kinds in [
            vec![],
            vec![3],
            vec![0, 1],
            vec![0, 1, 2, 0, 1, 2, 2],
            vec![5; 9],
        ] {
            assert_eq!(unfold(&runs_of(kinds.iter().copied())), kinds);
        }
        let r = runs[1];
        let more: u32 = r
            .kinds_in(0, 80)
            .filter(|&(k, _)| k == 1)
            .map(|(_, n)| n)
            .sum();
        assert_eq!(more, 20);
    }
}
