#!/usr/bin/env bash
# Tensor parallelism on Phi-3 (tp.py): its plan gathers the attention's and the MLP's outputs
# (qkv_proj and gate_up_proj `colwise_gather_output`, o_proj and down_proj `rowwise_split_input`).
# Measured, not modelled (README: "Phi-3").
#   ./phi3_tp_matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
set -u
SCRIPT=tp.py
. "$(dirname "$0")/common.sh" "$@"
run tp2:phi3-mini:off:b1s1024 --config "$C/phi3-mini.json" --tp 2 --gc off --attn sdpa --batch 1 --seq 1024
run tp2fsdp2:phi3-mini:nonreentrant:b2s1024 --config "$C/phi3-mini.json" --tp 2 --fsdp 2 --gc nonreentrant --attn sdpa --batch 2 --seq 1024
