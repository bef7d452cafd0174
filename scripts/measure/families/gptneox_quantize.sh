#!/usr/bin/env bash
# GPT-NeoX's GGUF under llama-quantize b10488: gptneox_gguf.py's f16 file
# quantized to Q4_K_M, Q5_K_M, Q6_K and Q8_0, each file's tensor bytes (as
# gguf-py reads them) into raw/gptneox_quantized.txt, llama-quantize's logs
# (the type each tensor got) into raw/gptneox-quantize-TYPE.log.
#   PY=~/.gt-venv/bin/python scripts/measure/families/gptneox_quantize.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PY="${PY:-$HOME/.gt-venv/bin/python}"
q=/work/llama-b10488/build/bin/llama-quantize
dir="$(mktemp -d)"
"$PY" "$here/gptneox_gguf.py" "$dir"
out="$here/raw/gptneox_quantized.txt"
: > "$out"
for t in F16 Q4_K_M Q5_K_M Q6_K Q8_0; do
  f="$dir/tiny-gptneox-f16.gguf"
  if [ "$t" != F16 ]; then
    f="$dir/tiny-gptneox-$t.gguf"
    "$q" "$dir/tiny-gptneox-f16.gguf" "$f" "$t" > "$here/raw/gptneox-quantize-$t.log" 2>&1
  fi
  "$PY" -c "import gguf, sys; r = gguf.GGUFReader(sys.argv[1]); print(sys.argv[2], sum(int(t.n_bytes) for t in r.tensors))" "$f" "$t" >> "$out"
done
rm -rf "$dir"
cat "$out"
