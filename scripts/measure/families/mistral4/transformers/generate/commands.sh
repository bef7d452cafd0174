#!/bin/bash
# Exact commands used (run from this folder). PY = ground-truth venv (torch 2.15.0, transformers 5.23.0).
set -u
PY=${PY:-~/.gt-venv/bin/python}
G="nice env OMP_NUM_THREADS=1 $PY ./gen_mistral4.py"   # shim: registers Mistral4Config -> Mistral4ForCausalLM, runs generate.main()

# 1. tiny mistral4 (3 layers, first dense), real and fake, bf16 sdpa; fp32 sdpa and bf16 eager at (2,64,8)
for mode in real fake; do
  for bpn in "1 16 4" "2 64 8" "4 32 3"; do
    set -- $bpn
    $G --config ../tiny-mistral4.json --mode $mode --dtype bf16 --attn sdpa --batch $1 --prompt $2 --new $3 --tag m4gen --out rows.jsonl
  done
  $G --config ../tiny-mistral4.json --mode $mode --dtype fp32 --attn sdpa  --batch 2 --prompt 64 --new 8 --tag m4gen --out rows.jsonl
  $G --config ../tiny-mistral4.json --mode $mode --dtype bf16 --attn eager --batch 2 --prompt 64 --new 8 --tag m4gen --out rows.jsonl
done
$G --compare rows.jsonl > compare_out.txt 2>&1

# 2. Mistral Small 4 text (36 layers, 119B), fake mode, bf16 sdpa
for bpn in "1 1024 4" "4 512 4" "1 8192 2"; do
  set -- $bpn
  timeout 900 $G --config ../mistral-small-4-text.json --mode fake --dtype bf16 --attn sdpa --batch $1 --prompt $2 --new $3 --tag m4gen --out rows.jsonl
done

# 3. predict() replay against the rows (generate.py has no mistral4 model: expected to differ)
$G --check rows.jsonl --check-verbose 1 > check_out.txt 2>&1
# every value, as-is and with the rows' model_type set to deepseek_v2 (predict's MLA+MoE family)
nice $PY ./check_detail.py rows.jsonl > check_detail.txt 2>&1

# 4. router allocation listing, one prefill router call (B=2, P=64), mistral4 tiny vs DeepSeek-V3 tiny
#    (real and fake: the listings are identical apart from sequence numbers)
nice env OMP_NUM_THREADS=1 GT_DEBUG=1 $PY ./router_ops.py > router_ops.txt

# 5. which op makes the prefill / overall peak (GT_DEBUG=1 replay of one run each)
for a in sdpa eager; do echo "### $a"; nice env OMP_NUM_THREADS=1 $PY ./peak_where.py --config ../tiny-mistral4.json --mode real --dtype bf16 --attn $a --batch 2 --prompt 64 --new 8 2>&1 | grep -v '^{"name"'; done > peak_where_tiny.txt
(echo "### mistral-small-4-text fake bf16 sdpa B1 P1024 N4"; nice env OMP_NUM_THREADS=1 $PY ./peak_where.py --config ../mistral-small-4-text.json --mode fake --dtype bf16 --attn sdpa --batch 1 --prompt 1024 --new 4 2>&1 | grep -v '^{"name"') > peak_where_small4.txt
