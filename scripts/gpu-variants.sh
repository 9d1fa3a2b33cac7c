#!/usr/bin/env bash
# Variants of our own modules for `gpu-runtime --peer-abi ours`: each guess
# about why a kernel is slower on the H200 (BENCHMARKS.md, "Staged for the
# next device run (session 21)") becomes one module that differs from ours
# in that one respect, timed beside ours in the same submission order.
#
#   matmul/control   our -O2 module as it is (the two columns must agree)
#   matmul/aliased   + `Aliased` on the three output buffers (as before
#                    session 20's `noalias`)
#   matmul/branch    the body inside `if i < arrayLength(&dots)` (a branch
#                    around the body, as the entry check made before
#                    session 20's `whole_blocks`; no push constants)
#   bytecode_vm/o0opt our -O0 module through `spirv-opt -O` (the switch's
#                    cases branch to its merge, as naga's do)
#   baseline/K       with a BASELINE xir-opt (another commit's build): its
#                    -O2 module of each kernel whose module differs from
#                    ours (session 24: the block order of session 23)
#
#   scripts/gpu-variants.sh [BASELINE_XIR_OPT]
#
# Stage here (needs spirv-as, spirv-dis, spirv-opt, spirv-val), then run
# `scripts/gpu-call.sh` on the GPU machine (the device tool, carry [".gl", ".gpu"]).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in spirv-as spirv-dis spirv-opt spirv-val python3; do
  command -v "$tool" >/dev/null || { echo "gpu-variants.sh: \`$tool\` is missing" >&2; exit 1; }
done
cargo build --workspace --bins
stage=.gpu/variants
rm -rf "$stage" && mkdir -p "$stage"/{control,aliased,branch,o0opt}
opt=target/debug/xir-opt
$opt tests/wgsl/matmul.wgsl --opt-level 2 --emit spirv -o "$stage/control/matmul.spv" --no-cache
spirv-dis "$stage/control/matmul.spv" -o "$stage/matmul.spvasm"
python3 - "$stage" <<'PY'
import re, sys
stage = sys.argv[1]
asm = open(f"{stage}/matmul.spvasm").read()
# The output buffers: the variables at bindings 1, 2 and 3 of set 0.
outs = re.findall(r"OpDecorate (%\w+) Binding [123]\n", asm)
assert len(outs) == 3, outs
decorations = "".join(f"               OpDecorate {v} Aliased\n" for v in outs)
anchor = re.search(r"\n( +OpDecorate %gl_GlobalInvocationID BuiltIn)", asm)
aliased = asm[: anchor.start() + 1] + decorations + asm[anchor.start() + 1 :]
open(f"{stage}/matmul.aliased.spvasm", "w").write(aliased)
# The body wrapped in a branch, from the source.
src = open("tests/wgsl/matmul.wgsl").read()
head, body = src.split("    let i = gid.x;\n", 1)
body = body.rsplit("}", 1)[0].rstrip("\n")
inner = "".join(("    " + l if l.strip() else "") + "\n" for l in body.split("\n"))
open(f"{stage}/matmul.branch.wgsl", "w").write(head + "    let i = gid.x;\n    if i < arrayLength(&dots) {\n" + inner + "    }\n}\n")
PY
version=$(sed -n 's/^; Version: \([0-9.]*\)$/\1/p' "$stage/matmul.spvasm")
spirv-as --target-env "spv$version" "$stage/matmul.aliased.spvasm" -o "$stage/aliased/matmul.spv"
$opt "$stage/matmul.branch.wgsl" --opt-level 2 --emit spirv -o "$stage/branch/matmul.spv" --no-cache
$opt tests/wgsl/bytecode_vm.wgsl --opt-level 0 --emit spirv -o "$stage/bytecode_vm.o0.spv" --no-cache
spirv-opt -O "$stage/bytecode_vm.o0.spv" -o "$stage/o0opt/bytecode_vm.spv"
baseline=${1:-}
if [ -n "$baseline" ]; then
  mkdir -p "$stage/baseline"
  for w in tests/wgsl/*.wgsl; do
    n=$(basename "$w" .wgsl)
    "$baseline" "$w" --opt-level 2 --emit spirv --no-cache -o "$stage/baseline/$n.spv"
    $opt "$w" --opt-level 2 --emit spirv --no-cache -o "$stage/ours.spv"
    if cmp -s "$stage/ours.spv" "$stage/baseline/$n.spv"; then rm "$stage/baseline/$n.spv"; fi
  done
fi
for m in "$stage"/*/*.spv; do spirv-val --target-env vulkan1.2 "$m"; done
rm -f "$stage"/*.spvasm "$stage"/*.wgsl "$stage"/*.spv
strip -o "$stage/gpu-runtime" target/debug/gpu-runtime
tar -C .gpu -cf - variants | xz -9 -T1 > .gpu/variants.tar.xz
rm -rf "$stage"
du -sh .gpu/variants.tar.xz
echo "On the device: scripts/gpu-call.sh (carry [\".gl\", \".gpu\"]) runs these variants with the rest of what is staged."
