#!/usr/bin/env python3
"""Helpers of run.sh (and `tally`, below). `patch OUT`: gives the instrumented page's JavaScript
the import wasm-opt's --log-execution adds, and drops Trunk's integrity
hashes (the files differ from the ones hashed). `sets OUT`: maps the logged
ids to functions (the `i32.const` after each call of the log import, in
instr.wat, counted by defined function) and writes plan-<link>.json (the
defined functions that did not run: 1, those that ran: 0) for each link and
for their union, and prints how many ran."""
import json, re, sys
from collections import Counter


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def wasm_bodies(b):
    """Each defined function's body size and the name section's names (by defined index)."""
    i, imports, sizes, names = 8, 0, [], {}
    while i < len(b):
        sid = b[i]
        n, i = leb(b, i + 1)
        end, j = i + n, i
        if sid == 2:
            count, j = leb(b, j)
            for _ in range(count):
                for _ in range(2):
                    l, j = leb(b, j)
                    j += l
                kind = b[j]
                j += 1
                if kind == 0:
                    _, j = leb(b, j)
                    imports += 1
                elif kind in (1, 2):
                    j += kind == 1
                    flags = b[j]
                    _, j = leb(b, j + 1)
                    if flags & 1:
                        _, j = leb(b, j)
                else:
                    j += 2
        elif sid == 10:
            count, j = leb(b, j)
            for _ in range(count):
                l, j = leb(b, j)
                sizes.append(l)
                j += l
        elif sid == 0:
            l, j = leb(b, j)
            if b[j : j + l] == b"name":
                j += l
                while j < end:
                    sub = b[j]
                    sl, j = leb(b, j + 1)
                    if sub == 1:
                        k, q = leb(b, j)
                        for _ in range(k):
                            idx, q = leb(b, q)
                            l2, q = leb(b, q)
                            names[idx - imports] = b[q : q + l2].decode(errors="replace")
                            q += l2
                    j += sl
        i = end
    return sizes, names


def crate_of(name):
    m = re.match(r"<?([A-Za-z_]\w*)(::([A-Za-z_]\w*))?", name)
    if not m:
        return "?"
    if m.group(1) in ("vramfit_core", "vramfit_web") and m.group(3):
        return f"{m.group(1)}::{m.group(3)}"
    return m.group(1)


cmd, out = sys.argv[1], sys.argv[2]
if cmd == "patch":
    js = f"{out}/dist/vramfit-web.js"
    s = open(js).read()
    old = '"./vramfit-web_bg.js": import0,'
    assert old in s, "wasm-bindgen's import object changed"
    s = s.replace(old, '"./vramfit-web_bg.js": Object.assign(import0, { log_execution: (i) => { (globalThis.__ran ||= new Set()).add(i); } }),', 1)
    open(js, "w").write(s)
    html = f"{out}/dist/index.html"
    page = re.sub(r' integrity="[^"]*"', "", open(html).read())
    open(html, "w").write(page)
    sys.exit(0)

wat = open(f"{out}/instr.wat").read()
log = re.search(r'\(import "[^"]*" "log_execution" \(func (\$\S+)', wat).group(1)
fn, owner, after_log = -1, {}, False
for line in wat.splitlines():
    if line.startswith(" (func "):
        fn += 1
    m = re.match(r"\s+\(i32\.const (\d+)\)", line)
    if after_log and m:
        owner[int(m.group(1))] = fn
    after_log = line.strip() == f"(call {log}"
n = fn + 1
if cmd == "tally":
    # Code bytes (function bodies of pre-opt.wasm, names kept) by crate, and
    # how many of them ran on the link given: `tally OUT LINK PRE_OPT_WASM`.
    ran = {owner[i] for i in json.load(open(f"{out}/hits.json"))[sys.argv[3]]}
    sizes, names = wasm_bodies(open(sys.argv[4], "rb").read())
    total, kept = Counter(), Counter()
    for d, size in enumerate(sizes):
        c = crate_of(names.get(d, "?"))
        total[c] += size
        kept[c] += size if d in ran else 0
    print(f"{'crate or module':40s} {'code':>8s} {'ran':>8s}")
    print(f"{'(all)':40s} {sum(total.values()):8d} {sum(kept.values()):8d}")
    for c, size in total.most_common(30):
        print(f"{c:40s} {size:8d} {kept[c]:8d}")
    sys.exit(0)
hits = json.load(open(f"{out}/hits.json"))
ran = {k: {owner[i] for i in ids} for k, ids in hits.items()}
ran["union"] = set().union(*ran.values())
for k, fs in ran.items():
    json.dump({d: (0 if d in fs else 1) for d in range(n)}, open(f"{out}/plan-{k}.json", "w"))
    print(f"{k}: {len(fs)} of {n} defined functions ran")
