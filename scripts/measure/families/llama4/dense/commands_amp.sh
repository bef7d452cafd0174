#!/bin/bash
# Llama 4 under autocast (amp_bf16), 2026-12-03: the rows that hold `moe_dense`'s autocast branch
# (ledger.rs). Run from anywhere; appends to amp_rows.jsonl here (tiny configs, real and fake) and
# scout/amp_rows.jsonl (Scout's text config, fake); the venv and the harness as harness.env says.
# The E 4 gc 0 rows are commands.sh's (train_rows.jsonl).
set -u
cd "$(dirname "$0")"
D=$PWD
. ./harness.env
for mode in real fake; do
  $RUN $PY $H --config ../tiny-llama4.json --mode $mode --dtype amp_bf16 --optim adamw --batch 2 --seq 64 --gc 1 --threads 1 --tag amp --out $D/amp_rows.jsonl
  $RUN $PY $H --config ../tiny-llama4.json --mode $mode --dtype amp_bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --lora 1 --lora-r 8 --lora-targets $T --tag amp --out $D/amp_rows.jsonl
  $RUN $PY $H --config ../tiny-llama4.json --mode $mode --dtype amp_bf16 --optim adamw --batch 2 --seq 64 --gc 1 --threads 1 --lora 1 --lora-r 8 --lora-targets $T --tag amp --out $D/amp_rows.jsonl
  for v in e16 e16-k2 i512; do
    $RUN $PY $H --config tiny-llama4-$v.json --mode $mode --dtype amp_bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag amp --out $D/amp_rows.jsonl
  done
done
cd /work/shared/groundtruth/harness
$RUN timeout 900 $PY measure.py --config $D/scout/scout-text.json --mode fake --dtype amp_bf16 --optim adamw --batch 1 --seq 1024 --gc 0 --out $D/scout/amp_rows.jsonl
$RUN timeout 900 $PY measure.py --config $D/scout/scout-text.json --mode fake --dtype amp_bf16 --optim adamw --batch 1 --seq 1024 --gc 1 --out $D/scout/amp_rows.jsonl
$RUN timeout 900 $PY measure.py --config $D/scout/scout-text.json --mode fake --dtype amp_bf16 --optim adamw --batch 1 --seq 512 --gc 0 --lora 1 --lora-r 16 --lora-targets $T --out $D/scout/amp_rows.jsonl
# Added after the first pass: LoRA with non-reentrant checkpointing at full size.
$RUN timeout 900 $PY measure.py --config $D/scout/scout-text.json --mode fake --dtype amp_bf16 --optim adamw --batch 1 --seq 512 --gc 1 --lora 1 --lora-r 16 --lora-targets $T --out $D/scout/amp_rows.jsonl
