#!/bin/bash
# Llama 4 with Maverick's interleaved layout shrunk (tiny-llama4-il2.json, a copy of
# ../generate/'s: experts on every other layer, a dense MLP on the others), training, 2026-12-03.
# Appends to il2_rows.jsonl here. PY = ~/.gt-venv (torch 2.15.0, transformers 5.23.0, peft 0.21.2).
set -u
cd "$(dirname "$0")"
D=$PWD
PY=${PY:-~/.gt-venv/bin/python}
H=/work/shared/groundtruth/harness/measure.py
RUN="env OMP_NUM_THREADS=1 nice -n 15"
T=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj
for mode in real fake; do
  for dt in bf16 amp_bf16; do
    for gc in 0 1; do
      $RUN $PY $H --config tiny-llama4-il2.json --mode $mode --dtype $dt --optim adamw --batch 2 --seq 64 --gc $gc --threads 1 --tag il2 --out $D/il2_rows.jsonl
      $RUN $PY $H --config tiny-llama4-il2.json --mode $mode --dtype $dt --optim adamw --batch 2 --seq 64 --gc $gc --threads 1 --lora 1 --lora-r 8 --lora-targets $T --tag il2 --out $D/il2_rows.jsonl
    done
  done
done
