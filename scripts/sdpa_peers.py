#!/usr/bin/env python3
"""PyTorch's SDPA backends on the shapes flash2_mma_bench times, for the side-by-side table.

One backend at a time (torch.nn.attention.sdpa_kernel), forward only, q/k/v of shape (B, H, N, d) from torch.randn,
two input sets used in turn, 3 warm-ups, then the median of `reps` calls each timed by its own CUDA events.
B·H = 1024 at N <= 2048, 256 at 4096, 64 at 8192, 16 at 16384 (H = 16), as in docs/peers.md.
TFLOP/s = 4·B·H·N²·d / time, halved for causal (the FlashAttention papers' convention; flash2_mma_bench uses the
same).

  python3 scripts/sdpa_peers.py [--n 1024,2048,...] [--d 64,128,256] [--dtype fp16,bf16] [--causal 0,1]
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


def median_ms(call, sets, reps):
    """3 warm-ups, then the median in ms of `reps` calls, each timed by its own pair of CUDA events; call r takes
    the input set sets[r % len(sets)] as its arguments. scripts/gemm_ceiling.py times with it too."""
    for w in range(3):
        call(*sets[w % len(sets)])
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for r, (start, stop) in enumerate(events):
        inputs = sets[r % len(sets)]
        start.record()
        call(*inputs)
        stop.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(stop) for start, stop in events)


def timed(run, flops, label, errors=(RuntimeError,)):
    """(ms, TFLOP/s) of run() -> ms; where it raises one of `errors` (a backend refuses the shape), NaNs, after the
    error's first line on stderr, so that the run goes on."""
    try:
        ms = run()
    except errors as error:
        print(f"{label}: {error}".splitlines()[0], file=sys.stderr)
        return float("nan"), float("nan")
    return ms, flops / (ms * 1e-3) / 1e12


def write_csv(path, header, row_format, rows):
    with open(path, "w") as out:
        out.write(header + "\n")
        for row in rows:
            out.write(row_format % row + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=ints, default=[1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--d", type=ints, default=[64, 128, 256])
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

                        def run():
                            with sdpa_kernel([backend]):
                                return median_ms(lambda q, k, v: F.scaled_dot_product_attention(
                                    q, k, v, is_causal=bool(causal)), sets, args.reps)
                        flops = 4.0 * bh * n * n * d * (0.5 if causal else 1.0)
                        ms, tflops = timed(run, flops, f"{backend_name} {dtype_name} d={d} N={n} causal={causal}")
                        print(f"{backend_name:16s} {dtype_name} d={d:3d} N={n:5d} B*H={bh:4d} causal={causal}: "
                              f"{ms:.3f} ms {tflops:.1f} TFLOP/s", flush=True)
                        rows.append((backend_name, dtype_name, d, n, bh, causal, ms, tflops))
                    del sets
                    torch.cuda.empty_cache()
    if args.csv:
        write_csv(args.csv, "kernel,dtype,d,n,batch_heads,causal,median_ms,tflops", "%s,%s,%d,%d,%d,%d,%.5f,%.2f", rows)


if __name__ == "__main__":
    main()
