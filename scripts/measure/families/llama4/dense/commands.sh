#!/bin/bash
# Exact commands used (run from this folder, scripts/measure/families/llama4/dense).
# PY = ground-truth venv (torch 2.15.0, transformers 5.23.0, peft 0.21.2). On a shared 2-core
# machine everything ran under `nice -n 15` with one thread.
set -u
cd "$(dirname "$0")"
PY=${PY:-~/.gt-venv/bin/python}
H=/work/shared/groundtruth/harness/measure.py   # unmodified training harness
G=../../../infer/generate.py                    # unmodified generate meter
RUN="env OMP_NUM_THREADS=1 nice -n 15"
CFG=../tiny-llama4.json   # 4 MoE layers, h 512, E 4 experts of I 256, top-1, shared expert 256

# llama4_text is in transformers 5.23's MODEL_FOR_CAUSAL_LM_MAPPING (Llama4ForCausalLM): no shim.

# 1. training harness: tiny config, batch 2 x 64, AdamW, real and fake
for mode in real fake; do
  $RUN $PY $H --config $CFG --mode $mode --dtype bf16     --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense --out train_rows.jsonl
  $RUN $PY $H --config $CFG --mode $mode --dtype bf16     --optim adamw --batch 2 --seq 64 --gc 1 --threads 1 --tag dense --out train_rows.jsonl
  $RUN $PY $H --config $CFG --mode $mode --dtype fp32     --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense --out train_rows.jsonl
  $RUN $PY $H --config $CFG --mode $mode --dtype amp_bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense --out train_rows.jsonl
  $RUN $PY $H --config $CFG --mode $mode --dtype bf16     --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --lora 1 --lora-r 8 --tag dense --out train_rows.jsonl
done
# ^ the LoRA rows with the default targets (all-linear) are errors: peft 0.21.2 wraps the router
#   (Llama4Router subclasses nn.Linear, its forward returns a tuple) and lora/layer.py:1089 reads
#   `result.dtype` of the tuple. The same LoRA on every other linear (the attention's and the
#   shared expert's; the stacked experts are nn.Parameters, no nn.Linear):
for mode in real fake; do
  $RUN $PY $H --config $CFG --mode $mode --dtype bf16     --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --lora 1 --lora-r 8 --lora-targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj --tag dense --out train_rows.jsonl
done

# 2. variants (bf16 gc 0): E 16 (top-1), E 16 top-2, expert width I 512 (intermediate_size is the
#    routed experts' AND the shared expert's width; intermediate_size_mlp is unused: all 4 layers are MoE)
for v in e16 e16-k2 i512; do
  for mode in real fake; do
    $RUN $PY $H --config tiny-llama4-$v.json --mode $mode --dtype bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense --out train_rows.jsonl
  done
done

# 1b. allocation listing: the harness through train_probe.py (adds free order and MoE markers)
GT_DEBUG=1 $RUN $PY train_probe.py --config $CFG --mode real --dtype bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense-debug --out train_debug.jsonl
GT_DEBUG=1 $RUN $PY train_probe.py --config tiny-llama4-e16.json --mode real --dtype bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense-debug --out train_debug.jsonl
GT_DEBUG=1 $RUN $PY train_probe.py --config $CFG --mode real --dtype fp32 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense-debug --out train_debug.jsonl
GT_DEBUG=1 $RUN $PY train_probe.py --config $CFG --mode real --dtype amp_bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag dense-debug --out train_debug.jsonl
$PY extract_moe_ops.py train train_debug.jsonl > train_moe_ops.txt

# 3. generate: bf16 sdpa (1,16,4) and (2,64,8); fp32 sdpa (2,64,8); real and fake
for mode in real fake; do
  $RUN $PY $G --config $CFG --mode $mode --dtype bf16 --attn sdpa --batch 1 --prompt 16 --new 4 --tag dense --out gen_rows.jsonl
  $RUN $PY $G --config $CFG --mode $mode --dtype bf16 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense --out gen_rows.jsonl
  $RUN $PY $G --config $CFG --mode $mode --dtype fp32 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense --out gen_rows.jsonl
  for v in e16 e16-k2 i512; do   # variants, for the dependence on E, k and I
    $RUN $PY $G --config tiny-llama4-$v.json --mode $mode --dtype bf16 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense --out gen_rows.jsonl
  done
done
# I 1024 > h: the prefill's largest moment moves from the down bmm to the gate/up product (NOTES.md)
for mode in real fake; do
  $RUN $PY $G --config tiny-llama4-i1024.json --mode $mode --dtype bf16 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense --out gen_rows.jsonl
done
$PY $G --compare gen_rows.jsonl > gen_compare.txt

# 3b. one MoE block's prefill allocations (generate.py's own GT_DEBUG list + MoE markers)
GT_DEBUG=1 $RUN $PY gen_probe.py --config $CFG --mode real --dtype bf16 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense-debug --out gen_debug.jsonl
GT_DEBUG=1 $RUN $PY gen_probe.py --config tiny-llama4-e16.json --mode real --dtype bf16 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense-debug --out gen_debug.jsonl
GT_DEBUG=1 $RUN $PY gen_probe.py --config tiny-llama4-i1024.json --mode real --dtype bf16 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense-debug --out gen_debug.jsonl
GT_DEBUG=1 $RUN $PY gen_probe.py --config $CFG --mode real --dtype fp32 --attn sdpa --batch 2 --prompt 64 --new 8 --tag dense-debug --out gen_debug.jsonl
$PY extract_moe_ops.py gen gen_debug.jsonl > gen_moe_ops.txt

# 4. tables and formula checks for NOTES.md
$PY summarize.py > summary.txt
