#!/usr/bin/env bash
# Session 37, call 3: the two consumers taking turns for the softmax inside the overlapped loop (turns: the
# other-schedule bit, options 8, whose ping-pong now hands over the softmax instead of the GEMM issue) against
# a538b1e (base, options 0 and 8), three rounds; the sanitizer on the turns kernels.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for d in base turns; do [ -f $S/$d/flash2_mma_bench.xz ] && xz -d -f -T8 $S/$d/flash2_mma_bench.xz; chmod +x $S/$d/flash2_mma_bench; done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/turns/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n 200 8 > $R/$tool-turns.txt 2>&1
  echo "$tool: $(tail -n 2 $R/$tool-turns.txt | tr '\n' ' ')"
done
timeout 100 $S/turns/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16,bf16 --d 64,128,256 --n 200,1000 --causal 0,1 --options 8 --reps 2 > $R/turns-check.log 2>&1
echo "check rc=$?"; grep -i -E 'fail|error' $R/turns-check.log | head -5
SETS='--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,2048,4096 --causal 1'
for round in 1 2 3; do
  for b in base turns; do
    for o in 0 8; do
      [ $b.$o = turns.0 ] && continue
      timeout 150 $S/$b/flash2_mma_bench time $SETS --options $o --csv $R/t.csv > /dev/null 2>&1 || echo "FAILED $b $o"
      tail -n +2 $R/t.csv | sed "s/^/$b.o$o.r$round,/" >> $R/ab.csv
    done
  done
  timeout 150 $S/turns/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096 --causal 0 --options 0 --csv $R/t.csv > /dev/null 2>&1
  tail -n +2 $R/t.csv | sed "s/^/turns.o0.r$round,/" >> $R/ab.csv
  timeout 150 $S/base/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096 --causal 0 --options 0 --csv $R/t.csv > /dev/null 2>&1
  tail -n +2 $R/t.csv | sed "s/^/base.o0.r$round,/" >> $R/ab.csv
done
python3 - $R/ab.csv <<'PY'
import csv, sys, collections
best = collections.defaultdict(list)
for row in csv.reader(open(sys.argv[1])):
    label, kernel, options, dtype, d, n, bh, causal = row[:8]
    build = label.rsplit('.', 1)[0]
    best[(dtype, d, n, causal, build)].append(float(row[-2]))
keys = sorted({k[:4] for k in best}, key=lambda k: (k[1], k[3], k[0], int(k[2])))
print('dtype d N causal | base.o0 | base.o8 | turns.o8 (best/base.o0)')
for k in keys:
    b0 = best.get(k + ('base.o0',), [0]); b8 = best.get(k + ('base.o8',), [0]); t8 = best.get(k + ('turns.o8',), [0])
    t0 = best.get(k + ('turns.o0',), [])
    fmt = lambda v: ' '.join(f'{x:.0f}' for x in v)
    line = f'{" ".join(k)} | {fmt(b0)} | {fmt(b8)} | {fmt(t8)} ({max(t8)/max(b0):.2f})'
    if t0: line += f' | turns.o0 {fmt(t0)} ({max(t0)/max(b0):.2f})'
    print(line)
PY
cd $OUT && tar czf results.tgz r && rm -rf r
