#!/usr/bin/env bash
# Coverage-guided fuzzing of the link decoder, the scenario parser and recovery, on stable Rust:
# libFuzzer (libfuzzer-sys, built from crates.io) with LLVM's SanitizerCoverage passes, the
# flags cargo-fuzz passes with `--sanitizer none` (no nightly needed: no -Z flags).
#   scripts/fuzz.sh                   # every target for 20 s
#   scripts/fuzz.sh all 15            # every target for 15 s (the test command's short run)
#   scripts/fuzz.sh recover_log 3600  # one target for an hour (a long run)
# A crash or a hang (an input over 10 s) fails with the input saved in fuzz/artifacts/TARGET/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
TARGETS=(url_decode scenario_json recover_log)
if [ $# -ge 1 ] && [ "$1" != all ]; then TARGETS=("$1"); fi
SECS="${2:-20}"
HOST="$(rustc -vV | sed -n 's/^host: //p')"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/fuzz"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cforce-frame-pointers"
# --target: the flags reach the fuzzed code only, never build scripts or proc macros.
cargo build --quiet --release --locked --manifest-path fuzz/Cargo.toml --target "$HOST" --bins
for t in "${TARGETS[@]}"; do
  corpus="$CARGO_TARGET_DIR/corpus/$t"
  mkdir -p "$corpus" "fuzz/artifacts/$t"
  echo "fuzz $t for ${SECS}s"
  "$CARGO_TARGET_DIR/$HOST/release/$t" "$corpus" "fuzz/seeds/$t" \
    -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 2>&1 |
    grep -E '^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==|SUMMARY)|panicked at|deadly signal|ALARM: working on' || true
  # grep may hide the status: a finding leaves an artifact behind.
  if compgen -G "fuzz/artifacts/$t/*" >/dev/null; then
    echo "fuzz $t: a finding was saved in fuzz/artifacts/$t/" >&2
    exit 1
  fi
done
