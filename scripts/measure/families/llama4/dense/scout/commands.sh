#!/usr/bin/env bash
# Llama 4 Scout text config (copy of ../../scout-text.json), harness --mode fake, bf16 AdamW.
# Rows are named after the config file: "model": "scout-text". Appends to rows.jsonl here.
set -u
D=/work/main/scripts/measure/families/llama4/dense/scout
PY=~/.gt-venv/bin/python
cd /work/shared/groundtruth/harness
# 1. full fine-tune, no checkpointing
nice -n 15 timeout 600 $PY measure.py --config $D/scout-text.json --mode fake --dtype bf16 --optim adamw --batch 1 --seq 1024 --gc 0 --out $D/rows.jsonl
# 2. full fine-tune, non-reentrant gradient checkpointing
nice -n 15 timeout 600 $PY measure.py --config $D/scout-text.json --mode fake --dtype bf16 --optim adamw --batch 1 --seq 1024 --gc 1 --out $D/rows.jsonl
# 3. LoRA r=16 on attention + MLP projections
nice -n 15 timeout 600 $PY measure.py --config $D/scout-text.json --mode fake --dtype bf16 --optim adamw --batch 1 --seq 512 --gc 0 --lora 1 --lora-r 16 --lora-targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --out $D/rows.jsonl
# 4. (2026-12-03) LoRA r=16 with non-reentrant gradient checkpointing
nice -n 15 timeout 900 $PY measure.py --config $D/scout-text.json --mode fake --dtype bf16 --optim adamw --batch 1 --seq 512 --gc 1 --lora 1 --lora-r 16 --lora-targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --out $D/rows.jsonl
