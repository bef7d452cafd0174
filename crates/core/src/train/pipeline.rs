//! Pipeline parallelism as torch 2.15's `torch.distributed.pipelining`
//! runs a training step (torchtitan's `pipeline_llm`): the decoder layers
//! cut into `pp` contiguous stages, one per rank, the embedding on the
//! first, the final norm, the head and the loss on the last; each step
//! runs `micro_batches` micro-batches in the schedule's order.
//!
//! What a rank holds at each of its forwards and backwards follows from
//! that order: the activations of every micro-batch it has run forward
//! and not yet backward, the gradients once its first backward has made
//! them, and on the last stage the output of every micro-batch run so far
//! (`PipelineStage.output_chunks`, kept for the step's return value until
//! the next step begins). This module replays the order; the breakdown
//! sizes one micro-batch on the rank's stage, and the phases add what the
//! order keeps beside it. Measured: `scripts/measure/parallel/` (`pp.py`,
//! `raw/pp523.jsonl`).

use super::run::{Beside, Kind, Plan, PpSchedule, Stage};

/// One action of a rank's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Forward,
    Backward,
}

/// Rank `rank`'s order of forwards and backwards over `m` micro-batches
/// (torch 2.15 `schedules.py`): GPipe (`ScheduleGPipe._step_microbatches`)
/// every forward, then every backward; 1F1B (`Schedule1F1B`)
/// `min(m, pp − rank)` forwards, then a backward and a forward in turn
/// until the forwards are done, then the remaining backwards.
fn order(schedule: PpSchedule, pp: u32, rank: u32, m: u32) -> Vec<Action> {
    let mut out = Vec::with_capacity(2 * m as usize);
    let warmup = match schedule {
        PpSchedule::Gpipe => m,
        PpSchedule::OneFOneB => m.min(pp - rank),
    };
    out.extend((0..warmup).map(|_| Action::Forward));
    for _ in warmup..m {
        out.push(Action::Backward);
        out.push(Action::Forward);
    }
    out.extend((0..warmup).map(|_| Action::Backward));
    out
}

/// Every moment of `actions`: at a forward, the micro-batches forwarded
/// and not yet backward wait (its own is the forward's); at a backward,
/// the others forwarded wait. The last stage keeps every output forwarded
/// so far (the forward's own is its logits) and the inputs of the
/// micro-batches through backward.
fn moments(actions: &[Action], last: bool) -> Vec<(Kind, Beside)> {
    let (mut forwarded, mut backward) = (0u32, 0u32);
    let on_last = |n: u32| if last { n } else { 0 };
    let mut out = Vec::with_capacity(actions.len());
    for a in actions {
        let (kind, waiting) = match (a, backward) {
            (Action::Forward, 0) => (Kind::Forward, forwarded),
            (Action::Forward, _) => (Kind::ForwardGrads, forwarded - backward),
            (Action::Backward, 0) => (Kind::BackwardFirst, forwarded - 1),
            (Action::Backward, _) => (Kind::Backward, forwarded - backward - 1),
        };
        out.push((
            kind,
            Beside {
                waiting,
                kept: on_last(forwarded),
                done: on_last(backward),
            },
        ));
        match a {
            Action::Forward => forwarded += 1,
            Action::Backward => backward += 1,
        }
    }
    out
}

/// The stages of the ranks that can need most: the first (the
/// embedding), the fullest middle one and the last (the head and the
/// loss). The middle ranks' stages are alike, and of those rank 1 keeps
/// the most micro-batches in flight at every kind of moment (1F1B:
/// pp − rank; GPipe: all alike), so no other middle rank needs more.
/// Each stage has `layers / pp` decoder layers (the last takes the
/// remainder, as transformers 5.23's `layer_range_for_rank` and `pp.py`
/// cut them) and its schedule's moments. The codec holds `pp ≤ layers`
/// and `micro_batches` dividing the batch.
pub fn stages(plan: Plan, layers: u32, batch: u32) -> Vec<Stage> {
    let ranks: &[u32] = match plan.pp {
        1 => &[0],
        2 => &[0, 1],
        pp => &[0, 1, pp - 1],
    };
    ranks
        .iter()
        .map(|&rank| stage(plan, layers, batch, rank))
        .collect()
}

/// Rank `rank`'s stage (`rank < pp`).
pub fn stage(plan: Plan, layers: u32, batch: u32, rank: u32) -> Stage {
    let (pp, m) = (plan.pp, plan.micro_batches);
    let per = layers / pp;
    let last = rank + 1 == pp;
    Stage {
        rank,
        layers: if last { layers - per * (pp - 1) } else { per },
        first: rank == 0,
        last,
        micro_batches: m,
        micro_batch: (batch / m).max(1),
        moments: moments(&order(plan.schedule, pp, rank, m), last),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(kind: Kind, waiting: u32, kept: u32, done: u32) -> (Kind, Beside) {
        (
            kind,
            Beside {
                waiting,
                kept,
                done,
            },
        )
    }

    /// (schedule, pp, rank, m, last) → the rank's moments, in the order
    /// torch 2.15's schedules run them (`schedules.py`).
    #[test]
    fn moments_follow_the_order() {
        use Kind::{Backward as B, BackwardFirst as B1, Forward as F, ForwardGrads as Fg};
        use PpSchedule::{Gpipe, OneFOneB};
        let check = |s, pp, rank, m, last, want: &[(Kind, Beside)]| {
            let got = moments(&order(s, pp, rank, m), last);
            assert_eq!(got, want, "{s:?} pp {pp} rank {rank} m {m}");
        };
        // GPipe: every forward, then every backward.
        check(
            Gpipe,
            2,
            0,
            3,
            false,
            &[
                b(F, 0, 0, 0),
                b(F, 1, 0, 0),
                b(F, 2, 0, 0),
                b(B1, 2, 0, 0),
                b(B, 1, 0, 0),
                b(B, 0, 0, 0),
            ],
        );
        // The last rank keeps every output, and the inputs of those
        // through backward.
        check(
            Gpipe,
            2,
            1,
            2,
            true,
            &[b(F, 0, 0, 0), b(F, 1, 1, 0), b(B1, 1, 2, 0), b(B, 0, 2, 1)],
        );
        // 1F1B, rank 0 of 2, 4 micro-batches: two forwards, then a
        // backward and a forward in turn, then two backwards.
        check(
            OneFOneB,
            2,
            0,
            4,
            false,
            &[
                b(F, 0, 0, 0),
                b(F, 1, 0, 0),
                b(B1, 1, 0, 0),
                b(Fg, 1, 0, 0),
                b(B, 1, 0, 0),
                b(Fg, 1, 0, 0),
                b(B, 1, 0, 0),
                b(B, 0, 0, 0),
            ],
        );
        // 1F1B, the last rank: one forward, then a backward and a forward.
        check(
            OneFOneB,
            2,
            1,
            2,
            true,
            &[b(F, 0, 0, 0), b(B1, 0, 1, 0), b(Fg, 0, 1, 1), b(B, 0, 2, 1)],
        );
        // One micro-batch: a forward and a backward.
        check(OneFOneB, 2, 0, 1, false, &[b(F, 0, 0, 0), b(B1, 0, 0, 0)]);
    }

    #[test]
    fn the_last_stage_takes_the_remainder() {
        let plan = Plan {
            pp: 3,
            schedule: PpSchedule::OneFOneB,
            micro_batches: 2,
        };
        let s = stages(plan, 32, 4);
        let layers: Vec<(u32, u32)> = s.iter().map(|x| (x.rank, x.layers)).collect();
        assert_eq!(layers, [(0, 10), (1, 10), (2, 12)]);
        assert!(s[0].first && !s[0].last && s[2].last && !s[1].first);
        assert_eq!(s[1].micro_batch, 2);
        let eight = stages(Plan { pp: 8, ..plan }, 32, 4);
        let ranks: Vec<u32> = eight.iter().map(|x| x.rank).collect();
        assert_eq!(ranks, [0, 1, 7]);
    }
}
