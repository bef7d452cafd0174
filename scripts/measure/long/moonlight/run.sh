#!/usr/bin/env bash
# Moonlight-16B-A3B cut to 3 and 4 layers (one dense layer, then 2 or 3 MoE layers), LoRA r=16
# on all linear layers, bf16, 1 x 2048 tokens, no checkpointing: the per-MoE-layer tensor the
# long rows missed (NOTES.md section 6b). Shared harness, transformers 5.23.0, torch 2.15.0,
# fake tensors (versions in each row of rows.jsonl).
#   bash scripts/measure/long/moonlight/run.sh
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
HARNESS="${HARNESS:-/work/shared/groundtruth/harness}"
PY="${PY:-$HOME/.gt-venv/bin/python}"
TMP="$(mktemp -d)"
for L in 3 4; do
  python3 -c "import json,sys; c=json.load(open(sys.argv[1])); c['num_hidden_layers']=int(sys.argv[2]); json.dump(c, open(sys.argv[3], 'w'))" \
    "$HERE/../../../../crates/core/tests/fixtures/hf_configs/moonlight-16b-a3b.json" "$L" "$TMP/m$L.json"
  (cd "$HARNESS" && OMP_NUM_THREADS=1 "$PY" measure.py --config "$TMP/m$L.json" --mode fake --dtype bf16 \
    --optim adamw --batch 1 --seq 2048 --gc 0 --attn sdpa --lora 1 --lora-r 16 --out "$HERE/rows.jsonl")
done
# The storages alive at the backward peak (trace_m3_bwd1.txt):
GT_DEBUG=1 OMP_NUM_THREADS=1 "$PY" "$HERE/../trace.py" "$TMP/m3.pkl" --config "$TMP/m3.json" --mode fake \
  --dtype bf16 --optim adamw --batch 1 --seq 2048 --gc 0 --attn sdpa --lora 1 --lora-r 16 --iters 1 > /dev/null
"$PY" "$HERE/../trace.py" --show "$TMP/m3.pkl" --top 60 > "$HERE/trace_m3_bwd1.txt"
