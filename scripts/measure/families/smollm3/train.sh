#!/usr/bin/env bash
# SmolLM3 (`smollm3`) training rows: the shared harness (torch 2.15,
# transformers 5.23, peft 0.21) on a tiny config of 4 layers (the last
# NoPE) with real and fake tensors, and on SmolLM3-3B's numbers
# (transformers' `SmolLM3Config` defaults, documented as
# HuggingFaceTB/SmolLM3-3B) cut to 4 layers. Writes
# raw/smollm3_training_rows.jsonl. The same numbers as a `llama` config
# (`llama-as-smollm3-4l.json`) measure the same bytes in every phase.
#   PY=~/.gt-venv/bin/python scripts/measure/families/smollm3/train.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../raw/smollm3_training_rows.jsonl"
: > "$out"
. "$here/../harness.sh"
tiny="$here/tiny-smollm3.json"
s3="$here/smollm3-3b-4l.json"
run --config "$tiny" --mode real --dtype bf16 --batch 2 --seq 64 --tag "family:smollm3; fake-vs-real tiny bf16 adamw b2 s64 real"
run --config "$tiny" --mode fake --dtype bf16 --batch 2 --seq 64 --tag "family:smollm3; fake-vs-real tiny bf16 adamw b2 s64 fake"
run --config "$tiny" --dtype amp_bf16 --batch 2 --seq 64 --tag "family:smollm3; tiny amp_bf16 adamw b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc 1 --tag "family:smollm3; tiny bf16 adamw ckpt b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --attn eager --tag "family:smollm3; tiny bf16 adamw eager b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --lora 1 --lora-r 16 --lora-targets all-linear --tag "family:smollm3; tiny bf16 lora all-linear b2 s64"
run --config "$s3" --dtype bf16 --batch 1 --seq 512 --tag "family:smollm3; SmolLM3-3B 4 layers bf16 adamw b1 s512"
run --config "$s3" --dtype bf16 --batch 2 --seq 256 --attn eager --tag "family:smollm3; SmolLM3-3B 4 layers bf16 adamw eager b2 s256"
run --config "$s3" --dtype amp_bf16 --batch 1 --seq 512 --gc 1 --tag "family:smollm3; SmolLM3-3B 4 layers amp_bf16 adamw ckpt b1 s512"
run --config "$s3" --dtype bf16 --batch 1 --seq 2048 --gc 1 --lora 1 --lora-r 16 --lora-targets q_proj,v_proj --tag "family:smollm3; SmolLM3-3B 4 layers bf16 lora q,v ckpt b1 s2048"
