#!/usr/bin/env bash
# Start llama-server b10488 (CPU) on a GGUF, wait until it listens, keep its log, stop it.
#   scripts/measure/families/run_llamacpp.sh MODEL.gguf LOG PORT [extra llama-server args]
set -u
model=$1; log=$2; port=$3; shift 3
/work/llama-b10488/build/bin/llama-server -m "$model" -nr -lv 4 --port "$port" "$@" > "$log" 2>&1 &
pid=$!
# b10488 prints "llama_server: model loaded" and "listening on"; older builds "server is
# listening" and "main: model loaded". Stop waiting when the server has exited.
for _ in $(seq 1 120); do
  if grep -q "listening on\|server is listening\|model loaded\|error" "$log" 2>/dev/null; then break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
sleep 0.5
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
grep -E "KV buffer size|unused tensor|CPU_Mapped model buffer|model buffer size|n_layer|llama_kv_cache: layer|compute buffer size|n_ctx" "$log" | head -60
