#!/usr/bin/env bash
# Mistral Small 4 (mistral4) and Mistral Large 3 (deepseek2) in llama.cpp b10488 (CPU):
# write the tiny GGUFs (tiny_gguf.py; the mistral4 file from b10488's own converter when
# ~/.gt-venv has transformers: make_hf_tiny.py + convert_tiny.py), print their tensor bytes
# (../../lfm2/tensor_bytes.py), start llama-server on each (../../run_llamacpp.sh, -lv 4) under several
# settings, quantize each to Q4_K_M and load it, keep every log as raw/*.log.
#   scripts/measure/families/mistral4/llamacpp/measure.sh [GGUF_DIR]   (default /tmp/m4g)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fam=$(cd "$here/../.." && pwd)
raw=$here/raw
dir=${1:-/tmp/m4g}
bin=/work/llama-b10488/build/bin
py=~/.gguf-venv/bin/python
mkdir -p "$raw"
nice -n 10 $py "$here/tiny_gguf.py" "$dir"
if ~/.gt-venv/bin/python -c "import transformers.models.mistral4" 2>/dev/null; then
  nice -n 10 ~/.gt-venv/bin/python "$here/make_hf_tiny.py" /tmp/m4hf > "$raw/make_hf_tiny.log" 2>&1
  nice -n 10 ~/.gt-venv/bin/python "$here/convert_tiny.py" /tmp/m4hf/hf-mistral3-m4 "$dir/tiny-mistral4-conv-f16.gguf" > "$raw/convert-mistral3-m4.log" 2>&1
  # expected failures (logged): Mistral4ForCausalLM is not registered; a deepseek_v3 text config
  # under Mistral3ForConditionalGeneration takes the Ministral3 (llama) branch
  nice -n 10 ~/.gt-venv/bin/python "$here/convert_tiny.py" /tmp/m4hf/hf-mistral4-lm "$dir/x.gguf" > "$raw/convert-mistral4-lm.log" 2>&1 || true
  nice -n 10 ~/.gt-venv/bin/python "$here/convert_tiny.py" /tmp/m4hf/hf-mistral3-dsv3 "$dir/y.gguf" > "$raw/convert-mistral3-dsv3.log" 2>&1 || true
  m4=mistral4-conv
else
  m4=mistral4
fi
r="nice -n 10 $fam/run_llamacpp.sh"
port=18810
for v in $m4 mistral4-as-ds2 large3; do
  m=$dir/tiny-$v-f16.gguf
  echo "== $m"
  $py "$here/../../lfm2/tensor_bytes.py" "$m" -v > "$raw/$v-f16-tensors.txt"
  head -2 "$raw/$v-f16-tensors.txt"
  log=$raw/$v
  $r "$m" "$log-c4096-np1.log"                 $((port += 1)) -c 4096 -np 1 > /dev/null
  $r "$m" "$log-c4096-np1-fa-on.log"           $((port += 1)) -c 4096 -np 1 -fa on > /dev/null
  $r "$m" "$log-c4096-np1-fa-off.log"          $((port += 1)) -c 4096 -np 1 -fa off > /dev/null
  $r "$m" "$log-c16384-np1.log"                $((port += 1)) -c 16384 -np 1 > /dev/null
  $r "$m" "$log-c16384-np1-fa-off.log"         $((port += 1)) -c 16384 -np 1 -fa off > /dev/null
  $r "$m" "$log-c4096-np1-ctk-q8_0.log"        $((port += 1)) -c 4096 -np 1 -ctk q8_0 > /dev/null
  $r "$m" "$log-c4096-np1-ctkv-q8_0.log"       $((port += 1)) -c 4096 -np 1 -ctk q8_0 -ctv q8_0 > /dev/null
  $r "$m" "$log-c4096-np1-ctkv-q8_0-fa-off.log" $((port += 1)) -c 4096 -np 1 -ctk q8_0 -ctv q8_0 -fa off > /dev/null
  $r "$m" "$log-c4096-np2.log"                 $((port += 1)) -c 4096 -np 2 > /dev/null
  $r "$m" "$log-c16384-np2.log"                $((port += 1)) -c 16384 -np 2 > /dev/null
  $r "$m" "$log-c16384-np2-fa-off.log"         $((port += 1)) -c 16384 -np 2 -fa off > /dev/null
  # -lv 5: the per-layer "layer N: dev = CPU" lines of llama_kv_cache and the destructor's
  # 4-decimal compute buffer size
  $r "$m" "$log-c4096-np1-lv5.log"             $((port += 1)) -c 4096 -np 1 -lv 5 > /dev/null
  $r "$m" "$log-c4096-np1-fa-off-lv5.log"      $((port += 1)) -c 4096 -np 1 -fa off -lv 5 > /dev/null
  nice -n 10 $bin/llama-quantize "$m" "$dir/tiny-$v-Q4_K_M.gguf" Q4_K_M > "$raw/$v-quantize-Q4_K_M.log" 2>&1
  $py "$here/../../lfm2/tensor_bytes.py" "$dir/tiny-$v-Q4_K_M.gguf" -v > "$raw/$v-Q4_K_M-tensors.txt"
  head -2 "$raw/$v-Q4_K_M-tensors.txt"
  $py "$here/../../dsa/llamacpp/compare_types.py" "$m" "$dir/tiny-$v-Q4_K_M.gguf" > "$raw/$v-types.txt"
  $r "$dir/tiny-$v-Q4_K_M.gguf" "$log-Q4_K_M-c4096-np1.log"    $((port += 1)) -c 4096 -np 1 > /dev/null
  $r "$dir/tiny-$v-Q4_K_M.gguf" "$log-Q4_K_M-c16384-np2.log"   $((port += 1)) -c 16384 -np 2 > /dev/null
done
# compute-buffer grid (mistral4 file, -lv 5 for the 4-decimal destructor line)
mkdir -p "$raw/grid"
m=$dir/tiny-$m4-f16.gguf
for c in 2048 4096 8192 16384 32768; do
  for fa in on off; do
    $r "$m" "$raw/grid/$m4-c$c-fa-$fa.log" $((port += 1)) -c $c -np 1 -fa $fa -lv 5 > /dev/null
  done
done
# one-line summary of the buffer lines of every log
for f in "$raw"/*.log; do
  case $f in *quantize*|*convert*|*make_hf*) continue;; esac
  echo "== $(basename "$f")"
  grep -E "KV buffer size|llama_kv_cache: size|compute buffer size|output buffer size|model buffer size|unused tensor|n_ctx_seq|Flash Attention|flash_attn|n_seq_max|graph nodes|graph splits|error|rotation" "$f" || true
done > "$raw/summary.txt"
echo done
