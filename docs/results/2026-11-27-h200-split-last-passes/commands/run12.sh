#!/usr/bin/env bash
# Session 31, call 12: flash2_mma_bench's sanitize with --n (this commit's binary): flash3_fp8 at B·H = 17, N = 2000,
# whose last passes' work tiles are cut at d = 128 without the mask, checked, then under memcheck and racecheck.
set -u
S=.device-s31
xz -d -f -T8 $S/bench/flash2_mma_bench.xz; chmod +x $S/bench/flash2_mma_bench
timeout 60 $S/bench/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 17 --n 2000 0 > $OUT/sanitize-plain.log 2>&1
echo "plain rc=$?"; tail -5 $OUT/sanitize-plain.log
for tool in memcheck racecheck; do
  timeout 130 compute-sanitizer --tool $tool $S/bench/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 17 --n 2000 0 \
    > $OUT/sanitize-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitize-$tool.log | tail -1)"; grep -E "^ok|FAIL|failure" $OUT/sanitize-$tool.log | tail -5
done
