#!/usr/bin/env bash
# GPT-NeoX / Pythia on transformers 4.48.1 (torch 2.4.1, peft 0.13.2,
# accelerate 1.0.1; scripts/measure/t4/measure48.py, the Trainer's step,
# fake tensors): the tiny config and Pythia-1B at 3 layers. Writes
# raw/gpt_neox_t448_rows.jsonl.
#   PY=~/.t4-venv/bin/python scripts/measure/families/gpt_neox/train_t4.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../raw/gpt_neox_t448_rows.jsonl"
: > "$out"
PY="${PY:-$HOME/.t4-venv/bin/python}"
m="$here/../../t4/measure48.py"
run() { "$PY" "$m" --out "$out" "$@"; }
tiny="$here/tiny-gpt-neox.json"
p1="$here/pythia-1b-3l.json"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc off --attn sdpa --tag "family:gpt_neox; t448 tiny bf16 sdpa b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc reentrant --attn sdpa --tag "family:gpt_neox; t448 tiny bf16 sdpa reentrant b2 s64"
run --config "$p1" --dtype bf16 --batch 1 --seq 512 --gc off --attn sdpa --tag "family:gpt_neox; t448 Pythia-1B 3 layers bf16 sdpa b1 s512"
run --config "$p1" --dtype bf16 --batch 2 --seq 256 --gc off --attn eager --tag "family:gpt_neox; t448 Pythia-1B 3 layers bf16 eager b2 s256"
run --config "$p1" --dtype amp_bf16 --batch 1 --seq 512 --gc reentrant --attn sdpa --tag "family:gpt_neox; t448 Pythia-1B 3 layers amp_bf16 sdpa reentrant b1 s512"
run --config "$p1" --dtype bf16 --batch 1 --seq 1024 --gc reentrant --attn sdpa --lora 1 --lora-targets query_key_value --tag "family:gpt_neox; t448 Pythia-1B 3 layers bf16 sdpa lora query_key_value reentrant b1 s1024"
