#!/usr/bin/env bash
# Pipeline parallelism over routed experts (pp.py, fake tensors and process group): Qwen3-30B-A3B
# (stacked experts, grouped mm) and Mixtral-8x7B, first, middle and last ranks.
#   ./moe_pp_matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
set -u
SCRIPT=pp.py
. "$(dirname "$0")/common.sh" "$@"
Q="--config $C/qwen3-30b-a3b.json"
for r in 0 1; do run "pp2:1f1b:r$r:qwen3-30b-a3b:off:m4b4s256" $Q --pp 2 --rank $r --schedule 1f1b --micro-batches 4 --batch 4 --seq 256; done
for r in 0 1; do run "pp2:gpipe:r$r:qwen3-30b-a3b:nonreentrant:m2b4s512" $Q --pp 2 --rank $r --schedule gpipe --micro-batches 2 --batch 4 --seq 512 --gc nonreentrant; done
for r in 0 1 3; do run "pp4:1f1b:r$r:mixtral-8x7b:off:m8b8s256" --config "$C/mixtral-8x7b.json" --pp 4 --rank $r --schedule 1f1b --micro-batches 8 --batch 8 --seq 256; done
