#!/usr/bin/env bash
# QLoRA rows of the shrunk Gemma 4 text configs (configs/): bitsandbytes 0.50.0 bases under peft
# 0.21, measured with scripts/measure/quant.py (real CPU tensors, transformers 5.23). Gemma 4 with
# reentrant checkpointing is refused by vramfit, so checkpointed rows are non-reentrant (TRL's
# default). Run from the repository root:
#   scripts/measure/gemma4/qlora.sh scripts/measure/gemma4/qlora_rows.jsonl
set -euo pipefail
out=${1:?rows file}
PY=${PY:-$HOME/.gt-venv/bin/python}
C=scripts/measure/gemma4/configs
run() { OMP_NUM_THREADS=1 "$PY" scripts/measure/quant.py --threads 1 "$@" --batch 2 --out "$out" > /dev/null 2>&1 || echo "failed: $*" >&2; }
for cfg in g4-e2b-shrunk g4-e4b-shrunk g4-26b-shrunk g4-31b-shrunk g4-12b-shrunk; do
  run --config $C/$cfg.json --quant nf4 --lora-r 8 --lora-dropout 0.0 --gc 0 --seq 64
  run --config $C/$cfg.json --quant nf4 --lora-r 8 --lora-dropout 0.05 --gc 1 --gc-reentrant 0 --seq 192
done
run --config $C/g4-e4b-shrunk.json --quant nf4 --lora-r 8 --lora-dropout 0.0 --gc 0 --seq 64 --amp 1
run --config $C/g4-e4b-shrunk.json --quant nf4 --double-quant 0 --kbit-prep 0 --lora-r 8 --lora-dropout 0.0 --gc 0 --seq 64
run --config $C/g4-26b-shrunk.json --quant int8 --lora-r 8 --lora-dropout 0.0 --gc 0 --seq 64
# Checkpointing without dropout, and dropout without checkpointing, apart.
for cfg in g4-e2b-shrunk g4-31b-shrunk; do
  run --config $C/$cfg.json --quant nf4 --lora-r 8 --lora-dropout 0.0 --gc 1 --gc-reentrant 0 --seq 192
  run --config $C/$cfg.json --quant nf4 --lora-r 8 --lora-dropout 0.05 --gc 0 --seq 192
done
# E2B's published text config at 512 tokens, one sequence, LoRA r16 on every linear layer,
# non-reentrant checkpointing, without and with autocast (the Trainer's bf16=True): about 8
# minutes each on 2 cores and 19 GB of memory (the per-layer table in fp32 after kbit preparation).
for amp in 0 1; do
  OMP_NUM_THREADS=2 "$PY" scripts/measure/quant.py --threads 2 --config $C/gemma4-e2b-text.json --quant nf4 --lora-r 16 --lora-dropout 0.0 --gc 1 --gc-reentrant 0 --seq 512 --batch 1 --amp $amp --out "$out" > /dev/null 2>&1 || echo "failed: e2b amp $amp" >&2
done
# Reentrant checkpointing, peft's default after kbit preparation (`--gc 1` alone).
for cfg in g4-e2b-shrunk g4-e4b-shrunk g4-26b-shrunk g4-31b-shrunk; do
  run --config $C/$cfg.json --quant nf4 --lora-r 8 --lora-dropout 0.0 --gc 1 --seq 192
done
OMP_NUM_THREADS=2 "$PY" scripts/measure/quant.py --threads 2 --config $C/gemma4-e2b-text.json --quant nf4 --lora-r 16 --lora-dropout 0.0 --gc 1 --seq 512 --batch 1 --out "$out" > /dev/null 2>&1 || echo "failed: e2b reentrant" >&2
# LoRA on a bf16 base with reentrant checkpointing (no kbit preparation: it would cast an
# unquantized base to fp32), into reentrant_rows.jsonl beside the rows file.
for cfg in g4-e2b-shrunk g4-e4b-shrunk g4-26b-shrunk g4-31b-shrunk; do
  OMP_NUM_THREADS=1 "$PY" scripts/measure/quant.py --threads 1 --config $C/$cfg.json --quant none --kbit-prep 0 --lora-r 8 --lora-dropout 0.0 --gc 1 --gc-reentrant 1 --seq 192 --batch 2 --out "$(dirname "$out")/reentrant_rows.jsonl" > /dev/null 2>&1 || echo "failed: $cfg reentrant bf16" >&2
done
OMP_NUM_THREADS=2 "$PY" scripts/measure/quant.py --threads 2 --config $C/gemma4-e2b-text.json --quant none --kbit-prep 0 --lora-r 16 --lora-dropout 0.0 --gc 1 --gc-reentrant 1 --seq 512 --batch 1 --out "$(dirname "$out")/reentrant_rows.jsonl" > /dev/null 2>&1 || echo "failed: e2b reentrant bf16" >&2
