#!/usr/bin/env bash
# Tensor parallelism with FSDP2 over routed experts (tp.py): transformers 5.23's plan splits the
# stacked experts' gate_up `packed_colwise` and down `rowwise` (`moe_tp_experts`).
#   ./moe_tp_matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
set -u
SCRIPT=tp.py
. "$(dirname "$0")/common.sh" "$@"
run tp2fsdp2:qwen3-30b-a3b:off:b1s512 --config "$C/qwen3-30b-a3b.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 1 --seq 512
run tp4fsdp2:qwen3-30b-a3b:nonreentrant:b1s1024 --config "$C/qwen3-30b-a3b.json" --tp 4 --fsdp 2 --gc nonreentrant --attn sdpa --batch 1 --seq 1024
run tp2fsdp2:mixtral-8x7b:off:b1s512 --config "$C/mixtral-8x7b.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 1 --seq 512
run tp2fsdp4:mixtral-8x7b:nonreentrant:b2s512 --config "$C/mixtral-8x7b.json" --tp 2 --fsdp 4 --gc nonreentrant --attn sdpa --batch 2 --seq 512
