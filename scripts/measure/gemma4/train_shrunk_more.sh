#!/bin/sh
# More shrunk Gemma 4 training rows (fp32, autocast, eager, a longer
# sequence, batch 1): as train_shrunk.sh. Run from the repository root:
#   sh scripts/measure/gemma4/train_shrunk_more.sh
set -e
PY=~/.gt-venv/bin/python
H=../shared/groundtruth/harness/measure.py
OUT=scripts/measure/gemma4/train_shrunk_rows.jsonl
C=scripts/measure/gemma4/configs
for cfg in g4-e2b-shrunk g4-31b-shrunk; do
  $PY $H --config $C/$cfg.json --dtype fp32 --optim adamw --batch 2 --seq 96 --gc 0 --tag "gemma4:$cfg; full fp32" --out $OUT
  $PY $H --config $C/$cfg.json --dtype amp_bf16 --optim adamw --batch 2 --seq 96 --gc 0 --tag "gemma4:$cfg; full amp_bf16" --out $OUT
  $PY $H --config $C/$cfg.json --dtype bf16 --optim adamw --batch 1 --seq 320 --gc 0 --lora 1 --lora-r 16 --lora-targets q_proj,v_proj --tag "gemma4:$cfg; lora qv" --out $OUT
done
$PY $H --config $C/g4-e4b-shrunk.json --dtype bf16 --optim adamw --batch 2 --seq 96 --gc 0 --attn eager --tag "gemma4:g4-e4b-shrunk; full eager" --out $OUT
$PY $H --config $C/g4-e4b-shrunk.json --dtype bf16 --optim adamw --batch 2 --seq 96 --gc 0 --attn eager --lora 1 --lora-r 8 --lora-targets all-linear --tag "gemma4:g4-e4b-shrunk; lora eager" --out $OUT
