#!/usr/bin/env python3
"""Markdown table of the ground-truth test's long_rows section (the output of
`cargo test ... --test ground_truth long_sequences -- --nocapture`), read on stdin.
--all: every row; default: rows over 1% overall or 3% in a phase, plus a per-model summary."""
import re, sys
rows = []
sec = False
for line in sys.stdin:
    if line.startswith("long_rows"):
        sec = True
        continue
    if not sec:
        continue
    if line.startswith("long_rows:") or line.startswith("thread"):
        break
    m = re.match(r"^(.*?)\s+(\d+)\s+(\d+)\s+([-+]\d+\.\d+)\s+" + r"\s+".join([r"([-+]\d+\.\d+)"] * 6) + r"\s*$", line)
    if m:
        g = m.groups()
        rows.append(dict(label=g[0].strip(), meas=int(g[1]), est=int(g[2]), err=float(g[3]),
                         ph=[float(x) for x in g[4:10]]))
bad = [r for r in rows if abs(r["err"]) > 1 or any(abs(p) > 3 for p in r["ph"])]
show = rows if "--all" in sys.argv else bad
print(f"{len(rows)} rows, {len(bad)} over budget (1% overall or 3% in a phase)\n")
print("| configuration | measured peak (B) | vramfit today (B) | err % | fwd1 | bwd1 | step1 | fwd2 | bwd2 | step2 |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in show:
    print(f"| {r['label']} | {r['meas']} | {r['est']} | {r['err']:+.2f} | " + " | ".join(f"{p:+.2f}" for p in r["ph"]) + " |")
if "--summary" in sys.argv:
    from collections import defaultdict
    s = defaultdict(lambda: [0, 0, 0.0])
    for r in rows:
        k = r["label"].split()[0]
        s[k][0] += 1
        s[k][1] += r in bad
        s[k][2] = max(s[k][2], abs(r["err"]))
    print("\n| model | rows | over budget | max |overall err| % |\n|---|---:|---:|---:|")
    for k, v in s.items():
        print(f"| {k} | {v[0]} | {v[1]} | {v[2]:.2f} |")
