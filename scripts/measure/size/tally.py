#!/usr/bin/env python3
"""Tallies `twiggy top -f csv` rows by crate/module: the function's owning
path (the innermost `crate::module` of its name, trait impls by the impl's
type), so `<vramfit_core::x::Y as core::fmt::Debug>::fmt` counts to
vramfit_core::x. Usage: tally.py top.csv [depth]"""
import csv, re, sys
from collections import Counter

depth = int(sys.argv[2]) if len(sys.argv) > 2 else 2
rows = list(csv.DictReader(open(sys.argv[1])))
tally = Counter()
for r in rows:
    name, size = r["Name"], int(r["ShallowSize"])
    if name.startswith('"function names"') or name.startswith("custom section") or name.startswith("data segment"):
        tally[name] += size
        continue
    n = re.sub(r"\[[0-9a-f]{16}\]", "", name)
    # `<impl X for Y>` / `<Y as X>`: use Y (the implementing type's crate)
    # `<Y as X>::f`: Y's path, or X's when Y is a bare generic (`<T as X>`)
    m = re.match(r"^<(.+?) as (.+?)>::", n)
    if m:
        n = m.group(2) if re.fullmatch(r"[A-Z]|\(.*\)|\[.*\]", m.group(1)) else m.group(1)
    n = re.sub(r"^(<|&|\*|mut |const |dyn )+", "", n)
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)", n)
    key = m.group(1) if m else n[:30]
    parts = key.split("::")
    if parts[0] in ("core", "alloc", "std"):
        key = parts[0]
    else:
        key = "::".join(parts[:depth])
    if re.match(r"^(elem|func|type|global|table|import|export|code)\[", name) or name.startswith("elem"):
        key = "(wasm sections/other)"
    tally[key] += size
total = sum(tally.values())
for k, v in tally.most_common(60):
    print(f"{v:9d} {100*v/total:5.1f}%  {k}")
print(f"{total:9d}  total")
