#!/usr/bin/env bash
# Session 35, call 3: flash2_mma's shipped kernel without the mask and N a multiple of B_r run as a kernel that
# checks nothing (kWhole, FlashAttention-2's Is_even_MN): the flash2 tests of the new build, compute-sanitizer, an
# A/B against 437b018's build (head), three rounds, and PyTorch's FLASH_ATTENTION before and after.
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
B=$S/f2w
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 300 $B/kernels_cuda_mma_tests --gtest_filter='*Flash2*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for tool in memcheck racecheck; do
  for n in 200 256; do
    timeout 200 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash2_mma --heads 3 --n $n 0 > $R/$tool-$n.txt 2>&1
    echo "$tool N=$n: $(tail -n 1 $R/$tool-$n.txt)"
  done
done
timeout 200 python3 scripts/sdpa_peers.py --d 64,128 --n 1024,4096,16384 --backends FLASH_ATTENTION --causal 0 --csv $R/fa2-1.csv > /dev/null 2>&1 || echo "peers 1 failed"
SETS="--kernel flash2_mma --dtype fp16,bf16 --d 64,128 --n 1024,4096,16384 --causal 0,1" \
  CALL_TIMEOUT=150 scripts/mma_ab.sh $R/ab.csv 3 head=$S/base/flash2_mma_bench whole=$S/f2w/flash2_mma_bench > $R/ab.report.txt 2>&1
timeout 200 python3 scripts/sdpa_peers.py --d 64,128 --n 1024,4096,16384 --backends FLASH_ATTENTION --causal 0 --csv $R/fa2-2.csv > /dev/null 2>&1 || echo "peers 2 failed"
cat $R/ab.report.txt
echo "FA2 (FLASH_ATTENTION), two passes:"; cat $R/fa2-1.csv $R/fa2-2.csv 2>/dev/null | grep -v "^backend" | cut -d, -f1-8
cd $OUT && tar czf results.tgz r && rm -rf r
