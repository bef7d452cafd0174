#!/bin/bash
# The gathered-set traces and their memory rows (NOTES.md, "Why the gathered set is what it is").
# usage: trace.sh   (GT venv with deepspeed 0.19.8, as run.sh; writes traces/*.jsonl, appends gathered_rows.jsonl)
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-$HOME/.gt-venv/bin/python}
export PATH=$(dirname "$PY"):$PATH OMP_NUM_THREADS=1
CFG=${CFG:-/work/scratch-ds}
# Mistral-7B's layout cut to 4 layers of hidden 512 (4 heads, 1 kv head, head_dim 128, intermediate 1792)
if [ ! -f "$CFG/mistral-l4.json" ]; then
  mkdir -p "$CFG"
  python3 - "$HERE/../../../crates/core/tests/fixtures/hf_configs/mistral-7b.json" "$CFG/mistral-l4.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(num_hidden_layers=4, hidden_size=512, intermediate_size=1792, num_attention_heads=4,
         num_key_value_heads=1, head_dim=128)
json.dump(c, open(sys.argv[2], "w"))
PY
fi
cd "$HERE"
t() { name=$1; shift; nice -n 10 "$PY" trace_gathered.py "traces/$name.jsonl" --config "$CFG/mistral-l4.json" \
        --batch 1 --seq 32 "$@" --tag "gathered:mistral-l4:$name" --out gathered_rows.jsonl; }
t l4_defaults --gc off
t l4_auto --gc off --auto 1
t l4_auto_live1e7_reuse1e7 --gc off --auto 1 --max-live 10000000 --reuse 10000000
t l4_auto_live1e7_reuse1e7_nonreentrant --gc nonreentrant --auto 1 --max-live 10000000 --reuse 10000000
