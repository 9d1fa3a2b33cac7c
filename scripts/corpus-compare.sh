#!/usr/bin/env bash
# `xir-run --compare` with default flags on every corpus kernel, at -O0 and
# -O2, on whatever Vulkan device the loader picks: one Markdown table row per
# kernel (README.md's "Results on real hardware" table is this output), with
# the dispatch's timestamp-query interval in microseconds. A kernel whose
# comparison fails shows `FAIL` and its first mismatch is printed to stderr.
#
#   scripts/corpus-compare.sh [XIR_RUN]   # default: target/debug/xir-run
set -uo pipefail
cd "$(dirname "$0")/.."
run="${1:-target/debug/xir-run}"
fails=0
echo "| kernel | result | µs -O0 | µs -O2 |"
echo "|---|---|---:|---:|"
for k in tests/corpus/*.xir; do
  name="$(basename "$k" .xir)"
  result=pass
  times=()
  for level in 0 2; do
    if err="$("$run" "$k" --inputs "tests/corpus/$name.inputs.json" --compare --opt-level "$level" 2>&1 >/dev/null)"; then
      times+=("$(printf '%s\n' "$err" | sed -n 's/.*dispatch \([0-9.]*\) us.*/\1/p' | head -1)")
    else
      result=FAIL
      times+=("-")
      fails=$((fails + 1))
      printf '%s -O%s: %s\n' "$name" "$level" "$err" >&2
    fi
  done
  echo "| $name | $result | ${times[0]} | ${times[1]} |"
done
exit $((fails > 0))
