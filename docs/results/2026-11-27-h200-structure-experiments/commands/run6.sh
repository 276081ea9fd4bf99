#!/usr/bin/env bash
# Session 30, call 6: 16-bit d = 256 on the persistent grid with O staged in Q_i's buffer (the next work tile's Q
# loaded after the copy-out, its K_0 before) against head: every d = 256 shape on both grids, three rounds.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 60 $S/qstage/flash2_mma_bench sanitize --kernel flash3_wgmma 0,1 > $OUT/smoke.log 2>&1; echo "smoke rc=$?"; tail -2 $OUT/smoke.log
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096,16384 --causal 0,1 --options 0,1" \
  timeout 300 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench qstage=$S/qstage/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -28 $OUT/ab.report.txt
