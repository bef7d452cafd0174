#!/usr/bin/env python3
"""Check published llama.cpp log lines against the KV-cache and buffer rules in NOTES.md.

Reads crates/core/tests/fixtures/llamacpp_logs.jsonl (one configuration per line, the
verbatim log lines in `lines`), parses every buffer line, and compares:

  * KV cache (must be exact): for each cache group in `kv_groups`
        bytes = layers * cells * streams * (row_size(type_k, k_width) + row_size(type_v, v_width))
    against the logged `size = X MiB (...)` / `KV self size = X MiB` lines (K and V separately)
    and against the sum of the `<dev> KV buffer size` lines. Widths are cross-checked against
    the Hugging Face config named in `hf_config` (fixtures/hf_configs) when one is given.
  * cell counts: the n_ctx / n_ctx_seq / SWA padding rules of llama.cpp b10488 (NOTES.md §1-2),
    where the record carries what was requested.
  * output buffer (exact): n_vocab * max(n_outputs_reserved, n_seq_max) * 4 bytes, host memory.
  * compute buffers (an estimate, reported as a residual): NOTES.md §4.

Standard library only; the Rust project never runs this.

    python3 scripts/measure/llamacpp/check_logs.py [path/to/llamacpp_logs.jsonl] [--verbose]
"""

import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FIXTURES = os.path.join(ROOT, "crates", "core", "tests", "fixtures")
MIB = 1024.0 * 1024.0

# ggml type -> (block size, bytes per block)   (ggml/src/ggml.c type_traits at b10488)
GGML_TYPES = {
    "f32": (1, 4), "f16": (1, 2), "bf16": (1, 2),
    "q8_0": (32, 34), "q4_0": (32, 18), "q4_1": (32, 20),
    "q5_0": (32, 22), "q5_1": (32, 24), "iq4_nl": (32, 18),
}


def row_size(t, n):
    """ggml_row_size(type, n) = n / blck * type_size."""
    blck, size = GGML_TYPES[t]
    assert n % blck == 0, (t, n)
    return n // blck * size


def pad(x, n):
    return (x + n - 1) // n * n


# ---------------------------------------------------------------- cell rules (NOTES.md §1, §2)

def kv_cells(n_ctx_req, n_ctx_train, n_seq_max, unified, build=None, fa=True):
    """(n_ctx, n_ctx_seq = cells per stream, n_stream) as llama_context::llama_context computes
    them at b10488 (GGML_PAD to 256 since b6975; b6868..b6974 no pad; before b6868 the KV size was
    padded to 256 with FA, 32 without)."""
    n_ctx = n_ctx_train if not n_ctx_req else n_ctx_req
    if build is not None and build < 6868:
        n_ctx = pad(n_ctx, 256 if fa else 32)
        per = n_ctx if unified else n_ctx // n_seq_max
        return n_ctx, per, (1 if unified else n_seq_max)
    if build is None or build >= 6975:
        n_ctx = pad(n_ctx, 256)
    if unified:
        return n_ctx, n_ctx, 1
    per = n_ctx // n_seq_max
    if build is None or build >= 6975:
        per = pad(per, 256)
    return per * n_seq_max, per, n_seq_max


def swa_cells(size_base, n_swa, n_seq_max, unified, n_ubatch, swa_full=False):
    """llama_kv_cache_iswa: GGML_PAD(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch), 256)."""
    if swa_full:
        return size_base
    return pad(min(size_base, n_swa * (n_seq_max if unified else 1) + n_ubatch), 256)


# ---------------------------------------------------------------- geometry from HF configs

def geometry_from_config(cfg_name, mla_v_stored=True):
    """Per-layer (k_width, v_width, is_swa) as llama.cpp caches them, from a fixtures/hf_configs file."""
    path = os.path.join(FIXTURES, "hf_configs", cfg_name)
    with open(path) as f:
        c = json.load(f)
    mt = c.get("model_type")
    L = c["num_hidden_layers"]
    if mt in ("deepseek_v2", "deepseek_v3"):
        k = c["kv_lora_rank"] + c["qk_rope_head_dim"]
        v = c["kv_lora_rank"] if mla_v_stored else 0
        return [(k, v, False)] * L, c
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    kvh = c.get("num_key_value_heads") or c["num_attention_heads"]
    w = hd * kvh
    if mt == "gpt_oss":
        lt = c.get("layer_types") or ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(L)]
        return [(w, w, t == "sliding_attention") for t in lt], c
    return [(w, w, False)] * L, c


# ---------------------------------------------------------------- log parsing

RE_KV_BUF = re.compile(r"(\S+) KV buffer size =\s*([\d.]+) MiB")
RE_KV_SIZE = re.compile(
    r"size =\s*([\d.]+) MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+)(?:/(\d+))? seqs\),\s*"
    r"K \((\w+)\):\s*([\d.]+) MiB, V \((\w+)\):\s*([\d.]+) MiB")
RE_KV_SELF = re.compile(r"KV self size\s*=\s*([\d.]+) MiB, K \((\w+)\):\s*([\d.]+) MiB, V \((\w+)\):\s*([\d.]+) MiB")
RE_COMPUTE = re.compile(r"(\S+) compute buffer size =\s*([\d.]+) MiB")
RE_OUTPUT = re.compile(r"(\S+)\s+output buffer size =\s*([\d.]+) MiB")
RE_MODEL = re.compile(r"(\S+) model buffer size =\s*([\d.]+) MiB")


def parse(lines):
    out = {"kv_buffers": [], "kv_sizes": [], "compute": {}, "output": {}, "model": []}
    for ln in lines:
        m = RE_KV_SIZE.search(ln)
        if m:
            out["kv_sizes"].append({"mib": float(m.group(1)), "cells": int(m.group(2)), "layers": int(m.group(3)),
                                    "seqs": int(m.group(4)), "streams": int(m.group(5)) if m.group(5) else 1,
                                    "type_k": m.group(6), "k_mib": float(m.group(7)),
                                    "type_v": m.group(8), "v_mib": float(m.group(9))})
            continue
        m = RE_KV_SELF.search(ln)
        if m:
            out["kv_sizes"].append({"mib": float(m.group(1)), "cells": None, "layers": None, "seqs": None, "streams": None,
                                    "type_k": m.group(2), "k_mib": float(m.group(3)),
                                    "type_v": m.group(4), "v_mib": float(m.group(5))})
            continue
        m = RE_KV_BUF.search(ln)
        if m:
            out["kv_buffers"].append((m.group(1), float(m.group(2))))
            continue
        m = RE_COMPUTE.search(ln)
        if m:
            out["compute"][m.group(1)] = float(m.group(2))
            continue
        m = RE_OUTPUT.search(ln)
        if m:
            out["output"][m.group(1)] = float(m.group(2))
            continue
        m = RE_MODEL.search(ln)
        if m:
            out["model"].append((m.group(1), float(m.group(2))))
    return out


# ---------------------------------------------------------------- compute-buffer estimate (NOTES.md §4)

def estimate_compute(ci, type_k="f16", type_v="f16", build=None):
    """Largest live set of the reserved prompt-processing graph, per device. An estimate: the real
    number comes from ggml-alloc's greedy allocator over the whole graph."""
    ub, nout, nkv = ci["n_ubatch"], ci["n_outputs"], ci["n_kv"]
    E, V, H, hd = ci["n_embd"], ci["n_vocab"], ci["n_head"], ci["head_dim"]
    ffn = ci["ffn"]
    f32 = 4
    # output stage: hidden state + logits (+ the output weight when it lives on the CPU and the
    # large-batch matmul is offloaded to the GPU, op_offload)
    out = f32 * E * ub + f32 * V * nout
    if ci["placement"] in ("output_on_cpu_op_offload", "cpu_layers_op_offload"):
        out += ci.get("output_weight_bytes", 0)
    # attention stage
    mask_dev = (2 if ci["fa"] else 4) * nkv * ub          # F16 cast (FA) / F32 copy on the device
    q = f32 * H * hd * ub
    kvw = ci.get("k_width", 0) + ci.get("v_width", 0)     # K/V of the current ubatch before set_rows
    attn = 2 * f32 * E * ub + q + f32 * kvw * ub + mask_dev
    if ci["fa"]:
        attn += f32 * H * hd * ub                         # FA output
        if ci.get("cuda_fa_dequant"):                     # b9489+, CUDA, quantized K/V
            attn += 2 * nkv * ci["k_width"] + 2 * nkv * ci["v_width"]
    else:
        attn += f32 * nkv * ub * H                        # KQ scores, soft_max in place
    # FFN stage
    # gate, up and the GLU result are all live (GGML_OP_GLU is not an in-place op in ggml-alloc);
    # the device copy of the mask stays live until the last layer's attention has run
    if ffn["kind"] == "dense":
        width = ffn["n_ff"]
    else:
        width = ffn["n_expert_used"] * ffn["n_ff_exp"]
    ffn_b = 2 * f32 * E * ub + 3 * f32 * width * ub + mask_dev
    gpu = max(out, attn, ffn_b)
    # host (CPU backend) buffer: graph inputs (token embeddings gathered on the CPU, the KQ mask)
    mask_host = (2 if (ci["fa"] and ci.get("mask_f16_host")) else 4) * nkv * ub
    if ci.get("n_kv_swa"):
        mask_host += (2 if (ci["fa"] and ci.get("mask_f16_host")) else 4) * ci["n_kv_swa"] * ub
    host = f32 * E * ub + mask_host
    return {"gpu": gpu, "host": host, "terms": {"output": out, "attention": attn, "ffn": ffn_b}}


# ---------------------------------------------------------------- main

def fmt_pct(est, got):
    if got == 0:
        return "n/a"
    return "%+.1f%%" % (100.0 * (est - got) / got)


def check(rec, verbose=False):
    p = parse(rec["lines"])
    extra = rec.get("parsed_extra", {})
    res = {"id": rec["id"], "kv": [], "cells": [], "output": None, "compute": [], "fail": []}
    groups = rec["kv_groups"]

    # KV size lines vs the formula
    sizes = list(p["kv_sizes"])
    for g_i, g in enumerate(groups):
        tk = rec["cache_type_k"]
        tv = rec["cache_type_v"]
        kb = g["layers"] * g["cells"] * g["streams"] * row_size(tk, g["k_width"])
        vb = g["layers"] * g["cells"] * g["streams"] * (row_size(tv, g["v_width"]) if g["v_width"] else 0)
        line = sizes[g_i] if g_i < len(sizes) else None
        if line is None:
            ek = [e for e in extra.get("kv", []) if e.get("group") == g["name"]]
            logged = ek[0]["mib"] if ek else None
            r = {"group": g["name"], "formula_mib": (kb + vb) / MIB, "logged_mib": logged, "k_resid_mib": None, "v_resid_mib": None}
            if logged is not None:
                r["total_resid_mib"] = (kb + vb) / MIB - logged
                if abs(r["total_resid_mib"]) > 0.005:
                    res["fail"].append("KV %s total off by %.3f MiB" % (g["name"], r["total_resid_mib"]))
            res["kv"].append(r)
            continue
        r = {"group": g["name"], "formula_mib": (kb + vb) / MIB, "logged_mib": line["mib"],
             "k_resid_mib": kb / MIB - line["k_mib"], "v_resid_mib": vb / MIB - line["v_mib"],
             "total_resid_mib": (kb + vb) / MIB - line["mib"]}
        for key in ("k_resid_mib", "v_resid_mib", "total_resid_mib"):
            if abs(r[key]) > 0.006:  # the log prints 2 decimals
                res["fail"].append("KV %s %s = %.3f MiB" % (g["name"], key, r[key]))
        if line["cells"] is not None:
            if line["cells"] != g["cells"] or line["layers"] != g["layers"]:
                res["fail"].append("KV %s cells/layers in the log (%s/%s) differ from the group (%s/%s)" % (
                    g["name"], line["cells"], line["layers"], g["cells"], g["layers"]))
            if line["streams"] != g["streams"]:
                res["fail"].append("KV %s streams %s vs %s" % (g["name"], line["streams"], g["streams"]))
        if line["type_k"] != tk or line["type_v"] != tv:
            res["fail"].append("cache types in the log %s/%s vs record %s/%s" % (line["type_k"], line["type_v"], tk, tv))
        res["kv"].append(r)

    # KV buffer lines: sum per cache group equals the size line (device split by layers when given)
    if p["kv_buffers"]:
        total_buf = sum(m for _, m in p["kv_buffers"])
        total_formula = sum(r["formula_mib"] for r in res["kv"])
        res["kv_buffers_resid_mib"] = total_formula - total_buf
        if abs(res["kv_buffers_resid_mib"]) > 0.02 * max(1, len(p["kv_buffers"])) and not rec.get("kv_buffers_partial"):
            res["fail"].append("sum of KV buffer lines %.2f vs formula %.2f" % (total_buf, total_formula))
        if rec.get("kv_per_device"):
            g = groups[0]
            per_layer = g["cells"] * g["streams"] * (row_size(rec["cache_type_k"], g["k_width"]) + row_size(rec["cache_type_v"], g["v_width"]))
            for dev, n in rec["kv_per_device"].items():
                got = [m for d, m in p["kv_buffers"] if d == dev]
                if got and abs(n * per_layer / MIB - got[0]) > 0.006:
                    res["fail"].append("KV on %s: %d layers -> %.2f MiB, log %.2f" % (dev, n, n * per_layer / MIB, got[0]))

    # geometry cross-check against the HF config
    if rec.get("hf_config") and not rec.get("geometry_from_config_skip"):
        try:
            mla_v = not (rec.get("llama_cpp_build_num") and rec["llama_cpp_build_num"] >= 7832)
            layers, cfg = geometry_from_config(rec["hf_config"], mla_v_stored=mla_v)
            if "k_width" in groups[0] and cfg.get("model_type") not in ("deepseek_v3",) or rec["id"].endswith("old-mla"):
                widths = {(k, v) for k, v, _ in layers}
                for g in groups:
                    if (g["k_width"], g["v_width"]) not in widths:
                        res["fail"].append("group %s widths %s/%s not in the config's %s" % (g["name"], g["k_width"], g["v_width"], sorted(widths)))
                n_swa_layers = sum(1 for *_, s in layers if s)
                if any(g["name"] == "SWA" for g in groups):
                    gs = [g for g in groups if g["name"] == "SWA"][0]
                    if gs["layers"] != n_swa_layers:
                        res["fail"].append("SWA layers %d vs config %d" % (gs["layers"], n_swa_layers))
                elif len(groups) == 1 and groups[0]["name"] == "all" and groups[0]["layers"] != len(layers):
                    res["fail"].append("layers %d vs config %d" % (groups[0]["layers"], len(layers)))
        except (OSError, KeyError) as e:
            res["fail"].append("config: %s" % e)

    # cell-count rules
    for v in rec.get("variants", []):
        n_ctx, per, ns = kv_cells(v["n_ctx_requested"], None, v["n_seq_max"], v["kv_unified"])
        ok = per == v["expect_cells"] and ns == v["expect_streams"]
        res["cells"].append({"args": v["args"], "rule_cells": per, "rule_streams": ns, "log_cells": v["expect_cells"], "ok": ok})
        if not ok:
            res["fail"].append("cells rule for %s" % v["args"])
    if rec.get("n_ctx_requested") is not None and not rec.get("variants"):
        n_ctx, per, ns = kv_cells(rec["n_ctx_requested"], rec.get("n_ctx_train"), rec["n_seq_max"], rec["kv_unified"],
                                  build=rec.get("llama_cpp_build_num"))
        base = [g for g in groups if g["name"] in ("all", "non-SWA", "attention")]
        if base and rec["n_ctx_requested"]:
            ok = base[0]["cells"] == per and base[0]["streams"] == ns
            res["cells"].append({"rule_cells": per, "rule_streams": ns, "log_cells": base[0]["cells"], "ok": ok})
            if not ok:
                res["fail"].append("base cells rule %d/%d vs %d/%d" % (per, ns, base[0]["cells"], base[0]["streams"]))
        for g in groups:
            if g["name"] == "SWA" and rec.get("n_ubatch"):
                want = swa_cells(per, g["n_swa"], rec["n_seq_max"], rec["kv_unified"], rec["n_ubatch"], rec.get("swa_full"))
                ok = want == g["cells"]
                res["cells"].append({"swa_rule_cells": want, "log_cells": g["cells"], "ok": ok})
                if not ok:
                    res["fail"].append("SWA cells rule %d vs %d" % (want, g["cells"]))
            elif g["name"] == "SWA" and rec.get("n_ubatch") is None:
                ub_max = g["cells"] - g["n_swa"] * (rec["n_seq_max"] if rec["kv_unified"] else 1)
                res["cells"].append({"swa_note": "n_ubatch not logged; the 256-padded rule fits any n_ubatch in (%d, %d]" % (max(0, ub_max - 256), ub_max)})

    # output buffer (host)
    ob = rec.get("output_buffer")
    if ob and p["output"]:
        dev, got = list(p["output"].items())[0]
        want = (ob["n_vocab"] + ob.get("n_embd_if_embeddings", 0)) * ob["rows"] * 4 / MIB
        res["output"] = {"device": dev, "formula_mib": want, "logged_mib": got, "resid_mib": round(want, 2) - got}
        if abs(round(want, 2) - got) > 0.006:
            res["fail_soft"] = res.get("fail_soft", []) + ["output buffer %.2f vs %.2f" % (want, got)]

    # compute buffers (estimate)
    ci = rec.get("compute_inputs")
    if ci and p["compute"]:
        est = estimate_compute(ci, rec["cache_type_k"], rec["cache_type_v"])
        for role, dev in (("gpu", ci["gpu"]), ("host", ci["host"])):
            if dev in p["compute"]:
                got = p["compute"][dev] * MIB
                res["compute"].append({"device": dev, "estimate_mib": est[role] / MIB, "logged_mib": got / MIB,
                                       "resid": fmt_pct(est[role], got),
                                       "dominant": max(est["terms"], key=est["terms"].get) if role == "gpu" else "inputs"})
    return res


def main(argv):
    path = os.path.join(FIXTURES, "llamacpp_logs.jsonl")
    verbose = "--verbose" in argv
    args = [a for a in argv if not a.startswith("--")]
    if args:
        path = args[0]
    recs = [json.loads(l) for l in open(path) if l.strip()]
    n_fail = 0
    print("%-52s %-10s %12s %12s %10s" % ("configuration", "KV group", "formula MiB", "logged MiB", "resid MiB"))
    results = []
    for rec in recs:
        r = check(rec, verbose)
        results.append(r)
        for k in r["kv"]:
            lg = "%.2f" % k["logged_mib"] if k["logged_mib"] is not None else "-"
            rs = "%+.3f" % k["total_resid_mib"] if k.get("total_resid_mib") is not None else "-"
            print("%-52s %-10s %12.3f %12s %10s" % (rec["id"][:52], k["group"][:10], k["formula_mib"], lg, rs))
    for rec, r in zip(recs, results):
        if "kv_buffers_resid_mib" in r and not r["kv"][0].get("logged_mib"):
            print("%-52s %-10s %12.3f %12s %10s" % (rec["id"][:52], "buffers", sum(k["formula_mib"] for k in r["kv"]),
                  "(buf lines)", "%+.3f" % r["kv_buffers_resid_mib"]))
    print()
    print("cell-count rules (n_ctx / n_ctx_seq / SWA padding):")
    for rec, r in zip(recs, results):
        for c in r["cells"]:
            print("  %-50s %s" % (rec["id"][:50], json.dumps(c)))
    print()
    print("output buffers (host, n_vocab * max(n_outputs, n_seq_max) * 4 B):")
    for rec, r in zip(recs, results):
        if r["output"]:
            o = r["output"]
            print("  %-50s %-10s formula %.3f  logged %.2f  resid %+.2f" % (rec["id"][:50], o["device"], o["formula_mib"], o["logged_mib"], o["resid_mib"]))
    print()
    print("compute buffers (estimate of NOTES.md section 4 vs logged):")
    for rec, r in zip(recs, results):
        for c in r["compute"]:
            print("  %-50s %-10s est %8.2f  logged %8.2f  %7s  (%s)" % (rec["id"][:50], c["device"], c["estimate_mib"], c["logged_mib"], c["resid"], c["dominant"]))
    print()
    for rec, r in zip(recs, results):
        if r["fail"]:
            n_fail += 1
            print("FAIL %s: %s" % (rec["id"], "; ".join(r["fail"])))
        if r.get("fail_soft"):
            print("note %s: %s" % (rec["id"], "; ".join(r["fail_soft"])))
    print("%d configurations, %d with KV/cell failures" % (len(recs), n_fail))
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
