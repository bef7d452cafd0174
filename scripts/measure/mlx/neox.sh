#!/usr/bin/env bash
# mlx-lm on GPT-NeoX / Pythia (`gpt_neox.py`): hybrid.py's weights and
# prompt cache on EleutherAI/pythia-1b's config cut to 3 layers, one JSON
# line each, into $1.
#   scripts/measure/mlx/neox.sh scripts/measure/mlx/neox_rows.jsonl
set -euo pipefail
cd "$(dirname "$0")"
out="$(realpath -m "$1")"
: > "$out"
PY="${PY:-$HOME/.mlx-venv/bin/python}"
C=../../../crates/core/tests/fixtures/hf_configs/pythia-1b-3l.json
run() { "$PY" hybrid.py "$@" | tail -1 >> "$out"; }
run $C 100 5 0 '{}'
run $C 300 3 4 '{}'
run $C 40 2 8 '{}'
run $C 300 5 4 '{}' 8
