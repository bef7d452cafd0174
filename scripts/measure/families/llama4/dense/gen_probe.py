#!/usr/bin/env python
"""The unmodified generate meter (scripts/measure/infer/generate.py), plus the sequence numbers of
every Llama4TextMoe.forward call (moe_marks.py) in the row as `moe_marks`.  Same arguments as
generate.py.  With GT_DEBUG=1 generate.py's row already has `debug_allocs` =
[bytes, alloc_seq, free_seq, phase, tag, label, op] per storage; the marks say which of them
belong to one MoE block.  Under no_grad the markers' autograd Functions are not applied; the
forward marks allocate nothing."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INFER = os.path.abspath(os.path.join(HERE, "..", "..", "..", "infer"))
sys.path.insert(0, INFER)
sys.path.insert(0, HERE)
import generate as G  # noqa: E402
import moe_marks  # noqa: E402

_orig_run = G.run


def run(args):
    moe_marks.reset()
    moe_marks.install(lambda: G._ACTIVE_TRACKER[0])
    row = _orig_run(args)
    if os.environ.get("GT_DEBUG"):
        row["moe_marks"] = list(moe_marks.MARKS)
    row["probe"] = "gen_probe.py (moe_marks)"
    return row


G.run = run

if __name__ == "__main__":
    sys.exit(G.main())
