#!/usr/bin/env python
"""Tables of the rows and the formula checks behind NOTES.md (this folder).

  python summarize.py > summary.txt

Reads train_rows.jsonl, train_debug.jsonl, gen_rows.jsonl, gen_debug.jsonl and the config files.
Formulas (per MoE layer, T tokens in the forward; E experts, k top-k, h hidden, I the experts'
and the shared expert's width, dt bytes of the model dtype), from the op listings
(train_moe_ops.txt, gen_moe_ops.txt):

  saved for backward, bf16 / fp32 (bytes per token):
      E*h*dt (repeat) + E*dt (scores' clone, transpose().reshape()) + E*h*dt (mul by the scores)
    + 2*E*I*dt (bmm gate_up) + E*I*dt (silu) + E*I*dt (product)
    + 8*k (topk indices, int64) + 4*E (sigmoid output, fp32)
    + 4*I*dt (shared expert: gate mm, silu, up mm, product)
  = E*(2h + 4I)*dt + E*dt + 4E + 8k + 4I*dt

  saved for backward, amp_bf16 (fp32 weights and residual stream, autocast to bf16):
    per token: E*h*4 (repeat, fp32) + 2E (clone) + E*h*2 (autocast copy of the product for the
      bmm) + 2*E*I*2 + E*I*2 + E*I*2 (bmm gate_up, silu, product) + 8k + 4E + 3*h*2 (autocast
      copies of the block's input for router, shared gate, shared up) + 4*I*2 (shared expert)
    per layer (not per token): the bf16 copies of every weight of the block:
      2*(E*h + 3*E*h*I + 3*h*I)

  generate's prefill, largest moment inside the block (no_grad; bytes per token above its entry):
      E*dt*max(h + 4I, 2h + 3I) + 2*E*dt
    h + 4I: at the product, the mul by the scores (E*h), gate_up (2E*I), silu (E*I), product (E*I);
    2h + 3I: at the down bmm, the mul by the scores (E*h), gate_up (2E*I), product (E*I),
             bmm down (E*h) (silu's output is gone);
    2E*dt: router logits and the scores cast back to dt (fp32: the sigmoid's output itself).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(name):
    p = os.path.join(HERE, name)
    return [json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []


def cfg_of(model):
    for d in (HERE, os.path.dirname(HERE)):
        p = os.path.join(d, model + ".json")
        if os.path.exists(p):
            c = json.load(open(p))
            return dict(E=c["num_local_experts"], k=c["num_experts_per_tok"], I=c["intermediate_size"],
                        h=c["hidden_size"], L=c["num_hidden_layers"], d=c["head_dim"],
                        Hkv=c["num_key_value_heads"], V=c["vocab_size"])
    raise FileNotFoundError(model)


DT = {"bf16": 2, "fp32": 4, "amp_bf16": 2}


def saved_per_token(c, dtype):
    E, k, h, I = c["E"], c["k"], c["h"], c["I"]
    if dtype == "amp_bf16":
        return E * h * 4 + 2 * E + E * h * 2 + 4 * E * I * 2 + 8 * k + 4 * E + 3 * h * 2 + 4 * I * 2
    dt = DT[dtype]
    return E * (2 * h + 4 * I) * dt + E * dt + 4 * E + 8 * k + 4 * I * dt


def saved_per_layer_const(c, dtype):
    E, h, I = c["E"], c["h"], c["I"]
    return 2 * (E * h + 3 * E * h * I + 3 * h * I) if dtype == "amp_bf16" else 0


def prefill_moe_per_token(c, dt):
    E, h, I = c["E"], c["h"], c["I"]
    return E * dt * max(h + 4 * I, 2 * h + 3 * I) + 2 * E * dt


def flatten(d, pre=""):
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flatten(v, f"{pre}.{k}" if pre else k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out.update(flatten(v, f"{pre}[{i}]"))
    else:
        out[pre] = d
    return out


def train_key(r):
    return (r["model"], r["dtype"], r["grad_ckpt"], r["lora"], r.get("lora_targets"), r["batch"], r["seq"])


def main():
    tr = rows("train_rows.jsonl")
    print("# Training rows (train_rows.jsonl): batch 2 x 64, AdamW, SDPA, bytes; iter1 unless said")
    print("| config | dtype | gc | LoRA | status | params | before_train | peak_fwd | end_fwd | act_end_fwd "
          "| peak_bwd | end_bwd | peak_step | iter2 peak_fwd | iter2 peak_bwd | peak_overall (phase) | fake = real |")
    print("|" + "---|" * 17)
    fake = {train_key(r): r for r in tr if r["mode"] == "fake"}
    n_eq = n_diff = 0
    for r in tr:
        if r["mode"] != "real":
            continue
        f = fake.get(train_key(r))
        lora = ("r8 " + (r.get("lora_targets") or "")) if r["lora"] else "-"
        if r["status"] != "ok":
            err = r.get("error", "")[:60]
            fs = f["status"] if f else "-"
            print(f"| {r['model']} | {r['dtype']} | {int(r['grad_ckpt'])} | {lora} | error: {err} |"
                  + " |" * 10 + f" fake: {fs} |")
            continue
        m, i1, i2 = r["measured"], r["measured"]["iter1"], r["measured"]["iter2"]
        same = "-"
        if f and f["status"] == "ok":
            a, b = flatten(m), flatten(f["measured"])
            diffs = [x for x in set(a) | set(b) if a.get(x) != b.get(x)]
            same = f"yes ({len(a)} values)" if not diffs and r["n_params"] == f["n_params"] else f"NO ({len(diffs)})"
            n_eq += not diffs
            n_diff += bool(diffs)
        print(f"| {r['model']} | {r['dtype']} | {int(r['grad_ckpt'])} | {lora} | ok | {r['n_params']:,} | "
              f"{m['before_train']:,} | {i1['peak_fwd']:,} | {i1['end_fwd']:,} | {i1['activation_bytes_end_fwd']:,} | "
              f"{i1['peak_bwd']:,} | {i1['end_bwd']:,} | {i1['peak_step']:,} | {i2['peak_fwd']:,} | "
              f"{i2['peak_bwd']:,} | {m['peak_overall']:,} ({m['peak_overall_phase']}) | {same} |")
    print(f"\nfake vs real (training): {n_eq} pairs equal in every measured value, {n_diff} differ\n")

    # ---- saved-for-backward check -------------------------------------------------------
    print("# Training: what one MoE layer saves for backward")
    print("## from the listings (train_debug.jsonl, layer 1, iteration 1) vs the formula")
    dbg = rows("train_debug.jsonl")
    for r in dbg:
        c = cfg_of(r["model"])
        T = r["batch"] * r["seq"]
        marks = {x["kind"]: x for x in r["moe_marks"] if x["call"] == 1}
        fwd_end = r["tracker_marks"]["after_fwd1"][1]
        s0, s1 = marks["fwd_in"]["seq"], marks["fwd_out"]["seq"]
        saved = sum(x[0] for x in r["debug_recs"] if s0 < x[1] <= s1 and (x[2] is None or x[2] > fwd_end))
        pred = T * saved_per_token(c, r["dtype"]) + saved_per_layer_const(c, r["dtype"])
        print(f"  {r['model']} {r['dtype']}: listed {saved:,} B, formula {pred:,} B "
              f"({'equal' if saved == pred else 'DIFF %+d' % (saved - pred)})")
    print("## against the rows: activation_bytes_end_fwd - L*(T*S + C) must not depend on E, k, I")
    for dtype in ("bf16", "fp32", "amp_bf16"):
        for r in tr:
            if r["status"] != "ok" or r["dtype"] != dtype or r["grad_ckpt"] or r["lora"]:
                continue
            c = cfg_of(r["model"])
            T = r["batch"] * r["seq"]
            S = saved_per_token(c, dtype)
            moe = c["L"] * (T * S + saved_per_layer_const(c, dtype))
            act = r["measured"]["iter1"]["activation_bytes_end_fwd"]
            print(f"  {r['model']:<20s} {r['mode']:<4s} {dtype:<8s} E{c['E']:<2d} k{c['k']} I{c['I']:<4d}: "
                  f"S = {S:,} B/token; act_end_fwd {act:,} = L*(T*S+C) {moe:,} + rest {act - moe:,}")
    print("## differences between variants (bf16 gc0, real rows)")
    base = {r["model"]: r for r in tr if r["status"] == "ok" and r["mode"] == "real" and r["dtype"] == "bf16"
            and not r["grad_ckpt"] and not r["lora"]}
    pairs = [("tiny-llama4", "tiny-llama4-e16", "E 4 -> 16"), ("tiny-llama4-e16", "tiny-llama4-e16-k2", "k 1 -> 2"),
             ("tiny-llama4", "tiny-llama4-i512", "I 256 -> 512")]
    for a, b, what in pairs:
        if a not in base or b not in base:
            continue
        ca, cb = cfg_of(a), cfg_of(b)
        T = 128
        d_act = base[b]["measured"]["iter1"]["activation_bytes_end_fwd"] - base[a]["measured"]["iter1"]["activation_bytes_end_fwd"]
        d_pred = ca["L"] * T * (saved_per_token(cb, "bf16") - saved_per_token(ca, "bf16"))
        d_w = 2 * (base[b]["n_params"] - base[a]["n_params"])
        out = [f"  {what}: d act_end_fwd {d_act:,} (formula {d_pred:,}: {'equal' if d_act == d_pred else 'DIFF'})"]
        for ph in ("peak_fwd", "end_fwd", "peak_bwd", "end_bwd"):
            d = base[b]["measured"]["iter1"][ph] - base[a]["measured"]["iter1"][ph]
            out.append(f"d {ph} {d:,}")
        out.append(f"d weights (bf16) {d_w:,}")
        print("; ".join(out))

    # ---- where the training peaks are ---------------------------------------------------
    print("\n## where the iteration-1 forward and backward peaks are (replay of train_debug.jsonl)")
    for r in dbg:
        ev = []
        for x in r["debug_recs"]:
            ev.append((x[1], x[0]))
            if x[2] is not None:
                ev.append((x[2], -x[0]))
        ev.sort()
        cur, at = 0, {}
        series = []
        for s, b in ev:
            cur += b
            series.append((s, cur))
        calls = {}
        for x in r["moe_marks"]:
            calls.setdefault(x["call"], {})[x["kind"]] = x
        tm = r["tracker_marks"]
        for ph, lo, hi, k0, k1 in (("fwd1", tm["before_train"][1], tm["after_fwd1"][1], "fwd_in", "fwd_out"),
                                   ("bwd1", tm["after_fwd1"][1], tm["after_bwd1"][1], "bwd_start", "bwd_end")):
            pk = max(c for s, c in series if lo < s <= hi)
            seq = min(s for s, c in series if lo < s <= hi and c == pk)
            where = "outside the MoE blocks"
            for call, mk in sorted(calls.items()):
                if k0 in mk and k1 in mk and mk[k0]["seq"] < seq <= mk[k1]["seq"]:
                    where = (f"inside MoE call {call} (layer {mk[k0]['layer']}), {pk - mk[k0]['cur']:,} B above "
                             f"the block's entry ({mk[k0]['cur']:,})")
            meas = r["measured"]["iter1"]["peak_fwd" if ph == "fwd1" else "peak_bwd"]
            print(f"  {r['model']} {r['dtype']} {ph}: peak {pk:,} (row {meas:,}) at seq {seq}: {where}")

    # ---- generate -----------------------------------------------------------------------
    gr = rows("gen_rows.jsonl")
    print("\n# generate rows (gen_rows.jsonl), SDPA, greedy, bytes")
    print("| config | dtype | B | P | N | mode | weights | KV after prefill | KV end | prefill peak (phase) | "
          "prefill fwd end | token step 0 peak | max decode step peak (step) | peak_overall | peak_overall_r512 |")
    print("|" + "---|" * 15)
    for r in gr:
        if r.get("status") != "ok":
            print(f"| {r.get('config_file')} | error {r.get('error', '')[:80]} |")
            continue
        m = r["measured"]
        p, d = m["prefill"], m["decode"]
        dmax = f"{d['max']['peak']:,} ({d['max']['step']})" if d else "-"
        print(f"| {r['name']} | {r['dtype']} | {r['batch']} | {r['prompt']} | {r['new']} | {r['mode']} | "
              f"{m['weights_bytes']:,} | {m['kv_cache_after_prefill']:,} | {m['kv_cache_bytes']:,} | "
              f"{p['peak']:,} ({p['peak_in']}) | {p['end_fwd']:,} | {p['token_peak']:,} | {dmax} | "
              f"{m['peak_overall']:,} | {m['peak_overall_r512']:,} |")

    print("\n# generate: prefill peak = G0 + KV_0 + T*h*dt (embeddings) + 4*T*d (complex64 freqs_cis)"
          " + 4*T*h*dt (last layer: its input, attention output, residual sum, normed input)"
          " + T*X, X = E*dt*max(h+4I, 2h+3I) + 2*E*dt")
    print("#   G0 = W + buffers + 16*B*P + 8*n_special + 8*n_sliding + 8*B*P + 8*B*P + 8*B (infer/NOTES.md 3)")
    for r in gr:
        if r.get("status") != "ok":
            continue
        c = cfg_of(r["name"])
        m = r["measured"]
        B, P = r["batch"], r["prompt"]
        T = B * P
        dt = {"bf16": 2, "fp16": 2, "fp32": 4}[r["dtype"]]
        n_special = 3   # bos 1, eos 2, pad 1018
        lt = r["config"].get("layer_types")   # chunked_attention layers get a DynamicSlidingWindowLayer
        n_sliding = sum(1 for t in lt if t != "full_attention") if lt else sum(
            1 for i in range(c["L"]) if (i + 1) % 4 != 0)
        G0 = m["weights_bytes"] + m["buffers_bytes"] + 16 * T + 8 * n_special + 8 * n_sliding + 16 * T + 8 * B
        KV0 = c["L"] * 2 * c["Hkv"] * c["d"] * dt * T
        X = prefill_moe_per_token(c, dt)
        pred = G0 + KV0 + T * c["h"] * dt + 4 * T * c["d"] + 4 * T * c["h"] * dt + T * X
        meas = m["prefill"]["peak"]
        print(f"  {r['name']:<20s} {r['mode']:<4s} {r['dtype']} B{B} P{P} N{r['new']}: X = {X:,} B/token, "
              f"MoE moment {T * X:,}; predicted prefill peak {pred:,}, measured {meas:,} "
              f"({'equal' if pred == meas else 'DIFF %+d' % (meas - pred)})")
    print("## from the listings (gen_debug.jsonl, last layer of the prefill): block's peak above its entry")
    for r in rows("gen_debug.jsonl"):
        c = cfg_of(r["name"])
        T = r["batch"] * r["prompt"]
        dt = {"bf16": 2, "fp16": 2, "fp32": 4}[r["dtype"]]
        calls = {}
        for x in r["moe_marks"]:
            if x["phase"] == "fwd0":
                calls.setdefault(x["call"], {})[x["kind"]] = x
        last = calls[max(calls)]
        s0, s1, cur0 = last["fwd_in"]["seq"], last["fwd_out"]["seq"], last["fwd_in"]["cur"]
        ev = []
        for x in r["debug_allocs"]:
            if s0 < x[1] <= s1:
                ev.append((x[1], x[0]))
            if x[2] is not None and s0 < x[2] <= s1:
                ev.append((x[2], -x[0]))
        ev.sort()
        cur = pk = 0
        for s, b in ev:
            cur += b
            pk = max(pk, cur)
        print(f"  {r['name']} {r['dtype']} B{r['batch']} P{r['prompt']}: entry {cur0:,}, peak above entry {pk:,}, "
              f"formula T*X {T * prefill_moe_per_token(c, dt):,}; entry + peak = {cur0 + pk:,} "
              f"(row prefill peak {r['measured']['prefill']['peak']:,})")


if __name__ == "__main__":
    main()
