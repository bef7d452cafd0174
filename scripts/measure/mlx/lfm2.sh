#!/usr/bin/env bash
# LFM2 in mlx-lm d78bf58e on mlx-cpu 0.32.4: rows of lfm2.py on a shrunk LFM2
# (scripts/measure/mlx/lfm2-shrunk.json: LFM2-1.2B's config.json at 8 layers, attention on 2 and
# 5, hidden 256, 4 heads of 64, 2 KV heads, L_cache 3, block_ff_dim 768 -> ff 512, vocabulary
# 1024). ~1 min on 2 cores.
#   scripts/measure/mlx/lfm2.sh OUT.jsonl
set -eu
cd "$(dirname "$0")"
out=$(realpath -m "$1")
: > "$out"
run() { ~/.mlx-venv/bin/python lfm2.py "$@" 2>/dev/null | tail -1 >> "$out"; }
S=lfm2-shrunk.json
run $S 100 20
run $S 600 20
run $S 3000 20                      # two prefill chunks (2048 + 951) then 21 one-token steps
run $S 600 20 '{}' 2048 8           # kv_bits 8
run $S 600 20 '{}' 2048 4           # kv_bits 4
run $S 600 20 '{}' 2048 none float32
run $S 600 20 '{}' 2048 none bf16 4 # 4-bit weights (groups of 64)
run $S 600 0                        # one forward over the prompt, no decode step
run $S 3000 0 '{}' 2048 none float32
# LFM2-350M's published numbers (all 16 layers), bf16, to check the weights at full size.
run ../families/lfm2/lfm2-350m.json 100 20
