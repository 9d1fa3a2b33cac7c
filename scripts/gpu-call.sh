#!/usr/bin/env bash
# The one device call that runs what the staging scripts packed into .gpu
# (run it ON the GPU machine: the device tool, carry [".gl", ".gpu"],
# command `bash scripts/gpu-call.sh`). Stage first, here, in this order
# (gpu-stage.sh deletes .gpu):
#   scripts/gpu-stage.sh shaders whole_blocks_vulkan subgroup_vulkan vulkan_corpus
#   scripts/gpu-variants.sh [BASELINE_XIR_OPT]
#   scripts/gpu-subgroup-folds.sh
# It runs, each bounded so the whole call ends inside the tool's 10 minutes
# and writes what it has as it goes: the Vulkan test binaries at NVIDIA's
# subgroup size ($OUT/gpu.log), then the variants (`matmul`: ours wrapped
# in a branch, with --fast-math and with select chains, naga Restrict fused and unfused;
# `bytecode_vm` with its loop's exit test split from the header; the
# baseline build's modules when one was staged) and the subgroup folds
# ($OUT/runs.md). The runtime tables (scripts/gpu-runtime.sh) take a call
# each.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XIR_CORPUS_DIR=$PWD/tests/corpus
nvidia-smi -L > $OUT/dev.txt
mkdir -p /work target/debug && ln -sfn "$PWD" /work/main
tar -C .gpu -xJf .gpu/bins.tar.xz && cp .gpu/bin/* target/debug/
for t in .gpu/*; do [ -f "$t" ] && [ -x "$t" ] || continue; echo "== $t"; timeout 60 "$t" --test-threads 1 2>&1 | tail -25; done > $OUT/gpu.log
tar -C .gpu -xJf .gpu/variants.tar.xz; tar -C .gpu -xJf .gpu/sg.tar.xz
V=.gpu/variants; W="--wgsl tests/wgsl --corpus tests/corpus"
{ for v in branch fast selects; do
  echo "## matmul ours $v"; timeout 40 $V/gpu-runtime $W --peer $V/ours/$v --peer-abi ours --peer-label $v --only matmul
done
echo "## bytecode_vm ours split"; timeout 40 $V/gpu-runtime $W --peer $V/ours/split --peer-abi ours --peer-label split --only bytecode_vm
for v in restrict unfused; do
  echo "## matmul naga $v"; timeout 40 $V/gpu-runtime $W --peer $V/foreign/$v --peer-label "naga $v" --only matmul
done
if [ -d $V/baseline ]; then
  O=""; for k in $V/baseline/*.spv; do O="$O --only $(basename $k .spv)"; done
  echo "## baseline"; timeout 200 $V/gpu-runtime $W --peer $V/baseline --peer-abi ours --peer-label baseline $O
fi
# The exact f32 fold's loop is slow to tile up to the minimum time: more than 40 s each (100 keeps the call under 10 minutes).
S=.gpu/sg; echo "## sg"; timeout 100 $S/gpu-runtime --wgsl $S/wgsl --corpus $S/corpus --peer $S/peer
echo "## sg fast"; timeout 100 $S/gpu-runtime --wgsl $S/wgsl --corpus $S/corpus --peer $S/peer --fast-math
} > $OUT/runs.md 2>&1
