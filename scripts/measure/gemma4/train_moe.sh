#!/bin/sh
# Training a shrunk Gemma 4 26B-A4B text config (experts beside the dense
# MLP, keys as values) under the ground-truth harness: torch 2.15,
# transformers 5.23, peft 0.21 (~/.gt-venv), fake tensors.
# Run from the repository root: sh scripts/measure/gemma4/train_moe.sh
set -e
PY=~/.gt-venv/bin/python
H=../shared/groundtruth/harness/measure.py
OUT=scripts/measure/gemma4/train_moe_rows.jsonl
C=scripts/measure/gemma4/configs/g4-26b-shrunk.json
for seq in 64 192; do
  for gc in 0 1; do
    $PY $H --config $C --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --tag "gemma4:g4-26b-shrunk; full bf16 gc$gc" --out $OUT
    $PY $H --config $C --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --lora 1 --lora-r 8 --lora-targets all-linear --tag "gemma4:g4-26b-shrunk; lora all-linear gc$gc" --out $OUT
  done
done
