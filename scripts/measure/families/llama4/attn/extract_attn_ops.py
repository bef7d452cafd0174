#!/usr/bin/env python
"""Ordered allocations and frees of the ATTENTION of one decoder layer, from attn_probe.py rows
(adapted from ../dense/extract_moe_ops.py).

  extract_attn_ops.py debug.jsonl [layer ...]     # default: layers 1 (RoPE, chunked) and 3 (NoPE)

Per row and layer (iteration 1):
  * forward: every event between Llama4TextAttention/LlamaAttention.forward's entry and return,
    with the fate of each allocation (freed in the block / freed later in the forward / SAVED =
    alive at the end of the forward, i.e. freed in backward);
  * what the attention block's allocations keep alive through the feed-forward block (freed
    between its entry and the decoder layer's return: the o_proj output held as a local);
  * the layer's head (input norm) and tail (residual add, post-attention norm) allocations;
  * backward: every event between the attention output's gradient arriving and its input's
    gradient being complete, with the live bytes relative to that start.
Then the iteration's fwd1 and bwd1 peak moments (replayed) and what is alive there, by region.
"""
import json
import sys

OPS_W = 72


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def short_op(op):
    if not op:
        return "?"
    name, _, shapes = op.partition(":")
    for a, b in (("aten.", ""), (".default", ""), (".Tensor", ""), (".Scalar", ""), (".self", "")):
        name = name.replace(a, b)
    return f"{name:<24s} {shapes}"


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
    if f <= fwd_end:
        return f"freed later in fwd (seq {f})"
    return f"SAVED (freed in bwd, seq {f})"


def listing(recs, s0, s1, fwd_end=None, title="", quiet=False):
    if not quiet:
        print(f"--- {title}: seq ({s0}, {s1}]")
        print(f"{'seq':>6} {'':1} {'bytes':>10} {'rel':>11}  {'op (output shapes, dtype)':<{OPS_W}s} {'ph':<5} fate")
    cur = 0
    peak = (0, s0)
    for seq, k, i in events_between(recs, s0, s1):
        r = recs[i]
        cur += r[0] if k == "+" else -r[0]
        if cur > peak[0]:
            peak = (cur, seq)
        if fwd_end is not None and k == "+":
            ft = fate(r, s1, fwd_end)
        elif k == "+":
            ft = "" if (r[2] is not None and r[2] <= s1) else f"alive after (free seq {r[2]})"
        else:
            ft = f"(alloc seq {r[1]})"
        if not quiet:
            print(f"{seq:>6} {k} {r[0]:>10,} {cur:>11,}  {short_op(r[4]):<{OPS_W}s} {r[3]:<5} {ft}")
    if not quiet:
        print(f"    transient peak above entry: {peak[0]:,} B (at seq {peak[1]}); net at end: {cur:,} B")
    return peak, cur


def marks(row):
    m = {}
    for x in row["attn_marks"]:
        m[(x["part"], x["call"], x["kind"])] = x
    return m


def live_at(recs, seq):
    return [r for r in recs if r[1] <= seq and (r[2] is None or r[2] > seq)]


def replay_peak(recs, s0, s1):
    """(peak bytes, seq) of the live total over (s0, s1], and the live total at s0"""
    base = sum(r[0] for r in live_at(recs, s0))
    cur, pk = base, (base, s0)
    for seq, k, i in events_between(recs, s0, s1):
        cur += recs[i][0] if k == "+" else -recs[i][0]
        if cur > pk[0]:
            pk = (cur, seq)
    return pk, base


def region_of(seq, M, nl):
    """which forward region a forward allocation falls in"""
    for l in range(nl):
        a = M.get(("attn", l, "fwd_in")); b = M.get(("attn", l, "fwd_out"))
        li = M.get(("layer", l, "fwd_in")); lo = M.get(("layer", l, "fwd_out"))
        fi = M.get(("ff", l, "fwd_in")); fo = M.get(("ff", l, "fwd_out"))
        if a and a["seq"] < seq <= b["seq"]:
            return f"L{l} attn"
        if fi and fi["seq"] < seq <= fo["seq"]:
            return f"L{l} ff"
        if li and li["seq"] < seq <= lo["seq"]:
            return f"L{l} norms/residual"
    return None


def main():
    path = sys.argv[1]
    layers = [int(x) for x in sys.argv[2:]] or [1, 3]
    for row in load(path):
        if row.get("status", "ok") != "ok":
            continue
        recs = [tuple(r) for r in row["debug_recs"]]
        M = marks(row)
        tm = row["tracker_marks"]
        fwd0, fwd_end, bwd_end = tm["before_train"][1], tm["after_fwd1"][1], tm["after_bwd1"][1]
        B, S = row["batch"], row["seq"]
        T = B * S
        nl = row["arch"]["layers"]
        print("=" * 140)
        print(f"{row['model']} {row['mode']} {row['dtype']} B{B} S{S} gc{int(row['grad_ckpt'])}: T = {T}; "
              f"peak_fwd {row['measured']['iter1']['peak_fwd']:,} peak_bwd {row['measured']['iter1']['peak_bwd']:,}")
        # before layer 0: embeddings, masks, rotary table
        listing(recs, fwd0, M[("layer", 0, "fwd_in")]["seq"], fwd_end, title="fwd1 before layer 0 (embedding, positions, rotary table)")
        for l in layers:
            li, ai, ao = M[("layer", l, "fwd_in")], M[("attn", l, "fwd_in")], M[("attn", l, "fwd_out")]
            fi, fo, lo = M[("ff", l, "fwd_in")], M[("ff", l, "fwd_out")], M[("layer", l, "fwd_out")]
            print(f"## layer {l}")
            listing(recs, li["seq"], ai["seq"], fwd_end, title=f"L{l} fwd: input norm")
            listing(recs, ai["seq"], ao["seq"], fwd_end, title=f"L{l} fwd: ATTENTION (live at entry {ai['cur']:,})")
            saved = [r for r in recs if ai["seq"] < r[1] <= ao["seq"] and (r[2] is None or r[2] > fwd_end)]
            tot = sum(r[0] for r in saved)
            print(f"    L{l} attention: saved for backward {tot:,} B = {tot / T:,.2f} B/token")
            for r in saved:
                print(f"        {r[0]:>10,}  {short_op(r[4])}  (freed bwd seq {r[2]})")
            held = [r for r in recs if ai["seq"] < r[1] <= ao["seq"] and r[2] is not None
                    and fi["seq"] < r[2] <= lo["seq"]]
            print(f"    L{l} attention allocations alive through the feed-forward block (freed between its entry and the layer's return): "
                  f"{sum(r[0] for r in held):,} B")
            for r in held:
                print(f"        {r[0]:>10,}  {short_op(r[4])}  (freed seq {r[2]}; ff {fi['seq']}..{fo['seq']}, layer return {lo['seq']})")
            listing(recs, ao["seq"], fi["seq"], fwd_end, title=f"L{l} fwd: residual add + post-attention norm")
            bs, be = M.get(("attn", l, "bwd_start")), M.get(("attn", l, "bwd_end"))
            if bs and be:
                print(f"    (backward: live at start {bs['cur']:,})")
                listing(recs, bs["seq"], be["seq"], None, title=f"L{l} bwd: ATTENTION")
            print()
        # iteration peaks
        print("## iteration-1 peaks (replayed)")
        for name, s0, s1 in (("fwd1", fwd0, fwd_end), ("bwd1", fwd_end, bwd_end)):
            (pk, sq), base = replay_peak(recs, s0, s1)
            ok = pk == row["measured"]["iter1"]["peak_" + name[:3]]
            where = [k for k, v in M.items() if v["phase"] == name]
            # closest marker before the peak
            prev = max((v for v in row["attn_marks"] if v["phase"] == name and v["seq"] <= sq), key=lambda v: v["seq"], default=None)
            print(f"  {name}: replay {pk:,} at seq {sq} (harness {'equal' if ok else 'DIFFERS'}); last marker before: "
                  f"{prev and (prev['part'], prev['call'], prev['kind'], prev['seq'])}")
            by = {}
            for r in live_at(recs, sq):
                if r[3].startswith("fwd1") or r[3].startswith("bwd1"):
                    reg = region_of(r[1], M, nl) if r[3] == "fwd1" else "bwd1 temporaries"
                    reg = reg or f"{r[3]} other"
                else:
                    reg = r[3] + " (params/state/inputs)"
                by[reg] = by.get(reg, 0) + r[0]
            for k, v in sorted(by.items()):
                print(f"      {k:<36s} {v:>12,}")
            if name == "bwd1":
                tmp = [r for r in live_at(recs, sq) if r[3] == "bwd1"]
                print("      bwd1 temporaries alive at the peak:")
                for r in tmp:
                    print(f"        {r[0]:>10,}  {short_op(r[4])} (alloc seq {r[1]})")
            print(f"      fwd1 allocations alive at this moment, not in a layer's region:")
            for r in live_at(recs, sq):
                if r[3] == "fwd1" and region_of(r[1], M, nl) is None:
                    print(f"        {r[0]:>10,}  {short_op(r[4])} (alloc seq {r[1]})")
        print()


if __name__ == "__main__":
    main()
