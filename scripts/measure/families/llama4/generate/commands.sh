#!/usr/bin/env bash
# Llama 4 under transformers' generate (5.23, torch 2.15): prompts past the chunk,
# Maverick's interleaved dense layers, Scout and Maverick at full size (fake).
# The published Scout config.json has "attn_temperature_tuning": 4, which transformers 5.23
# rejects (a bool field, strict validation): the full-size rows use ../scout-text.json and
# ../maverick-text.json (text configs, the flag true, as the previous measurements did).
# Rows appended to rows.jsonl here; the meter is the unmodified ../../../infer/generate.py.
set -u
D=/work/main/scripts/measure/families/llama4/generate
G=/work/main/scripts/measure/infer/generate.py
PY=~/.gt-venv/bin/python
RUN="nice -n 15 timeout 900"
cd /work/main/crates/core/tests/fixtures/hf_configs
if [ "${SKIP_TINY:-0}" = 0 ]; then for mode in real fake; do
  # tiny (chunk 128): a prompt past the chunk, and decode steps crossing it
  $RUN $PY $G --config tiny-llama4.json --mode $mode --dtype bf16 --attn sdpa --batch 2 --prompt 200 --new 8 --tag l4gen --out $D/rows.jsonl
  $RUN $PY $G --config tiny-llama4.json --mode $mode --dtype bf16 --attn sdpa --batch 1 --prompt 120 --new 16 --tag l4gen --out $D/rows.jsonl
  # eager attention
  $RUN $PY $G --config tiny-llama4.json --mode $mode --dtype bf16 --attn eager --batch 2 --prompt 64 --new 8 --tag l4gen --out $D/rows.jsonl
  # Maverick's layout: experts every other layer, a dense MLP of intermediate_size_mlp between
  $RUN $PY $G --config $D/tiny-llama4-il2.json --name tiny-llama4-il2 --mode $mode --dtype bf16 --attn sdpa --batch 2 --prompt 64 --new 8 --tag l4gen --out $D/rows.jsonl
done; fi
# full size, fake
$RUN $PY $G --config /work/main/scripts/measure/families/llama4/scout-text.json --name llama4-scout-text --mode fake --dtype bf16 --attn sdpa --batch 1 --prompt 1024 --new 4 --tag l4gen --out $D/rows.jsonl
$RUN $PY $G --config /work/main/scripts/measure/families/llama4/scout-text.json --name llama4-scout-text --mode fake --dtype bf16 --attn sdpa --batch 4 --prompt 512 --new 4 --tag l4gen --out $D/rows.jsonl
$RUN $PY $G --config /work/main/scripts/measure/families/llama4/scout-text.json --name llama4-scout-text --mode fake --dtype bf16 --attn sdpa --batch 1 --prompt 9000 --new 2 --tag l4gen --out $D/rows.jsonl
$RUN $PY $G --config /work/main/scripts/measure/families/llama4/maverick-text.json --name llama4-maverick-text --mode fake --dtype bf16 --attn sdpa --batch 1 --prompt 1024 --new 4 --tag l4gen --out $D/rows.jsonl
$PY $G --compare $D/rows.jsonl > $D/compare.txt

# The chunked mask is per sequence: prompts past the chunk at batch 1 and 3 (rows_b1_b3_p200.jsonl)
for b in 1 3; do
  $RUN $PY $G --config tiny-llama4.json --mode real --dtype bf16 --attn sdpa --batch $b --prompt 200 --new 8 --tag l4gen --out $D/rows_b1_b3_p200.jsonl
done
# Op-by-op listings (GT_DEBUG=1: every storage with its alloc and free sequence numbers), xz-compressed
GT_DEBUG=1 $RUN $PY $G --config tiny-llama4.json --mode real --dtype bf16 --attn sdpa --batch 2 --prompt 200 --new 2 --tag dbg --out $D/debug_b2_p200_n2.jsonl
GT_DEBUG=1 $RUN $PY $G --config tiny-llama4.json --mode real --dtype bf16 --attn eager --batch 2 --prompt 64 --new 3 --tag dbg --out $D/debug_eager_b2_p64_n3.jsonl
xz -9 $D/debug_*.jsonl
