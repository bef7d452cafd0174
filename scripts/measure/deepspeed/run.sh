#!/bin/bash
# DeepSpeed ZeRO-3 rows (rank 0 of 2, real CPU tensors): see zero3.py's docstring and NOTES.md.
# usage: run.sh OUT.jsonl   (GT venv with deepspeed 0.19.8; the venv's bin on PATH for ninja)
set -e
OUT=${1:?out.jsonl}
. "$(dirname "$0")/common.sh"
# Mistral-7B's layout cut to 2 layers of hidden 1024 (8 heads, 2 kv heads, head_dim 128, intermediate 3584;
# vocab 32000)
shrunk mistral-shrunk 2 1024 3584 8 2
run() { nice -n 10 "$PY" "$HERE/zero3.py" --config "$CFG/mistral-shrunk.json" "$@" --out "$OUT"; }
run --batch 2 --seq 256 --gc off --tag zero3:mistral-shrunk:full:bf16:off:sdpa:b2s256
run --batch 2 --seq 256 --gc off --auto 1 --tag zero3:mistral-shrunk:full:bf16:off:sdpa:b2s256:auto
run --batch 2 --seq 256 --gc nonreentrant --tag zero3:mistral-shrunk:full:bf16:nonreentrant:sdpa:b2s256
run --batch 4 --seq 512 --gc nonreentrant --tag zero3:mistral-shrunk:full:bf16:nonreentrant:sdpa:b4s512
run --batch 4 --seq 512 --gc nonreentrant --auto 1 --tag zero3:mistral-shrunk:full:bf16:nonreentrant:sdpa:b4s512:auto
# LoRA r16 on q,k,v,o (peft on the partitioned model; TRL's order), and the live-parameter cap below N
# (stage3_max_live_parameters 3e7 of N = 9.3e7), and reentrant checkpointing
run --batch 2 --seq 256 --gc off --auto 1 --lora 1 --tag zero3:mistral-shrunk:lora-qkvo:bf16:off:sdpa:b2s256:auto
run --batch 2 --seq 256 --gc reentrant --lora 1 --tag zero3:mistral-shrunk:lora-qkvo:bf16:reentrant:sdpa:b2s256
run --batch 2 --seq 256 --gc off --auto 1 --max-live 30000000 --tag zero3:mistral-shrunk:full:bf16:off:sdpa:b2s256:auto:live3e7
run --batch 2 --seq 256 --gc reentrant --auto 1 --tag zero3:mistral-shrunk:full:bf16:reentrant:sdpa:b2s256:auto
run --batch 2 --seq 256 --gc off --auto 1 --reuse 30000000 --tag zero3:mistral-shrunk:full:bf16:off:sdpa:b2s256:auto:reuse30000000
run --batch 2 --seq 256 --gc off --auto 1 --reuse 60000000 --tag zero3:mistral-shrunk:full:bf16:off:sdpa:b2s256:auto:reuse60000000
