#!/bin/bash
# Side-by-side scaling runs of built legalize bench binaries (BENCHMARKS.md,
# legalization): each binary at 10^3 and then 10^6, in the order given and
# then reversed (ABBA, so drift of the machine shows as a difference
# between the two rounds), pinned to one core, with mimalloc's freed memory
# kept committed. One file per run under $OUT (the device tool's output
# folder; /tmp/ab elsewhere).
#
#   cargo bench -p xir-passes --bench legalize --no-run --features mimalloc
#   cp target/release/deps/legalize-<hash> .bench/legalize-new   # and an old one
#   passes/benches/ab.sh '<criterion filter>' legalize-old legalize-new
#
# ROUNDS=1 runs the order once; more rounds alternate it (ABBAAB...), so
# that a slow stretch of the host falls on both binaries; SMALL_REPS=k runs the 10^3 size k times
# per visit (it is cheap, and its speed moves most with the host's load);
# MS sets XIR_BENCH_MEASURE_S (default 0.5); CPU the core (default 4).
# Binaries are looked up in .bench/.
set -eu
F="$1"; shift
OUT="${OUT:-/tmp/ab}"; mkdir -p "$OUT"
export XIR_PIPELINE_DIR=pipelines MIMALLOC_PURGE_DELAY=-1 XIR_BENCH_MEASURE_S="${MS:-0.5}"
lscpu | grep -E "Model name|L2|L3" > "$OUT/cpu.txt" || true
k=0
for round in $(seq 1 "${ROUNDS:-2}"); do
  if [ $((round % 2)) = 1 ]; then order="$*"; else order=$(echo "$*" | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for b in $order; do
    for n in $(yes 1000 | head -n "${SMALL_REPS:-1}") 1000000; do
      k=$((k + 1))
      XIR_BENCH_SIZES=$n taskset -c "${CPU:-4}" ".bench/$b" --bench "$F" > "$OUT/$k-$b-$n.txt" 2>&1
    done
  done
done
