#!/usr/bin/env bash
# Traces of the harness's training runs (transformers 5.23, torch 2.15,
# fake tensors) replayed through the caching allocator's port:
# raw/replay.jsonl, one line per run. From the repository root:
#   scripts/measure/allocator/matrix.sh   (PY=~/.gt-venv/bin/python by default)
set -euo pipefail
cd "$(dirname "$0")/../../.."
PY=${PY:-$HOME/.gt-venv/bin/python}
OUT=scripts/measure/allocator/raw
TRACES=${TRACES:-/tmp/vramfit-traces}
mkdir -p "$OUT" "$TRACES"
: > "$OUT/replay.jsonl"
cargo build -q --release -p vramfit-core --example replay
n=0
while read -r args; do
  [ -z "$args" ] && continue
  n=$((n + 1))
  t="$TRACES/run$n.trace"
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 "$PY" scripts/measure/allocator/trace.py "$t" -- $args --threads 1 > /dev/null
  target/release/examples/replay "$t" >> "$OUT/replay.jsonl"
done <<'RUNS'
--model llama3.2-1b --dtype bf16 --batch 2 --seq 1024
--model llama3.2-1b --dtype bf16 --batch 2 --seq 1024 --gc 1
--model llama3.2-1b --dtype amp_bf16 --batch 4 --seq 2048 --gc 1
--model gpt2-124m --dtype fp32 --batch 8 --seq 1024
--model gpt2-124m --dtype fp32 --batch 8 --seq 1024 --attn eager
--model qwen2.5-0.5b --dtype bf16 --batch 4 --seq 2048
--model qwen2.5-1.5b --dtype bf16 --batch 4 --seq 2048 --gc 1 --lora 1 --lora-r 16
--model gemma-2b --dtype bf16 --batch 2 --seq 2048 --gc 1
--model llama3.1-8b --dtype bf16 --batch 1 --seq 4096 --gc 1 --lora 1 --lora-r 16
--model mistral-7b --dtype bf16 --batch 2 --seq 2048 --lora 1 --lora-r 16 --lora-targets q_proj,v_proj
--model qwen3-1.7b --dtype amp_bf16 --batch 2 --seq 4096 --gc 1
--model smollm2-135m --dtype fp32 --batch 16 --seq 512 --optim adamw_fused
--model phi3-mini --dtype bf16 --batch 1 --seq 4096 --gc 1 --lora 1 --lora-r 8
--model tinyllama-1.1b --dtype amp_bf16 --batch 8 --seq 1024 --optim sgd_mom
RUNS
echo "$n runs: $OUT/replay.jsonl"
