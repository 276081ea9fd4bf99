#!/usr/bin/env bash
# Session 37, call 13: the SM clock behind cuDNN's figure at causal d = 64 N = 1024 (fp16, B·H = 1024), measured as
# ours is: right after the timed calls, by a kernel that spins a known number of SM cycles (torch.cuda._sleep) timed
# by CUDA events; cuDNN alone in its process, and after d = 64 N = 4096 without the mask in the same process; ours
# alone beside it (flash2_mma_bench's sm_mhz).
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for f in $S/final2/*.xz; do [ -f "$f" ] && xz -d -f -T8 "$f"; done
chmod +x $S/final2/*
cat > $R/cudnn_clock.py <<'PY'
import statistics, sys, torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
def sm_mhz(cycles=2_000_000):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(); torch.cuda._sleep(cycles); stop.record(); torch.cuda.synchronize()
    return cycles / (start.elapsed_time(stop) * 1e3)
def timed(b_h, n, d, causal, reps=20):
    sets = [[torch.randn(b_h // 16, 16, n, d, device="cuda", dtype=torch.float16) for _ in range(3)] for _ in range(2)]
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        for w in range(3): F.scaled_dot_product_attention(*sets[w % 2], is_causal=causal)
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for r, (a, b) in enumerate(ev):
            a.record(); F.scaled_dot_product_attention(*sets[r % 2], is_causal=causal); b.record()
        mhz = sm_mhz()
    ms = statistics.median(a.elapsed_time(b) for a, b in ev)
    flops = 4 * b_h * n * n * d * (0.5 if causal else 1)
    print(f"cudnn {' '.join(sys.argv[1:])} N={n} causal={int(causal)}: {flops / ms / 1e9:.1f} TFLOP/s, SM {mhz:.0f} MHz")
if sys.argv[1] == "after4096": timed(256, 4096, 64, False)
timed(1024, 1024, 64, True)
PY
for round in 1 2; do
  python3 $R/cudnn_clock.py alone
  python3 $R/cudnn_clock.py after4096
  timeout 60 $S/final2/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16 --d 64 --n 1024 --causal 1 --csv $R/t.csv > /dev/null 2>&1
  tail -n +2 $R/t.csv | awk -F, '{print "ours alone N=" $5 " causal=" $7 ": " $10 " TFLOP/s, SM " $12 " MHz"}'
done 2>&1 | tee $R/clock.txt
cd $OUT && tar czf results.tgz r && rm -rf r
