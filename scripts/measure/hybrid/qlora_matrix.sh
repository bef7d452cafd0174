#!/usr/bin/env bash
# QLoRA rows of the shrunk hybrids (configs/): bitsandbytes 0.50.0 bases under peft 0.21, measured
# with scripts/measure/quant.py (real CPU tensors, transformers 5.23's torch fallbacks for the
# DeltaNet). Run from the repository root:
#   scripts/measure/hybrid/qlora_matrix.sh OUT.jsonl
set -euo pipefail
out=${1:?rows file}
PY=${PY:-$HOME/.gt-venv/bin/python}
C=scripts/measure/hybrid/configs
run() { OMP_NUM_THREADS=1 "$PY" scripts/measure/quant.py --threads 1 "$@" --batch 2 --seq 100 --out "$out" > /dev/null 2>&1 || echo "failed: $*" >&2; }
for cfg in l2 mixed4 moe4 next4; do
  run --config $C/$cfg.json --quant nf4 --lora-r 8 --lora-dropout 0.0 --gc 0
  run --config $C/$cfg.json --quant nf4 --lora-r 8 --lora-dropout 0.05 --gc 1
done
run --config $C/mixed4.json --quant nf4 --lora-r 8 --lora-dropout 0.05 --gc 1 --amp 1
run --config $C/mixed4.json --quant int8 --lora-r 8 --lora-dropout 0.0 --gc 0
run --config $C/mixed4.json --quant nf4 --double-quant 0 --kbit-prep 0 --lora-r 8 --lora-dropout 0.0 --gc 1
