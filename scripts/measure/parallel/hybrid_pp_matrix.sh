#!/usr/bin/env bash
# Pipeline parallelism on Gated DeltaNet hybrids (Qwen3.5 / 3.6 text models), as pp.py runs
# torch 2.15's torch.distributed.pipelining over stages cut from the transformers model:
#   ./hybrid_pp_matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
set -u
SCRIPT=pp.py
. "$(dirname "$0")/common.sh" "$@"
# mixed4 = DeltaNet, DeltaNet, DeltaNet, full: over 2 stages, [L, L] and [L, F].
for r in 0 1; do run "pp2:1f1b:r$r:mixed4:off:m4b4s128" --config "$H/mixed4.json" --pp 2 --rank $r --schedule 1f1b --micro-batches 4 --batch 4 --seq 128; done
for r in 0 1; do run "pp2:gpipe:r$r:mixed4:off:m2b4s256" --config "$H/mixed4.json" --pp 2 --rank $r --schedule gpipe --micro-batches 2 --batch 4 --seq 256; done
# Qwen3.6-27B's text model: 64 layers over 2 stages.
for r in 0 1; do run "pp2:1f1b:r$r:qwen3.6-27b:nonreentrant:m4b4s1024" --config qwen3.6-27b-text.json --pp 2 --rank $r --schedule 1f1b --micro-batches 4 --batch 4 --seq 1024 --gc nonreentrant; done
# Stages of whole periods of the layer pattern (three DeltaNet layers, then a full one): mixed8 =
# mixed4's layers twice, over 2 stages of 4; Qwen3.6-27B over 4 stages of 16.
for r in 0 1; do run "pp2:1f1b:r$r:mixed8:off:m4b4s128" --config mixed8.json --pp 2 --rank $r --schedule 1f1b --micro-batches 4 --batch 4 --seq 128; done
for r in 0 1; do run "pp2:gpipe:r$r:mixed8:nonreentrant:m2b4s256" --config mixed8.json --pp 2 --rank $r --schedule gpipe --micro-batches 2 --batch 4 --seq 256 --gc nonreentrant; done
for r in 0 1; do run "pp2v2:interleaved_1f1b:r$r:mixed8:off:m4b4s128" --config mixed8.json --pp 2 --vpp 2 --rank $r --schedule interleaved_1f1b --micro-batches 4 --batch 4 --seq 128; done
for r in 0 1 3; do run "pp4:1f1b:r$r:qwen3.6-27b:nonreentrant:m8b8s512" --config qwen3.6-27b-text.json --pp 4 --rank $r --schedule 1f1b --micro-batches 8 --batch 8 --seq 512 --gc nonreentrant; done
