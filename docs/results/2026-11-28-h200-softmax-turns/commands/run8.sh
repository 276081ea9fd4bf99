#!/usr/bin/env bash
# Session 37, call 8: which context takes the turns' gain away at causal d = 64 N = 1024 (call 7): the final build
# and a538b1e with the non-causal shape first (three consumers), with causal N = 4096 first, and with flash2_mma.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for d in base final; do [ -f $S/$d/flash2_mma_bench.xz ] && xz -d -f -T8 $S/$d/flash2_mma_bench.xz; chmod +x $S/$d/flash2_mma_bench; done
for round in 1 2; do
  for b in base final; do
    for ctx in "--kernel flash3_wgmma --d 64 --n 1024 --causal 0,1" "--kernel flash3_wgmma --d 64 --n 1024 --causal 1" \
               "--kernel flash2_mma,flash3_wgmma --d 64 --n 1024 --causal 1" "--kernel flash3_wgmma --d 64,128 --n 1024 --causal 1"; do
      timeout 100 $S/$b/flash2_mma_bench time $ctx --dtype fp16,bf16 --csv $R/t.csv > /dev/null 2>&1
      grep 'flash3_wgmma,default,.*,64,1024,1024,1' $R/t.csv | sed "s/^/$b.r$round [$ctx],/" >> $R/ab.csv
    done
  done
done
cut -d, -f1,4,11 $R/ab.csv
cd $OUT && tar czf results.tgz r && rm -rf r
