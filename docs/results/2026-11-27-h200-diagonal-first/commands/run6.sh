#!/usr/bin/env bash
# Session 35, call 6: compute-sanitizer memcheck and racecheck on the binaries of call 5 (57b00fc): flash2_mma's
# default and ablation words at N = 200 and 256 (its whole-tiles form), flash3_wgmma and flash3_fp8 at B·H = 134,
# N = 200 and 256, and fp8's cut shape (B·H = 17, N = 2000). One archive back.
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
for f in $S/final/*.xz; do [ -e "$f" ] && xz -d -f -T8 "$f"; done
chmod +x $S/final/*
B=$S/final
for tool in memcheck racecheck; do
  for n in 200 256; do
    timeout 120 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash2_mma --heads 3 --n $n 0,2,64,128 > $R/$tool-flash2-$n.txt 2>&1
    timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n $n 0,16 > $R/$tool-flash3-$n.txt 2>&1
    timeout 100 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 134 --n $n 0 > $R/$tool-fp8-$n.txt 2>&1
  done
  timeout 100 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 17 --n 2000 0 > $R/$tool-fp8-cut.txt 2>&1
  for f in $R/$tool-*.txt; do echo "$(basename $f): $(tail -n 1 $f)"; done
done
cd $OUT && tar czf results.tgz r && rm -rf r
