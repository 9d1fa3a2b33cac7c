#!/usr/bin/env bash
# The per-kernel code-size tables of BENCHMARKS.md ("Code size against the
# peers (issue 24)"): SPIR-V instruction counts (the `Op` lines of
# `spirv-dis`) of every corpus kernel and every WGSL corpus kernel, ours and
# the peers'. What each column runs:
#
#   ours -O0/-O2/-O3  xir-opt K --pipeline opt-spirv --opt-level N --emit spirv
#                     (-O0 is exactly the `spirv` pipeline; -O2 adds the XIR
#                     `O2` groups and SPIRV-Tools preset 2, -O3 loop rotation
#                     and preset 3; README "The two commands")
#   spirv-opt -O      /usr/bin/spirv-opt -O on our -O0 binary
#   naga              naga K.wgsl out.spv (naga's defaults: bounds Unchecked)
#   naga R            naga --index-bounds-check-policy Restrict (the bounds
#                     policy our front end implements, docs/frontend.md)
#   glslang           glslangValidator -V --target-env vulkan1.2 on the GLSL
#                     twin tests/glsl/K.comp, where one exists
#   + opt             the column before it, then spirv-opt -O
#   exact-semantics   of ours -O2, the instructions that state XIR's exact
#                     semantics and no peer emits: float controls
#                     (SignedZeroInfNanPreserve / RoundingModeRTE capabilities
#                     and modes), NoContraction and Aliased decorations
#
# Every binary, ours and the peers', is validated: the peers' and spirv-opt's
# outputs by `spirv-val --target-env vulkan1.2` (the script stops with the
# failing command otherwise), ours by xir-opt itself (SPIRV-Tools bundled in
# the spirv-tools crate, before and after its optimizer). The system
# SPIRV-Tools (Debian's 2023.1) is older than the bundled one and rejects
# kernels that use SPV_KHR_maximal_reconvergence (the subgroup kernels; its
# spirv-dis cannot read them either, so ours are counted from the words by
# scripts/spirv-count.py, which agrees with spirv-dis where both can read):
# their "spirv-opt -O on ours" cell is "n/a", and that column's total and
# difference count only the kernels it could process.
#
# Usage: scripts/size-table.sh [XIR_OPT]   (default: target/debug/xir-opt;
# the counts do not depend on the build profile)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
xir_opt=${1:-${CARGO_TARGET_DIR:-$root/target}/debug/xir-opt}
for tool in "$xir_opt" naga glslangValidator spirv-opt spirv-val spirv-dis; do
    command -v "$tool" >/dev/null || { echo "size-table.sh: $tool not found" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Validate $1 (or stop loudly), then print its instruction count.
count() {
    if ! spirv-val --target-env vulkan1.2 "$1" >"$tmp/val.log" 2>&1; then
        echo "size-table.sh: $1 ($2) fails spirv-val:" >&2
        cat "$tmp/val.log" >&2
        exit 1
    fi
    spirv-dis --raw-id "$1" | grep -cE '^\s*(%[0-9]+ = )?Op'
}
exact() { # binary -> instructions that only state exact semantics
    spirv-dis --raw-id "$1" | grep -cE 'SignedZeroInfNanPreserve|RoundingModeRTE|NoContraction|Aliased' || true
}
ours() { # kernel, level -> count (validated by xir-opt itself)
    "$xir_opt" "$1" --pipeline opt-spirv --opt-level "$2" --emit spirv -o "$tmp/o$2.spv"
    "$root/scripts/spirv-count.py" "$tmp/o$2.spv"
}
opt() { # input, output, what
    spirv-opt -O "$1" -o "$2"
    count "$2" "$3"
}
minus() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; printf (d > 0 ? "+%d" : "%d"), d }'; }

echo "### XIR corpus (tests/corpus)"
echo
echo "| kernel | ours -O0 | ours -O2 | ours -O3 | spirv-opt -O on ours -O0 | -O2 minus spirv-opt |"
echo "|---|---:|---:|---:|---:|---:|"
s0=0; s2=0; s3=0; ss=0; s2s=0; na=0
for k in "$root"/tests/corpus/*.xir; do
    name=$(basename "$k" .xir)
    n0=$(ours "$k" 0); n2=$(ours "$k" 2); n3=$(ours "$k" 3)
    if spirv-val --target-env vulkan1.2 "$tmp/o0.spv" >/dev/null 2>&1; then
        ns=$(opt "$tmp/o0.spv" "$tmp/so.spv" "spirv-opt -O on ours -O0 of $name")
        echo "| $name | $n0 | $n2 | $n3 | $ns | $(minus "$n2" "$ns") |"
        ss=$((ss + ns)); s2s=$((s2s + n2))
    else
        echo "| $name | $n0 | $n2 | $n3 | n/a | |"
        na=$((na + 1))
    fi
    s0=$((s0 + n0)); s2=$((s2 + n2)); s3=$((s3 + n3))
done
echo "| **total** | $s0 | $s2 | $s3 | $ss | $(minus "$s2s" "$ss") |"
[ "$na" -gt 0 ] && echo && echo "(n/a: $na kernels the system SPIRV-Tools cannot read; the last two totals leave them out)"
echo
echo "### WGSL corpus (tests/wgsl, GLSL twins tests/glsl)"
echo
echo "| kernel | ours -O0 | ours -O2 | ours -O3 | exact-semantics | naga | naga + opt | naga R + opt | glslang | glslang + opt | -O2 minus best peer |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
s0=0; s2=0; s3=0; se=0; sn=0; sno=0; snr=0
for k in "$root"/tests/wgsl/*.wgsl; do
    name=$(basename "$k" .wgsl)
    n0=$(ours "$k" 0); n2=$(ours "$k" 2); ne=$(exact "$tmp/o2.spv"); n3=$(ours "$k" 3)
    naga "$k" "$tmp/n.spv" >/dev/null
    nn=$(count "$tmp/n.spv" "naga of $name")
    nno=$(opt "$tmp/n.spv" "$tmp/no.spv" "naga + spirv-opt -O of $name")
    naga --index-bounds-check-policy Restrict "$k" "$tmp/nr.spv" >/dev/null
    count "$tmp/nr.spv" "naga Restrict of $name" >/dev/null
    nnr=$(opt "$tmp/nr.spv" "$tmp/nro.spv" "naga Restrict + spirv-opt -O of $name")
    best=$nno
    [ "$nnr" -lt "$best" ] && best=$nnr
    g="-"; go="-"
    if [ -f "$root/tests/glsl/$name.comp" ]; then
        glslangValidator -V --target-env vulkan1.2 "$root/tests/glsl/$name.comp" -o "$tmp/g.spv" >/dev/null
        g=$(count "$tmp/g.spv" "glslang of $name")
        go=$(opt "$tmp/g.spv" "$tmp/go.spv" "glslang + spirv-opt -O of $name")
        [ "$go" -lt "$best" ] && best=$go
    fi
    echo "| $name | $n0 | $n2 | $n3 | $ne | $nn | $nno | $nnr | $g | $go | $(minus "$n2" "$best") |"
    s0=$((s0 + n0)); s2=$((s2 + n2)); s3=$((s3 + n3)); se=$((se + ne)); sn=$((sn + nn)); sno=$((sno + nno)); snr=$((snr + nnr))
done
echo "| **total** | $s0 | $s2 | $s3 | $se | $sn | $sno | $snr | | | |"
