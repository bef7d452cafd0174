#!/usr/bin/env python
"""Which parameters DeepSpeed ZeRO-3 holds gathered at every step of its coordinator, and why.

Runs `zero3.py` (same setup, same arguments) with DeepSpeed 0.19.8's `PartitionedParameterCoordinator`
wrapped, and writes one JSON line per coordinator event of the last iteration (`--iters`, default 3: the
first records DeepSpeed's module trace, the next ones run on the complete trace):

  {"it", "step", "event": "fetch" | "release", "fwd", "module", "gathered": [ds_id...], "gathered_numel",
   "n_available", "release": {"asked": [...], "kept_for_prefetch": [...], "kept_for_reuse": [...],
   "released": [...]}}

`gathered` is every non-persistent parameter whose `ds_status` is AVAILABLE or INFLIGHT (its all-gather
buffer exists) after the event;
`n_available` is the coordinator's own count (what `stage3_max_live_parameters` caps). A release's `asked`
are the module's non-persistent parameters; `kept_for_prefetch` those the prefetcher has already marked
for a later step (`__most_recent_step_id_param_fetched_for[p] > step_id`); `kept_for_reuse` those met
again within `stage3_max_reuse_distance` elements of the module trace (`__params_to_release`,
partitioned_param_coordinator.py l.634-664). The header line names every parameter (ds_id, name, numel,
persistent). The memory rows themselves come from `zero3.py`; this file only explains them.

usage: trace_gathered.py TRACE.jsonl [zero3.py arguments]   (gt venv with deepspeed, its bin on PATH)
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch._dynamo  # noqa: F401  (as zero3.py: before zero.Init)
from deepspeed.runtime.zero import partitioned_param_coordinator as ppc
from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus

C = ppc.PartitionedParameterCoordinator
P = "_PartitionedParameterCoordinator__"
STATE = {"it": 0, "events": [], "names": {}, "params": {}}


def iter_direct(module):
    return list(module.parameters(recurse=False))


def gathered():
    ps = STATE["params"]
    held = (ZeroParamStatus.AVAILABLE, ZeroParamStatus.INFLIGHT)
    ids = sorted(i for i, p in ps.items() if p.ds_status in held and not p.ds_persist)
    return ids, sum(ps[i].ds_numel for i in ids)


def record(self, module, event, fwd, extra=None):
    if not STATE["params"]:
        return
    ids, numel = gathered()
    row = dict(it=STATE["it"], step=getattr(self, P + "step_id"), event=event, fwd=fwd,
               module=STATE["names"].get(id(module), type(module).__name__), gathered=ids,
               gathered_numel=numel, n_available=getattr(self, P + "n_available_params"))
    if extra:
        row["release"] = extra
    STATE["events"].append(row)


orig_fetch, orig_release, orig_reset = C.fetch_sub_module, C.release_sub_module, C.reset_step


def fetch(self, module, forward):
    orig_fetch(self, module, forward)
    record(self, module, "fetch", forward)


def release(self, module, forward=False):
    extra = None
    if self.is_complete_trace():
        step = getattr(self, P + "step_id")
        marks = getattr(self, P + "most_recent_step_id_param_fetched_for")
        asked = sorted(p.ds_id for p in iter_direct(module) if not p.ds_persist)
        pref = sorted(p.ds_id for p in iter_direct(module) if not p.ds_persist and marks[p] > step)
        out = getattr(self, P + "params_to_release")(module, step)
        reuse = sorted(set(asked) - set(pref) - set(out))
        extra = dict(asked=asked, kept_for_prefetch=pref, kept_for_reuse=reuse, released=sorted(out))
    orig_release(self, module, forward)
    record(self, module, "release", forward, extra)


def reset(self):
    orig_reset(self)
    STATE["it"] += 1


C.fetch_sub_module, C.release_sub_module, C.reset_step = fetch, release, reset

import deepspeed  # noqa: E402

orig_init = deepspeed.initialize


def initialize(*a, model=None, **k):
    for name, m in model.named_modules():
        STATE["names"][id(m)] = name or "<root>"
    for name, p in model.named_parameters():
        STATE["params"][p.ds_id] = p
        STATE.setdefault("header", []).append(dict(ds_id=p.ds_id, name=name, numel=p.ds_numel,
                                                   persistent=bool(p.ds_persist)))
    return orig_init(*a, model=model, **k)


deepspeed.initialize = initialize
import zero3  # noqa: E402

if __name__ == "__main__":
    out = sys.argv[1]
    argv = sys.argv[2:]
    if "--iters" not in argv:
        argv += ["--iters", "3"]
    sys.argv = ["zero3.py"] + argv
    zero3.main()
    # params are persisted only after initialize: re-read the flag
    for h in STATE["header"]:
        h["persistent"] = bool(STATE["params"][h["ds_id"]].ds_persist)
    with open(out, "w") as f:
        f.write(json.dumps(dict(header=STATE["header"], args=argv, deepspeed=deepspeed.__version__)) + "\n")
        last = max((e["it"] for e in STATE["events"]), default=0)
        for e in (e for e in STATE["events"] if e["it"] == last):
            f.write(json.dumps(e) + "\n")
