#!/usr/bin/env bash
# Runs the long-sequence matrix with the shared harness, one process per model (batch mode),
# one process at a time, one thread, niced. Rows are appended to $OUT.
#   bash scripts/measure/long/run.sh OUT.jsonl [model ...]
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(realpath -m "$1")"; shift
HARNESS="${HARNESS:-/work/shared/groundtruth/harness}"
PY="${PY:-$HOME/.gt-venv/bin/python}"
TMP="${TMPDIR:-/tmp}/long-argv"; mkdir -p "$TMP"
MODELS=("$@")
if [ ${#MODELS[@]} -eq 0 ]; then
  MODELS=(mistral-7b mixtral-8x7b starcoderbase-1b gemma3-1b llama3.1-8b mistral-nemo-12b qwen2.5-7b
          qwen3-8b phi3.5-mini phi3-mini gemma-2b gemma2-2b olmo2-1b qwen1.5-moe-a2.7b qwen3-30b-a3b
          deepseek-v2-lite moonlight-16b-a3b gpt-oss-20b gpt2-124m)
fi
cd "$HARNESS"
for m in "${MODELS[@]}"; do
  python3 "$HERE/matrix.py" --only "/$m.json" --out "$OUT" --skip-done "$OUT" > "$TMP/$m.json"
  echo "$(date +%T) $m: $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$TMP/$m.json") configurations"
  # one measurement process at a time on this machine (trace.py takes the same lock)
  flock "${LOCK:-/tmp/long-measure.lock}" env OMP_NUM_THREADS=1 nice -n 10 "$PY" measure.py \
    --argv-file "$TMP/$m.json" > /dev/null 2>> "$TMP/$m.err"
done
echo "$(date +%T) done"
