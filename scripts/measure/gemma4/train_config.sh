#!/bin/sh
# Training one shrunk Gemma 4 text config under the ground-truth harness:
# full fine-tuning and LoRA r 8 on all linear layers, with and without
# checkpointing, batch 2 at 64 and 192 tokens, bf16 (torch 2.15,
# transformers 5.23, peft 0.21 in ~/.gt-venv; fake tensors). Run from the
# repository root:
#   sh scripts/measure/gemma4/train_config.sh g4-12b-shrunk train_unified_rows.jsonl
#   sh scripts/measure/gemma4/train_config.sh g4-26b-shrunk train_moe_rows.jsonl
set -e
PY=~/.gt-venv/bin/python
H=../shared/groundtruth/harness/measure.py
NAME=$1
OUT=scripts/measure/gemma4/$2
C=scripts/measure/gemma4/configs/$NAME.json
for seq in 64 192; do
  for gc in 0 1; do
    $PY $H --config $C --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --tag "gemma4:$NAME; full bf16 gc$gc" --out $OUT
    $PY $H --config $C --dtype bf16 --optim adamw --batch 2 --seq $seq --gc $gc --lora 1 --lora-r 8 --lora-targets all-linear --tag "gemma4:$NAME; lora all-linear gc$gc" --out $OUT
  done
done
