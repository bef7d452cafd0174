#!/usr/bin/env bash
# LFM2-MoE in mlx-lm d78bf58e on mlx-cpu 0.32.4: rows of lfm2moe.py on a shrunk LFM2-MoE
# (scripts/measure/mlx/lfm2moe-shrunk.json: LFM2-8B-A1B's config.json at 8 layers of 256,
# attention on 2 and 5, 4 heads of 64, 2 KV heads, L_cache 3, layers 0-1 dense of 512, layers
# 2-7 with 8 experts (top 2) of 128, vocabulary 1024), and LFM2-8B-A1B's own config weights-only
# (NEW -1, lazy, nothing allocated). ~1 min on 2 cores.
#   scripts/measure/mlx/lfm2moe.sh OUT.jsonl
set -eu
cd "$(dirname "$0")"
out=$(realpath -m "$1")
: > "$out"
run() { ~/.mlx-venv/bin/python lfm2moe.py "$@" 2>/dev/null | tail -1 >> "$out"; }
S=lfm2moe-shrunk.json
run $S 100 20                              # bf16, unquantized: mlx-cpu's GatherMM fails (float32 only): an "error" row
run $S 100 20 '{}' 2048 none float32
run $S 600 20 '{}' 2048 none float32
run $S 100 20 '{}' 2048 none bf16 4        # 4-bit weights (groups of 64; router 8-bit by quant_predicate)
run $S 600 20 '{}' 2048 none bf16 4
run $S 600 20 '{}' 2048 none bf16 8        # 8-bit weights
run $S 600 20 '{}' 2048 8 bf16 4           # 4-bit weights, kv_bits 8
run $S 600 0 '{}' 2048 none bf16 4         # one forward over the prompt, no decode step
run $S 600 20 '{}' 2048 none float32 4     # float32 model quantized: float32 scales, float32 activations
# LFM2-8B-A1B's published config (24 layers), weights only, never evaluated.
F=../families/lfm2/moe_lfm2-8b-a1b.json
run $F 0 -1
run $F 0 -1 '{}' 2048 none bf16 4
run $F 0 -1 '{}' 2048 none bf16 8
