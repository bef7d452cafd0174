#!/usr/bin/env bash
# LoRA memory runs for llama.cpp b10488 (CPU build). Each case runs
#   1. llama-server (log kept as raw/<case>.log, -lv 4; stopped once it listens), and
#   2. lora-probe with the same arguments (raw/<case>.probe: byte-exact buffer sizes).
#   scripts/measure/llamacpp/lora/measure.sh [MODEL_DIR=/tmp/lora]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
D=${1:-/tmp/lora}
BIN=/work/llama-b10488/build/bin
RAW=$HERE/raw
mkdir -p "$RAW"
port=18630

run() {  # run CASE server-args...
  local name=$1; shift
  local log=$RAW/$name.log
  $BIN/llama-server -lv 4 --port $port "$@" > "$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 240); do
    grep -q "listening on\|model loaded\|error" "$log" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.25
  done
  sleep 0.3
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
  $BIN/lora-probe "$@" > "$RAW/$name.probe" 2> "$RAW/$name.probe.err"
  printf '%-40s %s\n' "$name" "$(grep -E 'LoRA buffer size|compute buffer size' "$log" | sed 's/.*: *//' | tr -s ' ' | tr '\n' ';')"
}

F16=$D/base-f16.gguf
L=$D   # adapters: lora-<targets>-r<rank>-<dtype>.gguf

# A. every adapter on the f16 base, -c 4096 -np 1 -ub 512, FA on and off
for fa in on off; do
  run "A-f16-base-fa$fa" -m $F16 -c 4096 -np 1 -fa $fa
  for a in attn-r8-f16 attn-r64-f16 all-r8-f16 all-r64-f16 all-r64-f32 all-r64-q8_0 all-r8-q8_0 allo-r64-f16 odd-r7-f32 all-r256-f16; do
    run "A-f16-$a-fa$fa" -m $F16 -c 4096 -np 1 -fa $fa --lora $L/lora-$a.gguf
  done
done

# B. ubatch sweep (b = max(2048, ub))
for ub in 32 128 256 512 1024 2048; do
  b=$(( ub > 2048 ? ub : 2048 ))
  for fa in on off; do
    run "B-ub$ub-base-fa$fa" -m $F16 -c 4096 -np 1 -b $b -ub $ub -fa $fa
    for a in attn-r64-f16 all-r8-f16 all-r64-f16 all-r256-f16 allo-r64-f16; do
      run "B-ub$ub-$a-fa$fa" -m $F16 -c 4096 -np 1 -b $b -ub $ub -fa $fa --lora $L/lora-$a.gguf
    done
  done
done

# C. context sweep, FA off (KQ grows with n_ctx)
for c in 1024 8192; do
  run "C-c$c-base-faoff" -m $F16 -c $c -np 1 -fa off
  run "C-c$c-all-r64-f16-faoff" -m $F16 -c $c -np 1 -fa off --lora $L/lora-all-r64-f16.gguf
  run "C-c$c-all-r64-f16-faon" -m $F16 -c $c -np 1 -fa on --lora $L/lora-all-r64-f16.gguf
  run "C-c$c-base-faon" -m $F16 -c $c -np 1 -fa on
done

# D. base dtypes, repack on (default) and off
for q in q8_0 q4_0; do
  run "D-$q-base" -m $D/base-$q.gguf -c 4096 -np 1 -fa on
  run "D-$q-all-r64-f16" -m $D/base-$q.gguf -c 4096 -np 1 -fa on --lora $L/lora-all-r64-f16.gguf
  run "D-$q-all-r64-f16-norepack" -m $D/base-$q.gguf -c 4096 -np 1 -fa on --no-repack --lora $L/lora-all-r64-f16.gguf
  run "D-$q-all-r64-q8_0" -m $D/base-$q.gguf -c 4096 -np 1 -fa on --lora $L/lora-all-r64-q8_0.gguf
done

# E. --no-mmap, -ngl (CPU build: no GPU, -ngl changes nothing), server defaults (np auto = 4)
run "E-nommap-all-r64-f16" -m $F16 -c 4096 -np 1 -fa on --no-mmap --lora $L/lora-all-r64-f16.gguf
run "E-ngl2-all-r64-f16" -m $F16 -c 4096 -np 1 -fa on -ngl 2 --lora $L/lora-all-r64-f16.gguf
run "E-defaults-base" -m $F16
run "E-defaults-all-r64-f16" -m $F16 --lora $L/lora-all-r64-f16.gguf

# G. apply variants: init-without-apply, scale 0, scale 0.5, two adapters
run "G-noapply-all-r64-f16" -m $F16 -c 4096 -np 1 -fa on --lora $L/lora-all-r64-f16.gguf --lora-init-without-apply
run "G-scale0-all-r64-f16" -m $F16 -c 4096 -np 1 -fa on --lora-scaled $L/lora-all-r64-f16.gguf:0
run "G-scale05-all-r64-f16" -m $F16 -c 4096 -np 1 -fa on --lora-scaled $L/lora-all-r64-f16.gguf:0.5
run "G-two-all-r64+attn-r64" -m $F16 -c 4096 -np 1 -fa on --lora $L/lora-all-r64-f16.gguf --lora $L/lora-attn-r64-f16.gguf
run "G-two-all-r64+all-r64" -m $F16 -c 4096 -np 1 -fa on --lora $L/lora-all-r64-f16.gguf --lora $L/lora-all-r64-f32.gguf
