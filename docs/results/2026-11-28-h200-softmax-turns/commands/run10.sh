#!/usr/bin/env bash
# Session 37, call 10: is call 9's context effect the GPU's state or the process's? N = 4096 without the mask in one
# process, causal N = 1024 right after in another; then the table's flash3_wgmma shapes with the final build, each in
# a process of its own, and all in one process, alternating, twice.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for d in final; do [ -f $S/$d/flash2_mma_bench.xz ] && xz -d -f -T8 $S/$d/flash2_mma_bench.xz; chmod +x $S/$d/flash2_mma_bench; done
B=$S/final/flash2_mma_bench
for round in 1 2 3; do
  $B time --kernel flash3_wgmma --dtype fp16 --d 64 --n 4096 --causal 0 > /dev/null 2>&1
  $B time --kernel flash3_wgmma --dtype fp16 --d 64 --n 1024 --causal 1 --csv $R/t.csv > /dev/null 2>&1
  tail -n +2 $R/t.csv | sed "s/^/after-other-process.r$round,/" >> $R/context.csv
  $B time --kernel flash3_wgmma --dtype fp16 --d 64 --n 4096,1024 --causal 0,1 --csv $R/t.csv > /dev/null 2>&1
  grep ',64,1024,1024,1,' $R/t.csv | sed "s/^/same-process.r$round,/" >> $R/context.csv
done
cut -d, -f1,10-12 $R/context.csv
for round in 1 2; do
  for dtype in fp16 bf16; do for d in 64 128 256; do for causal in 0 1; do for n in 1024 4096 16384; do
    timeout 60 $B time --kernel flash3_wgmma --dtype $dtype --d $d --n $n --causal $causal --csv $R/t.csv > /dev/null 2>&1
    tail -n +2 $R/t.csv | sed "s/^/own-process.r$round,/" >> $R/table.csv
  done; done; done; done
  timeout 200 $B time --kernel flash3_wgmma --d 64,128,256 --n 1024,4096,16384 --csv $R/t.csv > /dev/null 2>&1
  tail -n +2 $R/t.csv | sed "s/^/one-process.r$round,/" >> $R/table.csv
done
python3 - $R/table.csv <<'PY'
import csv, sys, collections
v = collections.defaultdict(list)
for r in csv.reader(open(sys.argv[1])):
    v[(r[3], r[4], r[7], int(r[5]), r[0].split('.')[0])].append(float(r[10]))
print('dtype d causal N | own process (two rounds) | one process (two rounds)')
for k in sorted({k[:4] for k in v}, key=lambda k: (k[0], int(k[1]), k[2], k[3])):
    own, one = v[k + ('own-process',)], v[k + ('one-process',)]
    print(*k, '|', ' '.join(f'{x:.0f}' for x in own), '|', ' '.join(f'{x:.0f}' for x in one), f'({max(own)/max(one):.2f})')
PY
cd $OUT && tar czf results.tgz r && rm -rf r
