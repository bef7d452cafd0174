#!/bin/sh
# Q4_K_M of the tiny Gemma 3n (hidden 256, so k-quant rows fit) with
# llama-quantize b10488, then every tensor's type and bytes (gguf-py).
#   sh scripts/measure/families/gemma3n/quantize.sh > scripts/measure/families/gemma3n/quantize.log 2>&1
BIN=${BIN:-/work/llama-b10488/build/bin}
DIR=${DIR:-/tmp/g3n}
~/.gguf-venv/bin/python scripts/measure/families/gemma3n/tiny_gguf.py "$DIR" --quant
"$BIN/llama-quantize" "$DIR/tiny-3n-q.gguf" "$DIR/tiny-3n-q4km.gguf" Q4_K_M 2>&1 | grep -v "^llama_model_loader: - kv"
~/.gguf-venv/bin/python - "$DIR/tiny-3n-q4km.gguf" <<'PY'
import sys, collections, gguf
r = gguf.GGUFReader(sys.argv[1])
tot = collections.Counter()
for t in r.tensors:
    print(f"{t.name:40s} {t.tensor_type.name:6s} {str(list(t.shape)):18s} {int(t.n_bytes):>10d}")
    tot[t.tensor_type.name] += int(t.n_bytes)
print("bytes by type:", dict(tot), "total", sum(tot.values()))
PY
