#!/bin/sh
# Training a shrunk Gemma 4 12B text config (`gemma4_unified_text`, in its
# own periodic pattern, keys as values) under the ground-truth harness:
# torch 2.15, transformers 5.23, peft 0.21 (~/.gt-venv), fake tensors.
# Run from the repository root: sh scripts/measure/gemma4/train_unified.sh
set -e
PY=~/.gt-venv/bin/python
H=../shared/groundtruth/harness/measure.py
OUT=scripts/measure/gemma4/train_unified_rows.jsonl
C=scripts/measure/gemma4/configs/g4-12b-shrunk.json
for seq in 64 192; do
  for gc in 0 1; do
    $PY $H --config $C --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --tag "gemma4:g4-12b-shrunk; full bf16 gc$gc" --out $OUT
    $PY $H --config $C --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --lora 1 --lora-r 8 --lora-targets all-linear --tag "gemma4:g4-12b-shrunk; lora all-linear gc$gc" --out $OUT
  done
done
