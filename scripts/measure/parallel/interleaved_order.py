#!/usr/bin/env python
"""Each rank's order of actions under torch 2.15's ScheduleInterleaved1F1B, from torch's own
functions (`_get_warmup_ops`, `_get_1f1b_rank_ops`, as `_calculate_single_rank_operations` calls
them), for the next step of issue 32: interleaved pipelines are measured (raw/pp523.jsonl) but not
modelled. Prints one JSON line per (pp, vpp, m, rank): the actions in order, None (idle) dropped,
each as [stage, "F"|"B", micro-batch].

Usage: ~/.gt-venv/bin/python interleaved_order.py > raw/interleaved_order.jsonl
"""
import json
from torch.distributed.pipelining import schedules as S


def rank_ops(pp, vpp, m, rank):
    rounds = max(1, m // pp)
    per_round = m // rounds
    warmup = S._get_warmup_ops(rank, vpp, per_round, pp, m, multiply_factor=2)
    fwd_bwd = vpp * m - warmup
    cooldown = vpp * m - fwd_bwd

    def fwd_stage(step):
        return ((step // per_round) % vpp) * pp + rank

    def bwd_stage(step):
        return (vpp - 1 - ((step - warmup) // per_round) % vpp) * pp + rank

    ops = S._get_1f1b_rank_ops(vpp, pp, warmup, fwd_bwd, cooldown, rank, fwd_stage, bwd_stage)
    out = []
    for a in ops:
        if a is None:
            continue
        kind = "F" if a.computation_type == S._ComputationType.FORWARD else "B"
        out.append([a.stage_index, kind, a.microbatch_index])
    return out


for pp, vpp, m in [(2, 2, 4), (2, 2, 8), (4, 2, 8), (4, 4, 16), (2, 3, 6)]:
    for rank in range(pp):
        print(json.dumps(dict(pp=pp, vpp=vpp, m=m, rank=rank, torch="2.15", ops=rank_ops(pp, vpp, m, rank))))
