# Sourced by the scripts: puts the npm tools (wasm-opt 132) first on PATH and
# keeps Trunk offline, so a tool mismatch fails loudly instead of downloading.
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export TRUNK_OFFLINE=true
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/webdriver.json"
