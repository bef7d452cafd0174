#!/usr/bin/env bash
# Installs what building and testing vramfit needs, and only what is missing
# or at the wrong version: safe to run again and again (CI runs it every time).
#   wasm32 target, Trunk 0.21.14, wasm-bindgen CLI = Cargo.lock's version,
#   binaryen 132 and playwright-core (npm, into ./node_modules),
#   Chromium and ChromeDriver (Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
log() { printf '[setup] %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

pids=()
if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
  log "installing trunk $TRUNK_VERSION (several minutes, once)"
  # Trunk's own release profile is slow to build; these settings halve it.
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install trunk --version "$TRUNK_VERSION" --locked --quiet &
  pids+=($!)
fi
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WB_VERSION" ]; then
  log "installing wasm-bindgen-cli $WB_VERSION (a few minutes, once)"
  cargo install wasm-bindgen-cli --version "$WB_VERSION" --locked --quiet &
  pids+=($!)
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm tools (binaryen, playwright-core)"
  npm ci --no-audit --no-fund --loglevel=error
fi

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  log "installing chromium and chromium-driver"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-driver >/dev/null
fi

for p in "${pids[@]}"; do wait "$p"; done
log "ready: $(trunk --version), $(wasm-bindgen --version), wasm-opt $(node_modules/.bin/wasm-opt --version | awk '{print $3}'), $(/usr/bin/chromium --version 2>/dev/null | head -1)"
