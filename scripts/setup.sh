#!/usr/bin/env bash
# Installs what building and testing vramfit needs, and only what is missing
# or at the wrong version: safe to run again and again (CI runs it every time).
#   wasm32 target, Trunk 0.21.14, wasm-bindgen CLI = Cargo.lock's version,
#   binaryen 132 and playwright-core (npm, into ./node_modules),
#   Chromium and ChromeDriver (Debian packages; not for `setup.sh serve`,
#   which installs only what building and serving the page needs).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-test}

TRUNK_VERSION=0.21.14
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
log() { printf '[setup] %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

pids=()
if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
  log "installing trunk $TRUNK_VERSION (a few minutes, once)"
  # Trunk only orchestrates the build (cargo, wasm-bindgen, wasm-opt): built
  # unoptimized, without its TLS and update check (it serves on loopback
  # and runs offline), it installs in 197 s rather than 545 s on a 2-core
  # machine, and the page's build takes as long, byte for byte the same
  # (scripts/measure/setup/).
  CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 \
    cargo install trunk --version "$TRUNK_VERSION" --locked --quiet --no-default-features &
  pids+=($!)
fi
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WB_VERSION" ]; then
  log "installing wasm-bindgen-cli $WB_VERSION (a few minutes, once)"
  # Its own crates and the wasm ones it runs on at full optimization (they
  # process the page's wasm: the build takes as long), the rest unoptimized
  # (command-line parsing, the test runner's server): 153 s rather than
  # 206 s on a 2-core machine (scripts/measure/setup/).
  cargo install wasm-bindgen-cli --version "$WB_VERSION" --locked --quiet \
    --config 'profile.release.package."*".opt-level=0' \
    --config 'profile.release.package.walrus.opt-level=3' \
    --config 'profile.release.package.wasmparser.opt-level=3' \
    --config 'profile.release.package.wasm-encoder.opt-level=3' \
    --config 'profile.release.package.wasm-bindgen-cli-support.opt-level=3' &
  pids+=($!)
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm tools (binaryen, playwright-core)"
  npm ci --no-audit --no-fund --loglevel=error
fi

if [ "$MODE" != serve ] && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }; then
  log "installing chromium and chromium-driver"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-driver >/dev/null
fi

for p in "${pids[@]}"; do wait "$p"; done
log "ready: $(trunk --version), $(wasm-bindgen --version), wasm-opt $(node_modules/.bin/wasm-opt --version | awk '{print $3}'), $(/usr/bin/chromium --version 2>/dev/null | head -1)"
