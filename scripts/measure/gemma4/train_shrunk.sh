#!/bin/sh
# Training shrunk Gemma 4 text configs (periodic layer patterns as the
# released models') under the ground-truth harness: torch 2.15,
# transformers 5.23, peft 0.21 (~/.gt-venv), fake tensors, CUDA-like
# kernels. Run from the repository root:
#   sh scripts/measure/gemma4/train_shrunk.sh
set -e
PY=~/.gt-venv/bin/python
H=../shared/groundtruth/harness/measure.py
OUT=scripts/measure/gemma4/train_shrunk_rows.jsonl
C=scripts/measure/gemma4/configs
for cfg in g4-e2b-shrunk g4-e4b-shrunk g4-31b-shrunk; do
  for seq in 64 192; do
    for gc in 0 1; do
      $PY $H --config $C/$cfg.json --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --tag "gemma4:$cfg; full bf16 gc$gc" --out $OUT
      $PY $H --config $C/$cfg.json --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --lora 1 --lora-r 8 --lora-targets all-linear --tag "gemma4:$cfg; lora all-linear gc$gc" --out $OUT
    done
  done
done
