#!/usr/bin/env python
"""Per-op allocation listing of ONE router call in the prefill forward (generate, B=2, P=64),
under the generate harness's own meter (scripts/measure/infer/generate.py StorageTracker with
GT_DEBUG=1: every new storage is recorded with the op that made it and its free point).

Runs generate.main() unmodified; two additions, both outside the harness's code:
  * while a router call is in progress the tracker's class is switched to a subclass that also
    logs every ATen op (views and in-place ops included), and switched back at its end;
  * global module hooks note the tracker's sequence number at the start/end of the first
    TopkRouter / Experts / shared-experts MLP / MoE call of the prefill forward (fwd0), so the
    frees of the router's returned tensors can be placed.
Models: ../tiny-mistral4.json (Mistral4TopkRouter) and
crates/core/tests/fixtures/hf_configs/tiny-deepseek_v3.json (DeepseekV3TopkRouter), bf16, sdpa,
real CPU tensors and fake tensors (the listings must agree).
Usage: GT_DEBUG=1 OMP_NUM_THREADS=1 python router_ops.py > router_ops.txt"""
import os
import sys

os.environ["GT_DEBUG"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
INFER = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "infer"))
sys.path.insert(0, INFER)
import torch  # noqa: E402
from transformers import AutoModelForCausalLM, Mistral4Config, Mistral4ForCausalLM  # noqa: E402

AutoModelForCausalLM.register(Mistral4Config, Mistral4ForCausalLM, exist_ok=True)
import generate  # noqa: E402

STATE = {}


def reset():
    STATE.clear()
    STATE.update(active=False, oplog=[], marks={}, tracker=None, in_moe=False)


_orig_make = generate.make_tracker_class


def make_logging_tracker():
    Base = _orig_make()

    class Logging(Base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            n0 = len(self.recs)
            out = super().__torch_dispatch__(func, types, args, kwargs)
            if STATE.get("active") and not self.paused and func.namespace != "prim":  # prim.device: fake-tensor metadata
                from torch.utils._pytree import tree_flatten
                flat, _ = tree_flatten(out)
                shapes = ",".join(f"{tuple(t.shape)}{str(t.dtype)[6:]}" for t in flat if isinstance(t, torch.Tensor))
                inplace = func._schema.name.endswith("_") or any(
                    a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)
                STATE["oplog"].append(dict(seq=self.seq, op=str(func).replace("aten.", ""), shapes=shapes,
                                           new=list(range(n0, len(self.recs))), inplace=inplace))
            return out

    Base._logging_subclass = Logging
    return Base   # the harness's own class; switched to Logging only during the router call


generate.make_tracker_class = make_logging_tracker

KINDS = {"TopkRouter": "router", "Experts": "experts", "MoE": "moe", "MLP": "mlp"}


def kind_of(mod):
    n = type(mod).__name__
    for suf, k in KINDS.items():
        if n.endswith(suf):
            return k
    return None


def pre_hook(mod, args, kwargs=None):
    tr = generate._ACTIVE_TRACKER[0]
    k = kind_of(mod)
    if tr is None or k is None or tr.phase != "fwd0":
        return
    STATE["tracker"] = tr
    m = STATE["marks"]
    if k == "moe" and "moe_start" not in m:
        m["moe_start"] = tr.seq
        STATE["in_moe"] = True
    elif k == "router" and "router_start" not in m:
        m["router_start"] = tr.seq
        m["router_start_cur"] = tr.cur
        m["router_class"] = type(mod).__name__
        STATE["active"] = True
        tr.__class__ = tr._logging_subclass   # log ops only inside the router (no frame of this
        # file may be on the stack at generate's scalar reads: the oracle keys on the call site)
    elif STATE["in_moe"] and k in ("experts", "mlp") and f"{k}_start" not in m:
        m[f"{k}_start"] = tr.seq


def post_hook(mod, args, out):
    tr = generate._ACTIVE_TRACKER[0]
    k = kind_of(mod)
    if tr is None or k is None or tr.phase != "fwd0":
        return
    m = STATE["marks"]
    if k == "router" and STATE["active"]:
        STATE["active"] = False
        tr.__class__ = tr.__class__.__bases__[0]
        m["router_end_call"] = tr.seq
    elif k == "moe" and STATE["in_moe"]:
        STATE["in_moe"] = False
        m["moe_end"] = tr.seq
    elif STATE["in_moe"] and k in ("experts", "mlp") and f"{k}_end" not in m:
        m[f"{k}_end"] = tr.seq


torch.nn.modules.module.register_module_forward_pre_hook(pre_hook)
torch.nn.modules.module.register_module_forward_hook(post_hook)


def fmt_bytes(n):
    return f"{n:>9,d}"


def listing(title, cfg, mode, extra_args, formula_note):
    reset()
    argv = ["--config", cfg, "--mode", mode, "--dtype", "bf16", "--attn", "sdpa", "--batch", "2",
            "--prompt", "64", "--new", "2", "--out", os.devnull] + extra_args
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = generate.main(argv)
    print(f"=== {title}: mode={mode}, bf16, sdpa, B=2 P=64 (T=128), first MoE layer, prefill (fwd0) ===")
    print(f"harness: {buf.getvalue().strip()}")
    if rc != 0:
        print("run failed")
        return None
    tr, m = STATE["tracker"], STATE["marks"]
    s0, s1 = m["router_start"], m["router_end_call"]
    recs = tr.recs
    print(f"router class: {m['router_class']}; live bytes at router entry {m['router_start_cur']:,}")
    print("markers (tracker seq): " + ", ".join(f"{k}={v}" for k, v in m.items()
                                                   if k not in ("router_class", "router_start_cur")))
    # event list: every op in the call (with the storages it created), frees in between
    events = []
    for o in STATE["oplog"]:
        events.append((o["seq"], 0, "op", o))
    for sid, r in enumerate(recs):
        if r[2] is not None and s0 < r[2] <= s1:
            events.append((r[2], 1, "free", sid))
    events.sort(key=lambda e: (e[0], e[1]))
    cur = 0
    peak = 0
    print(f"\n{'#':>3} {'event':5s} {'op':28s} {'output shape/dtype':46s} {'bytes':>9s} {'delta live':>11s}")
    n = 0
    for seq, _, kind, x in events:
        if kind == "op":
            o = x
            if o["new"]:
                for sid in o["new"]:
                    nb = recs[sid][0]
                    cur += nb
                    peak = max(peak, cur)
                    n += 1
                    print(f"{n:>3} alloc {o['op']:28s} {o['shapes'][:46]:46s} {fmt_bytes(nb)} {cur:>+11,d}")
            else:
                what = "in-place" if o["inplace"] else "view/no new storage"
                print(f"    ({what}) {o['op']:28s} {o['shapes'][:46]:46s}")
        else:
            r = recs[x]
            cur -= r[0]
            where = "(allocated in router)" if r[1] > s0 else "(allocated BEFORE router)"
            func = (r[6] or "?").split(":")[0]
            print(f"    free  {func:28s} {(r[6] or '').split(':', 1)[-1][:46]:46s} {fmt_bytes(r[0])} {cur:>+11,d} {where}")
    print(f"\nrouter call: {n} new storages; transient peak above entry {peak:,} B; left alive at return {cur:,} B")
    # what the router returned / left alive, and when it is freed
    order = [(k, v) for k, v in m.items() if k.endswith(("_start", "_end", "_end_call")) and isinstance(v, int)]
    order.sort(key=lambda kv: kv[1])
    print("kept past the router call (returned router_logits / topk_weights / topk_indices):")
    for sid, r in enumerate(recs):
        if s0 < r[1] <= s1 and (r[2] is None or r[2] > s1):
            when = "never (still alive)" if r[2] is None else "seq %d" % r[2]
            if r[2] is not None:
                prev = [k for k, v in order if v < r[2]]
                nxt = [k for k, v in order if v >= r[2]]
                when += f" (after {prev[-1] if prev else '-'}, before {nxt[0] if nxt else '-'})"
            print(f"    {(r[6] or '?'):60s} {fmt_bytes(r[0])}  freed {when}")
    if formula_note:
        print(formula_note)
    print()
    return dict(n=n, peak=peak, kept=cur)


def main():
    cfg_m4 = os.path.join(HERE, "..", "tiny-mistral4.json")
    cfg_ds = os.path.join(generate.HF_CONFIGS, "tiny-deepseek_v3.json")
    print("Router allocations of one prefill router call, measured with generate.py's StorageTracker (GT_DEBUG=1)")
    print(f"torch {torch.__version__}, transformers {__import__('transformers').__version__}")
    print("T = B*P = 128 tokens, h = 256 hidden, E = 8 experts, k = 2 per token, dt = 2 (bf16)")
    print("'free' lines: storages whose last Python reference went (the tracker's weakref callback).")
    print("'(in-place)' / '(view)' lines: ops of the call that create no storage.\n")
    note_m4 = note_ds = ""
    res = {}
    for mode in ("real", "fake"):
        res[("m4", mode)] = listing("mistral4 tiny (Mistral4TopkRouter)", cfg_m4, mode, [], note_m4)
    for mode in ("real", "fake"):
        res[("ds", mode)] = listing("deepseek_v3 tiny (DeepseekV3TopkRouter)", cfg_ds, mode, [], note_ds)
    print("summary (new storages, transient peak above entry, kept at return):")
    for k, v in res.items():
        print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
