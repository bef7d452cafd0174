#!/usr/bin/env bash
# Issue 28, item 7: how long a fresh machine spends installing Trunk and
# wasm-bindgen-cli, with setup.sh's settings and with less optimization,
# and whether the tools' own optimization changes the page's build time.
# Each install runs alone, into its own root, with a fresh target folder
# (the crates' sources already downloaded: a fresh machine downloads them
# too, the same for every variant). Then the page's release build, warm
# (nothing of the page to compile: what is timed is Trunk, wasm-bindgen and
# wasm-opt), three times with each pair of tools.
#   scripts/measure/setup/install_times.sh > scripts/measure/setup/install_times.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."
TRUNK=0.21.14
WB=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
OUT=${OUT:-/tmp/vramfit-setup-measure}
rm -rf "$OUT"
mkdir -p "$OUT"
echo "machine: $(nproc) cores, $(uname -m); $(cargo --version); trunk $TRUNK, wasm-bindgen-cli $WB"

# Each variant: the environment its installs run with.
declare -A ENVS=(
  # setup.sh today: Trunk without LTO and with 16 codegen units,
  # wasm-bindgen-cli as its own release profile says.
  [setup]="TRUNK:CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16|WB:"
  # Less optimization for both: opt-level 1, no LTO, 256 codegen units.
  [o1]="TRUNK:CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256|WB:CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256"
  # None: opt-level 0.
  [o0]="TRUNK:CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256|WB:CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256"
)

install() { # variant, crate, version, env
  local root="$OUT/$1"
  local start end
  start=$(date +%s.%N)
  env $4 CARGO_TARGET_DIR="$OUT/target-$1-$2" cargo install "$2" --version "$3" --locked --quiet --root "$root" 2>&1 | tail -3
  end=$(date +%s.%N)
  printf 'install %-6s %-18s %6.1f s  %s\n' "$1" "$2" "$(echo "$end - $start" | bc)" "$4"
  rm -rf "$OUT/target-$1-$2"
}

for v in setup o1 o0; do
  spec=${ENVS[$v]}
  trunk_env=${spec%%|*}; trunk_env=${trunk_env#TRUNK:}
  wb_env=${spec##*|}; wb_env=${wb_env#WB:}
  install "$v" trunk "$TRUNK" "$trunk_env"
  install "$v" wasm-bindgen-cli "$WB" "$wb_env"
done

. scripts/env.sh
trunk build --release --offline > /dev/null 2>&1   # the page compiled once
for round in 1 2 3; do
  for v in setup o1 o0; do
    start=$(date +%s.%N)
    PATH="$OUT/$v/bin:$PATH" trunk build --release --offline > "$OUT/build-$v.log" 2>&1
    end=$(date +%s.%N)
    printf 'build   %-6s round %d  %6.1f s  (%s, %s; dist %s)\n' "$v" "$round" "$(echo "$end - $start" | bc)" \
      "$(PATH="$OUT/$v/bin:$PATH" trunk --version)" "$(PATH="$OUT/$v/bin:$PATH" wasm-bindgen --version)" \
      "$(cd dist && cat ./*.wasm ./*.js | sha256sum | cut -c1-16)"
  done
done
