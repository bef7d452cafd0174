#!/usr/bin/env bash
# Llama 4 Maverick's text config (../../maverick-text.json), harness --mode fake, 2026-12-03:
# training at full size (128 experts on every other layer, a dense MLP of 16384 on the others).
# Rows are named after the config file ("model": "maverick-text"); appends to rows.jsonl here; the
# venv and the harness as ../harness.env says.
set -u
D=$(cd "$(dirname "$0")" && pwd)
. "$D/../harness.env"
cd /work/shared/groundtruth/harness
R="$RUN timeout 1200 $PY measure.py --config $D/../../maverick-text.json --mode fake --optim adamw --batch 1"
$R --dtype bf16 --seq 1024 --gc 0 --out $D/rows.jsonl
$R --dtype bf16 --seq 1024 --gc 1 --out $D/rows.jsonl
$R --dtype amp_bf16 --seq 512 --gc 0 --out $D/rows.jsonl
$R --dtype bf16 --seq 512 --gc 0 --lora 1 --lora-r 16 --lora-targets $T --out $D/rows.jsonl
$R --dtype bf16 --seq 512 --gc 1 --lora 1 --lora-r 16 --lora-targets $T --out $D/rows.jsonl
