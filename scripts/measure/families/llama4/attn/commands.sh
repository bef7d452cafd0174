#!/bin/bash
# Exact commands (run from this folder, scripts/measure/families/llama4/attn). 2-core shared
# machine: one thread, nice -n 15.  PY = ground-truth venv (torch 2.15.0, transformers 5.23.0).
set -u
cd "$(dirname "$0")"
PY=${PY:-~/.gt-venv/bin/python}
H=/work/shared/groundtruth/harness/measure.py   # unmodified training harness
RUN="env OMP_NUM_THREADS=1 nice -n 15"
L4=tiny-llama4.json            # copy of crates/core/tests/fixtures/hf_configs/tiny-llama4.json
LL=tiny-llama-same-dims.json   # model_type llama: same h 512, 8 heads, 2 KV heads, head_dim 64,
                               # vocab 1024, 4 layers, llama3 rope, untied; dense MLP I 512

# 1. plain harness rows (real CPU tensors), batch 2 x 64, gc 0, AdamW
for dt in bf16 fp32 amp_bf16; do
  for c in $L4 $LL; do
    $RUN $PY $H --config $c --mode real --dtype $dt --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag attn --out rows.jsonl
  done
done

# 2. allocation listings: the harness through attn_probe.py (markers around every decoder
#    layer, attention and feed-forward block; adds free order). The probe rows equal the plain
#    rows of step 1 in every peak (rows.jsonl vs debug*.jsonl).
for dt in bf16 fp32 amp_bf16; do
  for c in $L4 $LL; do
    GT_DEBUG=1 $RUN $PY attn_probe.py --config $c --mode real --dtype $dt --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag attn-debug --out debug.jsonl
  done
done

# 3. E16 (tiny-llama4-e16.json = crates/core/tests/fixtures/hf_configs/tiny-llama4-e16.json):
#    its forward peak is inside the last layer's MoE block (../dense/NOTES.md)
$RUN $PY $H --config tiny-llama4-e16.json --mode real --dtype bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag attn --out rows.jsonl
GT_DEBUG=1 $RUN $PY attn_probe.py --config tiny-llama4-e16.json --mode real --dtype bf16 --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag attn-debug --out debug_e16.jsonl

# 4. disambiguation variant: head_dim 96 (H*d = 768 != h = 512, K*d = 192), batch 3 x seq 40
#    (T = 120, S = 40, d/2 = 48): every formula term has its own size. Llama4 and plain Llama.
for dt in bf16 fp32 amp_bf16; do
  for c in tiny-llama4-d96.json tiny-llama-d96.json; do
    $RUN $PY $H --config $c --mode real --dtype $dt --optim adamw --batch 3 --seq 40 --gc 0 --threads 1 --tag attn --out rows.jsonl
    GT_DEBUG=1 $RUN $PY attn_probe.py --config $c --mode real --dtype $dt --optim adamw --batch 3 --seq 40 --gc 0 --threads 1 --tag attn-debug --out debug_d96.jsonl
  done
done

# 5. vramfit's ledger on the same rows (ledger_check/: vramfit-core by path, the query built as
#    crates/core/tests/ground_truth.rs builds it; cuBLAS workspaces left out as there). Built
#    outside the tree: CARGO_TARGET_DIR=/tmp/vf-target. Llama 4 under autocast is refused.
( cd ledger_check && CARGO_TARGET_DIR=/tmp/vf-target cargo build --offline -q )
A='optim=adamw&grad_ckpt=false&attn=sdpa&keep_outputs=false&cuda_like=true&use_cache=false'
{ for c in tiny-llama4.json tiny-llama-same-dims.json tiny-llama4-e16.json; do for dt in bf16 fp32 amp_bf16; do
    echo "== $c $dt b2 s64"; /tmp/vf-target/debug/ledger_check $c "dtype=$dt&batch=2&seq=64&$A" 2>&1 | grep -v "^it2"; done; done
  for c in tiny-llama4-d96.json tiny-llama-d96.json; do for dt in bf16 fp32 amp_bf16; do
    echo "== $c $dt b3 s40"; /tmp/vf-target/debug/ledger_check $c "dtype=$dt&batch=3&seq=40&$A" 2>&1 | grep -v "^it2"; done; done
} > ledger_check.txt

# 6. use_qk_norm false (Maverick's setting): the RoPE layers without Llama4TextL2Norm
for dt in bf16 fp32; do
  $RUN $PY $H --config tiny-llama4-noqknorm.json --mode real --dtype $dt --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag attn --out rows.jsonl
  GT_DEBUG=1 $RUN $PY attn_probe.py --config tiny-llama4-noqknorm.json --mode real --dtype $dt --optim adamw --batch 2 --seq 64 --gc 0 --threads 1 --tag attn-debug --out debug_noqknorm.jsonl
done
for dt in bf16 fp32; do echo "== tiny-llama4-noqknorm.json $dt b2 s64"; /tmp/vf-target/debug/ledger_check tiny-llama4-noqknorm.json "dtype=$dt&batch=2&seq=64&$A" 2>&1 | grep -v "^it2"; done >> ledger_check.txt

# 7. listings and checks (the debug rows are kept xz-compressed: decompress first)
for f in debug debug_d96 debug_e16 debug_noqknorm; do [ -f $f.jsonl ] || xz -dk $f.jsonl.xz; done
$PY extract_attn_ops.py debug.jsonl > attn_ops.txt
$PY extract_attn_ops.py debug_d96.jsonl > attn_ops_d96.txt
$PY extract_attn_ops.py debug_e16.jsonl 3 > attn_ops_e16.txt
$PY extract_attn_ops.py debug_noqknorm.jsonl > attn_ops_noqknorm.txt
$PY summarize.py > summary.txt
xz -f debug.jsonl debug_d96.jsonl debug_e16.jsonl debug_noqknorm.jsonl
# The listings are kept xz-compressed (attn_ops*.txt.xz): `xz -dk` to read them.
xz -9 attn_ops.txt attn_ops_d96.txt attn_ops_e16.txt attn_ops_noqknorm.txt
