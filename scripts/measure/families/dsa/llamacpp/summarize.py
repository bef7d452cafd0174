"""Markdown table of the buffer lines of every llama-server log under raw/ and raw/grid/.
For each context the log creates (main, then the MTP draft context if any): n_ctx, n_ctx_seq,
n_ubatch, flash_attn (resolved), the DSA cache's two "KV buffer size" lines (MLA latent, then
indexer keys) with their cells/layers/streams/type, the compute buffer (4 decimals from the -lv 5
destructor line when present, else the 2-decimal sched_reserve line), output and model buffers.
    python3 summarize.py [RAW_DIR]"""
import glob
import os
import re
import sys

raw = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "raw")
rows = []
for f in sorted(glob.glob(os.path.join(raw, "*.log")) + glob.glob(os.path.join(raw, "grid", "*.log"))):
    if "quantize" in f:
        continue
    txt = open(f, errors="replace").read()
    # the real (last) load; -lv 5 runs first do a no_alloc fit pass that prints 0.00 MiB
    model = re.findall(r"CPU_Mapped model buffer size = +([0-9.]+) MiB", txt)
    err = re.findall(r" E llama_init_from_model: (.*)", txt)
    ctxs = txt.split("llama_context: constructing llama_context")[1:]
    ctxs = [c for c in ctxs if "KV buffer size =     0.00 MiB" not in c]
    dbg = re.findall(r"~llama_context: +CPU compute buffer size is +([0-9.]+) MiB", txt)
    name = os.path.relpath(f, raw)
    if not ctxs:
        rows.append(f"| {name} | | | | | | | | | | error: {err[0] if err else '?'} |")
        continue
    for i, c in enumerate(ctxs):
        g = lambda p: (re.search(p, c).group(1) if re.search(p, c) else "")
        kv = re.findall(r"llama_kv_cache: size = +([0-9.]+) MiB \( *(\d+) cells, +(\d+) layers, +(\d+)/(\d+) seqs\), K \((\w+)\)", c)
        kvs = " + ".join(f"{m} ({cells}c x{L}L x{st}s {t})" for m, cells, L, _, st, t in kv)
        cb = re.findall(r"sched_reserve: +CPU compute buffer size = +([0-9.]+) MiB", c)
        cbv = cb[-1] if cb else ""
        if i == 0 and dbg:
            cbv = dbg[0] if len(ctxs) == 1 else cbv
        fa = "on" if "Flash Attention enabled" in c else ("off" if re.search(r"flash_attn += disabled", c) else g(r"flash_attn += (\w+)"))
        n_ctx, n_ctx_seq = g(r"n_ctx += (\d+)"), g(r"n_ctx_seq += (\d+)")
        n_ub, n_seq = g(r"n_ubatch += (\d+)"), g(r"n_seq_max += (\d+)")
        out = g(r"CPU  output buffer size = +([0-9.]+) MiB")
        mtp = " (MTP ctx)" if i else ""
        mod = model[-1] if model and i == 0 else ""
        rows.append(f"| {name}{mtp} | {n_ctx} | {n_ctx_seq} | {n_ub} | {n_seq} | {fa} | {kvs} | {cbv} | {out} | {mod} | |")
print("| log | n_ctx | n_ctx_seq | n_ubatch | n_seq | FA | KV buffers MiB (cells x layers x streams type) | compute MiB | output MiB | model MiB | note |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
