#!/usr/bin/env python
"""Which op makes the prefill (fwd0) and the overall peak of a generate run, and what is alive there:
runs the generate harness (through gen_mistral4's registration) with GT_DEBUG=1 into a scratch rows
file and replays its debug_allocs (bytes, alloc seq, free seq, phase, tag, label, op:shape).
Usage: python peak_where.py <generate.py args...>   (no --out: a temporary file is used)"""
import json
import os
import sys
import tempfile

os.environ["GT_DEBUG"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "infer")))
from transformers import AutoModelForCausalLM, Mistral4Config, Mistral4ForCausalLM  # noqa: E402

AutoModelForCausalLM.register(Mistral4Config, Mistral4ForCausalLM, exist_ok=True)
import generate  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "row.jsonl")
        rc = generate.main(sys.argv[1:] + ["--out", out])
        row = json.loads(open(out).readline())
    if rc:
        return rc
    recs = row["debug_allocs"]
    ev = []
    for i, r in enumerate(recs):
        ev.append((r[1], r[0], i))
        if r[2] is not None:
            ev.append((r[2], -r[0], i))
    ev.sort()
    cur = 0
    best = {}
    for seq, d, i in ev:
        cur += d
        ph = recs[i][3] if d > 0 else None
        if d > 0:
            if ph not in best or cur > best[ph][0]:
                best[ph] = (cur, seq, i)
    ov = max((v for k, v in best.items() if k.startswith(("fwd", "post", "prep"))), key=lambda v: v[0])
    for title, (val, seq, i) in (("prefill forward (fwd0)", best["fwd0"]), ("overall", ov)):
        print(f"{title}: peak {val:,} B at seq {seq}, phase {recs[i][3]}, made by {recs[i][6]}")
        live = [r for r in recs if r[1] <= seq and (r[2] is None or r[2] > seq) and r[5] is None
                and r[3].startswith("fwd")]
        live.sort(key=lambda r: r[1])
        tot = sum(r[0] for r in live)
        print(f"  forward activations alive ({len(live)} storages, {tot:,} B), last 30 allocated:")
        for r in live[-30:]:
            print(f"    seq {r[1]:>6} {r[0]:>12,} {r[6]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
