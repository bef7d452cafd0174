#!/usr/bin/env bash
# llama.cpp b10488 (9d77fa17) on two "GPUs" that are RPC servers backed by this machine's CPU
# (ggml-rpc-server, built with -DGGML_RPC=ON): llama.cpp places layers, caches and experts on
# them as on GPUs, so each device's model and KV buffers can be read to the byte without a GPU.
# Compute buffers are the CPU backend's (an RPC device runs the CPU backend's graph), not a
# GPU's: printed, not held.
#
#   cmake -B build -DCMAKE_BUILD_TYPE=Release -DGGML_RPC=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
#         -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=ON
#   cmake --build build -j2 --target llama-server ggml-rpc-server
#   scripts/measure/llamacpp/devices/run.sh LLAMA_BIN_DIR MODEL_DIR OUT_DIR
#
# Each run: llama-server starts, loads, logs its buffers, and is stopped once it listens.
# `-nr` turns the CPU's repacked weight buffers off (this machine has AMX), so that the host
# holds only the mapped file as on a machine without them.
set -euo pipefail
BIN=$1 MODELS=$2 OUT=$3
mkdir -p "$OUT"
"$BIN/ggml-rpc-server" -p 50152 -t 1 > "$OUT/rpc0.log" 2>&1 &
R0=$!
"$BIN/ggml-rpc-server" -p 50153 -t 1 > "$OUT/rpc1.log" 2>&1 &
R1=$!
trap 'kill $R0 $R1 2>/dev/null || true' EXIT
sleep 2
run() {
    local name=$1; shift
    local port=$((8300 + RANDOM % 500))
    echo "== $name: llama-server $*" > "$OUT/$name.log"
    "$BIN/llama-server" --port "$port" -t 1 -nr -lv 4 "$@" >> "$OUT/$name.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 120); do
        grep -q "listening on\|exiting due\|error loading model\|failed to" "$OUT/$name.log" && break
        sleep 0.5
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    grep -E "buffer size|using device|pipeline parallel|n_ctx|offloaded|tensor_buft|overrid" "$OUT/$name.log" | sed "s/^/$name | /"
}
L="$MODELS/tiny-llama-f16.gguf"
M="$MODELS/tiny-moe-f16.gguf"
ONE=127.0.0.1:50152
TWO=127.0.0.1:50152,127.0.0.1:50153
run llama-1dev-all     -m "$L" --rpc $ONE -ngl 99 -c 4096 -np 1 -fit off
run llama-2dev-ts3-1   -m "$L" --rpc $TWO -ngl 99 -ts 3,1 -c 4096 -np 1 -fit off
run llama-2dev-ts1-1   -m "$L" --rpc $TWO -ngl 99 -ts 1,1 -c 4096 -np 1 -fit off
run llama-2dev-ts1-3   -m "$L" --rpc $TWO -ngl 99 -ts 1,3 -c 4096 -np 1 -fit off
run llama-2dev-ngl5    -m "$L" --rpc $TWO -ngl 5 -ts 1,1 -c 4096 -np 1 -fit off
run llama-2dev-sm-none -m "$L" --rpc $TWO -ngl 99 -sm none -mg 1 -c 4096 -np 1 -fit off
run llama-2dev-np4     -m "$L" --rpc $TWO -ngl 99 -ts 3,1 -c 8192 -np 4 -fit off
run llama-2dev-np4-kvu -m "$L" --rpc $TWO -ngl 99 -ts 3,1 -c 8192 -np 4 -kvu -fit off
run moe-1dev-all       -m "$M" --rpc $ONE -ngl 99 -c 4096 -np 1 -fit off
run moe-1dev-ncpumoe2  -m "$M" --rpc $ONE -ngl 99 --n-cpu-moe 2 -c 4096 -np 1 -fit off
run moe-1dev-cpumoe    -m "$M" --rpc $ONE -ngl 99 --cpu-moe -c 4096 -np 1 -fit off
run moe-1dev-ot-1-2     -m "$M" --rpc $ONE -ngl 99 -ot 'blk\.(1|2)\.ffn_.*_exps\.=CPU' -c 4096 -np 1 -fit off
run moe-1dev-ot-all     -m "$M" --rpc $ONE -ngl 99 -ot '.ffn_.*_exps.=CPU' -c 4096 -np 1 -fit off
run moe-1dev-ncpumoe1-ot-1-2 -m "$M" --rpc $ONE -ngl 99 --n-cpu-moe 1 -ot 'blk\.[1-2]\.ffn_.*_exps=CPU' -c 4096 -np 1 -fit off
run moe-2dev-ts1-1-ncpumoe3 -m "$M" --rpc $TWO -ngl 99 -ts 1,1 --n-cpu-moe 3 -c 4096 -np 1 -fit off
