#!/bin/sh
# Compile speed on the WGSL corpus, in process, naga's path beside ours
# (pipelines/benches/shader_compile.rs), and the per-kernel table of medians
# for BENCHMARKS.md. "naga": WGSL -> SPIR-V by naga alone. "ours": WGSL ->
# naga IR -> AST -> XIR -> `spirv` pipeline -> SPIR-V, SPIRV-Tools
# validation included, -O0. "SPIRV-Tools": its validation of the emitted
# module (once per compilation), measured alone; "own" = ours minus it;
# "naga parse": naga's parse and validation, the first part of ours.
set -e
cd "$(dirname "$0")/.."
cargo bench --workspace --bench shader_compile -- "$@" >/dev/null
python3 - <<'PY'
import glob, json, os
target = os.environ.get("CARGO_TARGET_DIR", "target")
rows = []
for d in sorted(glob.glob(os.path.join(target, "criterion", "wgsl_to_spirv_*"))):
    name = os.path.basename(d)[len("wgsl_to_spirv_"):]
    med = {}
    for who in ("naga", "ours", "naga_parse", "spirv_tools"):
        f = os.path.join(d, who, "new", "estimates.json")
        if os.path.exists(f):
            med[who] = json.load(open(f))["median"]["point_estimate"] / 1000.0
    if len(med) == 4:
        rows.append((name, med))
print("| kernel | naga us | ours us | SPIRV-Tools us (share) | own us | own / naga | naga parse us | own - naga parse, / naga |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
ratios, rest = [], []
for n, m in rows:
    own = m["ours"] - m["spirv_tools"]
    beyond = own - m["naga_parse"]
    ratios.append(own / m["naga"])
    rest.append(beyond / m["naga"])
    print(f"| {n} | {m['naga']:.1f} | {m['ours']:.1f} | {m['spirv_tools']:.1f} ({100 * m['spirv_tools'] / m['ours']:.0f}%) "
          f"| {own:.1f} | {own / m['naga']:.2f}x | {m['naga_parse']:.1f} | {beyond / m['naga']:.2f}x |")
if rows:
    med = lambda xs: sorted(xs)[len(xs) // 2]
    share = med([m["spirv_tools"] / m["ours"] for _, m in rows])
    print(f"\nmedian over {len(rows)} kernels: own / naga {med(ratios):.2f}x, "
          f"(own - naga parse) / naga {med(rest):.2f}x, SPIRV-Tools share of ours {100 * share:.0f}%")
PY
