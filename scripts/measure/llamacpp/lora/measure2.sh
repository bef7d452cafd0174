#!/usr/bin/env bash
# Second grid: large-rank ffn_gate-only adapters (where the compute buffer starts to grow) and a
# narrow-FFN base (n_ff = n_embd); plus allocator-debug traces (libggml-base built with
# -DGGML_ALLOCATOR_DEBUG in /work/llama-b10488/build-adbg) of the compute-buffer peak.
#   measure2.sh [MODEL_DIR=/tmp/lora]    (after gen.py OUT big; NARROW=1 gen.py OUT)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
D=${1:-/tmp/lora}
source <(sed -n '/^run() {/,/^}/p' "$HERE/measure.sh")
BIN=/work/llama-b10488/build/bin; RAW=$HERE/raw; port=18631
F16=$D/base-f16.gguf
for ub in 128 512; do
  for fa in on off; do
    for r in 512 1024 2048 4096; do
      run "H-ub$ub-gate-r$r-fa$fa" -m $F16 -c 4096 -np 1 -ub $ub -fa $fa --lora $D/lora-gate-r$r-f16.gguf
    done
    run "N-ub$ub-base-fa$fa" -m $D/narrow-f16.gguf -c 4096 -np 1 -ub $ub -fa $fa
    for r in 8 64; do
      run "N-ub$ub-all-r$r-f16-fa$fa" -m $D/narrow-f16.gguf -c 4096 -np 1 -ub $ub -fa $fa --lora $D/narrow-lora-all-r$r-f16.gguf
    done
  done
done
# allocator traces (-lv 5): peak tensors
mkdir -p "$RAW/adbg"
adbg() {  # adbg CASE args...
  local name=$1; shift
  LD_LIBRARY_PATH=/work/llama-b10488/build-adbg/bin $BIN/lora-probe -lv 5 "$@" > "$RAW/adbg/$name.probe" 2> "$RAW/adbg/$name.err"
  python3 "$HERE/adbg_peak.py" "$RAW/adbg/$name.err" > "$RAW/adbg/$name.peak"
  xz -9f "$RAW/adbg/$name.err"
  echo "$name: $(head -1 "$RAW/adbg/$name.peak")"
}
adbg base-faon     -m $F16 -c 4096 -np 1 -fa on
adbg all-r64-faon  -m $F16 -c 4096 -np 1 -fa on --lora $D/lora-all-r64-f16.gguf
adbg base-faoff    -m $F16 -c 4096 -np 1 -fa off
adbg all-r64-faoff -m $F16 -c 4096 -np 1 -fa off --lora $D/lora-all-r64-f16.gguf
adbg gate-r2048-faon -m $F16 -c 4096 -np 1 -fa on --lora $D/lora-gate-r2048-f16.gguf
adbg gate-r4096-faon -m $F16 -c 4096 -np 1 -fa on --lora $D/lora-gate-r4096-f16.gguf
adbg narrow-base-faon -m $D/narrow-f16.gguf -c 4096 -np 1 -fa on
adbg narrow-all-r64-faon -m $D/narrow-f16.gguf -c 4096 -np 1 -fa on --lora $D/narrow-lora-all-r64-f16.gguf
