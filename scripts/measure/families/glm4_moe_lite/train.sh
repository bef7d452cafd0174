#!/usr/bin/env bash
# GLM-4.7-Flash (`glm4_moe_lite`) training rows: the shared harness
# (../shared/groundtruth/harness/measure.py: torch 2.15, transformers 5.23,
# peft 0.21) on a tiny config (real and fake tensors) and on GLM-4.7-Flash's
# published numbers cut to 3 layers (fake). Writes raw/glm4_moe_lite_training_rows.jsonl.
#   PY=~/.gt-venv/bin/python scripts/measure/families/glm4_moe_lite/train.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../raw/glm4_moe_lite_training_rows.jsonl"
: > "$out"
. "$here/../harness.sh"
tiny="$here/tiny-glm4_moe_lite.json"
flash="$here/glm-4.7-flash-3l.json"
run --config "$tiny" --mode real --dtype bf16 --batch 2 --seq 64 --tag "family:glm4_moe_lite; fake-vs-real tiny bf16 adamw b2 s64 real"
run --config "$tiny" --mode fake --dtype bf16 --batch 2 --seq 64 --tag "family:glm4_moe_lite; fake-vs-real tiny bf16 adamw b2 s64 fake"
run --config "$tiny" --dtype amp_bf16 --batch 2 --seq 64 --tag "family:glm4_moe_lite; tiny amp_bf16 adamw b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc 1 --tag "family:glm4_moe_lite; tiny bf16 adamw ckpt b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --attn eager --tag "family:glm4_moe_lite; tiny bf16 adamw eager b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --lora 1 --lora-r 16 --lora-targets all-linear --tag "family:glm4_moe_lite; tiny bf16 lora all-linear b2 s64"
run --config "$flash" --dtype bf16 --batch 1 --seq 512 --tag "family:glm4_moe_lite; GLM-4.7-Flash 3 layers bf16 adamw b1 s512"
run --config "$flash" --dtype bf16 --batch 1 --seq 512 --gc 1 --lora 1 --lora-r 16 --lora-targets q_b_proj,kv_b_proj --tag "family:glm4_moe_lite; GLM-4.7-Flash 3 layers bf16 lora q_b,kv_b ckpt b1 s512"
run --config "$flash" --dtype amp_bf16 --batch 1 --seq 512 --gc 1 --tag "family:glm4_moe_lite; GLM-4.7-Flash 3 layers amp_bf16 adamw ckpt b1 s512"
run --config "$flash" --dtype bf16 --batch 2 --seq 1024 --attn eager --lora 1 --lora-r 8 --lora-targets all-linear --tag "family:glm4_moe_lite; GLM-4.7-Flash 3 layers bf16 lora all-linear eager b2 s1024"
