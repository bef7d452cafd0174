#!/usr/bin/env bash
# Builds the page's wasm as Trunk does (cargo wasm-release, wasm-bindgen
# --target web, wasm-opt -Oz), without the workers, into $OUT (default
# /tmp/size), and prints raw and gzip -9 bytes of each stage.
# Usage: scripts/measure/size/page.sh [extra cargo args...]
set -euo pipefail
cd "$(dirname "$0")/../../.."
. scripts/env.sh
OUT=${OUT:-/tmp/size}
mkdir -p "$OUT"
cargo build --profile wasm-release --target wasm32-unknown-unknown --bin vramfit-web --locked "$@" 2>&1 | tail -1
TARGET=${CARGO_TARGET_DIR:-target}
wasm-bindgen --target=web --out-dir="$OUT" --out-name=vramfit-web --no-typescript \
  "$TARGET/wasm32-unknown-unknown/wasm-release/vramfit-web.wasm"
cp "$OUT/vramfit-web_bg.wasm" "$OUT/pre-opt.wasm"
wasm-opt ${WASM_OPT_FLAGS:--Oz} "$OUT/pre-opt.wasm" -o "$OUT/vramfit-web_bg.wasm"
for f in "$OUT/pre-opt.wasm" "$OUT/vramfit-web_bg.wasm" "$OUT/vramfit-web.js"; do
  printf '%-40s %9d raw %8d gzip\n' "$(basename "$f")" "$(stat -c%s "$f")" "$(gzip -9c "$f" | wc -c)"
done
