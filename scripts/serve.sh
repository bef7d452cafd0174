#!/usr/bin/env bash
# Installs what is missing (no browser: `setup.sh serve`), builds a release
# and serves it on http://127.0.0.1:8080 (PORT=... to change).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh serve
. scripts/env.sh
exec trunk serve --release --offline --address 127.0.0.1 --port "${PORT:-8080}"
