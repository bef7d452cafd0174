#!/usr/bin/env bash
# Tensor parallelism under a plan that gathers the attention's outputs (OLMo 2 and 3: q, k, v
# `colwise_gather_output`, o `rowwise_split_input`; the MLP as Llama's), tp.py:
#   ./gathered_tp_matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
set -u
SCRIPT=tp.py
. "$(dirname "$0")/common.sh" "$@"
run tp2:olmo2-7b:off:b1s1024 --config "$C/olmo2-7b.json" --tp 2 --gc off --attn sdpa --batch 1 --seq 1024
run tp2fsdp2:olmo2-7b:nonreentrant:b2s1024 --config "$C/olmo2-7b.json" --tp 2 --fsdp 2 --gc nonreentrant --attn sdpa --batch 2 --seq 1024
run tp4:olmo-3-7b:off:b1s2048 --config "$C/olmo-3-7b.json" --tp 4 --gc off --attn sdpa --batch 1 --seq 2048
