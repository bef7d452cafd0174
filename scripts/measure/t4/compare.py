#!/usr/bin/env python3
"""Table of phase peaks per tag across jsonl files (latest row per tag and file wins).
usage: compare.py A.jsonl B.jsonl ... [--sel SUBSTR]"""
import json, sys
files = [a for a in sys.argv[1:] if not a.startswith("--")]
sel = sys.argv[sys.argv.index("--sel") + 1] if "--sel" in sys.argv else ""
files = [f for f in files if f != sel]
rows = {}
for f in files:
    for line in open(f):
        r = json.loads(line)
        if r.get("status") != "ok" or sel not in r.get("tag", ""):
            continue
        v = r.get("transformers") or r["versions"]["transformers"]
        rows[(r["tag"], v)] = r
tags = sorted({t for t, _ in rows})
vers = sorted({v for _, v in rows})
G = 1e9
print("%-78s %-7s %9s %9s %9s %9s %9s  %s" % ("tag", "tf", "peak", "fwd2", "endfwd2", "bwd2", "step2", "phase"))
for t in tags:
    for v in vers:
        r = rows.get((t, v))
        if not r:
            continue
        m = r["measured"]; d = m["iter2"]
        print("%-78s %-7s %9.4f %9.4f %9.4f %9.4f %9.4f  %s" % (t, v, m["peak_overall"] / G, d["peak_fwd"] / G, d["end_fwd"] / G,
              d["peak_bwd"] / G, d["peak_step"] / G, m["peak_overall_phase"]))
