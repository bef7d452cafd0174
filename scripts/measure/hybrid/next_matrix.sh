#!/usr/bin/env bash
# Training rows of Qwen3-Next's layers shrunk (configs/next4.json: three Gated DeltaNet layers with
# the fused projections and one gated full-attention layer, 8 experts of 128 with a gated shared
# expert), transformers 5.23's torch fallbacks, through the patched harness copy of
# harness_ac.sh. Run from the repository root:
#   scripts/measure/hybrid/next_matrix.sh OUT.jsonl
set -euo pipefail
out=${1:?rows file}
PY=${PY:-$HOME/.gt-venv/bin/python}
C=scripts/measure/hybrid/configs
. scripts/measure/hybrid/harness_ac.sh
for s in 64 100 200; do run --config $C/next4.json --dtype bf16 --batch 2 --seq $s; done
run --config $C/next4.json --dtype bf16 --batch 2 --seq 100 --gc 1
run --config $C/next4.json --dtype bf16 --batch 2 --seq 100 --lora 1 --lora-r 8 --lora-targets all-linear
run --config $C/next4.json --dtype bf16_autocast --batch 2 --seq 100
run --config $C/next4.json --dtype amp_bf16 --batch 2 --seq 100
run --config $C/next4.json --dtype fp32 --batch 1 --seq 100
