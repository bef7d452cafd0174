# Sourced by run.sh and trace.sh: the GT venv (deepspeed 0.19.8 in it, its bin on PATH for ninja) and the
# shrunk Mistral-7B layouts the rows run on, written from the repository's mistral-7b.json.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${PY:-$HOME/.gt-venv/bin/python}
export PATH=$(dirname "$PY"):$PATH OMP_NUM_THREADS=1
CFG=${CFG:-/work/scratch-ds}

# shrunk NAME LAYERS HIDDEN INTERMEDIATE HEADS KV_HEADS: $CFG/NAME.json (head_dim 128), unless it exists
shrunk() {
  [ -f "$CFG/$1.json" ] && return
  mkdir -p "$CFG"
  python3 - "$HERE/../../../crates/core/tests/fixtures/hf_configs/mistral-7b.json" "$CFG/$1.json" "${@:2}" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
layers, hidden, inter, heads, kv = map(int, sys.argv[3:8])
c.update(num_hidden_layers=layers, hidden_size=hidden, intermediate_size=inter, num_attention_heads=heads,
         num_key_value_heads=kv, head_dim=128)
json.dump(c, open(sys.argv[2], "w"))
PY
}
