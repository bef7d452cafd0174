#!/usr/bin/env python
"""Every value of generate.py's predict() against the measured mistral4 rows, per field (the
harness's --check prints only the first 6 differing fields per row).

Two replays per row, neither changes the harness:
  * as-is: model_type "mistral4" (predict has no mistral4 branch: it replays a dense, non-MLA,
    non-MoE llama-like model with head_dim = qk_nope + qk_rope);
  * stand-in: the same row with model_type set to "deepseek_v2" (predict's only MLA + shared-expert
    MoE family: latent cache, q_proj without q_lora, complex RoPE, fp32 router from hidden.float(),
    softmax, fp32 routing weights).
Usage: python check_detail.py rows.jsonl > check_detail.txt"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "infer")))
import generate as G  # noqa: E402


def values(d):
    out = {}
    for f in G.CHECK_FIELDS:
        out[f] = G._get(d, f)
    for f in G.LIST_FIELDS:
        v = G._get(d, f)
        if v is not None:
            for j, x in enumerate(v):
                out[f"{f}[{j}]"] = x
    return out


def main(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    for r in rows:
        if r.get("status") != "ok":
            continue
        tag = f"{r['name']} {r['mode']} {r['dtype']} {r['attn']} B{r['batch']} P{r['prompt']} N{r['new']}"
        m = values(r["measured"])
        preds = {}
        for label, mt in (("as-is", None), ("ds_v2", "deepseek_v2")):
            rr = copy.deepcopy(r)
            if mt:
                rr["model_type"] = mt
            try:
                preds[label] = values(G.predict(rr))
            except Exception as e:  # noqa: BLE001
                preds[label] = {"error": f"{type(e).__name__}: {e}"}
        print(f"== {tag}")
        print(f"   {'field':28s} {'measured':>16s} {'as-is - meas':>14s} {'ds_v2 - meas':>14s}")
        for f, mv in m.items():
            cells = []
            for label in ("as-is", "ds_v2"):
                pv = preds[label].get(f)
                cells.append("n/a" if pv is None or mv is None else f"{pv - mv:+d}")
            print(f"   {f:28s} {mv if mv is not None else '-':>16} {cells[0]:>14s} {cells[1]:>14s}")
        for label in preds:
            if "error" in preds[label]:
                print(f"   {label}: {preds[label]['error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "rows.jsonl")))
