#!/usr/bin/env python3
"""Hold vLLM's KV-cache arithmetic (read in vLLM's code, see NOTES.md) to start-up log lines
that people published (crates/core/tests/fixtures/vllm_logs.jsonl).

For each entry it recomputes, from the model's attention geometry and the logged
"Available KV cache memory" (a number rounded to 2 decimals of GiB):
  * the number of KV blocks (an interval, because the logged GiB is rounded),
  * the "GPU KV cache size: N tokens" figure,
  * the "Maximum concurrency for L tokens per request: X.XXx" figure,
  * the "N GiB KV cache is needed" and "estimated maximum model length" of the
    not-enough-memory error,
  * the budget identity (requested - weights - activation - non-torch - CUDA graphs)
    where the log gives its terms,
and prints the residual (logged - predicted) of each.

Usage:
  python3 scripts/measure/vllm/check_logs.py [path/to/vllm_logs.jsonl] [--markdown]
  python3 scripts/measure/vllm/check_logs.py --selftest

Standard library only; no vLLM, no torch.
"""
from __future__ import annotations

import json
import math
import os
import sys

GIB = 1 << 30
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
FIXTURES = os.path.join(ROOT, "crates", "core", "tests", "fixtures")
DTYPE_BYTES = {"auto": None, "bfloat16": 2, "float16": 2, "half": 2, "float32": 4,
               "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------- geometry

def load_config(name: str) -> dict:
    with open(os.path.join(FIXTURES, "hf_configs", name)) as f:
        c = json.load(f)
    c = c.get("config", c)
    return c.get("text_config", c) if "num_hidden_layers" not in c else c


def get_pp_indices(n: int, rank: int, pp: int) -> tuple[int, int]:
    """vllm 0.33 distributed/utils.py:198-241 (no VLLM_PP_LAYER_PARTITION)."""
    parts = [n // pp] * pp
    for i in range(2, n % pp + 2):
        parts[-i] += 1
    start = sum(parts[:rank])
    return start, start + parts[rank]


def geometry(entry: dict) -> dict | None:
    """The attention layers of the logged worker: with pipeline stages, the
    first stage's (PP0 logs the available memory; `get_pp_indices`)."""
    g = _geometry(entry)
    pp = (entry.get("settings") or {}).get("pipeline_parallel_size") or 1
    if g is None or pp <= 1:
        return g
    start, end = get_pp_indices(len(g["layers"]), 0, pp)
    return {"layers": g["layers"][start:end], "mla": g["mla"]}


def _geometry(entry: dict) -> dict | None:
    """Attention layers of the model as vLLM sees them (per model, before TP).

    Returns {"layers": [ {kind, kv_heads, head_dim, window} ... ], "mla": bool}.
    kind: "full" | "sliding" | "mla".
    """
    ov = entry.get("arch_override")
    if ov:
        return {"layers": [dict(kind="full", kv_heads=ov["kv_heads"], head_dim=ov["head_dim"],
                                window=None)] * ov["attn_layers"], "mla": False}
    if not entry.get("hf_config"):
        return None
    c = load_config(entry["hf_config"])
    n = c["num_hidden_layers"]
    if c.get("kv_lora_rank"):
        # ModelArchConvertor.get_head_size: kv_lora_rank + qk_rope_head_dim; get_num_kv_heads -> 1
        d = c["kv_lora_rank"] + c["qk_rope_head_dim"]
        return {"layers": [dict(kind="mla", kv_heads=1, head_dim=d, window=None)] * n, "mla": True}
    heads = c.get("num_key_value_heads") or c["num_attention_heads"]
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    types = c.get("layer_types")
    sw = c.get("sliding_window")
    layers = []
    for i in range(n):
        sliding = bool(types and types[i] == "sliding_attention" and sw)
        layers.append(dict(kind="sliding" if sliding else "full", kv_heads=heads, head_dim=hd,
                           window=sw if sliding else None))
    return {"layers": layers, "mla": False}


def kv_heads_per_rank(layer: dict, tp: int) -> int:
    """ModelConfig.get_num_kv_heads: 1 for MLA, else max(1, total // tp)."""
    if layer["kind"] == "mla":
        return 1
    return max(1, layer["kv_heads"] // tp)


def page_bytes(layer: dict, block: int, dtype_bytes: int, tp: int) -> int:
    """AttentionSpec page: block * heads * (head_size + head_size_v) * dtype.
    MLAAttentionSpec has head_size_v = 0 and one head."""
    h = kv_heads_per_rank(layer, tp)
    if layer["kind"] == "mla":
        return block * h * layer["head_dim"] * dtype_bytes
    return block * h * 2 * layer["head_dim"] * dtype_bytes


# ---------------------------------------------------------------- rules

def groups_of(layers: list[dict]) -> list[list[dict]]:
    """_get_kv_cache_groups_uniform_page_size: one group if every layer has the same spec,
    else bucket by spec and split into groups of min(len(bucket)) layers (pad the rest)."""
    buckets: dict[tuple, list[dict]] = {}
    for l in layers:
        buckets.setdefault((l["kind"], l["window"]), []).append(l)
    if len(buckets) == 1:
        return [layers]
    sizes = [len(b) for b in buckets.values()]
    gsize = min(sizes)
    if max(sizes) < gsize * 1.5:
        gsize = max(sizes)
    groups = []
    for b in buckets.values():
        ng = cdiv(len(b), gsize)
        for i in range(ng):
            groups.append(b[i::ng])
    return groups


def max_memory_usage_bytes(layer: dict, page: int, block: int, max_len: int,
                           in_flight_tokens: int) -> int:
    if layer["kind"] == "sliding":
        n = min(layer["window"] - 1 + in_flight_tokens, max_len)
        return (cdiv(n, block) + 1) * page
    return cdiv(max_len, block) * page


def predict(entry: dict, avail_bytes: float) -> dict:
    """Blocks, tokens, concurrency for one available-memory value, by the era's rules."""
    g = geometry(entry)
    s = entry["settings"]
    era = entry["rules_era"]
    block = s.get("block_size") or 16
    tp = s.get("tensor_parallel_size") or 1
    kvd = s.get("kv_cache_dtype") or "auto"
    dtype_bytes = DTYPE_BYTES.get(kvd) or DTYPE_BYTES.get((s.get("dtype") or "bfloat16").split()[0], 2)
    # entries that log no max_model_len: concurrency is not checked, use one block
    L = s.get("max_model_len") or entry["logged"].get("concurrency_len") or block
    layers = g["layers"]
    pages = [page_bytes(l, block, dtype_bytes, tp) for l in layers]
    page = pages[0]
    out = {"page_bytes_per_layer": page, "n_layers": len(layers)}
    if era == "v0":
        # CacheEngine.get_cache_block_size: block * sum over layers (K + V entries) * dtype
        cache_block = sum(pages)
        blocks = int(avail_bytes // cache_block)
        out.update(blocks=blocks, tokens=blocks * block, concurrency=blocks * block / L,
                   bytes_per_block=cache_block)
        return out
    grps = groups_of(layers)
    lpg = max(len(x) for x in grps)
    bytes_per_block = page * lpg
    mnbt = s.get("max_num_batched_tokens") or 2048
    in_flight = mnbt * (2 if era in ("v1_0.33",) else 1)
    if era in ("v1_0.8", "v1_0.10"):
        blocks = int(avail_bytes // page // lpg)
    else:  # v1_0.26 / v1_0.33: available // bytes_per_block
        blocks = int(avail_bytes // bytes_per_block)
    per_req = sum(cdiv(max_memory_usage_bytes(x[0], page, block, L, in_flight), page) for x in grps)
    conc = blocks / per_req
    if era == "v1_0.8":
        tokens = blocks * block
        conc = tokens / L
    elif era == "v1_0.10":
        tokens = blocks // len(grps) * block
    else:
        tokens = int(conc * L)
    out.update(blocks=blocks, tokens=tokens, concurrency=conc, bytes_per_block=bytes_per_block,
               groups=len(grps), blocks_per_request=per_req)
    return out


def needed_bytes(entry: dict, max_len: int) -> int:
    """check_enough_kv_cache_memory: sum over layers of spec.max_memory_usage_bytes."""
    g = geometry(entry)
    s = entry["settings"]
    block = s.get("block_size") or 16
    tp = s.get("tensor_parallel_size") or 1
    kvd = s.get("kv_cache_dtype") or "auto"
    db = DTYPE_BYTES.get(kvd) or 2
    mnbt = s.get("max_num_batched_tokens") or 2048
    tot = 0
    for l in g["layers"]:
        p = page_bytes(l, block, db, tp)
        tot += max_memory_usage_bytes(l, p, block, max_len, mnbt)
    return tot


def estimate_max_len(entry: dict, avail: float, original: int) -> int:
    """estimate_max_model_len: binary search of the largest len in [1, original] that fits."""
    lo, hi, res = 1, original, 0
    if needed_bytes(entry, 1) > avail:
        return 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if needed_bytes(entry, mid) <= avail:
            res, lo = mid, mid + 1
        else:
            hi = mid - 1
    return res


# ---------------------------------------------------------------- checking

def gib_interval(x: float, decimals: int = 2) -> tuple[float, float]:
    h = 0.5 * 10 ** (-decimals)
    return (x - h) * GIB, (x + h) * GIB


def check(entry: dict) -> list[dict]:
    lg = entry["logged"]
    rows = []
    g = geometry(entry)

    def row(what, logged, predicted, ok, detail=""):
        rows.append(dict(id=entry["id"], what=what, logged=logged, predicted=predicted, ok=ok, detail=detail))

    # Budget identity
    if "requested_gib" in lg and "available_kv_gib" in lg:
        # The logged "CUDAGraph memory" is the graph pool measured at capture, after the KV
        # cache is sized: not subtracted before v0.21 (graphs unbudgeted), and from v0.21 on
        # the budgeted estimate is already inside the logged "peak activation" (gpu_worker.py
        # peak_activation_memory = transient_peak_headroom + cudagraph_memory_estimate_applied).
        terms = [lg.get(k, 0.0) for k in ("weights_gib", "activation_peak_gib", "non_torch_gib")]
        pred = lg["requested_gib"] - sum(terms)
        row("available = requested - weights - activation - non_torch [GiB]",
            lg["available_kv_gib"], round(pred, 2), abs(pred - lg["available_kv_gib"]) <= 0.03,
            "terms rounded to 0.01 GiB each" + (
                "; logged CUDA graph pool %s GiB not subtracted" % lg["cudagraph_gib"]
                if "cudagraph_gib" in lg else ""))
    elif "peak_torch_gib" in lg and "available_kv_gib" in lg and entry.get("gpu_total_gib"):
        req = entry["gpu_total_gib"] * entry["settings"]["gpu_memory_utilization"]
        pred = req - lg["peak_torch_gib"] - lg["non_torch_gib"]
        row("available = total*util - peak_torch - non_torch [GiB] (v0.6 worker)",
            lg["available_kv_gib"], round(pred, 2), abs(pred - lg["available_kv_gib"]) <= 0.03)
    if "weights_gib" in lg and "requested_gib" in lg and entry.get("gpu_total_gib") and entry["settings"].get("gpu_memory_utilization"):
        req = entry["gpu_total_gib"] * entry["settings"]["gpu_memory_utilization"]
        row("requested = total*util [GiB]", lg["requested_gib"], round(req, 2), abs(req - lg["requested_gib"]) <= 0.015)

    if g is None:
        # formula-only entries: tokens and concurrency from blocks
        if "kv_blocks" in lg:
            b = lg["kv_blocks"]
            bs = entry["settings"].get("block_size") or 16
            L = lg["concurrency_len"]
            if "kv_tokens" in lg:
                row("tokens = blocks * block_size", lg["kv_tokens"], b * bs, lg["kv_tokens"] == b * bs)
            if "max_concurrency" in lg:
                c = b * bs / L
                row("concurrency = blocks * block_size / max_model_len", lg["max_concurrency"], round(c, 2),
                    f"{c:.2f}" == f"{lg['max_concurrency']:.2f}")
        return rows

    L = entry["settings"].get("max_model_len") or lg.get("concurrency_len")
    if "available_kv_gib" in lg and "needed_kv_gib" not in lg:
        lo, hi = gib_interval(lg["available_kv_gib"])
        plo, phi = predict(entry, lo), predict(entry, hi - 1)
        pm = predict(entry, lg["available_kv_gib"] * GIB)
        logged_blocks = lg.get("kv_blocks")
        if logged_blocks is None and "kv_tokens" in lg:
            # invert the token formula of the era
            era = entry["rules_era"]
            if era in ("v1_0.26", "v1_0.33"):
                logged_blocks = None
                for b in range(plo["blocks"] - 2000, phi["blocks"] + 2000):
                    if int(b / pm["blocks_per_request"] * L) == lg["kv_tokens"]:
                        logged_blocks = b
                        break
            else:
                logged_blocks = lg["kv_tokens"] // 16 * pm.get("groups", 1)
        if logged_blocks is not None:
            ok = plo["blocks"] <= logged_blocks <= phi["blocks"]
            row("blocks from available memory", logged_blocks, pm["blocks"], ok,
                f"interval [{plo['blocks']}, {phi['blocks']}] for the rounded GiB; residual "
                f"{logged_blocks - pm['blocks']:+d} blocks ({100 * (logged_blocks - pm['blocks']) / pm['blocks']:+.2f}%); "
                f"{pm['bytes_per_block']} B per block, {pm['page_bytes_per_layer']} B page per layer")
        if "kv_tokens" in lg:
            row("GPU KV cache size tokens (from available)", lg["kv_tokens"], pm["tokens"],
                plo["tokens"] <= lg["kv_tokens"] <= phi["tokens"],
                f"interval [{plo['tokens']}, {phi['tokens']}]")
        if "max_concurrency" in lg and logged_blocks is not None:
            e = dict(entry)
            # concurrency recomputed from the logged blocks
            per = pm.get("blocks_per_request") or cdiv(L, 16)
            c = logged_blocks * 16 / L if entry["rules_era"] in ("v0", "v1_0.8") else logged_blocks / per
            row("concurrency from logged blocks", lg["max_concurrency"], round(c, 4),
                f"{c:.2f}" == f"{lg['max_concurrency']:.2f}")
    elif "kv_blocks" in lg or "kv_tokens" in lg:
        b = lg.get("kv_blocks") or lg["kv_tokens"] // 16
        if "kv_tokens" in lg and "kv_blocks" in lg:
            row("tokens = blocks * 16", lg["kv_tokens"], b * 16, lg["kv_tokens"] == b * 16)
        if "max_concurrency" in lg:
            c = b * 16 / L
            row("concurrency = blocks * 16 / max_model_len", lg["max_concurrency"], round(c, 4),
                f"{c:.2f}" == f"{lg['max_concurrency']:.2f}")
        pb = predict(entry, 0)["bytes_per_block"] if entry["rules_era"] == "v0" else \
            predict(entry, 0)["page_bytes_per_layer"] * predict(entry, 0)["n_layers"]
        row("implied KV memory [GiB] (blocks * bytes per block)", None, round(b * pb / GIB, 3), True,
            "not logged at that version")
    if "kv_bytes_in_use" in lg:
        pe = predict(entry, lg["kv_bytes_in_use"])
        b = lg["kv_tokens"] // 16
        row("blocks from one rank's exact available bytes", b, pe["blocks"], b == pe["blocks"],
            f"residual {b - pe['blocks']:+d} blocks ({100 * (b - pe['blocks']) / pe['blocks']:+.2f}%)")
    # Up to v0.19 get_kv_cache_config logs 'GPU KV cache size' once per worker, before the
    # minimum over workers; each worker also logs its own 'Available KV cache memory'. With
    # TP > 1 the two quoted lines may come from different ranks, so a miss is not a refutation.
    tp = entry["settings"].get("tensor_parallel_size") or 1
    if tp > 1 and entry["rules_era"] in ("v1_0.8", "v1_0.10"):
        for r in rows:
            if r["ok"] is False and r["what"].startswith(("blocks", "GPU KV cache size")):
                r["ok"] = None
                r["detail"] += "; TP>1: the quoted lines may be different ranks' (n/a)"
    if "kv_tokens" in lg and "kv_blocks" in lg and entry["rules_era"] == "v0" and "available_kv_gib" in lg:
        row("max tokens in KV cache = blocks * 16 (V0 error text)", lg["kv_tokens"], lg["kv_blocks"] * 16,
            lg["kv_tokens"] == lg["kv_blocks"] * 16)
    if "needed_kv_gib" in lg:
        nb = needed_bytes(entry, lg["concurrency_len"])
        row("KV cache needed for one max_model_len request [GiB]", lg["needed_kv_gib"], round(nb / GIB, 4),
            f"{nb / GIB:.2f}" == f"{lg['needed_kv_gib']:.2f}")
        if "estimated_max_model_len" in lg:
            lo, hi = gib_interval(lg["available_kv_gib"])
            elo = estimate_max_len(entry, lo, lg["concurrency_len"])
            ehi = estimate_max_len(entry, hi, lg["concurrency_len"])
            em = estimate_max_len(entry, lg["available_kv_gib"] * GIB, lg["concurrency_len"])
            row("estimated maximum model length", lg["estimated_max_model_len"], em,
                elo <= lg["estimated_max_model_len"] <= ehi,
                f"interval [{elo}, {ehi}]; residual {lg['estimated_max_model_len'] - em:+d} tokens")
    return rows


def selftest() -> None:
    """One assertion per rule, with numbers worked by hand from vLLM's code (NOTES.md)."""
    llama8 = {"layers": [dict(kind="full", kv_heads=8, head_dim=128, window=None)] * 32}
    # R-KV-page: 2 * 16 * 8 * 128 * 2 B = 65,536 B per layer per block
    assert page_bytes(llama8["layers"][0], 16, 2, 1) == 65536
    # R-TP-heads: 4 KV heads at TP 8 -> 1 (replicated), at TP 2 -> 2
    assert kv_heads_per_rank(dict(kind="full", kv_heads=4), 8) == 1
    assert kv_heads_per_rank(dict(kind="full", kv_heads=4), 2) == 2
    # R-MLA-page: 16 * 1 * 576 * 2 B = 18,432 B, independent of TP
    mla = dict(kind="mla", kv_heads=1, head_dim=576, window=None)
    assert page_bytes(mla, 16, 2, 8) == 18432
    # R-fp8: one byte per element, no scale bytes in the page
    assert page_bytes(llama8["layers"][0], 16, 1, 1) == 32768
    # R-sliding-max: window 128, mnbt 2048, len 131072, block 16: cdiv(2175, 16) + 1 = 137 blocks
    sw = dict(kind="sliding", kv_heads=8, head_dim=64, window=128)
    assert max_memory_usage_bytes(sw, 1, 16, 131072, 2048) == 137
    # R-full-max: cdiv(29000, 16) = 1813 blocks
    assert max_memory_usage_bytes(llama8["layers"][0], 1, 16, 29000, 2048) == 1813
    # R-groups: gpt-oss-20b 12 full + 12 sliding -> 2 groups of 12
    oss = [dict(kind="full", kv_heads=8, head_dim=64, window=None),
           dict(kind="sliding", kv_heads=8, head_dim=64, window=128)] * 12
    assert [len(g) for g in groups_of(oss)] == [12, 12]
    # Gemma-3-style 5:1 pattern (e.g. 10 full + 50 sliding) -> 6 groups of 10
    gem = ([dict(kind="sliding", kv_heads=16, head_dim=128, window=1024)] * 5
           + [dict(kind="full", kv_heads=16, head_dim=128, window=None)]) * 10
    assert sorted(len(g) for g in groups_of(gem)) == [10] * 6
    # R-estimate: 48.66 GiB, 62 layers x 8 heads x 128 bf16 -> 12,858 blocks -> 205,728 tokens
    e = dict(arch_override=dict(attn_layers=62, kv_heads=8, head_dim=128),
             settings=dict(block_size=16, tensor_parallel_size=1, kv_cache_dtype="auto"), rules_era="v1_0.10")
    assert estimate_max_len(e, 48.66 * GIB, 262144) == 205728
    print("selftest: all rules ok")


def main(argv: list[str]) -> int:
    if "--selftest" in argv:
        selftest()
        return 0
    path = next((a for a in argv[1:] if not a.startswith("--")),
                os.path.join(FIXTURES, "vllm_logs.jsonl"))
    md = "--markdown" in argv
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip():
                rows += check(json.loads(line))
    if md:
        print("| entry | quantity | logged | predicted | within rounding | detail |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['id']} | {r['what']} | {r['logged']} | {r['predicted']} | {'yes' if r['ok'] else ('n/a' if r['ok'] is None else '**no**')} | {r['detail']} |")
    else:
        for r in rows:
            print(f"{'ok ' if r['ok'] else ('n/a' if r['ok'] is None else 'BAD')} {r['id']:45s} {r['what']:60s} logged={r['logged']} predicted={r['predicted']} {r['detail']}")
    bad = sum(r["ok"] is False for r in rows)
    na = sum(r["ok"] is None for r in rows)
    print(f"{len(rows) - bad - na} passed, {bad} failed, {na} skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
