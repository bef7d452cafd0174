#!/bin/bash
# Llama 4 with Maverick's interleaved layout shrunk (../generate/tiny-llama4-il2.json: experts on
# every other layer, a dense MLP on the others), training, 2026-12-03. Appends to il2_rows.jsonl
# here; the venv and the harness as harness.env says.
set -u
cd "$(dirname "$0")"
D=$PWD
. ./harness.env
for mode in real fake; do
  for dt in bf16 amp_bf16; do
    for gc in 0 1; do
      $RUN $PY $H --config ../generate/tiny-llama4-il2.json --mode $mode --dtype $dt --optim adamw --batch 2 --seq 64 --gc $gc --threads 1 --tag il2 --out $D/il2_rows.jsonl
      $RUN $PY $H --config ../generate/tiny-llama4-il2.json --mode $mode --dtype $dt --optim adamw --batch 2 --seq 64 --gc $gc --threads 1 --lora 1 --lora-r 8 --lora-targets $T --tag il2 --out $D/il2_rows.jsonl
    done
  done
done
