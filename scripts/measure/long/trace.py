#!/usr/bin/env python3
"""Allocation trace of one harness run, for finding which tensors make a peak.

Runs the shared harness (`measure.py`, imported unchanged) on one configuration with
GT_DEBUG=1 and keeps what its storage tracker knows but does not print: for every storage
its bytes, op (with output shapes and dtypes), phase, label, and the tracker sequence numbers
at which it was allocated and freed; each phase's peak sequence number; and, from global
module hooks, when every decoder layer's forward starts and ends (so a checkpointed layer's
recompute shows as a forward inside a backward phase). Nothing is added to the tracker's
byte count: hooks only read `tracker.seq`.

    GT_DEBUG=1 OMP_NUM_THREADS=1 python scripts/measure/long/trace.py DUMP.pkl <measure.py args>
    python scripts/measure/long/trace.py --show DUMP.pkl [PHASE] [--top N]

`--show` lists the storages alive at PHASE's peak (default: the overall peak's phase),
grouped by (op, shapes, phase of allocation, label), with the layer events around the peak.
"""
import os
import pickle
import re
import sys

HARNESS = os.environ.get("HARNESS", "/work/shared/groundtruth/harness")


def run(dump, argv):
    os.environ["GT_DEBUG"] = "1"
    sys.path.insert(0, HARNESS)
    import torch
    import measure
    trackers, events, names = [], [], {}
    orig_init = measure.StorageTracker.__init__

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        trackers.append(self)
    measure.StorageTracker.__init__ = init

    import transformers
    orig_fc = transformers.AutoModelForCausalLM.from_config.__func__

    def from_config(cls, *a, **k):
        m = orig_fc(cls, *a, **k)
        for n, mod in m.named_modules():
            names[id(mod)] = n
        return m
    transformers.AutoModelForCausalLM.from_config = classmethod(from_config)
    layer_re = re.compile(r"(layers|\.h)\.\d+(\.(self_attn|attn|mlp|block_sparse_moe))?$")

    def pre(mod, args):
        n = names.get(id(mod))
        if n and layer_re.search(n) and trackers:
            t = trackers[-1]
            events.append((t.seq, t.cur, t.phase, "start", n))

    def post(mod, args, out):
        n = names.get(id(mod))
        if n and layer_re.search(n) and trackers:
            t = trackers[-1]
            events.append((t.seq, t.cur, t.phase, "end", n))
    torch.nn.modules.module.register_module_forward_pre_hook(pre)
    torch.nn.modules.module.register_module_forward_hook(post)
    results = []
    orig_run = measure.run

    def run_(args):
        r = orig_run(args)
        results.append(r)
        return r
    measure.run = run_
    sys.stdout = open(os.devnull, "w")
    try:
        measure.main(argv + ["--out", ""])
    finally:
        sys.stdout = sys.__stdout__
    t = trackers[-1]
    r = results[-1] if results else {}
    r.pop("debug_allocs", None)
    with open(dump, "wb") as f:
        pickle.dump(dict(recs=t.recs, phase_peak=t.phase_peak, phase_start=t.phase_start,
                         marks=t.marks, events=events, row=r), f)
    print("wrote", dump, len(t.recs), "storages", len(events), "layer events")


def show(dump, phase=None, top=40):
    d = pickle.load(open(dump, "rb"))
    row = d["row"]
    if phase is None:
        phase = row["measured"]["peak_overall_phase"]
    if phase.isdigit():  # a sequence number instead of a phase
        sq = int(phase)
        phase = next(r[3] for r in d["recs"] if r[1] >= sq)
        pk = max(c for s_, c in timeline(d) if s_ <= sq and s_ >= sq - 1)
    else:
        pk, sq = d["phase_peak"][phase]
    print(f"{row.get('tag')}: {phase} peak {pk} bytes at seq {sq}")
    ev = [e for e in d["events"] if e[2] == phase]
    before = [e for e in ev if e[0] <= sq][-3:]
    after = [e for e in ev if e[0] > sq][:2]
    for e in before + after:
        print("   layer event", e[3], e[4], "seq", e[0], "live", e[1], "(peak)" if e in before else "(after)")
    groups = {}
    for r in d["recs"]:
        nb, a, f, ph, tag, label, func = r
        if a <= sq and (f is None or f > sq):
            key = (func, ph, label or tag or "")
            g = groups.setdefault(key, [0, 0, []])
            g[0] += nb
            g[1] += 1
            g[2].append((a, f))
    tot = sum(g[0] for g in groups.values())
    print(f"   alive {tot} bytes in {sum(g[1] for g in groups.values())} storages")
    for key, g in sorted(groups.items(), key=lambda kv: -kv[1][0])[:top]:
        func, ph, lab = key
        fr = [f for _, f in g[2] if f is not None]
        print(f"{g[0]:>16} {g[1]:>5}x  {ph:<10} {lab:<16} {func}   freed@{min(fr) if fr else None}..{max(fr) if fr else None}")


def window(dump, lo, hi):
    """Every storage allocated or freed between sequence numbers lo and hi, in order."""
    d = pickle.load(open(dump, "rb"))
    evs = []
    for sid, r in enumerate(d["recs"]):
        nb, a, f, ph, tag, label, func = r
        if lo <= a <= hi:
            evs.append((a, "+", nb, sid, func, ph))
        if f is not None and lo <= f <= hi:
            evs.append((f, "-", nb, sid, func, ph))
    for e in d["events"]:
        if lo <= e[0] <= hi:
            evs.append((e[0], "@", e[1], -1, f"{e[3]} {e[4]}", e[2]))
    for e in sorted(evs, key=lambda x: (x[0], x[1] != "@")):
        print(f"{e[0]:>7} {e[1]} {e[2]:>14} sid{e[3]:<6} {e[5]:<6} {e[4]}")


def timeline(d):
    deltas = []
    for r in d["recs"]:
        deltas.append((r[1], r[0]))
        if r[2] is not None:
            deltas.append((r[2], -r[0]))
    deltas.sort()
    cur, tl = 0, []
    for s, dl in deltas:
        cur += dl
        tl.append((s, cur))
    return tl


def moment(dump, phase, layer_prefix, until_prefix=None):
    """Highest live bytes in PHASE from the first layer event of LAYER_PREFIX (e.g.
    'model.layers.0.') to the next event of UNTIL_PREFIX (or the phase's end)."""
    d = pickle.load(open(dump, "rb"))
    ev = [e for e in d["events"] if e[2] == phase]
    start = next(e[0] for e in ev if e[4].startswith(layer_prefix))
    end = None
    if until_prefix:
        end = next((e[0] for e in ev if e[0] > start and e[4].startswith(until_prefix)), None)
    if end is None:
        nxt = [v[1] for k, v in d["phase_start"].items() if v[1] > start]
        end = min(nxt) if nxt else 10**18
    best = max(((c, s) for s, c in timeline(d) if start <= s < end), default=None)
    print(f"{phase} {layer_prefix}: max live {best[0]} at seq {best[1]} (window {start}..{end})")
    return best


if __name__ == "__main__":
    if sys.argv[1] == "--moment":
        moment(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    elif sys.argv[1] == "--window":
        window(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "--show":
        a = sys.argv[2:]
        top = 40
        if "--top" in a:
            i = a.index("--top")
            top = int(a[i + 1])
            del a[i:i + 2]
        show(a[0], a[1] if len(a) > 1 else None, top)
    else:
        run(sys.argv[1], sys.argv[2:])

