#!/usr/bin/env bash
# Compute-buffer grid at -lv 5 (the "~llama_context: CPU compute buffer size is X MiB" line has
# 4 decimals), tiny kimi-linear (8 layers) and kimilinear27. Logs in raw/grid/ (xz'd afterwards).
set -u
here=$(cd "$(dirname "$0")" && pwd)
fam=$(cd "$here/../.." && pwd)
dir=${1:-/tmp/kimig}
g=$here/raw/grid; mkdir -p "$g"
r="nice -n 10 $fam/run_llamacpp.sh"
port=18900
for v in kimilinear kimilinear27; do
  m=$dir/tiny-$v-f16.gguf
  for c in 4096 8192 16384 32768; do
    for fa in on off; do
      $r "$m" "$g/$v-c$c-np1-fa-$fa.log" $((port += 1)) -c $c -np 1 -fa $fa -lv 5 > /dev/null
    done
  done
  for ub in 256 1024; do
    $r "$m" "$g/$v-c16384-np1-fa-on-ub$ub.log" $((port += 1)) -c 16384 -np 1 -fa on -ub $ub -lv 5 > /dev/null
  done
  $r "$m" "$g/$v-c16384-np4-fa-on.log" $((port += 1)) -c 16384 -np 4 -fa on -lv 5 > /dev/null
  $r "$m" "$g/$v-c16384-np4-kvu-fa-on.log" $((port += 1)) -c 16384 -np 4 -kvu -fa on -lv 5 > /dev/null
done
for f in "$g"/*.log; do
  printf '%s\t' "$(basename "$f" .log)"
  grep -o "compute buffer size is *[0-9.]* MiB" "$f" | head -1 | tr -s ' ' | tr '\n' '\t'
  grep -o "KV buffer size = *[0-9.]* MiB" "$f" | tail -1 | tr '\n' '\t'
  grep -o "RS buffer size = *[0-9.]* MiB" "$f" | tail -1
done > "$here/raw/grid.tsv"
echo done
