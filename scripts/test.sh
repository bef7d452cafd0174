#!/usr/bin/env bash
# Runs every test: formatting, lints, native unit/property tests, browser
# component tests (wasm-bindgen-test in headless Chromium), the release
# build, and end-to-end flows (Playwright + Chromium on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. scripts/env.sh

step() { printf '\n== %s\n' "$*"; }

step "rustfmt"
cargo fmt --all -- --check

step "clippy, native crates"
cargo clippy --workspace --all-targets --features vramfit-core/fuzz --locked -- -D warnings

step "clippy, web crate, probe and the workers (wasm32)"
cargo clippy -p vramfit-web -p vramfit-probe-worker -p vramfit-tools-worker --target wasm32-unknown-unknown --all-targets --locked -- -D warnings
cargo clippy -p vramfit-probe --features webgpu --target wasm32-unknown-unknown --all-targets --locked -- -D warnings

step "clippy, CLI with the native probe (wgpu)"
cargo clippy -p vramfit-cli --features probe --all-targets --locked -- -D warnings

step "native tests"
cargo test --workspace --locked
cargo test -p vramfit-cli --features probe --locked

step "fuzz campaign (generated queries and config.json texts, overflow checks on)"
cargo test -p vramfit-core --features fuzz --locked --test fuzz -- --nocapture

step "estimator against measured PyTorch memory (error table)"
cargo test -p vramfit-core --locked --test ground_truth -- --nocapture 2>&1 | grep -v '^\s*$'

step "browser component tests (wasm-bindgen-test, headless Chromium with WebGPU)"
cargo test -p vramfit-web --target wasm32-unknown-unknown --locked
cargo test -p vramfit-probe --features webgpu --target wasm32-unknown-unknown --locked

step "release build (trunk)"
trunk build --release --offline

step "end-to-end tests (Playwright, headless Chromium)"
node tests/e2e/run.mjs

printf '\nall tests passed\n'
