#!/usr/bin/env python3
"""Allocation timeline of a GT_DEBUG row: every storage >= MIN bytes allocated in [phase], with its
alloc/free sequence numbers, bytes and op, and live bytes after each event.
usage: timeline.py rows.jsonl TAGSUBSTR PHASE [MIN_MIB] [ROWINDEX]"""
import json, sys
path, sel, phase = sys.argv[1], sys.argv[2], sys.argv[3]
mn = float(sys.argv[4]) * 2**20 if len(sys.argv) > 4 else 2**20
rows = [json.loads(l) for l in open(path) if sel in json.loads(l).get("tag", "")]
for r in rows:
    print("=====", r["transformers"], r["tag"])
    recs = r["debug_allocs"]   # [bytes, alloc_seq, free_seq, phase, op]
    ev = []
    for i, (nb, a, f, ph, op) in enumerate(recs):
        ev.append((a, nb, i, ph, op, "+"))
        if f is not None:
            ev.append((f, -nb, i, recs[i][3], op, "-"))
    ev.sort()
    cur = 0
    for seq, nb, i, ph, op, kind in ev:
        cur += nb
        rph = recs[i][3]
        # show events of storages allocated in the phase, or frees happening while in it
        if abs(nb) >= mn and (rph == phase or (kind == "-" and any(recs[j][3] == phase for j in [i]))):
            print(f"{seq:7d} {kind}{abs(nb)/2**20:10.1f}MiB live={cur/2**30:8.3f}GiB  #{i} [{rph}] {str(op)[:110]}")
