#!/bin/bash
# The gathered-set traces and their memory rows (NOTES.md, "Why the gathered set is what it is").
# usage: trace.sh   (GT venv with deepspeed 0.19.8, as run.sh; writes traces/*.jsonl, appends gathered_rows.jsonl)
set -e
. "$(dirname "$0")/common.sh"
# Mistral-7B's layout cut to 4 layers of hidden 512 (4 heads, 1 kv head, head_dim 128, intermediate 1792)
shrunk mistral-l4 4 512 1792 4 1
cd "$HERE"
t() { name=$1; shift; nice -n 10 "$PY" trace_gathered.py "traces/$name.jsonl" --config "$CFG/mistral-l4.json" \
        --batch 1 --seq 32 "$@" --tag "gathered:mistral-l4:$name" --out gathered_rows.jsonl; }
t l4_defaults --gc off
t l4_auto --gc off --auto 1
t l4_auto_live1e7_reuse1e7 --gc off --auto 1 --max-live 10000000 --reuse 10000000
t l4_auto_live1e7_reuse1e7_nonreentrant --gc nonreentrant --auto 1 --max-live 10000000 --reuse 10000000
