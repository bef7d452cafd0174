#!/usr/bin/env bash
# The measured rows of tensor parallelism (tp.py), one run at a time:
#   ./matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
set -u
SCRIPT=tp.py
. "$(dirname "$0")/common.sh" "$@"
run tp2:llama3.1-8b:off:b1s1024        --config "$C/llama3.1-8b.json" --tp 2 --gc off --attn sdpa --batch 1 --seq 1024
run tp2:llama3.1-8b:nonreentrant:b1s1024 --config "$C/llama3.1-8b.json" --tp 2 --gc nonreentrant --attn sdpa --batch 1 --seq 1024
run tp4:llama3.1-8b:off:b2s2048        --config "$C/llama3.1-8b.json" --tp 4 --gc off --attn sdpa --batch 2 --seq 2048
run tp2fsdp2:llama3.1-8b:nonreentrant:b2s2048 --config "$C/llama3.1-8b.json" --tp 2 --fsdp 2 --gc nonreentrant --attn sdpa --batch 2 --seq 2048
run tp2:qwen3-8b:off:b1s2048           --config "$C/qwen3-8b.json" --tp 2 --gc off --attn sdpa --batch 1 --seq 2048
run tp4:mistral-7b:off:b2s1024         --config "$C/mistral-7b.json" --tp 4 --gc off --attn sdpa --batch 2 --seq 1024
run tp8:qwen3-32b:nonreentrant:b1s4096 --config "$C/qwen3-32b.json" --tp 8 --gc nonreentrant --attn sdpa --batch 1 --seq 4096
run tp2:llama3.1-8b:reentrant:b2s1024   --config "$C/llama3.1-8b.json" --tp 2 --gc reentrant --attn sdpa --batch 2 --seq 1024
run tp4fsdp2:llama3.1-8b:nonreentrant:b1s4096 --config "$C/llama3.1-8b.json" --tp 4 --fsdp 2 --gc nonreentrant --attn sdpa --batch 1 --seq 4096
run tp2:qwen2.5-7b:off:b1s1024         --config "$C/qwen2.5-7b.json" --tp 2 --gc off --attn sdpa --batch 1 --seq 1024
run tp4:mistral-nemo-12b:off:b1s2048   --config "$C/mistral-nemo-12b.json" --tp 4 --gc off --attn sdpa --batch 1 --seq 2048
run tp2fsdp2:qwen2.5-7b:nonreentrant:b1s1024 --config "$C/qwen2.5-7b.json" --tp 2 --fsdp 2 --gc nonreentrant --attn sdpa --batch 1 --seq 1024
