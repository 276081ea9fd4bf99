#!/usr/bin/env bash
# Session 35, call 10: source-level Nsight Compute (scripts/ncu_source.sh) of 57b00fc's kernels (1ccc041's bench)
# where they trail or stand at the target, and of cuDNN's kernel at the same shapes: fp8 d = 128 N = 4096 (last first),
# fp16 d = 128 N = 1024, fp16 d = 64 causal N = 1024 (diagonal first). For the next session's work on those gaps.
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
xz -d -f -T8 $S/fp8/flash2_mma_bench.xz 2>/dev/null; chmod +x $S/fp8/flash2_mma_bench
scripts/ncu_source.sh $S/fp8/flash2_mma_bench $R/ncu > $R/ncu.out 2>&1
cat $R/ncu.out
for f in $R/ncu/*.sass.csv; do python3 scripts/ncu_source_summary.py "$f" > "${f%.sass.csv}.summary.txt" 2>&1; done
gzip -9 $R/ncu/*.sass.csv
cd $OUT && tar czf results.tgz r && rm -rf r
