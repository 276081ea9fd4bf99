#!/usr/bin/env python3
"""PyTorch's fp32 attention on HW4-shaped inputs: the peers of `flashviz hw4 --backend cuda`.

One head per batch (q, k, v of shape (B, 1, N, d), float32, uniform in [-3, 3]), forward, non-causal,
torch.nn.functional.scaled_dot_product_attention restricted to one backend at a time: EFFICIENT (fp32 via
error-compensated TF32 on the tensor cores) and MATH (cuBLAS SGEMM + a materialized softmax; skipped where
its B·N² scores would not fit). CUDA events, 2 warm-ups, the median of 3-15 calls (about a second per
shape). The same shapes as kernels/cuda/hw4/hw4_bench.cpp's defaults; TFLOP/s = 4·B·N²·d / time.

    python3 scripts/hw4_torch_peers.py [--shapes B:N:d,...] [--csv FILE]
"""
import argparse
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

DEFAULT_SHAPES = "13000:128:32,3400:256:64,100:4096:64,256:4096:64,256:4096:32,26:32768:64,52:32768:32"


def time_ms(fn):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    first = start.elapsed_time(stop)
    reps = max(3, min(15, int(1000.0 / max(first, 1e-3))))
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), reps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=DEFAULT_SHAPES)
    parser.add_argument("--csv")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # MATH stays true fp32 (cuBLAS SGEMM)
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    print(f"{'backend':<10} {'B':>6} {'N':>6} {'d':>3} {'ms':>10} {'TFLOP/s':>8}")
    rows = []
    for spec in args.shapes.split(","):
        b, n, d = (int(x) for x in spec.split(":"))
        gen = torch.Generator(device="cuda").manual_seed(1)
        q, k, v = (torch.empty((b, 1, n, d), device="cuda", dtype=torch.float32).uniform_(-3, 3, generator=gen)
                   for _ in range(3))
        flops = 4.0 * b * n * n * d
        for name, backend in (("EFFICIENT", SDPBackend.EFFICIENT_ATTENTION), ("MATH", SDPBackend.MATH)):
            free, _ = torch.cuda.mem_get_info()
            if backend == SDPBackend.MATH and 3 * 4.0 * b * n * n > 0.6 * free:
                print(f"{name:<10} {b:>6} {n:>6} {d:>3}  skipped: {4.0 * b * n * n / 2**30:.0f} GiB of scores")
                rows.append((name, b, n, d, "", ""))
                continue
            with sdpa_kernel(backend):
                ms, reps = time_ms(lambda: F.scaled_dot_product_attention(q, k, v))
            print(f"{name:<10} {b:>6} {n:>6} {d:>3} {ms:>10.3f} {flops / ms * 1e-9:>8.2f}", flush=True)
            rows.append((name, b, n, d, f"{ms:.4f}", f"{flops / ms * 1e-9:.3f}"))
        del q, k, v
        torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("backend,B,N,d,ms,tflops\n")
            for r in rows:
                f.write(",".join(str(x) for x in r) + "\n")


if __name__ == "__main__":
    main()
