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

use super::run::{Beside, EndWeights, Kind, Plan, PpSchedule, PpSplit, Stage};

/// One action of a rank's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Forward,
    Backward,
}

/// An action on one of the rank's stages (0: its first; rank r's stage
/// `c` is the model's stage `c × pp + r`).
type Op = (Action, u32);

/// Rank `rank`'s order of forwards and backwards over the step's
/// micro-batches (torch 2.15 `schedules.py`).
fn order(plan: Plan, rank: u32) -> Vec<Op> {
    let (pp, m) = (plan.pp, plan.micro_batches);
    let warmup = match plan.schedule {
        PpSchedule::Gpipe => m,
        PpSchedule::OneFOneB => m.min(pp - rank),
        PpSchedule::Interleaved => return interleaved(plan, rank),
    };
    let mut out = Vec::with_capacity(2 * m as usize);
    out.extend((0..warmup).map(|_| (Action::Forward, 0)));
    for _ in warmup..m {
        out.push((Action::Backward, 0));
        out.push((Action::Forward, 0));
    }
    out.extend((0..warmup).map(|_| (Action::Backward, 0)));
    out
}

/// Interleaved 1F1B (torch 2.15 `ScheduleInterleaved1F1B`:
/// `_calculate_single_rank_operations`, `_get_warmup_ops`,
/// `_get_1f1b_rank_ops`, its idle slots dropped): the micro-batches go in
/// rounds of `m / max(1, m / pp)`; `(vpp − 1) × round + 2 × (pp − 1 −
/// rank)` warm-up forwards (at most `vpp × m`), then a forward and a
/// backward in turn, then the remaining backwards. Operation `i` forwards
/// stage `(i / round) mod vpp` and backwards stage `vpp − 1 − ((i −
/// warmup) / round) mod vpp`. The codec holds `m` a multiple of the
/// rounds, as torch's constructor does.
fn interleaved(plan: Plan, rank: u32) -> Vec<Op> {
    let (pp, vpp, m) = (plan.pp, plan.vpp, plan.micro_batches);
    let rounds = (m / pp).max(1);
    let round = m / rounds;
    let total = vpp * m;
    let warmup = ((vpp - 1) * round + 2 * (pp - 1 - rank)).min(total);
    let forward = |i: u32| (Action::Forward, (i / round) % vpp);
    let backward = |i: u32| (Action::Backward, vpp - 1 - ((i - warmup) / round) % vpp);
    let mut out = Vec::with_capacity(2 * total as usize);
    for i in 0..total + warmup {
        if i < total {
            out.push(forward(i));
        }
        if i >= warmup {
            out.push(backward(i));
        }
    }
    out
}

/// Each moment of `ops` on a stage of the kind `kind_of` gives `mine`:
/// at a forward, the micro-batches forwarded and not yet backward wait on
/// the stages of its kind (its own is the forward's); at a backward, the
/// others forwarded. A stage's gradients exist from its first backward.
/// The model's last stage (`last`, if the rank holds it) keeps every
/// output forwarded so far and the inputs of the micro-batches through
/// backward.
fn moments(ops: &[Op], kinds: &[bool], mine: bool, last: Option<u32>) -> Vec<(Kind, Beside)> {
    let n = kinds.len();
    let (mut fwd, mut bwd) = (vec![0u32; n], vec![0u32; n]);
    let mut out = Vec::with_capacity(ops.len());
    for &(action, c) in ops {
        let c = c as usize;
        let in_flight = |want: bool| {
            (0..n)
                .filter(|&d| kinds[d] == want)
                .map(|d| fwd[d] - bwd[d])
                .sum::<u32>()
        };
        let with_grads = |want: bool| {
            (0..n)
                .filter(|&d| d != c && kinds[d] == want && bwd[d] > 0)
                .count() as u32
        };
        if kinds[c] == mine {
            let (kind, own) = match (action, bwd[c]) {
                (Action::Forward, 0) => (Kind::Forward, 0),
                (Action::Forward, _) => (Kind::ForwardGrads, 0),
                (Action::Backward, 0) => (Kind::BackwardFirst, 1),
                (Action::Backward, _) => (Kind::Backward, 1),
            };
            let held = |v: &[u32]| last.map_or(0, |l| v[l as usize]);
            out.push((
                kind,
                Beside {
                    waiting: in_flight(mine) - own,
                    kept: held(&fwd),
                    done: held(&bwd),
                    others: in_flight(!mine),
                    grads_alike: with_grads(mine),
                    grads_other: with_grads(!mine),
                },
            ));
        }
        match action {
            Action::Forward => fwd[c] += 1,
            Action::Backward => bwd[c] += 1,
        }
    }
    out
}

/// The decoder layers of the model's stage `i` of `n`, as `split` cuts
/// `layers` of them.
///
/// - transformers 5.23 (`PipelineStage.layer_range_for_rank`, and
///   `pp.py`'s default): `layers / n` each, the last stage the remainder.
/// - torchtitan (`distributed/pipeline_parallel.py:
///   generate_llm_fqn_per_model_part`, v0.2.2): `layers + first + last`
///   effective layers ([`EndWeights`]), `effective / n` a stage and one
///   more for the first `effective mod n`; the embedding takes `first` of
///   the first stage's, norm and output `last` of the last's; a stage past
///   the last layer gets none. Held to torchtitan's own function
///   (`raw/torchtitan_split.jsonl`, weights 0 to 3 each). Where torchtitan
///   refuses the cut, [`EndWeights::torchtitan_refusal`] says why.
pub fn split(split: PpSplit, ends: EndWeights, layers: u32, n: u32, i: u32) -> u32 {
    if n <= 1 {
        return layers;
    }
    match split {
        PpSplit::Transformers => {
            let per = layers / n;
            if i + 1 == n {
                layers - per * (n - 1)
            } else {
                per
            }
        }
        PpSplit::Torchtitan => {
            let (wi, wo) = (ends.first, ends.last);
            let eff = layers.saturating_add(wi).saturating_add(wo);
            let (per, extra) = (eff / n, eff % n);
            // Layers the stages before `i` took, then stage `i`'s.
            let start =
                |i: u32| (i * per + i.min(extra)).saturating_sub(if i > 0 { wi } else { 0 });
            let ends_here = if i == 0 { wi } else { 0 } + if i + 1 == n { wo } else { 0 };
            let own = (per + u32::from(i < extra)).saturating_sub(ends_here);
            let from = start(i).min(layers);
            (from + own).min(layers) - from
        }
    }
}

/// Each listed rank's stages, one per kind it holds: the ranks that can
/// need most, the first (the embedding), the fullest middle one and the
/// last (the head and the loss). The middle ranks' stages are alike, and
/// of those rank 1 keeps the most micro-batches in flight at every kind
/// of moment (1F1B: pp − rank; interleaved: its warm-up, which falls by 2
/// a rank; GPipe: all alike), so no other middle rank needs more; under
/// torchtitan's cut rank 1 also holds the most layers ([`split`]: the
/// extra layers go to the first stages). The codec holds every stage at
/// least one decoder layer and `micro_batches` dividing the batch.
pub fn stages(plan: Plan, layers: u32, batch: u32) -> Vec<Vec<Stage>> {
    let ranks: &[u32] = match plan.pp {
        1 => &[0],
        2 => &[0, 1],
        pp => &[0, 1, pp - 1],
    };
    ranks
        .iter()
        .map(|&rank| rank_stages(plan, layers, batch, rank))
        .collect()
}

/// Rank `rank`'s stages (`rank < pp`), one per kind: its plain stages and
/// the model's first or last stage, where it holds one.
pub fn rank_stages(plan: Plan, layers: u32, batch: u32, rank: u32) -> Vec<Stage> {
    let (pp, vpp) = (plan.pp, plan.vpp);
    let n = pp * vpp;
    let layers_of = |c: u32| split(plan.split, plan.ends, layers, n, c * pp + rank);
    let first = |c: u32| c * pp + rank == 0;
    let last = |c: u32| c * pp + rank + 1 == n;
    // A stage is of the special kind when it holds either end.
    let kinds: Vec<bool> = (0..vpp).map(|c| first(c) || last(c)).collect();
    let ops = order(plan, rank);
    let held_last = (0..vpp).find(|&c| last(c));
    let rank_layers = (0..vpp).map(layers_of).sum();
    let mut out = Vec::with_capacity(2);
    for mine in [false, true] {
        let Some(c) = (0..vpp).find(|&c| kinds[c as usize] == mine) else {
            continue;
        };
        let alike = kinds.iter().filter(|&&k| k == mine).count() as u32;
        out.push(Stage {
            rank,
            layers: layers_of(c),
            first: first(c),
            last: last(c),
            alike,
            other: vpp - alike,
            rank_layers,
            other_sizes: Default::default(),
            micro_batches: plan.micro_batches,
            micro_batch: (batch / plan.micro_batches).max(1),
            moments: moments(&ops, &kinds, mine, held_last),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// torchtitan's cut, against its own `generate_llm_fqn_per_model_part`
    /// (v0.2.2) run on 52 (stages, layers) pairs at its default weights and
    /// 360 more with the end weights from 0 to 3 each
    /// (`scripts/measure/parallel/torchtitan_split.py`): each stage's
    /// decoder layers, and a refusal exactly where torchtitan raises; and
    /// the transformers cut on the default pairs sums to the layers with
    /// the remainder on the last stage.
    #[test]
    fn the_stages_are_cut_as_torchtitan_cuts_them() {
        let rows = include_str!("../../../../scripts/measure/parallel/raw/torchtitan_split.jsonl");
        let mut n = 0;
        for line in rows.lines() {
            let r: serde_json::Value = serde_json::from_str(line).expect("row");
            let count = |k: &str| u32::try_from(r[k].as_u64().expect(k)).expect(k);
            let (stages, layers) = (count("stages"), count("layers"));
            let weight = |k: &str| r[k].as_u64().map_or(1, |w| w as u32);
            let ends = EndWeights {
                first: weight("first_less"),
                last: weight("last_less"),
            };
            let refusal = ends.torchtitan_refusal(layers, stages);
            let Some(ranges) = r["ranges"].as_array() else {
                assert!(
                    refusal
                        .as_deref()
                        .is_some_and(|m| m.starts_with("torchtitan refuses")),
                    "{r}: {refusal:?}"
                );
                continue;
            };
            let theirs: Vec<u32> = ranges
                .iter()
                .map(|x| match x.as_array() {
                    Some(p) => (p[1].as_u64().expect("end") - p[0].as_u64().expect("start")) as u32,
                    None => 0,
                })
                .collect();
            let cut = |how| -> Vec<u32> {
                (0..stages)
                    .map(|i| split(how, ends, layers, stages, i))
                    .collect()
            };
            assert_eq!(
                cut(PpSplit::Torchtitan),
                theirs,
                "{stages} stages, {layers} layers"
            );
            // A stage without a layer is refused; else the cut runs.
            assert_eq!(refusal.is_some(), theirs.contains(&0), "{r}: {refusal:?}");
            let even = cut(PpSplit::Transformers);
            if ends == EndWeights::DEFAULT && stages <= layers {
                assert_eq!(even.iter().sum::<u32>(), layers);
                assert_eq!(even[0], layers / stages);
            }
            n += 1;
        }
        assert_eq!(n, 348);
    }

    fn b(kind: Kind, waiting: u32, kept: u32, done: u32) -> (Kind, Beside) {
        (
            kind,
            Beside {
                waiting,
                kept,
                done,
                ..Beside::default()
            },
        )
    }

    fn plan(schedule: PpSchedule, pp: u32, vpp: u32, m: u32) -> Plan {
        Plan {
            pp,
            vpp,
            schedule,
            micro_batches: m,
            split: PpSplit::Transformers,
            ends: EndWeights::DEFAULT,
        }
    }

    /// (schedule, pp, rank, m, last) → the rank's moments, in the order
    /// torch 2.15's schedules run them (`schedules.py`).
    #[test]
    fn moments_follow_the_order() {
        use Kind::{Backward as B, BackwardFirst as B1, Forward as F, ForwardGrads as Fg};
        use PpSchedule::{Gpipe, OneFOneB};
        let check = |s, pp, rank, m, last: bool, want: &[(Kind, Beside)]| {
            let ops = order(plan(s, pp, 1, m), rank);
            let got = moments(&ops, &[last], last, last.then_some(0));
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

    /// Interleaved 1F1B's order, rank by rank, as torch 2.15's own
    /// functions make it (`scripts/measure/parallel/interleaved_order.py`,
    /// `raw/interleaved_order.jsonl`: pp 2 to 4, vpp 2 to 4, each op as
    /// [the model's stage, F or B, micro-batch]).
    #[test]
    fn interleaved_order_is_torchs() {
        let text = include_str!("../../../../scripts/measure/parallel/raw/interleaved_order.jsonl");
        let field = |line: &str, key: &str| -> u32 {
            let at = line.find(&format!("\"{key}\": ")).expect(key) + key.len() + 4;
            let digits: String = line[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().expect(key)
        };
        let mut rows = 0;
        for line in text.lines() {
            let (pp, vpp, m, rank) = (
                field(line, "pp"),
                field(line, "vpp"),
                field(line, "m"),
                field(line, "rank"),
            );
            let ops = line.split("\"ops\": ").nth(1).expect("ops");
            let want: Vec<(u32, bool)> = ops
                .split('[')
                .filter_map(|op| {
                    let mut parts = op.split(',').map(str::trim);
                    let stage = parts.next()?.parse::<u32>().ok()?;
                    let backward = parts.next()? == "\"B\"";
                    Some((stage, backward))
                })
                .collect();
            let got: Vec<(u32, bool)> = order(plan(PpSchedule::Interleaved, pp, vpp, m), rank)
                .into_iter()
                .map(|(a, c)| (c * pp + rank, a == Action::Backward))
                .collect();
            assert_eq!(got, want, "pp {pp} vpp {vpp} m {m} rank {rank}");
            rows += 1;
        }
        assert_eq!(rows, 14, "interleaved_order.jsonl");
    }

    /// Interleaved: a rank's stages of one kind together, the other
    /// kind's micro-batches and gradients beside them. pp 2, vpp 2, m 4,
    /// rank 0 (torch: F0 F0 F2 F2 F0 B2 F0 B2 F2 B0 F2 B0 B2 B2 B0 B0,
    /// stage 0 the embedding's).
    #[test]
    fn interleaved_kinds_see_each_other() {
        let st = rank_stages(plan(PpSchedule::Interleaved, 2, 2, 4), 32, 4, 0);
        let kinds: Vec<(u32, bool, bool, u32, u32)> = st
            .iter()
            .map(|s| (s.layers, s.first, s.last, s.alike, s.other))
            .collect();
        // The plain stage (stage 2), then the embedding's (stage 0).
        assert_eq!(kinds, [(8, false, false, 1, 1), (8, true, false, 1, 1)]);
        assert!(st.iter().all(|s| s.rank_layers == 16));
        // Stage 2's first backward: stage 2's other micro-batch waits,
        // three of stage 0's, no gradients yet.
        let first_back = st[0]
            .moments
            .iter()
            .find(|(k, _)| *k == Kind::BackwardFirst);
        let want = Beside {
            waiting: 1,
            others: 3,
            ..Beside::default()
        };
        assert_eq!(first_back.map(|x| x.1), Some(want));
        // Stage 0's first backward (the tenth op): its other three
        // micro-batches wait, one of stage 2's, whose gradients exist.
        let first_back0 = st[1]
            .moments
            .iter()
            .find(|(k, _)| *k == Kind::BackwardFirst);
        let want0 = Beside {
            waiting: 3,
            others: 1,
            grads_other: 1,
            ..Beside::default()
        };
        assert_eq!(first_back0.map(|x| x.1), Some(want0));
    }

    #[test]
    fn the_last_stage_takes_the_remainder() {
        let p = plan(PpSchedule::OneFOneB, 3, 1, 2);
        let s: Vec<Stage> = stages(p, 32, 4).into_iter().flatten().collect();
        let layers: Vec<(u32, u32)> = s.iter().map(|x| (x.rank, x.layers)).collect();
        assert_eq!(layers, [(0, 10), (1, 10), (2, 12)]);
        assert!(s[0].first && !s[0].last && s[2].last && !s[1].first);
        assert_eq!(s[1].micro_batch, 2);
        let eight = stages(Plan { pp: 8, ..p }, 32, 4);
        let ranks: Vec<u32> = eight.iter().map(|x| x[0].rank).collect();
        assert_eq!(ranks, [0, 1, 7]);
        // Interleaved over 6 stages: 5 layers each, the last 7.
        let six = stages(plan(PpSchedule::Interleaved, 2, 3, 2), 32, 4);
        let cut: Vec<Vec<(u32, u32, u32)>> = six
            .iter()
            .map(|r| {
                r.iter()
                    .map(|s| (s.layers, s.alike, s.rank_layers))
                    .collect()
            })
            .collect();
        assert_eq!(
            cut,
            [vec![(5, 2, 15), (5, 1, 15)], vec![(5, 2, 17), (7, 1, 17)]]
        );
    }
}
