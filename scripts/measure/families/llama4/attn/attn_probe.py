#!/usr/bin/env python
"""The unmodified training harness (/work/shared/groundtruth/harness/measure.py) plus markers
around every decoder layer, attention and feed-forward block (attn_marks.py).  Same arguments as
measure.py.  Adapted from ../dense/train_probe.py.

With GT_DEBUG=1 adds to the row:
  * `debug_recs`: [bytes, alloc_seq, free_seq, phase, op] per storage (free_seq null = alive);
  * `attn_marks`: attn_marks.MARKS;  `tracker_marks`: the harness's own marks (after_fwd1, ...).
"""
import os
import sys

HARNESS = os.environ.get("GT_HARNESS", "/work/shared/groundtruth/harness")
sys.path.insert(0, HARNESS)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import attn_marks  # noqa: E402

_CUR = [None]


class ProbeTracker(measure.StorageTracker):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        _CUR[0] = self


measure.StorageTracker = ProbeTracker
_orig_run = measure.run


def run(args):
    attn_marks.reset()
    if os.environ.get("ATTN_MARKS", "1") == "1":
        attn_marks.install(lambda: _CUR[0])
    res = _orig_run(args)
    tr = _CUR[0]
    if tr is not None and tr.debug:
        res["debug_recs"] = [[r[0], r[1], r[2], r[3], r[6]] for r in tr.recs]
        res["attn_marks"] = list(attn_marks.MARKS)
        res["tracker_marks"] = {k: list(v) for k, v in tr.marks.items()}
    res["probe"] = "attn_probe.py (attn_marks: identity views, no allocation)"
    _CUR[0] = None
    return res


measure.run = run

if __name__ == "__main__":
    sys.exit(measure.main())
