#!/usr/bin/env bash
# Training rows of shrunk LFM2 configs (this folder: c1/c2 one and two short-convolution layers,
# a1/a2 one and two attention layers; ../tiny-lfm2.json eight layers, attention on 2 and 5),
# transformers 5.23's torch fallback (`causal_conv1d_fn`; no causal-conv1d installed), torch 2.15,
# fake tensors. The shared harness is copied with its GT_DEBUG records kept whole (size, alloc
# and free sequence numbers, phase, tag, category, op). Run from the repository root:
#   scripts/measure/families/lfm2/train/matrix.sh OUT.jsonl [DEBUG_OUT.jsonl]
set -euo pipefail
out=${1:?rows file}
dbg=${2:-}
PY=${PY:-$HOME/.gt-venv/bin/python}
here=scripts/measure/families/lfm2/train
H=$(mktemp -d)/measure.py
sed 's/result\["debug_allocs"\] = \[\[r\[0\], r\[3\], r\[6\]\] for r in tracker.recs\]/result["debug_allocs"] = [list(r) for r in tracker.recs]/' \
  ../shared/groundtruth/harness/measure.py > "$H"
grep -q 'list(r) for r in tracker.recs' "$H"
run() { OMP_NUM_THREADS=1 "$PY" "$H" "$@" --out "$out" > /dev/null 2>&1 || echo "failed: $*" >&2; }
drun() { [ -n "$dbg" ] && GT_DEBUG=1 OMP_NUM_THREADS=1 "$PY" "$H" "$@" --out "$dbg" > /dev/null 2>&1 || true; }
for cfg in lfm2-c1 lfm2-c2 lfm2-a1 lfm2-a2; do
  for s in 64 100; do run --config $here/$cfg.json --dtype bf16 --batch 2 --seq $s; done
done
for cfg in lfm2-c1 lfm2-c2; do
  run --config $here/$cfg.json --dtype amp_bf16 --batch 2 --seq 100
  run --config $here/$cfg.json --dtype fp32 --batch 2 --seq 100
  run --config $here/$cfg.json --dtype bf16 --batch 2 --seq 100 --gc 1
  run --config $here/$cfg.json --dtype amp_bf16 --batch 2 --seq 100 --gc 1
  run --config $here/$cfg.json --dtype fp32 --batch 1 --seq 100 --gc 1
  drun --config $here/$cfg.json --dtype bf16 --batch 2 --seq 100
  drun --config $here/$cfg.json --dtype bf16 --batch 2 --seq 100 --gc 1
  drun --config $here/$cfg.json --dtype amp_bf16 --batch 2 --seq 100
done
tiny=scripts/measure/families/lfm2/tiny-lfm2.json
run --config $tiny --dtype bf16 --batch 2 --seq 64
run --config $tiny --dtype amp_bf16 --batch 2 --seq 64
run --config $tiny --dtype fp32 --batch 1 --seq 200
run --config $tiny --dtype bf16 --batch 2 --seq 64 --gc 1
run --config $tiny --dtype amp_bf16 --batch 1 --seq 300 --gc 1
run --config $tiny --dtype bf16 --batch 2 --seq 64 --attn eager
pub=scripts/measure/families/lfm2
run --config $pub/lfm2-350m.json --dtype bf16 --batch 1 --seq 1024
run --config $pub/lfm2-350m.json --dtype amp_bf16 --batch 2 --seq 2048 --gc 1
run --config $pub/lfm2-1.2b.json --dtype bf16 --batch 1 --seq 2048
run --config $pub/lfm2-1.2b.json --dtype amp_bf16 --batch 1 --seq 1024
run --config $pub/lfm2-1.2b.json --dtype bf16 --batch 2 --seq 1024 --gc 1
