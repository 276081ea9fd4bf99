#!/usr/bin/env bash
# Session 37, call 7: why the table (call 6) did not show the turns' gain at causal d = 64 N = 1024: the final build's
# default against the turns build's options 8 and a538b1e's default, alone and inside the table's own command.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for d in base turns final; do [ -f $S/$d/flash2_mma_bench.xz ] && xz -d -f -T8 $S/$d/flash2_mma_bench.xz; chmod +x $S/$d/flash2_mma_bench; done
for round in 1 2; do
  for b in base turns final; do
    o=0; [ $b = turns ] && o=8
    timeout 60 $S/$b/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024 --causal 1 --options $o --csv $R/t.csv > /dev/null 2>&1
    tail -n +2 $R/t.csv | sed "s/^/$b.alone.r$round,/" >> $R/ab.csv
  done
  for b in base final; do
    timeout 200 $S/$b/flash2_mma_bench time --kernel flash2_mma,flash3_wgmma --d 64,128,256 --n 1024,4096,16384 --csv $R/t.csv > /dev/null 2>&1
    grep 'flash3_wgmma,default,.*,64,1024,1024,1' $R/t.csv | sed "s/^/$b.table.r$round,/" >> $R/ab.csv
  done
done
cut -d, -f1,4,8-11 $R/ab.csv
cd $OUT && tar czf results.tgz r && rm -rf r
