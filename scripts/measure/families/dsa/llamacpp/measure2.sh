#!/usr/bin/env bash
# Second pass (after measure.sh, same GGUF_DIR): compute-buffer grid and cache-type cases, every
# run at -lv 5 so that the "~llama_context: CPU compute buffer size is X MiB" debug line gives
# the compute buffer to 4 decimals. Logs raw/grid/*.log, summary raw/grid/summary.txt.
#   scripts/measure/families/dsa/llamacpp/measure2.sh [GGUF_DIR]   (default /tmp/dsag)
set -u
here=$(cd "$(dirname "$0")" && pwd)
fam=$(cd "$here/../.." && pwd)
raw=$here/raw/grid
dir=${1:-/tmp/dsag}
mkdir -p "$raw"
r="nice -n 10 $fam/run_llamacpp.sh"
port=18810
for v in deepseek32 glmdsa-types; do
  m=$dir/tiny-$v-f16.gguf
  for fa in on off; do
    for c in 4096 8192 16384 32768; do
      $r "$m" "$raw/$v-c$c-ub512-fa$fa.log" $((port += 1)) -c $c -np 1 -fa $fa -lv 5 > /dev/null
    done
    for ub in 128 256 1024; do
      $r "$m" "$raw/$v-c16384-ub$ub-fa$fa.log" $((port += 1)) -c 16384 -np 1 -ub $ub -b 2048 -fa $fa -lv 5 > /dev/null
    done
    $r "$m" "$raw/$v-c16384-np2-fa$fa.log" $((port += 1)) -c 16384 -np 2 -fa $fa -lv 5 > /dev/null
    $r "$m" "$raw/$v-c16384-np4-fa$fa.log" $((port += 1)) -c 16384 -np 4 -fa $fa -lv 5 > /dev/null
    $r "$m" "$raw/$v-c16384-np4-kvu-fa$fa.log" $((port += 1)) -c 16384 -np 4 -kvu -fa $fa -lv 5 > /dev/null
    $r "$m" "$raw/$v-c4096-q8_0-fa$fa.log" $((port += 1)) -c 4096 -np 1 -ctk q8_0 -ctv q8_0 -fa $fa -lv 5 > /dev/null
  done
  $r "$m" "$raw/$v-c4096-q8_0-faauto.log" $((port += 1)) -c 4096 -np 1 -ctk q8_0 -ctv q8_0 -lv 5 > /dev/null
  $r "$m" "$raw/$v-c4096-bf16.log" $((port += 1)) -c 4096 -np 1 -ctk bf16 -ctv bf16 -lv 5 > /dev/null
  $r "$m" "$raw/$v-c4096-q4_0.log" $((port += 1)) -c 4096 -np 1 -ctk q4_0 -ctv q4_0 -fa on -lv 5 > /dev/null
  $r "$m" "$raw/$v-c4096-f32.log" $((port += 1)) -c 4096 -np 1 -ctk f32 -ctv f32 -lv 5 > /dev/null
  # -c 1000: padding of n_ctx to 256
  $r "$m" "$raw/$v-c1000.log" $((port += 1)) -c 1000 -np 1 -lv 5 > /dev/null
  $r "$m" "$raw/$v-c4000-np3.log" $((port += 1)) -c 4000 -np 3 -lv 5 > /dev/null
done
for f in "$raw"/*.log; do
  echo "== $(basename "$f")"
  grep -E " (I|W|E|D) (llama_kv_cache: size|llama_context: n_ctx(_seq)? |llama_context: n_ubatch|llama_context: flash_attn|sched_reserve: +CPU compute|~llama_context: +CPU compute buffer size is|llama_context: +CPU  output buffer|load_tensors: +CPU_Mapped)|error|does not support" "$f" | sed 's/^[0-9.]* //' || true
done > "$raw/summary.txt"
echo done
