#!/usr/bin/env bash
# Granite 4.0-H in mlx-lm d78bf58e on mlx-cpu 0.32.4: rows of granite.py on a shrunk Granite
# 4.0-H-Micro (scripts/measure/mlx/granite-shrunk.json: 8 layers of 256, attention on 2 and 5,
# 4 heads of 64, 2 KV heads, Mamba-2 8 heads of 64 (d_inner 512), d_state 32, 1 group (2 by
# override), d_conv 4, dense MLP 512, vocabulary 1024, tied, nope) and a shrunk 4.0-H-Tiny
# (granite-moe-shrunk.json: the same layers, 4 experts of 128 (top 2) beside a shared MLP of 256),
# then the published Micro and Tiny sizes weights-only (NEW -1, lazy, nothing allocated).
# ~14 min on 2 busy cores (shared with other jobs).
#   scripts/measure/mlx/granite.sh OUT.jsonl
set -eu
cd "$(dirname "$0")"
out=$(realpath -m "$1")
: > "$out"
run() { ~/.mlx-venv/bin/python granite.py "$@" 2>/dev/null | tail -1 >> "$out"; }
S=granite-shrunk.json
G2='{"mamba_n_groups": 2}'
run $S 100 20
run $S 600 20
run $S 3000 20                              # two prefill chunks (2048 + 951) then 21 one-token steps
run $S 600 20 '{}' 2048 8                   # kv_bits 8
run $S 600 20 '{}' 2048 none float32
run $S 600 20 '{}' 2048 none bf16 4         # 4-bit weights (groups of 64)
run $S 600 20 '{}' 2048 none bf16 8         # 8-bit weights
run $S 600 0                                # one forward over the prompt, no decode step
run $S 3000 0 '{}' 2048 none float32
run $S 600 20 "$G2"                         # 2 groups: conv over d_inner + 2*2*N
run $S 3000 20 "$G2" 2048 8 bf16 4
run $S 100 0 "$G2"
run $S 0 -2                                 # loaded from an HF-named checkpoint (sanitize's views)
M=granite-moe-shrunk.json
run $M 100 20                               # bf16, unquantized: mlx-cpu's GatherMM fails (float32 only): an "error" row
run $M 100 20 '{}' 2048 none float32
run $M 600 20 '{}' 2048 none float32
run $M 100 20 '{}' 2048 none bf16 4         # 4-bit weights (router 8-bit by quant_predicate)
run $M 3000 20 '{}' 2048 none bf16 4
run $M 600 20 '{}' 2048 none bf16 8
run $M 600 20 '{}' 2048 8 bf16 4            # kv_bits 8
run $M 600 0 '{}' 2048 none bf16 4
run $M 600 20 "$G2" 2048 none float32 4     # float32 model quantized, 2 groups
run $M 0 -2
# The published sizes (ibm-granite/granite-4.0-h-micro and -h-tiny config.json; NOTES.md), weights only.
L40='["mamba","mamba","mamba","mamba","mamba","attention","mamba","mamba","mamba","mamba","mamba","mamba","mamba","mamba","mamba","attention","mamba","mamba","mamba","mamba","mamba","mamba","mamba","mamba","mamba","attention","mamba","mamba","mamba","mamba","mamba","mamba","mamba","mamba","mamba","attention","mamba","mamba","mamba","mamba"]'
MICRO='{"hidden_size": 2048, "num_hidden_layers": 40, "layer_types": '$L40', "num_attention_heads": 32, "num_key_value_heads": 8, "mamba_n_heads": 64, "mamba_d_head": 64, "mamba_d_state": 128, "intermediate_size": 8192, "shared_intermediate_size": 8192, "vocab_size": 100352}'
TINY='{"hidden_size": 1536, "num_hidden_layers": 40, "layer_types": '$L40', "num_attention_heads": 12, "num_key_value_heads": 4, "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_d_state": 128, "intermediate_size": 512, "shared_intermediate_size": 1024, "num_local_experts": 64, "num_experts_per_tok": 6, "vocab_size": 100352}'
for b in 0 4 8; do run $S 0 -1 "$MICRO" 2048 none bf16 $b; done
for b in 0 4 8; do run $M 0 -1 "$TINY" 2048 none bf16 $b; done
