#!/usr/bin/env bash
# Session 37, call 4: the consumers' turns around the softmax (turns: the whole softmax, call 3's build; turns2: the
# exponentials and row sums only, the maxima outside) against a538b1e (base), wherever the turns would go: 16-bit
# d = 64 causal with two consumers (N < 2048; options 8 in the turns builds), d = 256 without the mask and fp8
# d = 256 (ping-pong by default there, so options 0 and 1 take the turns in those builds).
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for d in base turns turns2; do [ -f $S/$d/flash2_mma_bench.xz ] && xz -d -f -T8 $S/$d/flash2_mma_bench.xz; chmod +x $S/$d/flash2_mma_bench; done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/turns2/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n 200 0,8 > $R/$tool-turns2.txt 2>&1
  echo "$tool: $(tail -n 2 $R/$tool-turns2.txt | tr '\n' ' ')"
  timeout 120 compute-sanitizer --tool $tool $S/turns2/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 17 --n 300 0 > $R/$tool-turns2-fp8.txt 2>&1
  echo "$tool fp8: $(tail -n 2 $R/$tool-turns2-fp8.txt | tr '\n' ' ')"
done
run() {  # label binary args...
  local label=$1 bin=$2; shift 2
  timeout 150 $bin time "$@" --csv $R/t.csv > $R/t.log 2>&1 || { echo "FAILED $label $*"; tail -3 $R/t.log; }
  grep -i fail $R/t.log | head -3
  tail -n +2 $R/t.csv | sed "s/^/$label,/" >> $R/ab.csv; rm -f $R/t.csv
}
D64='--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024,1536 --causal 1'
D256='--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096,16384 --causal 0'
FP8='--kernel flash3_fp8 --dtype bf16 --d 256 --n 1024,4096,16384 --causal 0,1'
for round in 1 2 3 4 5; do
  for b in base turns turns2; do
    o=8; [ $b = base ] && o=0
    run $b.r$round $S/$b/flash2_mma_bench $D64 --options $o
    [ $round -le 3 ] && run $b.r$round $S/$b/flash2_mma_bench $D256 --options 0
    [ $round -le 3 ] && run $b.r$round $S/$b/flash2_mma_bench $FP8 --options 1
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
print('kernel dtype d causal N | base | turns (best/base) | turns2 (best/base)')
for k in shapes:
    base = runs.get(k + ('base',), [])
    cells = [' '.join(f'{x:.0f}' for x in base)]
    for b in ('turns', 'turns2'):
        v = runs.get(k + (b,), [])
        cells.append(' '.join(f'{x:.0f}' for x in v) + (f' ({max(v) / max(base):.2f})' if v and base else ''))
    print(' '.join(map(str, k)), '|', ' | '.join(cells))
PY
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
