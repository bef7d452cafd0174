#!/usr/bin/env bash
# LFM2 in llama.cpp b10488 (CPU): write the tiny GGUF (../lfm2_gguf.py), print its tensor bytes
# (tensor_bytes.py), start llama-server on it four times (../run_llamacpp.sh) and keep the logs
# as ../raw/lfm2-*.log. ~10 s.
#   scripts/measure/families/lfm2/llamacpp.sh [GGUF_DIR]   (default /tmp/lfm2g)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fam=$(dirname "$here")
dir=${1:-/tmp/lfm2g}
~/.gt-venv/bin/python "$fam/lfm2_gguf.py" "$dir"
m=$dir/tiny-lfm2-f16.gguf
~/.gt-venv/bin/python "$here/tensor_bytes.py" "$m"
r=$fam/run_llamacpp.sh
$r "$m" "$fam/raw/lfm2-c16384-np1.log" 18401 -c 16384 -np 1 > /dev/null
$r "$m" "$fam/raw/lfm2-c16384-np4.log" 18402 -c 16384 -np 4 > /dev/null
$r "$m" "$fam/raw/lfm2-c4096-np1-q8_0-fa.log" 18403 -c 4096 -np 1 -ctk q8_0 -ctv q8_0 -fa on > /dev/null
# 64 sequences: an RS buffer large enough (1.50 MiB) to check to the byte in the log's MiB.
$r "$m" "$fam/raw/lfm2-c16384-np64.log" 18404 -c 16384 -np 64 > /dev/null
for f in "$fam"/raw/lfm2-*.log; do
  echo "== $f"
  grep -E "n_head_kv  |n_seq_max|n_ctx_seq  |flash_attn  |output buffer|KV buffer|llama_kv_cache: size|RS buffer|llama_memory_recurrent: size|compute buffer|model buffer" "$f"
done
