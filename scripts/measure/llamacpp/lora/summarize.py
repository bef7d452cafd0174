#!/usr/bin/env python3
"""Table of every case in raw/: server log lines + probe bytes, and the LoRA-buffer prediction.

    tar -xJf raw/logs.tar.xz -C raw     # the logs are kept compressed
    ~/.gguf-venv/bin/python scripts/measure/llamacpp/lora/summarize.py [MODEL_DIR=/tmp/lora] > raw/table.md

Columns: LoRA buffer(s) as printed (MiB) and probed (bytes) with the prediction
sum(pad32(nbytes(t))) over the adapter file's tensors (read with the gguf package when it is
importable, else skipped); CPU compute buffer (every sched_reserve line; the last one is the
one in force) and probed bytes; delta against the case's baseline (same prefix, "base").
"""
from __future__ import annotations

import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "raw")
D = sys.argv[1] if len(sys.argv) > 1 else "/tmp/lora"

try:
    import gguf  # type: ignore
except ImportError:  # pragma: no cover
    gguf = None


def pad(n: int, a: int = 32) -> int:
    return (n + a - 1) // a * a


def predict_lora(path: str) -> int | None:
    if gguf is None or not os.path.exists(path):
        return None
    r = gguf.GGUFReader(path)
    return sum(pad(int(t.n_bytes)) for t in r.tensors if t.name.endswith((".lora_a", ".lora_b")))


def parse(name: str) -> dict:
    log = open(os.path.join(RAW, name + ".log"), errors="replace").read()
    d = {"name": name}
    d["lora_mib"] = re.findall(r"(\S+) LoRA buffer size =\s+([\d.]+) MiB", log)
    d["compute_mib"] = re.findall(r"sched_reserve:\s+(\S+) compute buffer size =\s+([\d.]+) MiB", log)
    d["nodes"] = re.findall(r"graph nodes\s+=\s+(\d+)", log)
    d["model_mib"] = re.findall(r"(\S+) model buffer size =\s+([\d.]+) MiB", log)
    d["kv_mib"] = re.findall(r"(\S+) KV buffer size =\s+([\d.]+) MiB", log)
    d["out_mib"] = re.findall(r"(\S+)\s+output buffer size =\s+([\d.]+) MiB", log)
    d["adapters"] = re.findall(r"loading lora adapter from '([^']+)'", log)
    d["warn"] = re.findall(r"lora for '[^']+' cannot use buft '([^']+)'", log)
    p = os.path.join(RAW, name + ".probe")
    d["lora_b"], d["compute_b"], d["model_b"], d["ctx_b"] = [], {}, {}, {}
    if os.path.exists(p):
        for line in open(p):
            f = line.split()
            if f and f[0] == "LORA":
                d["lora_b"].append((f[2], int(f[3])))
            elif f and f[0] == "COMPUTE" and int(f[2]):
                d["compute_b"][f[1]] = int(f[2])
            elif f and f[0] == "MODEL" and int(f[2]):
                d["model_b"][f[1]] = int(f[2])
            elif f and f[0] == "CONTEXT" and int(f[2]):
                d["ctx_b"][f[1]] = int(f[2])
    return d


def main() -> None:
    names = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(RAW, "*.log"))
                   if not os.path.basename(p).startswith("measure"))
    rows = {n: parse(n) for n in names}
    print("| case | LoRA buffers printed | LoRA bytes probed | predicted sum pad32(nbytes) | repack fallbacks | compute lines (MiB) | graph nodes | compute bytes probed | delta vs base (bytes) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, d in rows.items():
        preds = [predict_lora(a if os.path.isabs(a) else os.path.join(D, os.path.basename(a))) for a in d["adapters"]]
        base = re.sub(r"-(attn|all|allo|odd)-r\d+-(f16|f32|q8_0)(?=-fa|$)", "-base", n)
        if n.startswith("H-"):
            base = re.sub(r"^H-(ub\d+)-gate-r\d+-(fa\w+)$", r"B-\1-base-\2", n)
        if n.startswith(("G-", "E-nommap", "E-ngl")):
            base = "A-f16-base-faon"
        if n.startswith("D-"):
            base = re.sub(r"^(D-[^-]+)-.*", r"\1-base", n)
        delta = ""
        if base != n and base in rows and rows[base]["compute_b"] and d["compute_b"]:
            delta = str(sum(d["compute_b"].values()) - sum(rows[base]["compute_b"].values()))
        print(f"| {n} | {'; '.join(f'{b} {m}' for b, m in d['lora_mib'])} | "
              f"{'; '.join(f'{b} {x}' for b, x in d['lora_b'])} | {'; '.join(str(p) for p in preds)} | "
              f"{len(d['warn'])} | {', '.join(m for _, m in d['compute_mib'])} | {', '.join(d['nodes'])} | "
              f"{'; '.join(f'{b} {x}' for b, x in d['compute_b'].items())} | {delta} |")


if __name__ == "__main__":
    main()
