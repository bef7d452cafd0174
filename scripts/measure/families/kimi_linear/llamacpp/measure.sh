#!/usr/bin/env bash
# Kimi Linear (`kimi-linear`) in llama.cpp b10488 (CPU): write the tiny GGUFs (tiny_gguf.py),
# print their tensor bytes (tensor_bytes.py), start llama-server on them (../../run_llamacpp.sh,
# -lv 4) under several settings, quantize to Q4_K_M, keep every log as raw/*.log.
#   scripts/measure/families/kimi_linear/llamacpp/measure.sh [GGUF_DIR]   (default /tmp/kimig)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fam=$(cd "$here/../.." && pwd)
raw=$here/raw
dir=${1:-/tmp/kimig}
bin=/work/llama-b10488/build/bin
py=~/.gguf-venv/bin/python
mkdir -p "$raw"
nice -n 10 $py "$here/tiny_gguf.py" "$dir"
# the real layer pattern (27 layers, MLA at 1-based 4,8,...,24,27) at the tiny width
N_LAYER=27 FULL_ATTN=4,8,12,16,20,24,27 NAME=tiny-kimilinear27-f16.gguf nice -n 10 $py "$here/tiny_gguf.py" "$dir"
r="nice -n 10 $fam/run_llamacpp.sh"
port=18810
for v in kimilinear kimilinear27; do
  m=$dir/tiny-$v-f16.gguf
  echo "== $m"
  $py "$here/tensor_bytes.py" "$m" -v > "$raw/$v-f16-tensors.txt"
  head -2 "$raw/$v-f16-tensors.txt"
  log=$raw/$v
  $r "$m" "$log-c4096-np1.log"            $((port += 1)) -c 4096 -np 1 > /dev/null
  $r "$m" "$log-c4096-np4.log"            $((port += 1)) -c 4096 -np 4 > /dev/null
  $r "$m" "$log-c16384-np1.log"           $((port += 1)) -c 16384 -np 1 > /dev/null
  $r "$m" "$log-c4096-np1-ctkv-q8_0-fa-on.log" $((port += 1)) -c 4096 -np 1 -ctk q8_0 -ctv q8_0 -fa on > /dev/null
  [ $v = kimilinear27 ] && continue
  $r "$m" "$log-c4096-np4-kvu.log"        $((port += 1)) -c 4096 -np 4 -kvu > /dev/null
  $r "$m" "$log-c4096-npauto.log"         $((port += 1)) -c 4096 > /dev/null
  $r "$m" "$log-c4096-np1-fa-on.log"      $((port += 1)) -c 4096 -np 1 -fa on > /dev/null
  $r "$m" "$log-c4096-np1-fa-off.log"     $((port += 1)) -c 4096 -np 1 -fa off > /dev/null
  $r "$m" "$log-c4096-np1-ctk-q8_0.log"   $((port += 1)) -c 4096 -np 1 -ctk q8_0 > /dev/null
  $r "$m" "$log-c16384-np1-fa-off.log"    $((port += 1)) -c 16384 -np 1 -fa off > /dev/null
  $r "$m" "$log-c16384-np1-ub256.log"     $((port += 1)) -c 16384 -np 1 -ub 256 > /dev/null
  $r "$m" "$log-c16384-np4.log"           $((port += 1)) -c 16384 -np 4 > /dev/null
  $r "$m" "$log-c4096-np1-lv5.log"        $((port += 1)) -c 4096 -np 1 -lv 5 > /dev/null
  $r "$m" "$log-c4096-np4-lv5.log"        $((port += 1)) -c 4096 -np 4 -lv 5 > /dev/null
  nice -n 10 $bin/llama-quantize "$m" "$dir/tiny-$v-Q4_K_M.gguf" Q4_K_M > "$raw/$v-quantize-Q4_K_M.log" 2>&1
  $py "$here/tensor_bytes.py" "$dir/tiny-$v-Q4_K_M.gguf" -v > "$raw/$v-Q4_K_M-tensors.txt"
  head -2 "$raw/$v-Q4_K_M-tensors.txt"
  $r "$dir/tiny-$v-Q4_K_M.gguf" "$log-Q4_K_M-c4096-np1.log" $((port += 1)) -c 4096 -np 1 > /dev/null
done
# Q4_K_M of the 27-layer file too (the attn_v / ffn_down use_more_bits rules count layers)
nice -n 10 $bin/llama-quantize "$dir/tiny-kimilinear27-f16.gguf" "$dir/tiny-kimilinear27-Q4_K_M.gguf" Q4_K_M > "$raw/kimilinear27-quantize-Q4_K_M.log" 2>&1
$py "$here/tensor_bytes.py" "$dir/tiny-kimilinear27-Q4_K_M.gguf" -v > "$raw/kimilinear27-Q4_K_M-tensors.txt"
head -2 "$raw/kimilinear27-Q4_K_M-tensors.txt"
# one-line summary of the buffer lines of every log
for f in "$raw"/*.log; do
  case $f in *quantize*) continue;; esac
  echo "== $(basename "$f")"
  grep -E "KV buffer size|RS buffer size|llama_memory_recurrent: size|llama_kv_cache: size|compute buffer size|output buffer size|model buffer size|unused tensor|n_ctx_seq |Flash Attention|flash_attn|n_seq_max|graph nodes|graph splits|error" "$f" || true
done > "$raw/summary.txt"
echo done
