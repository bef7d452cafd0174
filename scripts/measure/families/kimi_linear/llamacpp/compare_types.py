"""Per-tensor type table: f16 file vs Q4_K_M file (gguf-py GGUFReader), one row per tensor, then
a summary grouped by name with the layer index replaced by N and the layer kind (KDA / MLA).
    ~/.gguf-venv/bin/python compare_types.py F16.gguf Q4KM.gguf > raw/X-types.txt
"""
import collections
import re
import sys

import gguf

a = {t.name: t for t in gguf.GGUFReader(sys.argv[1]).tensors}
b = {t.name: t for t in gguf.GGUFReader(sys.argv[2]).tensors}
mla = set()
for n in a:
    m = re.match(r"blk\.(\d+)\.attn_kv_a_mqa", n)
    if m:
        mla.add(int(m.group(1)))
print(f"{'tensor':<34} {'ggml shape':<22} {'f16 type':<6} {'bytes':>12} {'Q4_K_M':<6} {'bytes':>12}")
groups = collections.OrderedDict()
for n, t in a.items():
    q = b[n]
    shape = [int(x) for x in t.shape]
    print(f"{n:<34} {str(shape):<22} {t.tensor_type.name:<6} {int(t.n_bytes):>12,} {q.tensor_type.name:<6} {int(q.n_bytes):>12,}")
    m = re.match(r"blk\.(\d+)\.(.*)", n)
    if m:
        il = int(m.group(1))
        k = ("MLA" if il in mla else "KDA") + " blk.N." + m.group(2)
    else:
        k = n
    g = groups.setdefault(k, {"n": 0, "shape": shape, "f16": collections.Counter(), "q": collections.Counter(), "fb": 0, "qb": 0, "layers": []})
    g["n"] += 1
    g["f16"][t.tensor_type.name] += 1
    g["q"][f"{q.tensor_type.name}"] += 1
    g["fb"] += int(t.n_bytes)
    g["qb"] += int(q.n_bytes)
    if m:
        g["layers"].append((int(m.group(1)), q.tensor_type.name))
print()
print("summary (layer kind by presence of attn_kv_a_mqa)")
for k, g in groups.items():
    lay = ""
    if len(set(x for _, x in g["layers"])) > 1:
        lay = " per layer: " + ",".join(f"{i}:{x}" for i, x in g["layers"])
    print(f"{k:<34} n={g['n']:<3} {str(g['shape']):<22} f16 {dict(g['f16'])} {g['fb']:,} -> Q4_K_M {dict(g['q'])} {g['qb']:,}{lay}")
