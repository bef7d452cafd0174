#!/usr/bin/env bash
# GPT-NeoX / Pythia (`gpt_neox`) training rows: the shared harness (torch
# 2.15, transformers 5.23, peft 0.21) on a tiny config of 2 layers with real
# and fake tensors, and on EleutherAI/pythia-1b's config.json cut to 3
# layers. Writes raw/gpt_neox_training_rows.jsonl.
#   PY=~/.gt-venv/bin/python scripts/measure/families/gpt_neox/train.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../raw/gpt_neox_training_rows.jsonl"
: > "$out"
. "$here/../harness.sh"
tiny="$here/tiny-gpt-neox.json"
p1="$here/pythia-1b-3l.json"
run --config "$tiny" --mode real --dtype bf16 --batch 2 --seq 64 --tag "family:gpt_neox; fake-vs-real tiny bf16 adamw b2 s64 real"
run --config "$tiny" --mode fake --dtype bf16 --batch 2 --seq 64 --tag "family:gpt_neox; fake-vs-real tiny bf16 adamw b2 s64 fake"
run --config "$tiny" --dtype amp_bf16 --batch 2 --seq 64 --tag "family:gpt_neox; tiny amp_bf16 adamw b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc 1 --tag "family:gpt_neox; tiny bf16 adamw ckpt b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --attn eager --tag "family:gpt_neox; tiny bf16 adamw eager b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --lora 1 --lora-r 16 --lora-targets all-linear --tag "family:gpt_neox; tiny bf16 lora all-linear b2 s64"
run --config "$p1" --dtype bf16 --batch 1 --seq 512 --tag "family:gpt_neox; Pythia-1B 3 layers bf16 adamw b1 s512"
run --config "$p1" --dtype bf16 --batch 2 --seq 256 --attn eager --tag "family:gpt_neox; Pythia-1B 3 layers bf16 adamw eager b2 s256"
run --config "$p1" --dtype amp_bf16 --batch 1 --seq 512 --gc 1 --tag "family:gpt_neox; Pythia-1B 3 layers amp_bf16 adamw ckpt b1 s512"
run --config "$p1" --dtype fp32 --batch 1 --seq 1024 --tag "family:gpt_neox; Pythia-1B 3 layers fp32 adamw b1 s1024"
run --config "$p1" --dtype bf16 --batch 1 --seq 2048 --gc 1 --lora 1 --lora-r 16 --lora-targets query_key_value --tag "family:gpt_neox; Pythia-1B 3 layers bf16 lora query_key_value ckpt b1 s2048"
# Dropout on (hidden_dropout and attention_dropout 0.1: the embeddings',
# both branches' and the attention probabilities' masks).
run --config "$here/pythia-1b-3l-dropout.json" --dtype bf16 --batch 1 --seq 512 --tag "family:gpt_neox; Pythia-1B 3 layers dropout 0.1 bf16 adamw b1 s512"
run --config "$here/pythia-1b-3l-dropout.json" --dtype bf16 --batch 1 --seq 512 --attn eager --tag "family:gpt_neox; Pythia-1B 3 layers dropout 0.1 bf16 adamw eager b1 s512"
