#!/usr/bin/env bash
# Granite 4.0-H (`granitehybrid`) in llama.cpp b10488 (CPU): write the two tiny GGUFs
# (../granitehybrid_gguf.py: dense FFN and MoE + shared expert), print their tensor bytes
# (../lfm2/tensor_bytes.py), start llama-server on each four times (../run_llamacpp.sh), quantize
# each to Q4_K_M (llama-quantize) and keep the logs as ../raw/granitehybrid-*.log. ~1 min.
#   scripts/measure/families/granite_hybrid/llamacpp.sh [GGUF_DIR]   (default /tmp/ghg)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fam=$(dirname "$here")
dir=${1:-/tmp/ghg}
bin=/work/llama-b10488/build/bin
py=~/.gt-venv/bin/python
$py "$fam/granitehybrid_gguf.py" "$dir"
r=$fam/run_llamacpp.sh
port=18410
for v in dense moe; do
  if [ $v = dense ]; then m=$dir/tiny-granitehybrid-f16.gguf; else m=$dir/tiny-granitehybrid-moe-f16.gguf; fi
  echo "== $m"
  $py "$fam/lfm2/tensor_bytes.py" "$m" -v
  log=$fam/raw/granitehybrid-$v
  $r "$m" "$log-c16384-np1.log" $((port += 1)) -c 16384 -np 1 > /dev/null
  $r "$m" "$log-c16384-np4.log" $((port += 1)) -c 16384 -np 4 > /dev/null
  # 64 sequences: an RS buffer large enough to check to the byte in the log's MiB.
  $r "$m" "$log-c16384-np64.log" $((port += 1)) -c 16384 -np 64 > /dev/null
  $r "$m" "$log-c4096-np1-q8_0-fa.log" $((port += 1)) -c 4096 -np 1 -ctk q8_0 -ctv q8_0 -fa on > /dev/null
  # which tensors llama-quantize leaves in f32 (ssm_conv1d, ssm_a, ssm_d, ssm_norm, norms, biases, router)
  $bin/llama-quantize "$m" "$dir/tiny-granitehybrid-$v-Q4_K_M.gguf" Q4_K_M > "$fam/raw/granitehybrid-quantize-$v-Q4_K_M.log" 2>&1
  $py "$fam/lfm2/tensor_bytes.py" "$dir/tiny-granitehybrid-$v-Q4_K_M.gguf" -v
done
for f in "$fam"/raw/granitehybrid-dense-*.log "$fam"/raw/granitehybrid-moe-*.log; do
  echo "== $f"
  grep -E "n_head_kv  |n_seq_max|n_ctx_seq  |kv_unified|flash_attn  |ssm_d_|ssm_dt_rank|ssm_n_group|n_expert  |n_ff_shexp|model params|output buffer|KV buffer|llama_kv_cache: size|RS buffer|llama_memory_recurrent: size|compute buffer|model buffer" "$f"
done
