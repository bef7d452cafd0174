#!/bin/sh
# llama.cpp b10488 (CPU build) loading tiny_gguf.py's tiny-3n.gguf: every
# buffer line it prints. Run from the repository root:
#   sh scripts/measure/families/gemma3n/llamacpp.sh > scripts/measure/families/gemma3n/llamacpp.log 2>&1
BIN=${BIN:-/work/llama-b10488/build/bin}
DIR=${DIR:-/tmp/g3n}
~/.gguf-venv/bin/python scripts/measure/families/gemma3n/tiny_gguf.py "$DIR" >/dev/null
n=0
run() {
  n=$((n + 1))
  echo "=== run $n: llama-server -m tiny-3n.gguf $*"
  "$BIN/llama-server" -m "$DIR/tiny-3n.gguf" -nr --port $((18940 + n)) -lv 4 "$@" > "$DIR/run$n.log" 2>&1 &
  pid=$!
  i=0
  while [ $i -lt 120 ]; do
    if grep -q "listening on\|model loaded\|error\|failed" "$DIR/run$n.log"; then break; fi
    kill -0 $pid 2>/dev/null || break
    sleep 0.5; i=$((i + 1))
  done
  sleep 0.5
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  grep -E "build:|n_swa |n_ctx|n_seq_max|n_ubatch|flash_attn|llama_kv_cache|KV buffer|model buffer|output buffer|compute buffer|graph nodes|graph splits|error|failed" "$DIR/run$n.log"
}
run -c 4096 -np 1
run -c 4096 -np 4
run -c 4096 -np 4 -kvu
run -c 4096 -np 1 -fa on -ctk q8_0 -ctv q8_0
run -c 4096 -np 1 -fa off
run -c 16384 -np 1
run -c 4096 -np 1 --swa-full
run -c 16384 -np 1 --swa-full
run -c 4096 -np 1 -ub 128
