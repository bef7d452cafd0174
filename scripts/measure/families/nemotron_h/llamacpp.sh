#!/usr/bin/env bash
# Nemotron-H (`nemotron_h`, `nemotron_h_moe`) in llama.cpp b10488 (CPU): write the tiny GGUFs
# (nemotronh_gguf.py: dense M/*/- , MoE M/*/E, MoE + one MTP block), print their tensor bytes
# (../lfm2/tensor_bytes.py), start llama-server on each (../run_llamacpp.sh, -lv 4), quantize the
# dense and MoE files to Q4_K_M (llama-quantize), and keep every log as raw/*.log. ~2 min.
#   scripts/measure/families/nemotron_h/llamacpp.sh [GGUF_DIR]   (default /tmp/nhg)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fam=$(dirname "$here")
raw=$here/raw
dir=${1:-/tmp/nhg}
bin=/work/llama-b10488/build/bin
py=~/.gt-venv/bin/python
mkdir -p "$raw"
$py "$here/nemotronh_gguf.py" "$dir"
r=$fam/run_llamacpp.sh
port=18610
for v in dense moe; do
  if [ $v = dense ]; then m=$dir/tiny-nemotronh-f16.gguf; else m=$dir/tiny-nemotronh-moe-f16.gguf; fi
  echo "== $m"
  $py "$fam/lfm2/tensor_bytes.py" "$m" -v
  log=$raw/nemotronh-$v
  $r "$m" "$log-c16384-np1.log" $((port += 1)) -c 16384 -np 1 > /dev/null
  $r "$m" "$log-c16384-np4.log" $((port += 1)) -c 16384 -np 4 > /dev/null
  # 64 sequences: an RS buffer large enough to check to the byte in the log's MiB.
  $r "$m" "$log-c16384-np64.log" $((port += 1)) -c 16384 -np 64 > /dev/null
  $r "$m" "$log-c4096-np1-q8_0-fa.log" $((port += 1)) -c 4096 -np 1 -ctk q8_0 -ctv q8_0 -fa on > /dev/null
  # -lv 5 (debug; the later -lv wins): the per-layer "filtered" / "skipped" / "dev = CPU" lines of
  # llama_kv_cache and llama_memory_recurrent, which -lv 4 does not print
  $r "$m" "$log-c16384-np1-lv5.log" $((port += 1)) -c 16384 -np 1 -lv 5 > /dev/null
  # which tensors llama-quantize leaves in f32 and which get q6_K
  $bin/llama-quantize "$m" "$dir/tiny-nemotronh-$v-Q4_K_M.gguf" Q4_K_M > "$raw/nemotronh-quantize-$v-Q4_K_M.log" 2>&1
  $py "$fam/lfm2/tensor_bytes.py" "$dir/tiny-nemotronh-$v-Q4_K_M.gguf" -v
done
# MoE + one MTP (NextN) block: without --spec-type the MTP tensors are skipped (TENSOR_SKIP); with
# --spec-type draft-mtp they load, n_rs_seq = --spec-draft-n-max (default 3) and a second (MTP)
# context with its own KV cache for the MTP layer is created.
m=$dir/tiny-nemotronh-moe-mtp-f16.gguf
echo "== $m"
$py "$fam/lfm2/tensor_bytes.py" "$m" -v
log=$raw/nemotronh-moe-mtp
$r "$m" "$log-c16384-np1.log" $((port += 1)) -c 16384 -np 1 > /dev/null
$r "$m" "$log-c16384-np1-draft-mtp.log" $((port += 1)) -c 16384 -np 1 --spec-type draft-mtp > /dev/null
$r "$m" "$log-c16384-np4-draft-mtp.log" $((port += 1)) -c 16384 -np 4 --spec-type draft-mtp > /dev/null
$r "$m" "$log-c16384-np4-draft-mtp-n8.log" $((port += 1)) -c 16384 -np 4 --spec-type draft-mtp --spec-draft-n-max 8 > /dev/null
$r "$m" "$log-c16384-np1-draft-mtp-lv5.log" $((port += 1)) -c 16384 -np 1 --spec-type draft-mtp -lv 5 > /dev/null
for f in "$raw"/nemotronh-dense-*.log "$raw"/nemotronh-moe-*.log; do
  echo "== $f"
  case $f in *-lv5.log)
    # per-layer placement lines (debug level) of the KV cache and the recurrent state
    grep -E "llama_kv_cache: +layer|llama_memory_recurrent(: |, )layer|llama_kv_cache: size|llama_memory_recurrent: size" "$f" | head -40
    continue;;
  esac
  grep -E "n_head_kv  |n_ff  |n_seq_max|n_ctx_seq  |n_rs_seq|kv_unified|flash_attn  |ssm_d_|ssm_dt_rank|ssm_n_group|n_expert  |n_expert_used|n_ff_shexp|n_layer  |model params|unused tensor|output buffer|KV buffer|llama_kv_cache: size|RS buffer|llama_memory_recurrent: size|compute buffer|model buffer|MTP|draft" "$f" | grep -v "^srv  *params_from\|slot " | head -60
done
