#!/usr/bin/env bash
# Training rows of the shrunk Qwen3.5 hybrids (configs/), transformers 5.23's torch fallbacks
# (no flash-linear-attention, no causal-conv1d installed). Run from the repository root:
#   scripts/measure/hybrid/train_matrix.sh OUT.jsonl
set -euo pipefail
out=${1:?rows file}
PY=${PY:-$HOME/.gt-venv/bin/python}
H=../shared/groundtruth/harness/measure.py
C=scripts/measure/hybrid/configs
run() { OMP_NUM_THREADS=1 "$PY" "$H" "$@" --out "$out" > /dev/null 2>&1 || echo "failed: $*" >&2; }
for cfg in l1 l2 f1 f2 mixed4; do
  for s in 64 100 200; do run --config $C/$cfg.json --dtype bf16 --batch 2 --seq $s; done
done
for cfg in l2 mixed4; do
  run --config $C/$cfg.json --dtype amp_bf16 --batch 1 --seq 100
  run --config $C/$cfg.json --dtype fp32 --batch 1 --seq 100
  run --config $C/$cfg.json --dtype bf16 --batch 2 --seq 100 --gc 1
  run --config $C/$cfg.json --dtype bf16 --batch 2 --seq 100 --lora 1 --lora-r 8 --lora-targets all-linear
  run --config $C/$cfg.json --dtype bf16 --batch 2 --seq 100 --lora 1 --lora-r 8 --lora-targets all-linear --gc 1
done
run --config $C/moe4.json --dtype bf16 --batch 2 --seq 100
run --config $C/moe4.json --dtype bf16 --batch 2 --seq 100 --gc 1
