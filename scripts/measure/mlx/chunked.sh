#!/usr/bin/env bash
# Llama 4's chunked cache in mlx-lm (issue 30): rows of chunked.py on a shrunk Scout config
# (scripts/measure/mlx/llama4-shrunk.json: 8 layers of 256, 4 heads of 64, 2 KV heads, 4
# experts, chunk 512; once with experts on every 2nd layer only). ~1 min on 2 cores.
#   scripts/measure/mlx/chunked.sh OUT.jsonl
set -eu
cd "$(dirname "$0")"
out=$(realpath -m "$1")
: > "$out"
run() { ~/.mlx-venv/bin/python chunked.py llama4-shrunk.json "$@" 2>/dev/null | tail -1 >> "$out"; }
run 100 20
run 600 10
run 1000 300
run 3000 5
run 5000 700
run 250 40 '{"text_config":{"attention_chunk_size":300}}'
run 290 20 '{"text_config":{"attention_chunk_size":300}}'
run 700 3 '{}' 100
run 400 200 '{}' 2048 8
run 40 10 '{}' 2048 4
# Maverick's interleaving: experts on every 2nd layer, a dense MLP of 256 on the others.
run 600 10 '{"text_config":{"interleave_moe_layer_step":2}}'
