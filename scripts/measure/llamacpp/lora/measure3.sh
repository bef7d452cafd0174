#!/usr/bin/env bash
# 1. --lora-init-without-apply, then POST /lora-adapters (scale 1) and one completion: does the
#    compute graph get re-reserved (second sched_reserve block), and with what size?
# 2. RssAnon of llama-server after load, with and without the adapter (is the "CPU_Mapped" LoRA
#    buffer anonymous memory?), f16 base, -c 4096 -np 1 -fa on.
#   measure3.sh [MODEL_DIR=/tmp/lora]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
D=${1:-/tmp/lora}
BIN=/work/llama-b10488/build/bin; RAW=$HERE/raw; port=18632
wait_up() { for _ in $(seq 1 240); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.25; done; return 1; }

log=$RAW/I-noapply-then-post.log
$BIN/llama-server -lv 4 --port $port -m $D/base-f16.gguf -c 4096 -np 1 -fa on --lora $D/lora-all-r64-f16.gguf --lora-init-without-apply > $log 2>&1 &
pid=$!; wait_up $log
{
  echo "GET /lora-adapters:"; curl -s localhost:$port/lora-adapters; echo
  echo "POST /lora-adapters:"; curl -s -X POST localhost:$port/lora-adapters -H 'Content-Type: application/json' -d '[{"id":0,"scale":1.0}]'; echo
  echo "POST /completion:"; curl -s localhost:$port/completion -H 'Content-Type: application/json' -d '{"prompt":"abc abc abc","n_predict":2}' | head -c 200; echo
} > $RAW/I-noapply-then-post.http 2>&1
sleep 0.5; kill $pid; wait $pid 2>/dev/null
grep -E "sched_reserve: .*compute buffer size|graph nodes|LoRA buffer" $log

for case in base lora; do
  extra=(); [ $case = lora ] && extra=(--lora $D/lora-all-r64-f16.gguf)
  log=$RAW/J-rss-$case.log
  $BIN/llama-server -lv 4 --port $port -m $D/base-f16.gguf -c 4096 -np 1 -fa on "${extra[@]}" > $log 2>&1 &
  pid=$!; wait_up $log; sleep 0.5
  echo "$case $(grep -E 'VmRSS|RssAnon|RssFile' /proc/$pid/status | tr -s ' \t' ' ' | tr '\n' ' ')" | tee -a $RAW/J-rss.txt
  kill $pid; wait $pid 2>/dev/null
done

# 3. --lora-init-without-apply and one completion with no POST: the server applies the
#    adapters' stored scale (1.0) at the first batch (server-context.cpp:1662, 2761)
log=$RAW/I-noapply-then-completion.log
$BIN/llama-server -lv 4 --port $port -m $D/base-f16.gguf -c 4096 -np 1 -fa on --lora $D/lora-all-r64-f16.gguf --lora-init-without-apply > $log 2>&1 &
pid=$!; wait_up $log
curl -s localhost:$port/completion -H 'Content-Type: application/json' -d '{"prompt":"abc abc abc","n_predict":2}' > /dev/null
sleep 0.5; kill $pid; wait $pid 2>/dev/null
echo "no POST:"; grep -E "sched_reserve: .*compute buffer size|graph nodes" $log
