#!/bin/sh
# Instructions executed by a whole `xir-opt` process compiling each WGSL
# corpus kernel (tests/wgsl) to SPIR-V, at -O0 and -O2, beside naga's CLI on
# the same file: exact and repeatable on a shared machine, where wall time
# moves by a third between runs. Counted by valgrind (callgrind's "I refs").
#
#   scripts/compile-instructions.sh [XIR_OPT [BASELINE_XIR_OPT]]
#
# XIR_OPT defaults to target/release/xir-opt (build it first with
# `cargo build --release -p xir-pipelines --bin xir-opt`). With a baseline
# binary (another commit's release build) both are counted, side by side.
# `--no-cache`: every run compiles. Needs `valgrind` and `naga` (naga-cli 30)
# on the path. Prints a Markdown table in millions of instructions.
set -e
cd "$(dirname "$0")/.."
new=${1:-target/release/xir-opt}
old=${2:-}
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }
command -v naga >/dev/null || { echo "needs naga (cargo install naga-cli)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Instructions of one process, in millions.
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>"$tmp/err" >/dev/null || {
        echo "failed: $*" >&2
        cat "$tmp/err" >&2
        exit 1
    }
    sed -n 's/.*I *refs: *//p' "$tmp/err" | tr -d , | awk '{ printf "%.2f", $1 / 1e6 }'
}

if [ -n "$old" ]; then
    echo "| kernel | naga | -O0 before | -O0 after | -O2 before | -O2 after |"
    echo "|---|---:|---:|---:|---:|---:|"
else
    echo "| kernel | naga | ours -O0 | ours -O2 |"
    echo "|---|---:|---:|---:|"
fi
for k in tests/wgsl/*.wgsl; do
    name=$(basename "$k" .wgsl)
    naga_m=$(count naga "$k" "$tmp/naga.spv")
    row="| $name | $naga_m"
    for level in 0 2; do
        if [ -n "$old" ]; then
            row="$row | $(count "$old" "$k" --emit spirv --no-cache --opt-level $level -o "$tmp/old.spv")"
        fi
        row="$row | $(count "$new" "$k" --emit spirv --no-cache --opt-level $level -o "$tmp/new.spv")"
        if [ -n "$old" ] && ! cmp -s "$tmp/old.spv" "$tmp/new.spv"; then
            row="$row (output differs)"
        fi
    done
    echo "$row |"
done
