#!/usr/bin/env bash
# Variants for `gpu-runtime`: each guess about why a kernel is slower on
# the GPU (BENCHMARKS.md, "GPU runtime") becomes one module that differs
# from a measured one in that one respect, timed beside ours in the same
# submission order. Session 25's H100 runs answered the earlier questions
# (block order: no effect; `matmul`: `Aliased` no effect, a branch around
# the body 1.27x faster, fusing ours no faster, unfusing naga's 2.3x
# slower: BENCHMARKS.md "Run 5"). Staged:
#
#   ours/branch/matmul      our -O2 module of the body inside `if i <
#                           arrayLength(&dots)` (the fast shape, again)
#   ours/fast/matmul        our -O2 module with --fast-math (`Fma`, no
#                           `NoContraction`: naga fuses `col * v + col`)
#   ours/selects/matmul     our -O2 module of the source with the two
#                           dynamic indices into locals (`mvar[i]`,
#                           `pvar[i]`) written as select chains: the guess
#                           that the driver's choice between registers and
#                           local memory for them is the cliff
#   ours/split/bytecode_vm  our -O2 module with its loop header's exit test
#                           moved to a block of its own (header: `OpLoopMerge`
#                           then `OpBranch`), the shape of naga's module and
#                           of our -O0 through `spirv-opt -O` (2.91 ms against
#                           -O2's 3.17 on the H100)
#   foreign/restrict/matmul naga (Restrict) + spirv-opt -O (the control)
#   foreign/unfused/matmul  the same with its `Fma` split into `OpFMul` +
#                           `OpFAdd`, both `NoContraction`, as ours
#   baseline/K              with a BASELINE xir-opt (another commit's build):
#                           its -O2 module of each kernel whose module differs
#
#   scripts/gpu-variants.sh [BASELINE_XIR_OPT]
#
# Stage here (needs naga, spirv-as, spirv-dis, spirv-opt, spirv-val), then
# run `scripts/gpu-call.sh` on the GPU machine (the device tool, carry
# [".gl", ".gpu"]).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in naga spirv-as spirv-dis spirv-opt spirv-val python3; do
  command -v "$tool" >/dev/null || { echo "gpu-variants.sh: \`$tool\` is missing" >&2; exit 1; }
done
cargo build --workspace --bins
stage=.gpu/variants
rm -rf "$stage" && mkdir -p "$stage"/ours/{branch,fast,selects,split} "$stage"/foreign/{restrict,unfused}
opt=target/debug/xir-opt
python3 - "$stage" <<'PY'
import sys
stage = sys.argv[1]
# The body wrapped in a branch, from the source.
src = open("tests/wgsl/matmul.wgsl").read()
head, body = src.split("    let i = gid.x;\n", 1)
body = body.rsplit("}", 1)[0].rstrip("\n")
inner = "".join(("    " + l if l.strip() else "") + "\n" for l in body.split("\n"))
open(f"{stage}/matmul.branch.wgsl", "w").write(head + "    let i = gid.x;\n    if i < arrayLength(&dots) {\n" + inner + "    }\n}\n")
# The dynamic indices into locals as select chains (the index clamped as Restrict clamps it).
pick = lambda v: f"select(select(select({v}[0], {v}[1], j == 1u), {v}[2], j == 2u), {v}[3], j == 3u)"
sel = src.replace("    let col = mvar[i];\n", "    let j = min(i, 3u);\n    let col = " + pick("mvar") + ";\n")
sel = sel.replace("    mv[i] = pvar[i];\n", "    mv[i] = " + pick("pvar") + ";\n")
assert sel.count("select(select(") == 2, "matmul.wgsl changed: update the select variant"
open(f"{stage}/matmul.selects.wgsl", "w").write(sel)
PY
$opt "$stage/matmul.branch.wgsl" --opt-level 2 --emit spirv -o "$stage/ours/branch/matmul.spv" --no-cache
$opt tests/wgsl/matmul.wgsl --opt-level 2 --fast-math --emit spirv -o "$stage/ours/fast/matmul.spv" --no-cache
$opt "$stage/matmul.selects.wgsl" --opt-level 2 --emit spirv -o "$stage/ours/selects/matmul.spv" --no-cache
$opt tests/wgsl/bytecode_vm.wgsl --opt-level 2 --emit spirv -o "$stage/bvm.spv" --no-cache
spirv-dis "$stage/bvm.spv" -o "$stage/bvm.spvasm"
python3 - "$stage" <<'PY'
import re, sys
stage = sys.argv[1]
asm = open(f"{stage}/bvm.spvasm").read()
# The loop header that tests its exit itself: OpLoopMerge, then OpBranchConditional.
m = re.search(r"( *)OpLoopMerge (%\w+) (%\w+) None\n( *)OpBranchConditional (%\w+) (%\w+) (%\w+)\n", asm)
assert m, "bytecode_vm's -O2 loop header no longer tests its exit: drop this variant"
header = re.findall(r"\n *(%\w+) = OpLabel\n", asm[: m.start()])[-1]
bound = int(re.search(r"; Bound: (\d+)", asm).group(1))
test = f"%{bound}"
split = (f"{m.group(1)}OpLoopMerge {m.group(2)} {m.group(3)} None\n{m.group(4)}OpBranch {test}\n"
         f"{test} = OpLabel\n{m.group(4)}OpBranchConditional {m.group(5)} {m.group(6)} {m.group(7)}\n")
asm = asm[: m.start()] + split + asm[m.end() :]
# The two targets' phis now come from the test block, not the header.
for target in (m.group(6), m.group(7)):
    b = re.search(r"\n *" + re.escape(target) + r" = OpLabel\n((?: *%\w+ = OpPhi[^\n]*\n)*)", asm)
    if b and b.group(1):
        phis = re.sub(r"(%\w+ )" + re.escape(header) + r"\b", lambda x: x.group(1) + test, b.group(1))
        asm = asm[: b.start(1)] + phis + asm[b.end(1) :]
asm = asm.replace(f"; Bound: {bound}", f"; Bound: {bound + 1}")
open(f"{stage}/bvm.split.spvasm", "w").write(asm)
PY
version=$(sed -n 's/^; Version: \([0-9.]*\)$/\1/p' "$stage/bvm.spvasm")
spirv-as --target-env "spv$version" "$stage/bvm.split.spvasm" -o "$stage/ours/split/bytecode_vm.spv"
naga --index-bounds-check-policy Restrict tests/wgsl/matmul.wgsl "$stage/naga.spv" >/dev/null
spirv-opt -O "$stage/naga.spv" -o "$stage/foreign/restrict/matmul.spv"
spirv-dis "$stage/foreign/restrict/matmul.spv" -o "$stage/restrict.spvasm"
python3 - "$stage" <<'PY'
import re, sys
stage = sys.argv[1]
asm = open(f"{stage}/restrict.spvasm").read()
fmas = re.findall(r"( *)(%\w+) = OpExtInst (%\w+) (%\w+) Fma (%\w+) (%\w+) (%\w+)\n", asm)
assert len(fmas) == 1, fmas
bound = int(re.search(r"; Bound: (\d+)", asm).group(1))
pad, res, ty, _, a, b, c = fmas[0]
mul = f"%{bound}"
asm = re.sub(r"( *)%\w+ = OpExtInst %\w+ %\w+ Fma .*\n",
             f"{pad}{mul} = OpFMul {ty} {a} {b}\n{pad}{res} = OpFAdd {ty} {mul} {c}\n", asm)
anchor = re.search(r"\n( +OpDecorate )", asm)
decorations = f"               OpDecorate {mul} NoContraction\n               OpDecorate {res} NoContraction\n"
asm = asm[: anchor.start() + 1] + decorations + asm[anchor.start() + 1 :]
open(f"{stage}/unfused.spvasm", "w").write(asm)
PY
version=$(sed -n 's/^; Version: \([0-9.]*\)$/\1/p' "$stage/restrict.spvasm")
spirv-as --target-env "spv$version" "$stage/unfused.spvasm" -o "$stage/foreign/unfused/matmul.spv"
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
for m in "$stage"/*/*.spv "$stage"/*/*/*.spv; do [ -f "$m" ] || continue; spirv-val --target-env vulkan1.2 "$m"; done
rm -f "$stage"/*.spvasm "$stage"/*.wgsl "$stage"/*.spv
strip -o "$stage/gpu-runtime" target/debug/gpu-runtime
tar -C .gpu -cf - variants | xz -9 -T1 > .gpu/variants.tar.xz
rm -rf "$stage"
du -sh .gpu/variants.tar.xz
echo "On the device: scripts/gpu-call.sh (carry [\".gl\", \".gpu\"]) runs these variants with the rest of what is staged."
