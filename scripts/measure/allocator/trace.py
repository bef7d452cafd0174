#!/usr/bin/env python3
"""Write a training run's allocations and frees, in program order, as the
ground-truth harness sees them (its storage tracker: every ATen output
storage, freed when PyTorch drops it), for `cargo run --example replay`.

Usage (from the repository root, torch 2.15 + transformers 5.23 in ~/.gt-venv):
  ~/.gt-venv/bin/python scripts/measure/allocator/trace.py OUT.trace -- \
      --model llama3.2-1b --dtype bf16 --batch 2 --seq 1024 [any measure.py option]

OUT.trace: a JSON header line (the harness's arguments and its measured row
without debug fields), then one line per event: `a ID BYTES` (storage ID
allocated, BYTES = nbytes as requested) or `f ID` (freed). Storages never
freed have no `f` line.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HARNESS = os.environ.get("GT_HARNESS", os.path.join(ROOT, "..", "shared", "groundtruth", "harness"))


def main():
    if len(sys.argv) < 3 or sys.argv[2] != "--":
        sys.exit(__doc__)
    out, argv = sys.argv[1], sys.argv[3:]
    sys.path.insert(0, HARNESS)
    import measure  # noqa: E402  (the harness, read from ../shared)

    trackers = []
    init = measure.StorageTracker.__init__

    def keep(self, *a, **k):
        init(self, *a, **k)
        trackers.append(self)

    measure.StorageTracker.__init__ = keep
    row_file = out + ".row.jsonl"
    if os.path.exists(row_file):
        os.remove(row_file)
    rc = measure.main(argv + ["--out", row_file])
    if rc != 0 or not trackers:
        sys.exit(f"the harness failed (rc {rc})")
    t = trackers[-1]
    events = []
    for sid, r in enumerate(t.recs):
        events.append((r[1], f"a {sid} {r[0]}"))
        if r[2] is not None:
            events.append((r[2], f"f {sid}"))
    events.sort()
    with open(row_file) as f:
        row = json.loads(f.readlines()[-1])
    os.remove(row_file)
    row.pop("debug_allocs", None)
    with open(out, "w") as f:
        f.write(json.dumps({"argv": argv, "row": row}) + "\n")
        for _, line in events:
            f.write(line + "\n")
    print(f"{out}: {len(t.recs)} storages, {len(events)} events", file=sys.stderr)


if __name__ == "__main__":
    main()
