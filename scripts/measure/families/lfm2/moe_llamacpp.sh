#!/usr/bin/env bash
# LFM2-MoE in llama.cpp b10488 (CPU): write the tiny GGUF (../lfm2moe_gguf.py), list its tensors
# and bytes (tensor_bytes.py -v), start llama-server on it twice (../run_llamacpp.sh), keep the
# logs as ../raw/lfm2moe-c16384-np{1,4}.log, then check which keys the loader requires (one GGUF
# per dropped key in $dir/drop, the first error line of each start). `start` below is
# run_llamacpp.sh's command line without its summary (both wait for b10488's wording,
# "model loaded" / "listening on").
#   scripts/measure/families/lfm2/moe_llamacpp.sh [GGUF_DIR] > moe_llamacpp.txt   (default /tmp/lfm2moeg)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fam=$(dirname "$here")
dir=${1:-/tmp/lfm2moeg}
py=~/.gt-venv/bin/python
$py "$fam/lfm2moe_gguf.py" "$dir"
m=$dir/tiny-lfm2moe-f16.gguf
echo "== tensors of $m (tensor_bytes.py -v: name, type, ggml shape, n_bytes)"
$py "$here/tensor_bytes.py" "$m" -v
r=$fam/run_llamacpp.sh
$r "$m" "$fam/raw/lfm2moe-c16384-np1.log" 18411 -c 16384 -np 1 > /dev/null
$r "$m" "$fam/raw/lfm2moe-c16384-np4.log" 18412 -c 16384 -np 4 > /dev/null
start() {  # MODEL LOG PORT [args]: like run_llamacpp.sh, stops once the server listens or fails
  local model=$1 log=$2 port=$3; shift 3
  /work/llama-b10488/build/bin/llama-server -m "$model" -nr -lv 4 --port "$port" "$@" > "$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 120); do
    grep -q "listening on\|model loaded\|error" "$log" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.25
  done
  sleep 0.5
  kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
}
# 64 sequences (extra): an RS buffer large enough (1.50 MiB) to check to the byte in MiB.
start "$m" "$fam/raw/lfm2moe-c16384-np64.log" 18413 -c 16384 -np 64
for f in "$fam"/raw/lfm2moe-c16384-np*.log; do
  echo "== $f"
  grep -E "n_head_kv  |model params|n_expert|n_ff_exp|n_layer_dense_lead|expert_gating|model type|n_seq_max|n_ctx_seq  |flash_attn  |output buffer|KV buffer|llama_kv_cache: size|RS buffer|llama_memory_recurrent: size|compute buffer|model buffer|llama_params_fit|Host|unused" "$f"
done
echo "== required keys: start llama-server on a file without the key (DROP=key ../lfm2moe_gguf.py)"
port=18420
for k in block_count context_length embedding_length feed_forward_length attention.head_count \
         attention.head_count_kv rope.freq_base attention.layer_norm_rms_epsilon expert_count \
         expert_used_count expert_feed_forward_length leading_dense_block_count expert_gating_func \
         vocab_size shortconv.l_cache; do
  d=$dir/drop/$k; mkdir -p "$d"
  DROP=$k $py "$fam/lfm2moe_gguf.py" "$d"
  port=$((port + 1))
  start "$d/tiny-lfm2moe-f16.gguf" "$d/server.log" $port -c 4096 -np 1 2>/dev/null
  if grep -q "listening on" "$d/server.log"; then
    res="loads; $(grep -E 'print_info: (freq_base_train|n_vocab) ' "$d/server.log" | sed 's/.*print_info: *//' | tr -s ' ' | paste -sd';')"
  else
    res="FAILS: $(grep -m1 -iE 'error|exception|failed|GGML_ASSERT|abort' "$d/server.log" | sed 's/^ *//')"
  fi
  echo "without $k: $res"
done
