#!/usr/bin/env bash
# Session 32, call 7: the SASS of call 6's binary ("qreg16", Q_i in registers in 16-bit flash3_wgmma), to find why its
# serial-softmax kernels at d = 128 are wrong while the overlapped ones pass: every flash3 d = 128 16-bit kernel.
set -u
S=.device-s32
xz -d -f -T8 $S/qreg16/flash2_mma_bench.xz; chmod +x $S/qreg16/flash2_mma_bench
cuobjdump -sass $S/qreg16/flash2_mma_bench > /tmp/q.sass
python3 - <<'PY' > $OUT/d128-16bit.sass
import re
keep = False
for line in open('/tmp/q.sass'):
    m = re.match(r'\s+Function : (\S+)', line)
    if m: keep = ('Flash3Wgmma' in m.group(1) and 'Li128E' in m.group(1) and 'fp8' not in m.group(1))
    if keep: print(line, end='')
PY
gzip -f $OUT/d128-16bit.sass; ls -la $OUT
