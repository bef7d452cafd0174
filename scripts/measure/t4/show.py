#!/usr/bin/env python3
"""Print rows of a jsonl written by measure48.py / fsdp48.py: phase peaks (GiB, bytes) and the largest groups."""
import json, sys
G = 2 ** 30
path = sys.argv[1]
sel = sys.argv[2] if len(sys.argv) > 2 else ""
ngroups = int(sys.argv[3]) if len(sys.argv) > 3 else 10
for line in open(path):
    r = json.loads(line)
    if sel and sel not in r.get("tag", ""):
        continue
    if r.get("status") != "ok":
        print("ERR", r.get("tag"), r.get("error")); continue
    m = r["measured"]
    print("==", r.get("tag"), r.get("transformers") or r["versions"]["transformers"], "B", r["batch"], "S", r["seq"],
          "peak", m["peak_overall"], m["peak_overall_phase"])
    for it in ("iter1", "iter2"):
        d = m[it]
        print("  ", it, " ".join(f"{k}={d[k]}" for k in ("peak_fwd", "end_fwd", "peak_bwd", "end_bwd", "peak_step") if k in d))
    for k, g in m["iter2"].get("groups_at_peak", {}).items():
        print("   ", k)
        for x in g[:ngroups]:
            print("      %-16s %4d %12d %s" % (x["cat"], x["n"], x["bytes"], x["op"][:120]))
