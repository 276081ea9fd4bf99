#!/usr/bin/env bash
# Session 34, call 2: flash2_mma's one-buffer path (options bit no-pipeline) with FlashAttention-2's schedule (V_j
# copied under S_ij, K_{j+1} under the softmax and P̃V; 64 KB of shared memory at d = 128 instead of 96) against the
# shipped two-buffer kernel (options 0), in the same binary, three passes, with PyTorch's FLASH_ATTENTION twice.
set -u
S=.device-s34
R=$OUT/r; mkdir -p $R
for f in $S/f2/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/f2/*
B=$S/f2
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_filter='*Flash2Mma*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash2_mma --heads 3 0,2 > $R/$tool.txt 2>&1
  echo "$tool: $(tail -n 1 $R/$tool.txt)"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt
timeout 200 python3 scripts/sdpa_peers.py --d 64,128 --n 1024,4096,16384 --backends FLASH_ATTENTION --csv $R/fa2-1.csv > /dev/null 2>&1
for r in 1 2 3; do
  timeout 150 $B/flash2_mma_bench time --kernel flash2_mma --dtype fp16,bf16 --d 64,128 --n 1024,4096,16384 --causal 0,1 --options 0,2 --csv $R/time$r.csv > $R/time$r.log 2>&1 || echo "time $r failed"
done
timeout 200 python3 scripts/sdpa_peers.py --d 64,128 --n 1024,4096,16384 --backends FLASH_ATTENTION --csv $R/fa2-2.csv > /dev/null 2>&1
python3 - <<'PY'
import csv, glob, os, collections
R = os.environ["OUT"] + "/r"
best = collections.defaultdict(list)
for f in sorted(glob.glob(R + "/time*.csv")):
    for row in csv.DictReader(open(f)):
        best[(row["options"], row["dtype"], row["d"], row["causal"], row["n"])].append(float(row["tflops"]))
fa2 = collections.defaultdict(list)
for f in sorted(glob.glob(R + "/fa2-*.csv")):
    for row in csv.DictReader(open(f)):
        fa2[(row["dtype"], row["d"], row["causal"], row["n"])].append(float(row["tflops"]))
print("dtype d causal N | default (3) | fa2-schedule (3) | ratio best | FA2 (2) | best/FA2 default, fa2-schedule")
for key in sorted({k[1:] for k in best}, key=lambda k: (k[0], int(k[1]), k[2], int(k[3]))):
    a, b = best[("default", *key)], best[("no-pipeline", *key)]
    f = fa2.get(key, [float("nan")])
    print(" ".join(key), "|", " ".join(f"{x:.0f}" for x in a), "|", " ".join(f"{x:.0f}" for x in b), "|",
          f"{max(b)/max(a):.3f}", "|", " ".join(f"{x:.0f}" for x in f), "|", f"{max(a)/max(f):.2f} {max(b)/max(f):.2f}")
PY
cd $OUT && tar czf results.tgz r && rm -rf r
