#!/usr/bin/env python3
"""Write a run's allocations and frees, in program order, as the
ground-truth harness sees them (its storage tracker: every ATen output
storage, freed when PyTorch drops it), for `cargo run --example replay`.

Usage (from the repository root, torch 2.15 + transformers 5.23 in ~/.gt-venv):
  ~/.gt-venv/bin/python scripts/measure/allocator/trace.py OUT.trace -- \
      --model llama3.2-1b --dtype bf16 --batch 2 --seq 1024 [any measure.py option]
  ~/.gt-venv/bin/python scripts/measure/allocator/trace.py --generate OUT.trace -- \
      --config llama2-7b --batch 4 --prompt 512 --new 512 [any scripts/measure/infer/generate.py option]

The first measures a training run (the harness's measure.py), the second
transformers' `generate` (scripts/measure/infer/generate.py, the same tracker).

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


def training(argv, row_file):
    """The harness's tracker after a training run."""
    sys.path.insert(0, HARNESS)
    import measure  # noqa: E402  (the harness, read from ../shared)

    trackers = []
    init = measure.StorageTracker.__init__

    def keep(self, *a, **k):
        init(self, *a, **k)
        trackers.append(self)

    measure.StorageTracker.__init__ = keep
    rc = measure.main(argv + ["--out", row_file])
    return rc, trackers[-1] if trackers else None


def generate(argv, row_file):
    """generate.py's tracker after one `generate` call."""
    sys.path.insert(0, os.path.join(ROOT, "scripts", "measure", "infer"))
    import generate as g  # noqa: E402

    trackers = []

    class Box(list):
        """Keeps every tracker the run puts in generate.py's slot (it
        empties the slot when the call returns)."""

        def __setitem__(self, i, v):
            if v is not None:
                trackers.append(v)
            super().__setitem__(i, v)

    g._ACTIVE_TRACKER = Box([None])
    rc = g.main(argv + ["--out", row_file])
    return rc, trackers[-1] if trackers else None


def main():
    args = sys.argv[1:]
    run = training
    if args and args[0] == "--generate":
        run, args = generate, args[1:]
    if len(args) < 2 or args[1] != "--":
        sys.exit(__doc__)
    out, argv = args[0], args[2:]
    row_file = out + ".row.jsonl"
    if os.path.exists(row_file):
        os.remove(row_file)
    rc, t = run(argv, row_file)
    if rc != 0 or t is None:
        sys.exit(f"the measurement failed (rc {rc})")
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
