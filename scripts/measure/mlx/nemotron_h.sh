#!/usr/bin/env bash
# Nemotron-H in mlx-lm d78bf58e on mlx-cpu 0.32.4: rows of nemotron_h.py on a shrunk
# NVIDIA-Nemotron-Nano-9B-v2 (scripts/measure/mlx/nemotron_h-shrunk.json: 10 layers of 256,
# pattern M-M*-MM-*M (5 Mamba-2, 3 MLP-only, 2 attention), 4 heads of head_dim 128, 2 KV heads,
# Mamba-2 8 heads of 64 (d_inner 512), ssm_state_size 32 (64 by override), 1 group (2 by override),
# conv_kernel 4, relu2 MLP 512, vocabulary 1024, untied) and a shrunk Nemotron-3-Nano-30B-A3B
# (nemotron_h-moe-shrunk.json: pattern MEM*EMEM*E (4 Mamba-2, 4 MoE-only, 2 attention), 8 experts
# of 128 (top 2) beside a shared expert of 256), then the published 9B-v2 and 30B-A3B sizes
# weights-only (NEW -1, lazy, nothing allocated). ~13 min on 2 busy cores.
#   scripts/measure/mlx/nemotron_h.sh OUT.jsonl
set -eu
cd "$(dirname "$0")"
out=$(realpath -m "$1")
: > "$out"
run() { ~/.mlx-venv/bin/python nemotron_h.py "$@" 2>/dev/null | tail -1 >> "$out"; }
S=nemotron_h-shrunk.json
G2='{"n_groups": 2}'
run $S 100 20
run $S 600 20
run $S 3000 20                              # two prefill chunks (2048 + 952) then one-token steps
run $S 600 20 '{}' 2048 8                   # kv_bits 8
run $S 600 20 '{}' 2048 none float32
run $S 600 20 '{}' 2048 none bf16 4         # 4-bit weights (groups of 64)
run $S 600 20 '{}' 2048 none bf16 8         # 8-bit weights
run $S 600 0                                # one forward over the prompt, no decode step
run $S 3000 0 '{}' 2048 none float32
run $S 600 20 "$G2"                         # 2 groups: conv over d_inner + 2*2*N
run $S 3000 20 "$G2" 2048 8 bf16 4
run $S 100 0 "$G2"
run $S 600 20 '{"ssm_state_size": 64}'      # N 64
run $S 0 -2                                 # loaded from an HF-named checkpoint
M=nemotron_h-moe-shrunk.json
run $M 100 20                               # bf16, unquantized: mlx-cpu's GatherMM fails (float32 only): an "error" row
run $M 100 20 '{}' 2048 none float32
run $M 600 20 '{}' 2048 none float32
run $M 100 20 '{}' 2048 none bf16 4         # 4-bit weights (no quant_predicate: the router is no Linear, stays bf16)
run $M 3000 20 '{}' 2048 none bf16 4
run $M 600 20 '{}' 2048 none bf16 8
run $M 600 20 '{}' 2048 8 bf16 4            # kv_bits 8
run $M 600 0 '{}' 2048 none bf16 4
run $M 600 20 "$G2" 2048 none float32 4     # float32 model quantized, 2 groups
run $M 0 -2                                 # HF-named checkpoint, experts one tensor each (sanitize stacks them)
# The published sizes (nemotron_h_NOTES.md says where each number comes from), weights only.
NANO9B='{"hidden_size": 4480, "intermediate_size": 15680, "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-", "num_hidden_layers": 56, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "mamba_num_heads": 128, "mamba_head_dim": 80, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "vocab_size": 131072}'
NANO30B='{"hidden_size": 2688, "intermediate_size": 1856, "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "mamba_num_heads": 64, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "moe_intermediate_size": 1856, "moe_shared_expert_intermediate_size": 3712, "n_routed_experts": 128, "num_experts_per_tok": 6, "n_shared_experts": 1, "n_group": 1, "topk_group": 1, "vocab_size": 131072}'
for b in 0 4 8; do run $S 0 -1 "$NANO9B" 2048 none bf16 $b; done
for b in 0 4 8; do run $M 0 -1 "$NANO30B" 2048 none bf16 $b; done
# The published Mamba-2 and attention geometry on a few layers of the shrunk width (the cache
# arrays do not depend on hidden_size): one row each, to read the cache at the real shapes.
GEO9B='{"hybrid_override_pattern": "M-*M", "mamba_num_heads": 128, "mamba_head_dim": 80, "ssm_state_size": 128, "n_groups": 8, "num_attention_heads": 40, "num_key_value_heads": 8}'
GEO30B='{"hybrid_override_pattern": "ME*M", "mamba_num_heads": 64, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "num_attention_heads": 32, "num_key_value_heads": 2}'
run $S 600 20 "$GEO9B"
run $M 600 20 "$GEO30B" 2048 none bf16 4
