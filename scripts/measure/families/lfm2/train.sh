#!/usr/bin/env bash
# LFM2 trained under the shared harness (torch 2.15, transformers 5.23, peft 0.21): rows
# kept for when training LFM2 is modelled (vramfit refuses it today). `tiny-lfm2.json` is
# the shrunk LFM2 of scripts/measure/mlx/lfm2-shrunk.json (8 layers of 256, attention on 2 and
# 5); `lfm2-350m.json` the published config.
#   scripts/measure/families/lfm2/train.sh   # writes harness_train_rows.jsonl here (~2 min)
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../harness.sh"
out="$here/harness_train_rows.jsonl"
: > "$out"
tiny="$here/tiny-lfm2.json"
run --config "$tiny" --mode real --dtype bf16 --batch 2 --seq 64 --tag "family:lfm2; fake-vs-real tiny bf16 adamw b2 s64 real"
run --config "$tiny" --mode fake --dtype bf16 --batch 2 --seq 64 --tag "family:lfm2; fake-vs-real tiny bf16 adamw b2 s64 fake"
run --config "$tiny" --dtype amp_bf16 --batch 2 --seq 64 --tag "family:lfm2; tiny amp_bf16 adamw b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --gc 1 --tag "family:lfm2; tiny bf16 adamw ckpt b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --attn eager --tag "family:lfm2; tiny bf16 adamw eager b2 s64"
run --config "$tiny" --dtype bf16 --batch 2 --seq 64 --lora 1 --lora-r 8 --tag "family:lfm2; tiny bf16 lora r8 all-linear b2 s64"
run --config "$here/lfm2-350m.json" --dtype bf16 --batch 1 --seq 1024 --tag "family:lfm2; lfm2-350m bf16 adamw b1 s1024"
run --config "$here/lfm2-350m.json" --dtype amp_bf16 --batch 2 --seq 2048 --gc 1 --tag "family:lfm2; lfm2-350m amp_bf16 adamw ckpt b2 s2048"
