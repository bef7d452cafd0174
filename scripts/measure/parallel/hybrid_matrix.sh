#!/usr/bin/env bash
# Tensor parallelism on Gated DeltaNet hybrids (Qwen3.5 / 3.6 text models), rank 0, as tp.py runs
# transformers 5.23's own DistributedConfig under FakeTensorMode and a fake process group:
#   ./hybrid_matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
# The shrunk configs are the single-GPU hybrid rows' (../hybrid/configs/); qwen3.6-27b-text.json is
# Qwen3.6-27B's published text_config (crates/core/tests/fixtures/hf_configs/qwen3.6-27b.json) as a
# qwen3_5_text model.
set -u
SCRIPT=tp.py
. "$(dirname "$0")/common.sh" "$@"
# tp alone: AdamW's foreach step meets the DeltaNet's plain tensors beside DTensors.
run tp2:mixed4:off:b2s128            --config "$H/mixed4.json" --tp 2 --gc off --attn sdpa --batch 2 --seq 128
# tp × FSDP2: every parameter a DTensor.
run tp2fsdp2:mixed4:off:b2s128       --config "$H/mixed4.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 128
run tp2fsdp2:mixed4:off:b2s256       --config "$H/mixed4.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 256
run tp2fsdp2:mixed4:nonreentrant:b2s128 --config "$H/mixed4.json" --tp 2 --fsdp 2 --gc nonreentrant --attn sdpa --batch 2 --seq 128
run tp2fsdp2:l1:off:b2s128           --config "$H/l1.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 128
run tp2fsdp2:l2:off:b2s128           --config "$H/l2.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 128
run tp2fsdp2:f1:off:b2s128           --config "$H/f1.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 128
run tp2fsdp2:f2:off:b2s128           --config "$H/f2.json" --tp 2 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 128
run tp2fsdp2:qwen3.6-27b:nonreentrant:b1s1024 --config qwen3.6-27b-text.json --tp 2 --fsdp 2 --gc nonreentrant --attn sdpa --batch 1 --seq 1024
run tp4fsdp2:qwen3.6-27b:nonreentrant:b1s2048 --config qwen3.6-27b-text.json --tp 4 --fsdp 2 --gc nonreentrant --attn sdpa --batch 1 --seq 2048
# FSDP2 alone (DistributedConfig(fsdp_size)): the units are the decoder layers, full-attention and
# Gated DeltaNet alike.
run tp1fsdp2:mixed4:off:b2s128       --config "$H/mixed4.json" --tp 1 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 128
run tp1fsdp2:mixed4:off:b2s256       --config "$H/mixed4.json" --tp 1 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 256
run tp1fsdp2:mixed4:nonreentrant:b2s128 --config "$H/mixed4.json" --tp 1 --fsdp 2 --gc nonreentrant --attn sdpa --batch 2 --seq 128
run tp1fsdp2:l2:off:b2s128           --config "$H/l2.json" --tp 1 --fsdp 2 --gc off --attn sdpa --batch 2 --seq 128
run tp1fsdp4:qwen3.6-27b:nonreentrant:b1s1024 --config qwen3.6-27b-text.json --tp 1 --fsdp 4 --gc nonreentrant --attn sdpa --batch 1 --seq 1024
run tp1fsdp8:qwen3.6-27b:off:b1s512  --config qwen3.6-27b-text.json --tp 1 --fsdp 8 --gc off --attn sdpa --batch 1 --seq 512
