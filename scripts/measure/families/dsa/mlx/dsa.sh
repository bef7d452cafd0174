#!/usr/bin/env bash
# mlx-lm rows for the DSA families (deepseek_v32, glm_moe_dsa): dsa.py on shrunk copies of the
# real configs (../configs/), one JSON line each, into $1; then the real configs' weights only
# (NEW -1, lazy) at bf16, 4-bit and 8-bit into $2.
#   scripts/measure/families/dsa/mlx/dsa.sh dsa_rows.jsonl dsa_real_weights.jsonl
# Shrunk: 3 layers (first dense unless said), hidden 256, 4 heads, q_lora 128, kv_lora 64,
# nope 64, rope 16, v 64, 8 experts of 64 (top 2), indexer 4 heads x 32, vocab 1024.
# index_topk 32 (below both prompts: sparse path) or 512 (above both: dense path).
set -euo pipefail
cd "$(dirname "$0")"
out="$(realpath -m "$1")"; real="$(realpath -m "${2:-dsa_real_weights.jsonl}")"
: > "$out"; : > "$real"
PY="${PY:-$HOME/.mlx-venv/bin/python}"
C=../configs
S='"hidden_size":256,"intermediate_size":512,"moe_intermediate_size":64,"num_hidden_layers":3,"num_attention_heads":4,"num_key_value_heads":4,"q_lora_rank":128,"kv_lora_rank":64,"qk_nope_head_dim":64,"qk_rope_head_dim":16,"v_head_dim":64,"n_routed_experts":8,"num_experts_per_tok":2,"index_n_heads":4,"index_head_dim":32,"vocab_size":1024'
DS="$S,\"n_group\":2,\"topk_group\":1"   # V3.2's n_group 8 needs >= 2 experts a group: 8 experts in 2 groups
GL="$S,\"n_group\":1,\"topk_group\":1"
run() { nice -n 10 "$PY" dsa.py "$@" 2>/dev/null | tail -1 >> "$out"; }
for F in "DeepSeek-V3.2.json:$DS" "GLM-5.1.json:$GL"; do
  cfg=$C/${F%%:*}; O=${F#*:}
  # bf16, all layers dense (mlx-cpu GatherMM is float32-only), top-k below / above the prompt
  run $cfg 40 4 "{$O,\"first_k_dense_replace\":3,\"index_topk\":32}" 2048 none bf16 0
  run $cfg 300 4 "{$O,\"first_k_dense_replace\":3,\"index_topk\":32}" 2048 none bf16 0
  run $cfg 300 4 "{$O,\"first_k_dense_replace\":3,\"index_topk\":512}" 2048 none bf16 0
  # bf16 with experts: expected error on mlx-cpu
  run $cfg 40 4 "{$O,\"first_k_dense_replace\":1,\"index_topk\":32}" 2048 none bf16 0
  # 4-bit / 8-bit with experts (first layer dense)
  run $cfg 40 4 "{$O,\"first_k_dense_replace\":1,\"index_topk\":32}" 2048 none bf16 4
  run $cfg 300 4 "{$O,\"first_k_dense_replace\":1,\"index_topk\":32}" 2048 none bf16 4
  run $cfg 300 4 "{$O,\"first_k_dense_replace\":1,\"index_topk\":512}" 2048 none bf16 4
  run $cfg 300 4 "{$O,\"first_k_dense_replace\":1,\"index_topk\":32}" 2048 none bf16 8
  # kv_bits 8 (CacheList has no to_quantized), and a prefill in chunks of 128 growing the cache
  run $cfg 300 4 "{$O,\"first_k_dense_replace\":1,\"index_topk\":32}" 2048 8 bf16 4
  run $cfg 300 300 "{$O,\"first_k_dense_replace\":1,\"index_topk\":32}" 128 none bf16 4
done
# Real configs, weights only (lazy, never evaluated)
for cfg in $C/DeepSeek-V3.2.json $C/GLM-5.1.json; do
  for b in 0 4 8; do
    nice -n 10 "$PY" dsa.py $cfg 0 -1 '{}' 2048 none bf16 $b 2>/dev/null | tail -1 >> "$real"
  done
done
