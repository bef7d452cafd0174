#!/usr/bin/env bash
# Third pass: deepseek32 variants with 8 attention heads (N_HEAD=8) and with 16 indexer heads
# (IDX_HEADS=16), to see which compute-buffer terms scale with which head count. -lv 5.
#   scripts/measure/families/dsa/llamacpp/measure3.sh [GGUF_DIR]   (default /tmp/dsag)
set -u
here=$(cd "$(dirname "$0")" && pwd)
fam=$(cd "$here/../.." && pwd)
raw=$here/raw/grid
dir=${1:-/tmp/dsag}
py=~/.gguf-venv/bin/python
mkdir -p "$raw"
VARIANT=h8 N_HEAD=8 nice -n 10 $py "$here/tiny_gguf.py" "$dir"
VARIANT=ih16 IDX_HEADS=16 nice -n 10 $py "$here/tiny_gguf.py" "$dir"
r="nice -n 10 $fam/run_llamacpp.sh"
port=18910
for v in h8 ih16; do
  m=$dir/tiny-deepseek32-$v-f16.gguf
  for fa in on off; do
    for c in 4096 8192 16384 32768; do
      $r "$m" "$raw/deepseek32-$v-c$c-ub512-fa$fa.log" $((port += 1)) -c $c -np 1 -fa $fa -lv 5 > /dev/null
    done
  done
done
echo done
