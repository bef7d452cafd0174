#!/usr/bin/env bash
# Training rows of shrunk LFM2-MoE configs (this folder: lfm2moe-m2, one dense and one MoE
# short-convolution layer; lfm2moe-m3, one dense and two MoE; lfm2moe-m3a, the last MoE layer
# attention; all from ../../../mlx/lfm2moe-shrunk.json: 8 experts of 128, top 2, hidden 256) and
# the published LFM2-8B-A1B config, as matrix.sh runs them. From the repository root:
#   scripts/measure/families/lfm2/train/moe_matrix.sh OUT.jsonl [DEBUG_OUT.jsonl]
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
for cfg in lfm2moe-m2 lfm2moe-m3 lfm2moe-m3a; do
  run --config $here/$cfg.json --dtype bf16 --batch 2 --seq 100
  run --config $here/$cfg.json --dtype amp_bf16 --batch 2 --seq 100
  run --config $here/$cfg.json --dtype fp32 --batch 1 --seq 100
  run --config $here/$cfg.json --dtype bf16 --batch 2 --seq 100 --gc 1
done
for cfg in lfm2moe-m2 lfm2moe-m3; do drun --config $here/$cfg.json --dtype bf16 --batch 2 --seq 100; done
run --config scripts/measure/families/lfm2/moe_lfm2-8b-a1b.json --dtype bf16 --batch 1 --seq 1024
run --config scripts/measure/families/lfm2/moe_lfm2-8b-a1b.json --dtype bf16 --batch 1 --seq 1024 --gc 1
