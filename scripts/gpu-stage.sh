#!/usr/bin/env bash
# Stage the Vulkan test binaries for a run on a GPU machine that has no Rust
# toolchain (the device tool: at most 64 MiB travel). Builds the tests and the
# two drivers here, strips them, and packs them into one .gpu/bins.tar.xz
# (a 64 MiB xz dictionary shares the code the binaries have in common).
# `.gpu` and `.gl` (the Vulkan loader and validation-layer packages; see
# docs/vulkan.md) are git-ignored and carried.
#
#   scripts/gpu-stage.sh [TEST_TARGET ...]   # default: every Vulkan test
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(vulkan_runner bindless_vulkan textures_vulkan sampling_vulkan print_vulkan ray_query_vulkan ray_query_instances_vulkan
           constant_ubo_vulkan byte_buffer_subword_vulkan argument_block_vulkan target_features_vulkan
           vulkan_corpus vulkan_random vulkan_regressions vulkan_fp8 artifact_corpus
           artifact_cli bindless_cli ray_cli print_cli constant_ubo_cli sampling_cli
           bool_buffers_vulkan bool_cli device_limits_vulkan deep_nesting specialize_vulkan float_atomics_vulkan precision_cli run_cli)
fi
rm -rf .gpu && mkdir -p .gpu/stage/bin
cargo build --workspace --bins
for b in xir-run xir-opt; do strip -o ".gpu/stage/bin/$b" "target/debug/$b"; done
# --all-targets: the very build `scripts/test` makes (profile and features),
# so staging after a test run rebuilds nothing.
cargo test --workspace --all-targets --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys, subprocess
want = set(sys.argv[1:])
for line in sys.stdin:
    m = json.loads(line)
    exe, t = m.get("executable"), m.get("target", {})
    if exe and "test" in t.get("kind", []) and t.get("name") in want:
        subprocess.run(["strip", "-o", ".gpu/stage/" + t["name"], exe], check=True)
        want.discard(t["name"])
for w in sorted(want):
    print("not built (no such test target):", w, file=sys.stderr)
' "${targets[@]}"
tar -C .gpu/stage -cf - . | xz -9 --lzma2=dict=64MiB -T1 > .gpu/bins.tar.xz
rm -rf .gpu/stage
du -sh .gpu/bins.tar.xz
cat <<'RUN'
On the device (carry [".gl", ".gpu"]):
  for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XIR_CORPUS_DIR=$PWD/tests/corpus
  mkdir -p /work target/debug && ln -sfn "$PWD" /work/main   # the binaries carry CARGO_MANIFEST_DIR
  tar -C .gpu -xJf .gpu/bins.tar.xz && cp .gpu/bin/* target/debug/
  for t in .gpu/*; do [ -f "$t" ] && [ -x "$t" ] || continue; echo "== $t"; "$t" --test-threads 1 2>&1 | tail -25; done > $OUT/gpu.log
RUN
