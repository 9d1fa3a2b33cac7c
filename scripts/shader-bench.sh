#!/bin/sh
# Compile speed on the WGSL corpus, in process, naga's path beside ours
# (pipelines/benches/shader_compile.rs), and the per-kernel table of medians
# and ratios for BENCHMARKS.md. "naga": WGSL -> SPIR-V by naga alone.
# "ours": WGSL -> naga IR -> AST -> XIR -> `spirv` pipeline -> SPIR-V,
# SPIRV-Tools validation included, -O0.
set -e
cd "$(dirname "$0")/.."
cargo bench --workspace --bench shader_compile -- "$@" >/dev/null
python3 - <<'PY'
import glob, json, os
rows = []
for d in sorted(glob.glob("target/criterion/wgsl_to_spirv_*")):
    name = os.path.basename(d)[len("wgsl_to_spirv_"):]
    med = {}
    for who in ("naga", "ours"):
        f = os.path.join(d, who, "new", "estimates.json")
        if os.path.exists(f):
            med[who] = json.load(open(f))["median"]["point_estimate"] / 1000.0
    if len(med) == 2:
        rows.append((name, med["naga"], med["ours"]))
print("| kernel | naga us | ours us | ours / naga |\n|---|---|---|---|")
for n, a, b in rows:
    print(f"| {n} | {a:.1f} | {b:.1f} | {b / a:.1f}x |")
r = sorted(b / a for _, a, b in rows)
if r:
    print(f"\nmedian ratio {r[len(r) // 2]:.1f}x over {len(rows)} kernels")
PY
