# Sourced by autocast_matrix.sh and next_matrix.sh (from the repository root, with `out` and
# `PY` set): a copy of the shared harness with harness_ac.patch applied (dtype `bf16_autocast`;
# `GT_DEBUG=1` adds `live_at_peak`), and `run ARGS...` appending its row to "$out".
H=$(mktemp -d)/measure.py
cp ../shared/groundtruth/harness/measure.py "$H"
patch -s "$H" scripts/measure/hybrid/harness_ac.patch
run() { OMP_NUM_THREADS=1 "$PY" "$H" "$@" --out "$out" > /dev/null 2>&1 || echo "failed: $*" >&2; }
