#!/usr/bin/env bash
# GPT-NeoX / Pythia (`gpt_neox`) `generate` rows: scripts/measure/infer/
# generate.py (torch 2.15, transformers 5.23) on the tiny config with real
# and fake tensors, and on Pythia-1B cut to 3 layers. Writes
# raw/gpt_neox_generate_rows.jsonl.
#   PY=~/.gt-venv/bin/python scripts/measure/families/gpt_neox/generate.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../raw/gpt_neox_generate_rows.jsonl"
: > "$out"
PY="${PY:-$HOME/.gt-venv/bin/python}"
g="$here/../../infer/generate.py"
gen() { "$PY" "$g" --out "$out" "$@"; }
gen --config "$here/tiny-gpt-neox.json" --mode real --batch 2 --prompt 48 --new 4 --attn sdpa --tag "family:gpt_neox; tiny real"
gen --config "$here/tiny-gpt-neox.json" --mode fake --batch 2 --prompt 48 --new 4 --attn sdpa --tag "family:gpt_neox; tiny fake"
gen --config "$here/pythia-1b-3l.json" --mode fake --batch 1 --prompt 512 --new 8 --attn sdpa --tag "family:gpt_neox; Pythia-1B 3 layers P512 N8"
gen --config "$here/pythia-1b-3l.json" --mode fake --batch 2 --prompt 256 --new 4 --attn eager --tag "family:gpt_neox; Pythia-1B 3 layers eager B2 P256 N4"
gen --config "$here/pythia-1b-3l.json" --mode fake --batch 1 --prompt 2040 --new 8 --attn sdpa --tag "family:gpt_neox; Pythia-1B 3 layers P2040 N8"
