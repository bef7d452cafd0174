# Sourced by the *matrix.sh scripts with their arguments, after they set SCRIPT (tp.py or
# pp.py): OUT (the first argument), PY (~/.gt-venv's python unless set), C (the test fixtures'
# config.json files) and H (scripts/measure/hybrid/configs), this folder as the working
# directory, and `run TAG ARGS...`, one run of $SCRIPT appending its row to OUT.
OUT=${1:?out file}
PY=${PY:-$HOME/.gt-venv/bin/python}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=$(cd "$here/../../../crates/core/tests/fixtures/hf_configs" && pwd)
H=$(cd "$here/../hybrid/configs" && pwd)
cd "$here"
run() { tag=$1; shift; OMP_NUM_THREADS=1 nice -n 10 "$PY" "$SCRIPT" --tag "$tag" --out "$OUT" "$@"; }
