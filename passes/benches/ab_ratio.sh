#!/bin/bash
# Before/after of the paired-ratio bench (`legalize_ratio`) run one binary
# at a time, alternating A B B A A B ... (BENCHMARKS.md, run 13): a slow
# stretch of the host falls on both binaries, and neither shares the L3 or
# the memory bandwidth with the other while it runs. Each visit runs every
# row with XIR_RATIO_ROUNDS rounds (default 3) and writes its table to
# $OUT/<k>-<binary>.md; `ab_ratio_table.py $OUT A B` combines the visits.
#
#   cargo bench -p xir-passes --bench legalize_ratio --no-run --features mimalloc
#   cp target/release/deps/legalize_ratio-<hash> .bench/legalize_ratio-new
#   VISITS=6 passes/benches/ab_ratio.sh legalize_ratio-old legalize_ratio-new
#
# VISITS is the number of visits per binary; CPU the core (default 4).
# Binaries are looked up in .bench/.
set -eu
A="$1"; B="$2"
OUT="${OUT:-/tmp/ab}"; mkdir -p "$OUT"
export XIR_PIPELINE_DIR=pipelines MIMALLOC_PURGE_DELAY=-1 XIR_RATIO_ROUNDS="${XIR_RATIO_ROUNDS:-3}"
lscpu | grep -E "Model name|L2|L3" > "$OUT/cpu.txt" || true
k=0
for v in $(seq 1 "${VISITS:-4}"); do
  if [ $((v % 2)) = 1 ]; then order="$A $B"; else order="$B $A"; fi
  for b in $order; do
    k=$((k + 1))
    start=$(date +%s)
    taskset -c "${CPU:-4}" ".bench/$b" --bench > "$OUT/$k-$b.md" 2> "$OUT/$k-$b.err"
    echo "visit $k $b $(( $(date +%s) - start )) s" >> "$OUT/visits.txt"
  done
done
