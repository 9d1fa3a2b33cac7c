#!/usr/bin/env bash
# The fuzz smoke test (CI, through scripts/test): build every cargo fuzz
# target of fuzz/ and run each for a bounded time; any crash, hang (libFuzzer
# -timeout), stack overflow or out-of-memory fails the script and names the
# input that did it.
#
# Each run starts from the target's seeds (fuzz/seeds/TARGET and the
# repository corpora fuzz/seed-dirs.txt names for it) and every
# input a fuzzer ever found (fuzz/artifacts-found/TARGET, the regressions),
# and writes what it discovers to a throwaway working corpus, so the
# repository does not grow.
#
# Build flags, and why: `--sanitizer none` (coverage instrumentation only).
# The workspace is safe Rust, so AddressSanitizer finds little the Rust
# checks do not, and it doubles the build and halves the executions a CI
# second buys; debug assertions and overflow checks stay on (cargo fuzz's
# default), because an overflow is exactly what a fuzzer is for. The
# SPIRV-Tools C++ library is built by its build script (-O2, not
# instrumented): it is the validation oracle, not under test here.
#
# Usage: scripts/fuzz-smoke.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET defaults to $XIR_FUZZ_SECONDS or 15 (RELIABILITY.md has
#   the CI time this buys).
#   XIR_FUZZ_TARGET_DIR: the nightly build's target directory
#   (default fuzz/target; never the stable workspace's).
# Needs the nightly toolchain (rustup) and cargo-fuzz (scripts/test
# installs cargo-fuzz when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-${XIR_FUZZ_SECONDS:-15}}"
[ $# -gt 0 ] && shift
target_dir="${XIR_FUZZ_TARGET_DIR:-$PWD/fuzz/target}"

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz-smoke: the fuzz targets need the nightly toolchain, which is not installed:" >&2
  echo "fuzz-smoke:   rustup toolchain install nightly --profile minimal" >&2
  echo "fuzz-smoke: (or set XIR_SKIP_FUZZ=1 to run scripts/test without the fuzz smoke)." >&2
  exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz-smoke: cargo-fuzz is missing: cargo install --locked cargo-fuzz" >&2
  exit 2
fi

# Unset so that a caller's stable target directory is not shared with the
# nightly, instrumented build.
unset CARGO_TARGET_DIR
cd fuzz
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +nightly fuzz list); fi

start=$(date +%s)
cargo +nightly fuzz build -s none --target-dir "$target_dir"
echo "fuzz-smoke: built ${#targets[@]} targets in $(($(date +%s) - start)) s" >&2

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  dirs=("$work/corpus/$t")
  [ -d "seeds/$t" ] && dirs+=("seeds/$t")
  # The repository's own corpora for this target (fuzz/seed-dirs.txt), read-only.
  mapfile -t -O "${#dirs[@]}" dirs < <(awk -v t="$t" '$1 == t { print $2 }' seed-dirs.txt)
  [ -d "artifacts-found/$t" ] && dirs+=("artifacts-found/$t")
  # A hang is an input over -timeout seconds; `generated` runs every
  # pipeline on whole generated programs, one of which took 35 s on the
  # loaded 2-core machine (RELIABILITY.md), so it gets longer.
  timeout=10
  [ "$t" = generated ] && timeout=120
  echo "fuzz-smoke: $t for ${secs} s" >&2
  if ! cargo +nightly fuzz run -s none --target-dir "$target_dir" "$t" "${dirs[@]}" -- \
    -max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=4096 -max_len=65536 \
    -artifact_prefix="$work/artifacts/$t/" -print_final_stats=1 >"$work/$t.log" 2>&1; then
    tail -n 60 "$work/$t.log" >&2
    mkdir -p "artifacts/$t"
    cp "$work/artifacts/$t/"* "artifacts/$t/" 2>/dev/null || true
    echo "fuzz-smoke: $t FAILED; its input is kept in fuzz/artifacts/$t/" >&2
    failed+=("$t")
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$t.log" | sed "s/^/fuzz-smoke: $t /" >&2
  fi
done
echo "fuzz-smoke: ${#targets[@]} targets in $(($(date +%s) - start)) s" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz-smoke: crashes in: ${failed[*]}" >&2
  exit 1
fi
