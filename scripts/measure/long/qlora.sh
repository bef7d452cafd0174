#!/usr/bin/env bash
# QLoRA rows at long sequences: scripts/measure/quant.py (real CPU tensors, bitsandbytes 0.50),
# small models only. One process at a time (same lock as run.sh), one thread.
#   bash scripts/measure/long/qlora.sh OUT.jsonl
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(realpath -m "$1")"
PY="${PY:-$HOME/.gt-venv/bin/python}"
Q="flock ${LOCK:-/tmp/long-measure.lock} env OMP_NUM_THREADS=1 nice -n 10 $PY $HERE/../quant.py --threads 1 --out $OUT"
TINY_MISTRAL='{"num_hidden_layers": 2, "hidden_size": 512, "intermediate_size": 1792, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 8192, "sliding_window": 1024}'
# llama-20m (h512, 6 layers, vocab 8192): the standard QLoRA recipe (nf4, double quant, kbit prep ->
# reentrant checkpointing, r16 all-linear, dropout 0.05, fused AdamW) at 8k and 16k tokens
$Q --config llama-20m --batch 1 --seq 8192 --tag "long:llama; qlora nf4 all-linear b1 s8192 gc"
$Q --config llama-20m --batch 1 --seq 16384 --tag "long:llama; qlora nf4 all-linear b1 s16384 gc"
$Q --config llama-20m --batch 2 --seq 8192 --gc-reentrant 0 --tag "long:llama; qlora nf4 all-linear b2 s8192 gc non-reentrant"
$Q --config llama-20m --batch 1 --seq 16384 --lora-targets q_proj,k_proj,v_proj,o_proj --tag "long:llama; qlora nf4 attn b1 s16384 gc"
$Q --config llama-20m --batch 1 --seq 8192 --gc 0 --tag "long:llama; qlora nf4 all-linear b1 s8192"
# Mistral's layout shrunk (2 layers, h512, window 1024): the sliding-window mask under QLoRA
$Q --config mistral-7b --override "$TINY_MISTRAL" --name mistral-7b-tiny-sw1024 --batch 1 --seq 8192 \
   --tag "long:mistral; qlora nf4 all-linear b1 s8192 gc (window 1024)"
$Q --config mistral-7b --override "$TINY_MISTRAL" --name mistral-7b-tiny-sw1024 --batch 1 --seq 8192 --gc-reentrant 0 \
   --tag "long:mistral; qlora nf4 all-linear b1 s8192 gc non-reentrant (window 1024)"
$Q --config mistral-7b --override "$TINY_MISTRAL" --name mistral-7b-tiny-sw1024 --batch 1 --seq 8192 --gc 0 \
   --tag "long:mistral; qlora nf4 all-linear b1 s8192 (window 1024)"
