#!/usr/bin/env bash
# Build probe.cpp against the llama.cpp b10488 CPU build in /work/llama-b10488/build
# (after `cmake --build build --target llama-server`, which also builds libllama-common.so).
set -eu
L=/work/llama-b10488
HERE=$(cd "$(dirname "$0")" && pwd)
out=$L/build/bin/lora-probe
nice g++ -O1 -std=c++17 "$HERE/probe.cpp" -o "$out" \
  -I$L/include -I$L/src -I$L/common -I$L/ggml/include -I$L/vendor \
  -L$L/build/bin -lllama-common -lllama -lggml -lggml-base -lggml-cpu -Wl,-rpath,$L/build/bin -lpthread -ldl
echo "built $out"
