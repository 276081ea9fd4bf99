#!/usr/bin/env bash
# Session 37, call 9: call 8 once more with the table's preceding shapes (d = 64, N = 1024, 4096 and 16384 without the
# mask before the causal ones), the SM clock sampled every 100 ms beside it.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for d in base final; do [ -f $S/$d/flash2_mma_bench.xz ] && xz -d -f -T8 $S/$d/flash2_mma_bench.xz; chmod +x $S/$d/flash2_mma_bench; done
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 100 > $R/clocks.csv 2>&1 &
smi=$!
for round in 1 2; do
  for b in base final; do
    for ctx in "--d 64 --n 1024,4096,16384 --causal 0,1" "--d 64 --n 1024,16384 --causal 0,1" "--d 64 --n 1024,4096 --causal 0,1"; do
      echo "$(date +%T.%N) $b $ctx" >> $R/marks.txt
      timeout 100 $S/$b/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16 $ctx --csv $R/t.csv > /dev/null 2>&1
      grep 'flash3_wgmma,default,.*,64,1024,1024,1' $R/t.csv | sed "s/^/$b.r$round,$ctx,/" >> $R/ab.csv
    done
  done
done
kill $smi
awk -F, '{print $1, $2, $(NF-1)}' $R/ab.csv
cd $OUT && tar czf results.tgz r && rm -rf r
