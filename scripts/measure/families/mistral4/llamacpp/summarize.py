"""Markdown table of the buffer lines of every llama-server log under raw/ and raw/grid/ (b10488,
MLA models: one plain llama_kv_cache with K only). Per log: arch, n_ctx, n_ctx_seq, n_ubatch, n_seq,
flash_attn (resolved), the "llama_kv_cache: size" line (cells, layers, streams, K type) with the
bytes the code rule gives (n_embd_head_k x bytes(type) x cells x streams x layers, to check
against the printed MiB), the compute buffer (4 decimals from the -lv 5 destructor line when
present, else the 2-decimal sched_reserve line), output and model buffers, or the error.
    python3 summarize.py [RAW_DIR]"""
import glob
import os
import re
import sys

raw = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "raw")
TYPE_BYTES = {"f32": 4.0, "f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32,
              "q5_0": 22 / 32, "q5_1": 24 / 32}
rows = []
for f in sorted(glob.glob(os.path.join(raw, "*.log")) + glob.glob(os.path.join(raw, "grid", "*.log"))):
    if any(s in f for s in ("quantize", "convert", "make_hf")):
        continue
    txt = open(f, errors="replace").read()
    name = os.path.relpath(f, raw)
    arch = re.search(r"print_info: arch += (\S+)", txt)
    arch = arch.group(1) if arch else ""
    hk = re.search(r"print_info: n_embd_head_k += (\d+)", txt)
    hk = int(hk.group(1)) if hk else 0
    # the real (last) load; -lv 5 runs first do a no_alloc fit pass that prints 0.00 MiB
    model = re.findall(r"CPU_Mapped model buffer size = +([0-9.]+) MiB", txt)
    err = re.findall(r" E llama_init_from_model: (.*)", txt)
    ctxs = txt.split("llama_context: constructing llama_context")[1:]
    ctxs = [c for c in ctxs if "KV buffer size =     0.00 MiB" not in c]
    dbg = re.findall(r"~llama_context: +CPU compute buffer size is +([0-9.]+) MiB", txt)
    if not ctxs:
        rows.append(f"| {name} | {arch} | | | | | | | | | | | error: {err[0] if err else '?'} |")
        continue
    c = ctxs[-1]
    g = lambda p: (re.search(p, c).group(1) if re.search(p, c) else "")
    kv = re.findall(r"llama_kv_cache: size = +([0-9.]+) MiB \( *(\d+) cells, +(\d+) layers, +(\d+)/(\d+) seqs\), K \((\w+)\)", c)
    kvs, kvb = "", ""
    if kv:
        mib, cells, layers, _, st, t = kv[-1]
        kvs = f"{mib} ({cells}c x{layers}L x{st}s {t})"
        b = hk * TYPE_BYTES[t] * int(cells) * int(st) * int(layers)
        kvb = f"{b:,.0f}" + ("" if abs(b / 2**20 - float(mib)) < 0.006 else " MISMATCH")
    cb = re.findall(r"sched_reserve: +CPU compute buffer size = +([0-9.]+) MiB", c)
    cbv = dbg[-1] if dbg else (cb[-1] if cb else "")
    fa = "on" if ("Flash Attention enabled" in c or re.search(r"flash_attn += enabled", c)) else (
        "off" if re.search(r"flash_attn += disabled", c) else g(r"flash_attn += (\w+)"))
    out = g(r"CPU  output buffer size = +([0-9.]+) MiB")
    rot = g(r"attn_rot_k = (\d)")
    n_ctx, n_ctx_seq = g(r"n_ctx += (\d+)"), g(r"n_ctx_seq += (\d+)")
    n_ub, n_seq = g(r"n_ubatch += (\d+)"), g(r"n_seq_max += (\d+)")
    mod = model[-1] if model else ""
    rows.append(f"| {name} | {arch} | {n_ctx} | {n_ctx_seq} | {n_ub} | {n_seq} | {fa} | {kvs} | {kvb} | {rot} | {cbv} | {out} | {mod} |")
print("| log | arch | n_ctx | n_ctx_seq | n_ubatch | n_seq | FA | KV MiB printed (cells x layers x streams type) "
      "| KV bytes by the rule | attn_rot_k | compute MiB | output MiB | model MiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
