#!/usr/bin/env bash
# Instructions per estimate for every criterion scenario, counted by
# callgrind: a count that the machine's load does not move (criterion's
# timings on a busy 2-core machine move by half), for comparing a change
# with the tree before it. Times are criterion's (`cargo bench -p
# vramfit-core`); this is not a timed test.
#
#   scripts/bench-ir.sh [N]      # N estimates each (default 200)
#
# Prints one line per scenario: instructions per estimate, name.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
command -v valgrind >/dev/null || { echo "bench-ir: needs valgrind" >&2; exit 1; }
cargo build --quiet --release -p vramfit-core --example instructions
bin="${CARGO_TARGET_DIR:-target}/release/examples/instructions"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$bin" --list | while IFS= read -r name; do
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    --toggle-collect='instructions::measured' "$bin" "$name" "$n" 2>&1 |
    awk -v n="$n" -v name="$name" '/Collected :/ { printf "%9d  %s\n", $4 / n, name }'
done
