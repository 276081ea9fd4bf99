#!/usr/bin/env python3
"""PyTorch's SDPA backends on the shapes flash2_mma_bench times, for the side-by-side table.

One backend at a time (torch.nn.attention.sdpa_kernel), forward only, q/k/v of shape (B, H, N, d) from torch.randn,
two input sets used in turn, 3 warm-ups, then the median of `reps` calls each timed by its own CUDA events.
B·H = 1024 at N <= 2048, 256 at 4096, 64 at 8192, 16 at 16384 (H = 16), as in docs/peers.md.
TFLOP/s = 4·B·H·N²·d / time, halved for causal (the FlashAttention papers' convention; flash2_mma_bench uses the
same).

  python3 scripts/sdpa_peers.py [--n 1024,2048,...] [--d 64,128] [--dtype fp16,bf16] [--causal 0,1]
                                [--backends FLASH_ATTENTION,CUDNN_ATTENTION] [--reps 20] [--csv FILE]
"""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def batch_heads_for(n):
    return 1024 if n <= 2048 else 256 if n <= 4096 else 64 if n <= 8192 else 16


def ints(text):
    return [int(x) for x in text.split(",") if x]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=ints, default=[1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--d", type=ints, default=[64, 128])
    parser.add_argument("--dtype", default="fp16,bf16")
    parser.add_argument("--causal", type=ints, default=[0, 1])
    parser.add_argument("--backends", default="FLASH_ATTENTION,CUDNN_ATTENTION")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--csv", default="")
    args = parser.parse_args()
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    rows = []
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    for dtype_name in args.dtype.split(","):
        dtype = dtypes[dtype_name]
        for d in args.d:
            for causal in args.causal:
                for n in args.n:
                    bh = batch_heads_for(n)
                    sets = [[torch.randn(bh // 16, 16, n, d, device="cuda", dtype=dtype) for _ in range(3)]
                            for _ in range(2)]
                    for backend_name in args.backends.split(","):
                        backend = getattr(SDPBackend, backend_name)
                        try:
                            with sdpa_kernel([backend]):
                                for w in range(3):
                                    q, k, v = sets[w % 2]
                                    F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
                                events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                                          for _ in range(args.reps)]
                                for r, (start, stop) in enumerate(events):
                                    q, k, v = sets[r % 2]
                                    start.record()
                                    F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
                                    stop.record()
                                torch.cuda.synchronize()
                            ms = statistics.median(start.elapsed_time(stop) for start, stop in events)
                            flops = 4.0 * bh * n * n * d * (0.5 if causal else 1.0)
                            tflops = flops / (ms * 1e-3) / 1e12
                        except RuntimeError as error:  # backend refuses the shape: say so, keep going
                            ms, tflops = float("nan"), float("nan")
                            print(f"{backend_name} {dtype_name} d={d} N={n} causal={causal}: {error}".splitlines()[0],
                                  file=sys.stderr)
                        print(f"{backend_name:16s} {dtype_name} d={d:3d} N={n:5d} B*H={bh:4d} causal={causal}: "
                              f"{ms:.3f} ms {tflops:.1f} TFLOP/s", flush=True)
                        rows.append((backend_name, dtype_name, d, n, bh, causal, ms, tflops))
                    del sets
                    torch.cuda.empty_cache()
    if args.csv:
        with open(args.csv, "w") as out:
            out.write("kernel,dtype,d,n,batch_heads,causal,median_ms,tflops\n")
            for row in rows:
                out.write("%s,%s,%d,%d,%d,%d,%.5f,%.2f\n" % row)


if __name__ == "__main__":
    main()
