#!/bin/bash
# Exact commands used (run from this folder). PY = ground-truth venv (torch 2.15.0, transformers 5.23.0).
set -u
PY=${PY:-~/.gt-venv/bin/python}
H=/work/shared/groundtruth/harness/measure.py
M=./measure_mistral4.py   # shim: registers Mistral4Config -> Mistral4ForCausalLM, then runs measure.main()

# 0. parameter counts (meta device)
$PY params.py > params_out.txt 2>&1

# 1. unmodified harness on mistral4: fails (captured in harness_error.jsonl)
$PY $H --config tiny-mistral4.json --mode real --dtype bf16 --optim adamw --batch 2 --seq 64 --gc 0 --tag plain-harness-unregistered --out harness_error.jsonl

# 2. tiny mistral4, real and fake, gc 0/1, LoRA r8
for mode in real fake; do
  for gc in 0 1; do
    $PY $M --config tiny-mistral4.json --mode $mode --dtype bf16 --optim adamw --batch 2 --seq 64 --gc $gc --out rows.jsonl
  done
  $PY $M --config tiny-mistral4.json --mode $mode --dtype bf16 --optim adamw --batch 2 --seq 64 --gc 0 --lora 1 --lora-r 8 --out rows.jsonl
done

# 3. Small 4 text config (all 36 layers, not reduced), fake mode; gc 1 added as an extra point
$PY $M --config mistral-small-4-text.json --mode fake --dtype bf16 --optim adamw --batch 1 --seq 1024 --gc 0 --out rows.jsonl
$PY $M --config mistral-small-4-text.json --mode fake --dtype bf16 --optim adamw --batch 1 --seq 1024 --gc 1 --out rows.jsonl

# 4. extra: Large 3 text as mistral4 (all 61 layers), fake mode
$PY $M --config mistral-large-3-text-mistral4.json --mode fake --dtype bf16 --optim adamw --batch 1 --seq 1024 --gc 0 --out rows.jsonl

# 5. (review) autocast rows: the router's softmax under autocast
for mode in real fake; do
  $PY $M --config tiny-mistral4.json --mode $mode --dtype amp_bf16 --optim adamw --batch 2 --seq 64 --gc 0 --out rows_amp.jsonl
done
$PY $M --config mistral-small-4-text.json --mode fake --dtype amp_bf16 --optim adamw --batch 1 --seq 1024 --gc 0 --out rows_amp.jsonl
