#!/usr/bin/env bash
# GPT-NeoX / Pythia on transformers 4 (scripts/measure/t4/measure48.py,
# the Trainer's step, fake tensors; the venvs of scripts/measure/t4/NOTES.md:
# ~/.t4-venv 4.48.1 with torch 2.4.1, peft 0.13.2, accelerate 1.0.1;
# ~/.t4last-venv 4.57.6 with the same torch, peft 0.17.1, accelerate
# 1.10.1): the tiny config and Pythia-1B at 3 layers. Writes
# raw/gpt_neox_t448_rows.jsonl or raw/gpt_neox_t457_rows.jsonl.
#   PY=~/.t4-venv/bin/python scripts/measure/families/gpt_neox/train_t4.sh
#   PY=~/.t4last-venv/bin/python scripts/measure/families/gpt_neox/train_t4.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PY="${PY:-$HOME/.t4-venv/bin/python}"
case "$("$PY" -c 'import transformers; print(transformers.__version__)')" in
  4.48.*) t=t448 ;;
  4.57.*) t=t457 ;;
  *) echo "train_t4.sh: transformers 4.48 or 4.57" >&2; exit 1 ;;
esac
out="$here/../raw/gpt_neox_${t}_rows.jsonl"
: > "$out"
m="$here/../../t4/measure48.py"
run() { "$PY" "$m" --out "$out" "$@"; }
tiny="$here/tiny-gpt-neox.json"
p1="$here/pythia-1b-3l.json"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc off --attn sdpa --tag "family:gpt_neox; $t tiny bf16 sdpa b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc reentrant --attn sdpa --tag "family:gpt_neox; $t tiny bf16 sdpa reentrant b2 s64"
run --config "$p1" --dtype bf16 --batch 1 --seq 512 --gc off --attn sdpa --tag "family:gpt_neox; $t Pythia-1B 3 layers bf16 sdpa b1 s512"
run --config "$p1" --dtype bf16 --batch 2 --seq 256 --gc off --attn eager --tag "family:gpt_neox; $t Pythia-1B 3 layers bf16 eager b2 s256"
run --config "$p1" --dtype amp_bf16 --batch 1 --seq 512 --gc reentrant --attn sdpa --tag "family:gpt_neox; $t Pythia-1B 3 layers amp_bf16 sdpa reentrant b1 s512"
run --config "$p1" --dtype bf16 --batch 1 --seq 1024 --gc reentrant --attn sdpa --lora 1 --lora-targets query_key_value --tag "family:gpt_neox; $t Pythia-1B 3 layers bf16 sdpa lora query_key_value reentrant b1 s1024"
