#!/usr/bin/env bash
# MLX's quantization modes on shrunk configs (modes.py), one JSON line each, into $1.
#   scripts/measure/mlx/modes.sh scripts/measure/mlx/modes_rows.jsonl
set -euo pipefail
cd "$(dirname "$0")"
out="$(realpath -m "$1")"
PY="${PY:-$HOME/.mlx-venv/bin/python}"
F=../../../crates/core/tests/fixtures/hf_configs
S='"hidden_size":256,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,"vocab_size":1024'
D="{$S,\"intermediate_size\":512}"
M="{$S,\"intermediate_size\":512,\"num_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":128}"
H="{\"text_config\":{$S,\"num_hidden_layers\":4,\"linear_num_key_heads\":2,\"linear_num_value_heads\":4,\"linear_key_head_dim\":32,\"linear_value_head_dim\":48,\"num_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":128,\"shared_expert_intermediate_size\":128}}"
G="{$S,\"intermediate_size\":256,\"num_local_experts\":8,\"num_experts_per_tok\":2,\"layer_types\":[\"sliding_attention\",\"full_attention\"]}"
run() { "$PY" modes.py "$@" | tail -1 >> "$out"; }
for mode in mxfp4 nvfp4 mxfp8 affine; do
  run $F/qwen3-8b.json $mode "$D"
  run $F/llama3.1-8b.json $mode "$D"
  run $F/qwen3-30b-a3b.json $mode "$M"
  run $F/qwen3.6-35b-a3b.json $mode "$H"
  run $F/gpt-oss-20b.json $mode "$G"
done
