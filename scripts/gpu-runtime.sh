#!/usr/bin/env bash
# GPU runtime of the WGSL corpus, ours against naga + spirv-opt -O
# (BENCHMARKS.md, "GPU runtime"). On this machine: build `gpu-runtime`
# (tests/src/bin/gpu-runtime.rs), make the peer module of each kernel with
# the naga CLI (`cargo install naga-cli`) and `spirv-opt -O` (and, where the
# foreign runner can bind it, our own -O0 module through `spirv-opt -O`),
# check it with `spirv-val`, and pack both into .gpu/runtime.tar.xz
# (git-ignored). Then run
# the printed command on the GPU machine (the device tool, carry
# [".gl", ".gpu"]); it writes the Markdown table to $OUT/runtime.md.
#
#   scripts/gpu-runtime.sh            # stage
#   scripts/gpu-runtime.sh --local    # stage and run here (lavapipe: slow, for checking)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in naga spirv-opt spirv-val; do
  command -v "$tool" >/dev/null || { echo "gpu-runtime.sh: \`$tool\` is missing (naga: cargo install naga-cli; spirv-opt/spirv-val: apt-get install spirv-tools)" >&2; exit 1; }
done
stage=.gpu/runtime
rm -rf "$stage" && mkdir -p "$stage/peer" "$stage/peer-restrict"
# peer: naga's defaults (indices unchecked); peer-restrict: naga clamping
# every index as our front end does (WGSL's bounds-checking "restrict").
for w in tests/wgsl/*.wgsl; do
  n=$(basename "$w" .wgsl)
  for kind in peer peer-restrict; do
    policy=Unchecked
    [ "$kind" = peer-restrict ] && policy=Restrict
    naga --index-bounds-check-policy "$policy" "$w" "$stage/$kind/$n.naga.spv" >/dev/null
    spirv-opt -O "$stage/$kind/$n.naga.spv" -o "$stage/$kind/$n.spv"
    spirv-val --target-env vulkan1.2 "$stage/$kind/$n.spv"
    rm "$stage/$kind/$n.naga.spv"
  done
done
cargo build --workspace --bins
# peer-ours-opt: our own -O0 module through spirv-opt -O, to tell what our
# lowering costs on the GPU from what our optimizer gains. Only for kernels
# whose module the foreign runner binds as naga's (no push constants: no
# uniform, no dispatch-size read; every argument a descriptor, so binding N
# is argument N).
mkdir -p "$stage/peer-ours-opt"
for w in tests/wgsl/*.wgsl; do
  n=$(basename "$w" .wgsl)
  target/debug/xir-opt "$w" --opt-level 0 --emit spirv -o "$stage/$n.o0.spv"
  # grep -c reads to the end: with -q, pipefail would see spirv-dis killed by SIGPIPE.
  if ! spirv-dis "$stage/$n.o0.spv" | grep -c PushConstant >/dev/null; then
    spirv-opt -O "$stage/$n.o0.spv" -o "$stage/peer-ours-opt/$n.spv"
    spirv-val --target-env vulkan1.2 "$stage/peer-ours-opt/$n.spv"
  fi
  rm "$stage/$n.o0.spv"
done
strip -o "$stage/gpu-runtime" target/debug/gpu-runtime
if [ "${1:-}" = --local ]; then
  exec "$stage/gpu-runtime" --wgsl tests/wgsl --corpus tests/corpus --peer "$stage/peer" --repeats 5 --min-ms 0.5 --max-mib 4
fi
tar -C .gpu -cf - runtime | xz -9 -T1 > .gpu/runtime.tar.xz
rm -rf "$stage"
du -sh .gpu/runtime.tar.xz
cat <<'RUN'
On the device (carry [".gl", ".gpu"]); each table takes about 7 minutes on the H200, so give
each its own call (a call may run 10 minutes):
  for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  tar -C .gpu -xJf .gpu/runtime.tar.xz
  .gpu/runtime/gpu-runtime --wgsl tests/wgsl --corpus tests/corpus --peer .gpu/runtime/peer > $OUT/runtime.md
  .gpu/runtime/gpu-runtime --wgsl tests/wgsl --corpus tests/corpus --peer .gpu/runtime/peer-restrict \
    --peer-label 'naga (Restrict) + spirv-opt -O' > $OUT/runtime-restrict.md
  .gpu/runtime/gpu-runtime --wgsl tests/wgsl --corpus tests/corpus --peer .gpu/runtime/peer-ours-opt \
    --peer-label 'ours -O0 + spirv-opt -O' > $OUT/runtime-ours-opt.md
RUN
