#!/usr/bin/env bash
# The cost of exact f32 subgroup folds (BENCHMARKS.md, "Subgroup folds"):
# two kernels that do nothing but `subgroupAdd(x) + subgroupExclusiveAdd(x)`,
# in f32 (ours: a loop over the lanes in lane order; with --fast-math, the
# group instruction) and in u32 (the group instruction on both sides: the
# control), against naga 30 (`--spirv-version 1.3`, the subgroup
# instructions need SPIR-V 1.3) + `spirv-opt -O`. Stages .gpu/sg.tar.xz
# (git-ignored) and prints the device call; `--local` runs it here instead.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in naga spirv-opt spirv-val; do
  command -v "$tool" >/dev/null || { echo "gpu-subgroup-folds.sh: \`$tool\` is missing" >&2; exit 1; }
done
cargo build --workspace --bins
S=.gpu/sg
rm -rf "$S" && mkdir -p "$S/wgsl" "$S/corpus" "$S/peer"
for ty in f32 u32; do
  cat > "$S/wgsl/subgroup_sum_$ty.wgsl" <<WGSL
@group(0) @binding(0) var<storage, read> a: array<$ty>;
@group(0) @binding(1) var<storage, read_write> out: array<$ty>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let x = a[g.x];
    out[g.x] = subgroupAdd(x) + subgroupExclusiveAdd(x);
}
WGSL
  python3 -c "
import json
a = [(i % 97) * (0.25 if '$ty' == 'f32' else 1) for i in range(4096)]
print(json.dumps({'dispatch': [4096, 1, 1], 'args': {'a': a, 'out': {'fill': 0, 'len': 4096}}}))" > "$S/corpus/subgroup_sum_$ty.inputs.json"
  naga --spirv-version 1.3 "$S/wgsl/subgroup_sum_$ty.wgsl" "$S/naga.spv" >/dev/null
  spirv-opt -O "$S/naga.spv" -o "$S/peer/subgroup_sum_$ty.spv"
  spirv-val --target-env vulkan1.2 "$S/peer/subgroup_sum_$ty.spv"
  rm "$S/naga.spv"
done
strip -o "$S/gpu-runtime" target/debug/gpu-runtime
if [ "${1:-}" = --local ]; then
  for fm in "" --fast-math; do
    "$S/gpu-runtime" --wgsl "$S/wgsl" --corpus "$S/corpus" --peer "$S/peer" --repeats 9 --min-ms 0.5 --max-mib 4 $fm
  done
  exit
fi
tar -C .gpu -cf - sg | xz -9 -T1 > .gpu/sg.tar.xz
rm -rf "$S"
du -sh .gpu/sg.tar.xz
cat <<'RUN'
On the device (carry [".gl", ".gpu"]):
  for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  tar -C .gpu -xJf .gpu/sg.tar.xz; S=.gpu/sg
  $S/gpu-runtime --wgsl $S/wgsl --corpus $S/corpus --peer $S/peer > $OUT/sg.md
  $S/gpu-runtime --wgsl $S/wgsl --corpus $S/corpus --peer $S/peer --fast-math > $OUT/sg-fast.md
RUN
