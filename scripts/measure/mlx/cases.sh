#!/usr/bin/env bash
# The mlx-lm hybrid rows (hybrid.py), one JSON line each, into $1.
#   scripts/measure/mlx/cases.sh scripts/measure/mlx/hybrid_rows.jsonl
# Shrunk from the Hub configs in crates/core/tests/fixtures/hf_configs/: 8 layers
# (6 Gated DeltaNet, 2 full attention), hidden 256, Hk 2, Hv 4, Dk 32, Dv 48.
# Mixtures run quantized: mlx-cpu's GatherMM takes only float32.
set -euo pipefail
cd "$(dirname "$0")"
out="$(realpath -m "$1")"
PY="${PY:-$HOME/.mlx-venv/bin/python}"
F=../../../crates/core/tests/fixtures/hf_configs
S='"hidden_size":256,"num_hidden_layers":8,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,"linear_num_key_heads":2,"linear_num_value_heads":4,"linear_key_head_dim":32,"linear_value_head_dim":48,"vocab_size":1024'
D="{$S,\"intermediate_size\":512}"
M="{$S,\"num_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":128,\"shared_expert_intermediate_size\":128}"
K3="{$S,\"intermediate_size\":512,\"linear_conv_kernel_dim\":3}"
run() { "$PY" hybrid.py "$@" | tail -1 >> "$out"; }
run $F/qwen3.6-27b.json 100 5 0 "{\"text_config\":$D}"
run $F/qwen3.6-27b.json 3000 10 0 "{\"text_config\":$D}"
run $F/qwen3.6-27b.json 300 3 4 "{\"text_config\":$D}"
run $F/qwen3.6-27b.json 40 2 0 "{\"text_config\":$K3}"
run $F/qwen3.6-27b.json 300 5 0 "{\"text_config\":$D}" 8
run $F/qwen3.6-35b-a3b.json 100 5 4 "{\"text_config\":$M}"
run $F/qwen3.6-35b-a3b.json 2100 4 8 "{\"text_config\":$M}"
run $F/qwen3-next-80b-a3b.json 300 5 4 "$M"
run $F/qwen3-next-80b-a3b.json 50 300 8 "$M"
