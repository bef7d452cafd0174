#!/usr/bin/env bash
# An adapter on the output layer (lm_head) in the compute buffer: the wide base
# (`WIDE=1 gen.py`, vocabulary 32768) without an adapter, with every projection adapted
# (all) and with the output layer too (allo), at micro-batches of 128 and 512, with 1 and
# 64 parallel sequences (llama-server asks for n_parallel outputs a batch: 64 make the
# logits the compute peak), flash attention on and off. Prints each run's compute lines.
#   head.sh [MODEL_DIR=/tmp/lora] > raw/head.out
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
D=${1:-/tmp/lora}
BIN=/work/llama-b10488/build/bin; RAW=$HERE/raw/head; port=18633   # tarred afterwards: raw/head-logs.tar.xz
mkdir -p "$RAW"
wait_up() { for _ in $(seq 1 480); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.25; done; return 1; }
for ub in 128 512; do
  for np in 1 64; do
    for fa in on off; do
      for ad in base all allo; do
        extra=(); [ $ad != base ] && extra=(--lora "$D/wide-lora-$ad-r64-f16.gguf")
        tag=wide-ub$ub-np$np-fa$fa-$ad
        log=$RAW/$tag.log
        $BIN/llama-server -lv 4 --port $port -m "$D/wide-f16.gguf" -c 4096 -np $np -ub $ub -fa $fa \
          -ngl 0 "${extra[@]}" > "$log" 2>&1 &
        pid=$!; wait_up "$log"; kill $pid; wait $pid 2>/dev/null
        printf '%-32s %s\n' "$tag" "$(grep -E 'compute buffer size|LoRA buffer size' "$log" | sed 's/.*: *//' | tr -s ' ' | tr '\n' ';')"
      done
    done
  done
done
