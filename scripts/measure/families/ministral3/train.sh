#!/usr/bin/env bash
# Ministral 3 (`ministral3`) training rows: the shared harness
# (../shared/groundtruth/harness/measure.py: torch 2.15, transformers 5.23,
# peft 0.21) on a tiny config (real and fake tensors) and on Ministral 3
# 8B's numbers (transformers' `Ministral3Config` defaults, documented as
# mistralai/Ministral-3-8B-Base-2512) cut to 3 layers, and the same numbers
# as a `mistral` config, to show what the temperature adds.
# Writes raw/ministral3_training_rows.jsonl.
#   PY=~/.gt-venv/bin/python scripts/measure/families/ministral3/train.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../raw/ministral3_training_rows.jsonl"
: > "$out"
. "$here/../harness.sh"
tiny="$here/tiny-ministral3.json"
m8="$here/ministral3-8b-3l.json"
run --config "$tiny" --mode real --dtype bf16 --batch 2 --seq 64 --tag "family:ministral3; fake-vs-real tiny bf16 adamw b2 s64 real"
run --config "$tiny" --mode fake --dtype bf16 --batch 2 --seq 64 --tag "family:ministral3; fake-vs-real tiny bf16 adamw b2 s64 fake"
run --config "$tiny" --dtype amp_bf16 --batch 2 --seq 64 --tag "family:ministral3; tiny amp_bf16 adamw b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc 1 --tag "family:ministral3; tiny bf16 adamw ckpt b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --attn eager --tag "family:ministral3; tiny bf16 adamw eager b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --lora 1 --lora-r 16 --lora-targets all-linear --tag "family:ministral3; tiny bf16 lora all-linear b2 s64"
run --config "$m8" --dtype bf16 --batch 1 --seq 512 --tag "family:ministral3; Ministral 3 8B 3 layers bf16 adamw b1 s512"
run --config "$m8" --dtype bf16 --batch 2 --seq 256 --attn eager --tag "family:ministral3; Ministral 3 8B 3 layers bf16 adamw eager b2 s256"
run --config "$m8" --dtype amp_bf16 --batch 1 --seq 512 --gc 1 --tag "family:ministral3; Ministral 3 8B 3 layers amp_bf16 adamw ckpt b1 s512"
run --config "$m8" --dtype bf16 --batch 1 --seq 1024 --gc 1 --lora 1 --lora-r 16 --lora-targets q_proj,v_proj --tag "family:ministral3; Ministral 3 8B 3 layers bf16 lora q,v ckpt b1 s1024"
run --config "$m8" --dtype bf16 --batch 2 --seq 512 --lora 1 --lora-r 8 --lora-targets all-linear --tag "family:ministral3; Ministral 3 8B 3 layers bf16 lora all-linear b2 s512"
