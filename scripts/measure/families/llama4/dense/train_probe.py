#!/usr/bin/env python
"""The unmodified training harness (/work/shared/groundtruth/harness/measure.py), plus what the
allocation listing of one MoE layer needs.  Same arguments as measure.py.

With GT_DEBUG=1 the harness's row has `debug_allocs` = [bytes, phase, op] per storage, in
allocation order, without the free.  This wrapper adds to the row:
  * `debug_recs`: [bytes, alloc_seq, free_seq, phase, op] per storage (the tracker's own record:
    free_seq is the sequence number at which Python freed the storage, null if alive at the end);
  * `moe_marks`: the sequence numbers at the entry/return of every Llama4TextMoe.forward call
    and at the start/end of its backward (moe_marks.py).
Nothing else changes: the tracker class is the harness's, subclassed only to keep a handle.
"""
import os
import sys

HARNESS = os.environ.get("GT_HARNESS", "/work/shared/groundtruth/harness")
sys.path.insert(0, HARNESS)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import moe_marks  # noqa: E402

_CUR = [None]


class ProbeTracker(measure.StorageTracker):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        _CUR[0] = self


measure.StorageTracker = ProbeTracker
_orig_run = measure.run


def run(args):
    moe_marks.reset()
    moe_marks.install(lambda: _CUR[0])
    res = _orig_run(args)
    tr = _CUR[0]
    if tr is not None and tr.debug:
        res["debug_recs"] = [[r[0], r[1], r[2], r[3], r[6]] for r in tr.recs]
        res["moe_marks"] = list(moe_marks.MARKS)
        res["tracker_marks"] = {k: list(v) for k, v in tr.marks.items()}
    res["probe"] = "train_probe.py (moe_marks: identity views, no allocation)"
    _CUR[0] = None
    return res


measure.run = run

if __name__ == "__main__":
    sys.exit(measure.main())
