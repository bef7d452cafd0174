#!/usr/bin/env python3
"""Show which tensors are live at the compute-buffer peak, from a -lv 5 log of a program run
against libggml-base built with -DGGML_ALLOCATOR_DEBUG (ggml-alloc.c:275-299 prints, every time
a chunk's high-water mark grows, "max_size[chunk] = X MB: tensors: name [chunk: start-end] ...").

    python3 adbg_peak.py LOG [reserve_index=-1]

Takes the last high-water record of the chosen sched_reserve pass (default: the last pass) and
prints its live tensors by offset, with the byte size of each and the end of the highest one
(= the buffer size before the final pad to the buffer alignment).
"""
import re
import sys

log = open(sys.argv[1], errors="replace").read()
which = int(sys.argv[2]) if len(sys.argv) > 2 else -1
# drop the "0.00.123.456 D " prefixes that split one record over many lines
flat = re.sub(r"\n?\d+\.\d+\.\d+\.\d+ [A-Z] ", " ", log)
passes = flat.split("sched_reserve: reserving ...")[1:]
p = passes[which]
recs = re.findall(r"max_size\[(\d+)\] = ([\d.]+) MB: tensors: (.*?)(?=max_size\[|$)", p, re.S)
# keep the records of the pp graphs (the largest); the last record of the biggest max is the peak
best = max(recs, key=lambda r: float(r[1]))
ts = re.findall(r"(\S+) \[(\d+): ([0-9a-f]+)-([0-9a-f]+)\]", best[2])
rows = sorted(((int(s, 16), int(e, 16), n) for n, c, s, e in ts))
print(f"peak record: max_size = {best[1]} MB, {len(rows)} live tensors")
for s, e, n in rows:
    print(f"{s:>12} {e:>12} {e - s:>11}  {n}")
print("highest end:", max(e for _, e, _ in rows))
