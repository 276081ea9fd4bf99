#!/usr/bin/env bash
# Session 37, call 12: the table's own command (flash2_mma and flash3_wgmma, every shape, one process) with the build
# that measures the SM clock right after each shape's timed launches (sm_mhz).
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for f in $S/final2/*.xz; do [ -f "$f" ] && xz -d -f -T8 "$f"; done
chmod +x $S/final2/*
timeout 200 $S/final2/flash2_mma_bench time --kernel flash2_mma,flash3_wgmma --d 64,128,256 --n 1024,4096,16384 \
  --csv $R/table-clock.csv > $R/table-clock.log 2>&1
echo "rc=$?"
cut -d, -f1,3-5,7,10,12 $R/table-clock.csv
cd $OUT && tar czf results.tgz r && rm -rf r
