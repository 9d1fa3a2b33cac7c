#!/usr/bin/env bash
# A fuzzing campaign (RELIABILITY.md's figures): every cargo fuzz target of
# fuzz/ at once, each for SECONDS, in libFuzzer's fork mode so that a crash,
# hang or out-of-memory is kept (under fuzz/artifacts/TARGET/) and fuzzing
# goes on. Prints one row per target: executions, crashes (inputs kept),
# final coverage. The working corpora stay in fuzz/corpus/TARGET (ignored
# by git), so a second campaign continues where the first stopped.
#
# Usage: scripts/fuzz-campaign.sh SECONDS [TARGET...]
#   XIR_FUZZ_TARGET_DIR: the nightly build's target directory (default
#   fuzz/target). Same build flags as scripts/fuzz-smoke.sh, and why.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:?usage: scripts/fuzz-campaign.sh SECONDS [TARGET...]}"
shift
target_dir="${XIR_FUZZ_TARGET_DIR:-$PWD/target}"
unset CARGO_TARGET_DIR
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +nightly fuzz list); fi
cargo +nightly fuzz build -s none --target-dir "$target_dir"
logs="$(mktemp -d)"
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  dirs=("corpus/$t")
  [ -d "seeds/$t" ] && dirs+=("seeds/$t")
  # The repository's own corpora for this target (fuzz/seed-dirs.txt), read-only.
  mapfile -t -O "${#dirs[@]}" dirs < <(awk -v t="$t" '$1 == t { print $2 }' seed-dirs.txt)
  [ -d "artifacts-found/$t" ] && dirs+=("artifacts-found/$t")
  timeout=10
  [ "$t" = generated ] && timeout=120 # whole generated programs (scripts/fuzz-smoke.sh)
  nice cargo +nightly fuzz run -s none --target-dir "$target_dir" "$t" "${dirs[@]}" -- \
    -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=4096 -max_len=65536 \
    -artifact_prefix="artifacts/$t/" >"$logs/$t.log" 2>&1 &
done
wait
printf '%-16s %14s %8s %8s\n' target executions crashes cov
for t in "${targets[@]}"; do
  # The fork-mode status lines: `#N: cov: C ft: F corp: ... exec/s: E ...`
  # (N = executions of every fork together); the last one is the total.
  last="$(grep -E '^#[0-9]+: cov:' "$logs/$t.log" | tail -n 1)"
  execs="$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")"
  cov="$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$last")"
  crashes="$(find "artifacts/$t" -type f | wc -l)"
  printf '%-16s %14s %8s %8s\n' "$t" "${execs:-0}" "$crashes" "${cov:-?}"
done
echo "logs: $logs"
