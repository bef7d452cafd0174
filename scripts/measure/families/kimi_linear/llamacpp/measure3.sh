#!/usr/bin/env bash
# Head-count variant for the compute-buffer fit: N_HEAD=8 (KDA d_inner 1024, MLA 8 heads),
# FA on/off at 4096 and 16384, -lv 5. Logs in raw/grid/, table appended to raw/grid.tsv.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fam=$(cd "$here/../.." && pwd)
dir=${1:-/tmp/kimig}
g=$here/raw/grid; mkdir -p "$g"
N_HEAD=8 NAME=tiny-kimilinear-h8-f16.gguf nice -n 10 ~/.gguf-venv/bin/python "$here/tiny_gguf.py" "$dir"
~/.gguf-venv/bin/python "$here/tensor_bytes.py" "$dir/tiny-kimilinear-h8-f16.gguf" > "$here/raw/kimilinear-h8-f16-tensors.txt"
r="nice -n 10 $fam/run_llamacpp.sh"
port=18960
for c in 4096 16384; do
  for fa in on off; do
    $r "$dir/tiny-kimilinear-h8-f16.gguf" "$g/kimilinear-h8-c$c-np1-fa-$fa.log" $((port += 1)) -c $c -np 1 -fa $fa -lv 5 > /dev/null
  done
done
echo done
