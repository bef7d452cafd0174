#!/bin/bash
# DeepSpeed ZeRO-3 rows of a Gated DeltaNet hybrid (rank 0 of 2, real CPU tensors): zero3_hybrid.py
# (zero3.py with transformers' A_log init skipped on ZeRO-3's empty placeholders) on
# qwen35-shrunk.json: Qwen3.6-27B's text model cut to 4 layers (three DeltaNet, one full) of hidden
# 1024, 8 heads, 2 kv heads, head_dim 128, 4 / 8 DeltaNet key / value heads of 128, vocab 32000.
# usage: run_hybrid.sh OUT.jsonl
set -e
OUT=${1:?out.jsonl}
. "$(dirname "$0")/common.sh"
run() { nice -n 10 "$PY" "$HERE/zero3_hybrid.py" --config "$HERE/qwen35-shrunk.json" "$@" --out "$OUT"; }
run --batch 2 --seq 256 --gc off --tag zero3:qwen35-shrunk:full:bf16:off:sdpa:b2s256
run --batch 2 --seq 256 --gc off --auto 1 --tag zero3:qwen35-shrunk:full:bf16:off:sdpa:b2s256:auto
run --batch 2 --seq 256 --gc nonreentrant --tag zero3:qwen35-shrunk:full:bf16:nonreentrant:sdpa:b2s256
run --batch 4 --seq 512 --gc nonreentrant --auto 1 --tag zero3:qwen35-shrunk:full:bf16:nonreentrant:sdpa:b4s512:auto
