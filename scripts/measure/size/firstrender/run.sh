#!/usr/bin/env bash
# What a first visit runs (issue 28, item 4): instruments the page's wasm
# (wasm-opt --log-execution: a call at each function's entry, loop and
# return), loads each link of LINKS in headless Chromium until its first
# total appears, and writes which functions ran. Then builds, per link and for
# their union, (a) the module with every function that did not run replaced
# by `unreachable` (a lower bound for any split), and (b) a real two-way split
# (split.mjs: the functions that ran in a primary module, the rest in one
# secondary reached through table stubs), each optimized at -Oz, and prints
# raw and gzip -9 bytes.
# Needs: scripts/measure/size/page.sh's output in $SIZE (default /tmp/size)
# and a release dist/ (Trunk) of the same tree. Usage: run.sh [outdir]
set -euo pipefail
cd "$(dirname "$0")/../../../.."
. scripts/env.sh
SIZE=${SIZE:-/tmp/size}
OUT=${1:-/tmp/firstrender}
HERE=scripts/measure/size/firstrender
mkdir -p "$OUT"
wasm-opt "$SIZE/pre-opt.wasm" --log-execution -g -o "$OUT/instr.wasm"
wasm-dis "$OUT/instr.wasm" -o "$OUT/instr.wat"
rm -rf "$OUT/dist" && cp -r dist "$OUT/dist"
cp "$OUT/instr.wasm" "$OUT/dist/vramfit-web_bg.wasm"
cp "$SIZE/vramfit-web.js" "$OUT/dist/vramfit-web.js"
python3 "$HERE/coverage.py" patch "$OUT"
node "$HERE/visit.mjs" "$OUT" "$HERE/links.json"
python3 "$HERE/coverage.py" sets "$OUT"
for k in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))), "union")' "$OUT/hits.json"); do
  node "$HERE/split.mjs" "$SIZE/pre-opt.wasm" "$OUT/plan-$k.json" "$OUT/lower-$k" unreachable
  node "$HERE/split.mjs" "$SIZE/pre-opt.wasm" "$OUT/plan-$k.json" "$OUT/split-$k"
  for f in "$OUT/lower-$k/primary.wasm" "$OUT/split-$k/"*.wasm; do
    printf '%-8s %-28s %9d raw %8d gzip\n' "$k" "${f#$OUT/}" "$(stat -c%s "$f")" "$(gzip -9c "$f" | wc -c)"
  done
done
for k in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))))' "$OUT/hits.json"); do
  python3 "$HERE/coverage.py" tally "$OUT" "$k" "$SIZE/pre-opt.wasm" > "$OUT/ran-$k.txt"
done
