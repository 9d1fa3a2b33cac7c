#!/usr/bin/env bash
# The per-kernel optimization table of BENCHMARKS.md ("Optimization"):
# SPIR-V instruction counts and compile times of every corpus kernel at our
# O0, our O2 (`opt-spirv --opt-level 2`), and `spirv-opt -O` applied to our
# O0 binary. Times are the best of 5 runs, in milliseconds (our O0 / O2: the
# whole parse-to-binary compile; spirv-opt: spirv-opt alone). Every O2 and
# spirv-opt binary is checked with `spirv-val --target-env vulkan1.2`.
#
# Usage: scripts/optimization-table.sh [XIR_OPT]   (default: the release build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
xir_opt=${1:-$root/target/release/xir-opt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() { spirv-dis --raw-id "$1" | grep -cE '^\s*(%[0-9]+ = )?Op'; }
best_ms() { # best of 5 wall-clock runs of "$@", in ms with one decimal
    local best=""
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
        local ms=$(( (t1 - t0) / 100000 ))
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    done
    printf '%d.%d' $((best / 10)) $((best % 10))
}

echo "| kernel | O0 insts | O0 ms | O2 insts | O2 ms | O2 vs O0 | spirv-opt -O insts | spirv-opt ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
t0=0; t2=0; ts=0
for k in "$root"/tests/corpus/*.xir; do
    name=$(basename "$k" .xir)
    "$xir_opt" "$k" --pipeline spirv --opt-level 0 --emit spirv -o "$tmp/o0.spv"
    "$xir_opt" "$k" --pipeline opt-spirv --opt-level 2 --emit spirv -o "$tmp/o2.spv"
    spirv-opt -O "$tmp/o0.spv" -o "$tmp/so.spv"
    spirv-val --target-env vulkan1.2 "$tmp/o2.spv"
    spirv-val --target-env vulkan1.2 "$tmp/so.spv"
    n0=$(count "$tmp/o0.spv"); n2=$(count "$tmp/o2.spv"); ns=$(count "$tmp/so.spv")
    m0=$(best_ms "$xir_opt" "$k" --pipeline spirv --opt-level 0 --emit spirv -o "$tmp/t.spv")
    m2=$(best_ms "$xir_opt" "$k" --pipeline opt-spirv --opt-level 2 --emit spirv -o "$tmp/t.spv")
    ms=$(best_ms spirv-opt -O "$tmp/o0.spv" -o "$tmp/t.spv")
    pct=$(awk -v a="$n0" -v b="$n2" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }')
    echo "| $name | $n0 | $m0 | $n2 | $m2 | $pct | $ns | $ms |"
    t0=$((t0 + n0)); t2=$((t2 + n2)); ts=$((ts + ns))
done
pct=$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }')
echo "| **total** | $t0 | | $t2 | | $pct | $ts | |"
