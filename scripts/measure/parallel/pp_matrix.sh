#!/usr/bin/env bash
# The measured rows of pipeline parallelism (pp.py), one run at a time:
#   ./pp_matrix.sh OUT.jsonl        (~/.gt-venv: torch 2.15, transformers 5.23)
#   CHECK=1 ./pp_matrix.sh OUT.jsonl   (only the rows measured to check the model)
#   INTERLEAVED=1 ./pp_matrix.sh OUT.jsonl   (the interleaved 1F1B rows, raw/pp523_interleaved.jsonl)
set -u
SCRIPT=pp.py
. "$(dirname "$0")/common.sh" "$@"
L8="--config $C/llama3.1-8b.json"
# Rows measured after the model was built, to check it on what it was not fitted to
# (2026-11-29, raw/pp523_check.jsonl): another family (Mistral's sliding window, Qwen2.5's
# biases), an uneven cut (32 layers over 3: 10, 10, 12), more micro-batches than stages under
# GPipe, checkpointing on a middle rank.
if [ "${CHECK:-0}" = 1 ]; then
  for r in 0 1; do run "pp2:1f1b:r$r:mistral-7b:off:m4b4s1024" --config "$C/mistral-7b.json" --pp 2 --rank $r --schedule 1f1b --micro-batches 4 --batch 4 --seq 1024; done
  for r in 0 1 2; do run "pp3:1f1b:r$r:llama3.1-8b:off:m6b6s512" $L8 --pp 3 --rank $r --schedule 1f1b --micro-batches 6 --batch 6 --seq 512; done
  for r in 0 1; do run "pp2:gpipe:r$r:qwen2.5-7b:off:m2b4s1024" --config "$C/qwen2.5-7b.json" --pp 2 --rank $r --schedule gpipe --micro-batches 2 --batch 4 --seq 1024; done
  for r in 1 2; do run "pp4:1f1b:r$r:llama3.1-8b:nonreentrant:m8b8s1024" $L8 --pp 4 --rank $r --schedule 1f1b --micro-batches 8 --batch 8 --seq 1024 --gc nonreentrant; done
  exit 0
fi
# Interleaved 1F1B (2026-11-29, raw/pp523_interleaved.jsonl): two and four ranks, two and three
# stages per rank (32 layers over 6 stages: 5 each, the last 7), more micro-batches than ranks,
# checkpointing, another family (Qwen3: 36 layers, 9 a stage).
if [ "${INTERLEAVED:-0}" = 1 ]; then
  I="--schedule interleaved_1f1b"
  for r in 0 1; do run "pp2v2:interleaved_1f1b:r$r:llama3.1-8b:off:m8b8s512" $L8 --pp 2 --vpp 2 --rank $r $I --micro-batches 8 --batch 8 --seq 512; done
  for r in 0 1 3; do run "pp4v2:interleaved_1f1b:r$r:llama3.1-8b:off:m8b8s512" $L8 --pp 4 --vpp 2 --rank $r $I --micro-batches 8 --batch 8 --seq 512; done
  for r in 0 1; do run "pp2v3:interleaved_1f1b:r$r:llama3.1-8b:off:m6b6s512" $L8 --pp 2 --vpp 3 --rank $r $I --micro-batches 6 --batch 6 --seq 512; done
  for r in 0 1; do run "pp2v2:interleaved_1f1b:r$r:llama3.1-8b:nonreentrant:m4b4s1024" $L8 --pp 2 --vpp 2 --rank $r $I --micro-batches 4 --batch 4 --seq 1024 --gc nonreentrant; done
  for r in 0 1; do run "pp2v2:interleaved_1f1b:r$r:qwen3-8b:off:m4b4s1024" --config "$C/qwen3-8b.json" --pp 2 --vpp 2 --rank $r $I --micro-batches 4 --batch 4 --seq 1024; done
  exit 0
fi
# torchtitan's cut (2026-11-30, raw/pp523_torchtitan.jsonl: `--split torchtitan`, its
# generate_llm_fqn_per_model_part with the embedding and the head counted as a layer each):
# 32 layers over 4 ranks (8, 9, 8, 7), over 2 ranks of 2 stages (8 + 8, 9 + 7), 36 over 3 (12, 13, 11).
if [ "${TORCHTITAN:-0}" = 1 ]; then
  T="--split torchtitan"
  for r in 0 1 3; do run "pp4:1f1b:r$r:llama3.1-8b:off:m8b8s512:torchtitan" $L8 $T --pp 4 --rank $r --schedule 1f1b --micro-batches 8 --batch 8 --seq 512; done
  for r in 0 1; do run "pp2v2:interleaved_1f1b:r$r:llama3.1-8b:off:m4b4s1024:torchtitan" $L8 $T --pp 2 --vpp 2 --rank $r --schedule interleaved_1f1b --micro-batches 4 --batch 4 --seq 1024; done
  for r in 0 1 2; do run "pp3:1f1b:r$r:qwen3-8b:off:m6b6s512:torchtitan" --config "$C/qwen3-8b.json" $T --pp 3 --rank $r --schedule 1f1b --micro-batches 6 --batch 6 --seq 512; done
  exit 0
fi
# torchtitan's end weights (2026-11-30, raw/pp523_weights.jsonl): the embedding and the head
# weighed 2 and 3 (32 layers over 4 ranks as 8, 9, 9, 6), 0 and 2 (over 2 ranks as 17, 15).
if [ "${WEIGHTS:-0}" = 1 ]; then
  T="--split torchtitan"
  for r in 0 1 3; do run "pp4:1f1b:r$r:llama3.1-8b:off:m8b8s512:torchtitan:w2-3" $L8 $T --first-less 2 --last-less 3 --pp 4 --rank $r --schedule 1f1b --micro-batches 8 --batch 8 --seq 512; done
  for r in 0 1; do run "pp2:1f1b:r$r:llama3.1-8b:off:m4b4s1024:torchtitan:w0-2" $L8 $T --first-less 0 --last-less 2 --pp 2 --rank $r --schedule 1f1b --micro-batches 4 --batch 4 --seq 1024; done
  exit 0
fi
for sch in gpipe 1f1b; do
  for r in 0 1; do run "pp2:$sch:r$r:llama3.1-8b:off:m4b4s1024" $L8 --pp 2 --rank $r --schedule $sch --micro-batches 4 --batch 4 --seq 1024; done
done
for r in 0 1 3; do run "pp4:1f1b:r$r:llama3.1-8b:off:m8b8s512" $L8 --pp 4 --rank $r --schedule 1f1b --micro-batches 8 --batch 8 --seq 512; done
for r in 0 1; do run "pp2v2:interleaved_1f1b:r$r:llama3.1-8b:off:m4b4s1024" $L8 --pp 2 --vpp 2 --rank $r --schedule interleaved_1f1b --micro-batches 4 --batch 4 --seq 1024; done
for r in 0 1; do run "pp2:zero_bubble:r$r:llama3.1-8b:off:m4b4s1024" $L8 --pp 2 --rank $r --schedule zero_bubble --micro-batches 4 --batch 4 --seq 1024; done
for r in 0 1; do run "pp2:1f1b:r$r:llama3.1-8b:nonreentrant:m4b4s2048" $L8 --pp 2 --rank $r --schedule 1f1b --micro-batches 4 --batch 4 --seq 2048 --gc nonreentrant; done
for r in 0 1; do run "pp2:1f1b:r$r:qwen3-8b:off:m2b4s1024" --config "$C/qwen3-8b.json" --pp 2 --rank $r --schedule 1f1b --micro-batches 2 --batch 4 --seq 1024; done
