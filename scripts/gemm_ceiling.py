#!/usr/bin/env python3
"""The GPU's dense GEMM ceiling as PyTorch reaches it, timed in the same device run as our kernels.

Square problems M = N = K = size: torch.matmul on row-major A (M, K) and B (K, N) in bf16 and in fp16, and
torch._scaled_mm on float8_e4m3fn operands (A row-major (M, K); B column-major (K, N), as _scaled_mm requires: the
transpose of a row-major (N, K) tensor), per-tensor scales of 1 (float32 scalars on the GPU), output bf16,
once with use_fast_accum off (torch's default; op scaled_mm) and once on (op scaled_mm_fast_accum: the tensor
cores' own accumulation across k-steps, as an attention kernel's wgmma chain adds them). Operands from torch.randn (fp8: times 4, clamped to e4m3's ±448, then
converted), two input sets used in turn, 3 warm-ups, then the median of `reps` calls each timed by its own CUDA
events (sdpa_peers.py's median_ms). TFLOP/s = 2·M·N·K / time. An op the installed torch or GPU refuses (_scaled_mm
on an older torch or before sm_89) is reported on stderr and as NaN, and the others go on.

  python3 scripts/gemm_ceiling.py [--size 4096,8192] [--reps 20] [--csv FILE]
"""
import argparse

import torch

from sdpa_peers import ints, median_ms, timed, write_csv

E4M3_MAX = 448.0  # largest finite float8_e4m3fn
FP8_SPREAD = 4.0  # randn times this before the clamp: uses more of e4m3's exponent range than randn alone


def matmul_sets(dtype):
    def make(m, n, k):
        return [(torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype))
                for _ in range(2)]
    return make


def fp8(rows, cols):
    values = torch.randn(rows, cols, device="cuda", dtype=torch.float32) * FP8_SPREAD
    return values.clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)


def scaled_mm_sets(m, n, k):
    one = lambda: torch.ones((), device="cuda", dtype=torch.float32)
    return [(fp8(m, k), fp8(n, k).t(), one(), one()) for _ in range(2)]


def scaled_mm(a, b, scale_a, scale_b):
    return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)


def scaled_mm_fast_accum(a, b, scale_a, scale_b):
    return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16, use_fast_accum=True)


# (op, dtype name, make(m, n, k) -> input sets, call(*set))
CASES = [
    ("matmul", "bf16", matmul_sets(torch.bfloat16), torch.matmul),
    ("matmul", "fp16", matmul_sets(torch.float16), torch.matmul),
    ("scaled_mm", "fp8_e4m3", scaled_mm_sets, scaled_mm),
    ("scaled_mm_fast_accum", "fp8_e4m3", scaled_mm_sets, scaled_mm_fast_accum),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=ints, default=[8192])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--csv", default="")
    args = parser.parse_args()
    rows = []
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    for size in args.size:
        m = n = k = size
        for op, dtype_name, make, call in CASES:
            # The input sets live only inside the lambda's call: freed when it returns or raises.
            # AttributeError / TypeError: a torch without _scaled_mm or float8_e4m3fn, or with another signature.
            ms, tflops = timed(lambda: median_ms(call, make(m, n, k), args.reps), 2.0 * m * n * k,
                               f"{op} {dtype_name} {m}x{n}x{k}", (RuntimeError, AttributeError, TypeError))
            print(f"{op:9s} {dtype_name:8s} M=N=K={size:5d}: {ms:.3f} ms {tflops:.1f} TFLOP/s", flush=True)
            rows.append((op, dtype_name, m, n, k, ms, tflops))
            torch.cuda.empty_cache()
    if args.csv:
        write_csv(args.csv, "op,dtype,m,n,k,ms,tflops", "%s,%s,%d,%d,%d,%.5f,%.2f", rows)


if __name__ == "__main__":
    main()
