#!/usr/bin/env bash
# Log Lab's two commands: `run` (build and serve the lab) and `test` (every test).
# Installs what it needs from crates.io, npm and Debian; never downloads prebuilt binaries.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=../tools.env
. "$ROOT/tools.env"
# One build cache per machine, outside the checkout: CI's fresh clones then build warm.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/loglab/target}"
LOGDIR="$CARGO_TARGET_DIR/lab-logs"
mkdir -p "$LOGDIR"
export PATH="$HOME/.cargo/bin:$ROOT/e2e/node_modules/.bin:$PATH"

say() { printf 'lab: %s\n' "$*"; }
die() { printf 'lab: error: %s\n' "$*" >&2; exit 1; }

# Runs a setup step quietly; on failure prints one line naming what is missing and the fix.
step() {
  local what=$1 fix=$2 log="$LOGDIR/$3.log"; shift 3
  if ! "$@" >"$log" 2>&1; then
    die "$what failed (log: $log); $fix"
  fi
}

ensure_wasm_target() {
  if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then return; fi
  say "installing rustup target wasm32-unknown-unknown"
  step "rustup target add wasm32-unknown-unknown" \
    "needs network to the Rust toolchain server; install with: rustup target add wasm32-unknown-unknown" \
    rustup-target rustup target add wasm32-unknown-unknown
}

ensure_trunk() {
  if trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION\$"; then return; fi
  say "building trunk $TRUNK_VERSION from crates.io (about 6 minutes on 2 cores)"
  step "cargo install trunk@$TRUNK_VERSION" \
    "needs network to crates.io; install with: cargo install --locked trunk@$TRUNK_VERSION" \
    trunk env CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install --locked "trunk@$TRUNK_VERSION"
}

ensure_wasm_bindgen() {
  local locked
  locked=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
  [ "$locked" = "$WASM_BINDGEN_VERSION" ] ||
    die "Cargo.lock has wasm-bindgen $locked but tools.env pins $WASM_BINDGEN_VERSION; make them equal"
  grep -q "wasm_bindgen = \"$WASM_BINDGEN_VERSION\"" Trunk.toml && grep -q "wasm_opt = \"version_$BINARYEN_VERSION\"" Trunk.toml ||
    die "Trunk.toml [tools] does not match tools.env (wasm_bindgen $WASM_BINDGEN_VERSION, wasm_opt version_$BINARYEN_VERSION)"
  if wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then return; fi
  say "building wasm-bindgen-cli $WASM_BINDGEN_VERSION from crates.io (about 4 minutes)"
  # Without --locked: its lockfile pins a webpki-roots version the registry lacks.
  step "cargo install wasm-bindgen-cli@$WASM_BINDGEN_VERSION" \
    "needs network to crates.io; install with: cargo install wasm-bindgen-cli@$WASM_BINDGEN_VERSION" \
    wasm-bindgen env CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install --force "wasm-bindgen-cli@$WASM_BINDGEN_VERSION"
}

# npm packages: playwright-core for e2e and binaryen (wasm-opt) for release builds.
ensure_npm() {
  command -v npm >/dev/null || die "npm is missing; install Node.js 20 with npm"
  if [ -d e2e/node_modules ] && [ e2e/node_modules/.package-lock.json -nt e2e/package-lock.json ]; then return; fi
  say "installing npm packages in e2e/ (npm ci)"
  step "npm ci in e2e/" "needs network to the npm registry; run: (cd e2e && npm ci)" \
    npm-ci npm ci --prefix e2e --no-audit --no-fund
  wasm-opt --version 2>/dev/null | grep -q "version $BINARYEN_VERSION" ||
    die "wasm-opt from npm binaryen is not version $BINARYEN_VERSION; check e2e/package.json"
}

apt_install() {
  local pkg=$1 bin=$2
  if [ -x "$bin" ]; then return; fi
  say "installing Debian package $pkg"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  step "apt-get update" "needs network to Debian's mirror; run: apt-get update && apt-get install -y $pkg" \
    "apt-$pkg-update" $sudo apt-get update
  step "apt-get install $pkg" "install it with: apt-get install -y $pkg" \
    "apt-$pkg" env DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "$pkg"
  [ -x "$bin" ] || die "$pkg installed but $bin is missing; install it with: apt-get install -y $pkg"
}

ensure_web_tools() {
  ensure_wasm_target
  ensure_npm
  ensure_trunk
  ensure_wasm_bindgen
}

cmd_run() {
  ensure_web_tools
  say "serving the lab on http://127.0.0.1:8080 (Ctrl-C stops it)"
  exec trunk serve --offline --address 127.0.0.1 --port 8080
}

# The static site for any host and any sub-path (relative URLs): a course copies DIR to
# https://uni.example/os/loglab/ and links there (docs/cli.md "Hosting the lab").
cmd_dist() {
  local dir=${1:-}
  [ -n "$dir" ] || die "usage: scripts/lab.sh dist DIR"
  ensure_web_tools
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  say "building the lab's static site into $dir"
  trunk build --release --offline --public-url ./ --dist "$dir"
  say "done: serve $dir from any static host, at any path"
}

cmd_test() {
  ensure_web_tools
  apt_install chromium /usr/bin/chromium
  apt_install xfsprogs /usr/sbin/mkfs.xfs
  say "cargo fmt --check"
  cargo fmt --all -- --check
  say "cargo clippy (native, all targets)"
  cargo clippy --workspace --all-targets --locked -- -D warnings
  say "cargo clippy (web app, wasm32)"
  cargo clippy -p loglab-web --target wasm32-unknown-unknown --locked -- -D warnings
  say "cargo test (unit, property, golden, CLI)"
  cargo test --workspace --locked
  say "fuzz: the link decoder, the scenario parser and recovery, 15 s each (libFuzzer on stable)"
  cargo fmt --manifest-path fuzz/Cargo.toml -- --check
  "$ROOT/scripts/fuzz.sh" all 15
  say "cargo build --release -p loglab (the native side of the e2e speed comparison)"
  cargo build --release -p loglab --locked
  say "trunk build --release (relative URLs: the e2e suite also serves it under a sub-path)"
  trunk build --release --offline --public-url ./
  say "end-to-end tests in headless Chromium"
  (cd e2e && node --test --test-reporter=spec ./*.test.mjs)
}

case "${1:-}" in
  run) cmd_run ;;
  test) cmd_test ;;
  dist) shift; cmd_dist "$@" ;;
  *) echo "usage: scripts/lab.sh run|test|dist DIR" >&2; exit 2 ;;
esac
