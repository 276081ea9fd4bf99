#!/usr/bin/env bash
# Session 37, call 5: causal d = 64 with two consumers (N < 2048) taking turns for the softmax: turns (call 3's
# build, options 8: the turns with the forward walk), vb (the default: turns with the diagonal first), vc (vb with
# every 8th 2^x of that kernel on the FMA pipe) against a538b1e (base), five rounds; the sanitizer on vb and vc.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for d in base turns vb vc; do [ -f $S/$d/flash2_mma_bench.xz ] && xz -d -f -T8 $S/$d/flash2_mma_bench.xz; chmod +x $S/$d/flash2_mma_bench; done
for b in vb vc; do
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool $S/$b/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n 200 0,8 > $R/$tool-$b.txt 2>&1
    echo "$b $tool: $(tail -n 2 $R/$tool-$b.txt | tr '\n' ' ')"
  done
done
run() {  # label binary args...
  local label=$1 bin=$2; shift 2
  timeout 150 $bin time "$@" --csv $R/t.csv > $R/t.log 2>&1 || { echo "FAILED $label $*"; tail -3 $R/t.log; }
  grep -i fail $R/t.log | head -3
  tail -n +2 $R/t.csv | sed "s/^/$label,/" >> $R/ab.csv; rm -f $R/t.csv
}
D64='--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024,1536 --causal 1'
for round in 1 2 3 4 5; do
  for b in base turns vb vc; do
    o=0; [ $b = turns ] && o=8
    run $b.r$round $S/$b/flash2_mma_bench $D64 --options $o
  done
done
python3 - $R/ab.csv > $R/ab.report.txt <<'PY'
import csv, sys, collections
runs = collections.defaultdict(list)
for row in csv.reader(open(sys.argv[1])):
    build = row[0].split('.')[0]
    kernel, options, dtype, d, n, bh, causal = row[1:8]
    runs[(kernel, dtype, d, causal, int(n), build)].append(float(row[-2]))
shapes = sorted({k[:5] for k in runs})
builds = ('turns', 'vb', 'vc')
print('kernel dtype d causal N | base | ' + ' | '.join(f'{b} (best/base)' for b in builds))
for k in shapes:
    base = runs.get(k + ('base',), [])
    cells = [' '.join(f'{x:.0f}' for x in base)]
    for b in builds:
        v = runs.get(k + (b,), [])
        cells.append(' '.join(f'{x:.0f}' for x in v) + (f' ({max(v) / max(base):.2f})' if v and base else ''))
    print(' '.join(map(str, k)), '|', ' | '.join(cells))
PY
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
