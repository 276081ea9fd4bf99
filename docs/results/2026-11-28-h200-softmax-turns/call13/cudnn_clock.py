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
