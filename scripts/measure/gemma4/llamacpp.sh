#!/bin/sh
# llama.cpp b10488 (CPU build, /work/llama-b10488/build/bin) loading the
# tiny Gemma 4 files of tiny_gguf.py: the cache it allocates, from its own
# log lines. Run from the repository root:
#   sh scripts/measure/gemma4/llamacpp.sh > scripts/measure/gemma4/llamacpp.log 2>&1
BIN=${BIN:-/work/llama-b10488/build/bin}
DIR=${DIR:-/tmp/gemma4-tiny}
~/.llama-venv/bin/python scripts/measure/gemma4/tiny_gguf.py "$DIR" >/dev/null
run() {
  name=$1; shift
  echo "=== $name: llama-server -m $name.gguf $*"
  "$BIN/llama-server" -m "$DIR/$name.gguf" --port 0 -lv 4 "$@" > "$DIR/run.log" 2>&1 &
  pid=$!
  i=0
  while [ $i -lt 60 ]; do
    if grep -q "compute buffer size\|error\|failed" "$DIR/run.log"; then break; fi
    sleep 0.5; i=$((i + 1))
  done
  sleep 1
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  grep -E "build:|llama_kv_cache|KV buffer|n_ctx|n_seq_max|n_swa|n_layer_kv|swa|RS buffer|model buffer|compute buffer|error|failed" "$DIR/run.log"
}
run tiny-e -c 4096 -np 2 -fa on
run tiny-e -c 4096 -np 2 -fa off
run tiny-e -c 1000 -np 1 -fa on
run tiny-kv -c 4096 -np 1 -fa on
run tiny-kv -c 4096 -np 1 -fa off
run tiny-kv -c 4096 -np 3 -kvu -fa on
