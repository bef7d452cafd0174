# Sourced by the families' train.sh scripts: `run ARGS...` appends one row
# of the shared harness (../shared/groundtruth/harness/measure.py: torch
# 2.15, transformers 5.23, peft 0.21) to "$out", which the caller sets
# (and empties) before its first run. PY overrides the interpreter.
h="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../../../../shared/groundtruth/harness"
PY="${PY:-$HOME/.gt-venv/bin/python}"
run() { (cd "$h" && "$PY" measure.py --out "$out" "$@"); }
