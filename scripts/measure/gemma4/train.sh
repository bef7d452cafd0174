#!/bin/sh
# Training Gemma 4 under the ground-truth harness (fake tensors, CUDA-like
# kernels): torch 2.15, transformers 5.23, peft 0.21 (~/.gt-venv).
# Run from the repository root: sh scripts/measure/gemma4/train.sh
set -e
PY=~/.gt-venv/bin/python
H=../shared/groundtruth/harness/measure.py
OUT=scripts/measure/gemma4/train_rows.jsonl
C=scripts/measure/gemma4/configs
for cfg in gemma4-e2b-text gemma4-e4b-text; do
  $PY $H --config $C/$cfg.json --dtype bf16 --optim adamw --batch 1 --seq 512 --gc 0 --tag "gemma4:$cfg; full bf16" --out $OUT
  $PY $H --config $C/$cfg.json --dtype bf16 --optim adamw --batch 1 --seq 512 --gc 1 --tag "gemma4:$cfg; full bf16 ckpt" --out $OUT
  $PY $H --config $C/$cfg.json --dtype bf16 --optim adamw --batch 1 --seq 512 --gc 1 --lora 1 --lora-r 16 --lora-targets all-linear --tag "gemma4:$cfg; lora all-linear ckpt" --out $OUT
done
