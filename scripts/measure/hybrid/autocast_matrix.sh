#!/usr/bin/env bash
# Autocast and LoRA rows of the shrunk Qwen3.5 hybrids (configs/), transformers 5.23's torch
# fallbacks. The shared harness has no `bf16_autocast` (bf16 weights under autocast: the
# Trainer's bf16=True on a bf16 model) and lists no live storages at a peak, so this runs a copy
# with harness_ac.patch applied (dtype `bf16_autocast`, rows written as dtype bf16 with
# `autocast: true`; `GT_DEBUG=1` adds `live_at_peak`). Run from the repository root:
#   scripts/measure/hybrid/autocast_matrix.sh OUT.jsonl
set -euo pipefail
out=${1:?rows file}
PY=${PY:-$HOME/.gt-venv/bin/python}
C=scripts/measure/hybrid/configs
. scripts/measure/hybrid/harness_ac.sh
for cfg in l1 l2 f1 mixed4; do
  for d in bf16_autocast amp_bf16; do
    for s in 64 100 200; do run --config $C/$cfg.json --dtype $d --batch 2 --seq $s; done
  done
done
for cfg in l2 mixed4 moe4; do
  for d in bf16_autocast amp_bf16; do
    run --config $C/$cfg.json --dtype $d --batch 2 --seq 100 --gc 1
    run --config $C/$cfg.json --dtype $d --batch 2 --seq 100 --lora 1 --lora-r 8 --lora-targets all-linear
  done
done
run --config $C/moe4.json --dtype bf16_autocast --batch 2 --seq 100
run --config $C/moe4.json --dtype amp_bf16 --batch 2 --seq 100
