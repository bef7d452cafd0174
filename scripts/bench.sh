#!/usr/bin/env bash
# Measures the page's budgets in headless Chromium (release build, gzip, loopback)
# and prints them; exits 1 if one is broken.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. scripts/env.sh
trunk build --release --offline
node tests/e2e/bench.mjs
