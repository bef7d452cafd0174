#!/usr/bin/env python
"""Ordered allocations and frees of ONE Llama4TextMoe block, from a GT_DEBUG row.

  extract_moe_ops.py train train_debug.jsonl   # rows of train_probe.py: forward and backward of
                                               # layer 1 in iteration 1 (call 1)
  extract_moe_ops.py gen gen_debug.jsonl       # rows of gen_probe.py: the prefill forward (fwd0)
                                               # of the last layer (where generate's prefill peaks)

For every row in the file (one per config), prints each event between the block's markers in
order: seq, +alloc / -free, bytes, op with its output shapes and dtypes, the phase it was
allocated in, the live bytes relative to the block's entry, and for forward allocations what
becomes of them (freed inside the block, freed later in the forward, or kept to backward =
saved for backward).  Then a summary: the block's transient peak above its entry, what it
leaves alive at its return, what is still alive at the end of the forward (saved), per token.
"""
import json
import sys


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def recs_of(row, kind):
    """-> list of (bytes, alloc_seq, free_seq, phase, op)"""
    if kind == "train":
        return [tuple(r) for r in row["debug_recs"]]
    return [(r[0], r[1], r[2], r[3], r[6]) for r in row["debug_allocs"]]


def short_op(op):
    if not op:
        return "?"
    name, _, shapes = op.partition(":")
    name = name.replace("aten.", "").replace(".default", "").replace(".Tensor", "").replace(".Scalar", "")
    return f"{name:<28s} {shapes}"


def events_between(recs, s0, s1):
    ev = []
    for i, r in enumerate(recs):
        if s0 < r[1] <= s1:
            ev.append((r[1], "+", i))
        if r[2] is not None and s0 < r[2] <= s1:
            ev.append((r[2], "-", i))
    ev.sort()
    return ev


def fate(r, block_end, fwd_end):
    f = r[2]
    if f is None:
        return "alive at end"
    if f <= block_end:
        return "freed in block"
    if fwd_end is not None and f <= fwd_end:
        return "freed later in fwd"
    return "SAVED (freed in bwd)" if fwd_end is not None else "freed after block"


def listing(recs, s0, s1, cur0, fwd_end=None, title=""):
    print(f"--- {title}: seq ({s0}, {s1}], live at entry {cur0:,} B")
    print(f"{'seq':>6} {'':1} {'bytes':>10} {'rel':>11}  {'op (output shapes, dtype)':<70s} {'alloc phase':<8} fate")
    cur = 0
    peak = (0, None)
    for seq, k, i in events_between(recs, s0, s1):
        r = recs[i]
        cur += r[0] if k == "+" else -r[0]
        if cur > peak[0]:
            peak = (cur, seq)
        ft = fate(r, s1, fwd_end) if k == "+" else f"(alloc seq {r[1]})"
        print(f"{seq:>6} {k} {r[0]:>10,} {cur:>11,}  {short_op(r[4]):<70s} {r[3]:<8} {ft}")
    print(f"    transient peak above entry: {peak[0]:,} B (at seq {peak[1]}); net at return: {cur:,} B")
    return peak[0], cur


def arch_from_file(model):
    """the training row's `arch` lacks the MoE numbers: read them from the config file the row
    is named after (this folder, then its parent)"""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (here, os.path.dirname(here)):
        p = os.path.join(d, model + ".json")
        if os.path.exists(p):
            c = json.load(open(p))
            return dict(experts=c["num_local_experts"], top_k=c["num_experts_per_tok"],
                        intermediate=c["intermediate_size"], hidden=c["hidden_size"])
    return {}


def marks_of(row, kind, call):
    m = {x["kind"]: x for x in row["moe_marks"] if x["call"] == call}
    return m


def main():
    kind, path = sys.argv[1], sys.argv[2]
    for row in load(path):
        if row.get("status") != "ok":
            continue
        recs = recs_of(row, kind)
        cfg = row.get("config") or {}
        name = row.get("model") or row.get("name")
        if kind == "train":
            a = arch_from_file(row["model"])
            B, S = row["batch"], row["seq"]
            hdr = f"{name} {row['mode']} {row['dtype']} B{B} S{S} gc{int(row['grad_ckpt'])}"
            fwd_end = row["tracker_marks"]["after_fwd1"][1]
            call = 1
        else:
            B, S = row["batch"], row["prompt"]
            hdr = f"{name} {row['mode']} {row['dtype']} {row['attn']} B{B} P{S} N{row['new']}"
            a = row["arch"]
            fwd_end = None
            calls = [x["call"] for x in row["moe_marks"] if x["kind"] == "fwd_in" and x["phase"] == "fwd0"]
            call = max(calls)
        T = B * S
        m = marks_of(row, kind, call)
        E, k, I, h = a.get("experts"), a.get("top_k"), a.get("intermediate"), a.get("hidden")
        print("=" * 120)
        print(f"{hdr}: Llama4TextMoe call {call} (layer {m['fwd_in']['layer']}), T = {T} tokens, "
              f"E {E}, top-k {k}, h {h}, I {I}")
        pk, net = listing(recs, m["fwd_in"]["seq"], m["fwd_out"]["seq"], m["fwd_in"]["cur"], fwd_end,
                          title=f"forward ({m['fwd_in']['phase']})")
        # what the block's forward allocations leave alive at the end of the forward
        if fwd_end is not None:
            saved = [r for r in recs if m["fwd_in"]["seq"] < r[1] <= m["fwd_out"]["seq"]
                     and (r[2] is None or r[2] > fwd_end)]
            tot = sum(r[0] for r in saved)
            print(f"    saved for backward (allocated in the block, alive at the end of the forward): "
                  f"{tot:,} B = {tot / T:,.1f} B/token")
            for r in saved:
                print(f"        {r[0]:>10,}  {short_op(r[4])}")
        if "bwd_start" in m:
            listing(recs, m["bwd_start"]["seq"], m["bwd_end"]["seq"], m["bwd_start"]["cur"], None,
                    title=f"backward ({m['bwd_start']['phase']})")
        print()


if __name__ == "__main__":
    main()
