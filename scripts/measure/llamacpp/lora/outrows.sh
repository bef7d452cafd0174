#!/usr/bin/env bash
# The output layer's stage of the compute buffer without an adapter, where it is the peak: a
# base of vocabulary 131072 (`WIDE=1 VOCAB=131072 gen.py DIR`) asked for 8 to 64 outputs a
# batch (llama-server's n_parallel), micro-batches of 128 to 512, flash attention on and off;
# and the output layer's adapter (allo, r 64) on two of them.
#   outrows.sh [MODEL_DIR=/tmp/lora131k] > raw/outrows.out
set -u
D=${1:-/tmp/lora131k}
BIN=/work/llama-b10488/build/bin; port=18641
wait_up() { for _ in $(seq 1 480); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.25; done; return 1; }
run() {  # ub np fa adapter
  local extra=(); [ "$4" != base ] && extra=(--lora "$D/wide-lora-$4-r64-f16.gguf")
  local log; log=$(mktemp)
  $BIN/llama-server -lv 4 --port $port -m "$D/wide-f16.gguf" -c 4096 -np "$2" -ub "$1" -fa "$3" \
    -ngl 0 "${extra[@]}" > "$log" 2>&1 &
  local pid=$!; wait_up "$log"; kill $pid; wait $pid 2>/dev/null
  printf 'ub%-4s np%-3s fa%-4s %-5s %s\n' "$1" "$2" "$3" "$4" \
    "$(grep -E 'compute buffer size' "$log" | sed 's/.*= *//' | tr '\n' ' ')"
  rm -f "$log"
}
for ub in 128 256 512; do for np in 8 16 32 64; do for fa in on off; do run $ub $np $fa base; done; done; done
run 128 32 on allo; run 256 64 off allo
