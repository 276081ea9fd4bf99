#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention, one backend at a time, on `flashviz bench`'s shapes.

Runs on the GPU machine, in the same device run as `flashviz bench`, and writes the same CSV columns
(kernel, dtype, B, H, N, d, causal, ms_median, ms_min, tflops, max_abs_error, hbm_bytes, gpu, status), so both
land on one plot. Each backend is restricted with torch.nn.attention.sdpa_kernel; a backend that cannot run a
shape gets a row whose status says "not applicable: <PyTorch's reason>".

Protocol, the same as flashviz bench's: inputs uniform in [-1, 1] (fresh per shape), B·H = min(1024, 2^32/N²)
with H = 16 unless --batch is given, checked against a float64 reference on sampled rows before timing, then
--warmup untimed calls and --repeats calls timed with CUDA events, each after writing 256 MB to flush the L2;
median and minimum reported. TFLOP/s = 4·B·H·N²·d / time (halved for causal).

--pass backward times the backward pass instead, as `flashviz bench --pass backward` does ours: dO uniform in
[-1, 1], the forward run once outside the timed region, then each timed call is
torch.autograd.grad(out, (q, k, v), dO, retain_graph=True) (what out.backward(dO) runs). The gradients of head
(0, 0) are checked against float64 autograd of standard attention by max |error| / max |reference| per tensor (the
max_abs_error column holds the worst of dQ, dK, dV) at kernels/cuda/backward/backward_harness.h's tolerances;
TFLOP/s = 10·B·H·N²·d / time (2.5 forwards, halved for causal); rows are named torch_flash_bwd etc., so that
one CSV can hold both passes and `flashviz bench --replot` draws them as separate curves.

    python3 scripts/peers.py --n 512,1024,2048 --d 64 --dtype fp16 --csv peers.csv
    python3 scripts/peers.py --pass backward --n 1024,4096 --d 128 --dtype fp16 --causal --csv peers_bwd.csv
"""
import argparse
import math
import statistics
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "torch_flash": SDPBackend.FLASH_ATTENTION,
    "torch_cudnn": SDPBackend.CUDNN_ATTENTION,
    "torch_efficient": SDPBackend.EFFICIENT_ATTENTION,
    "torch_math": SDPBackend.MATH,
}
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
TOLERANCE = {"fp32": 1e-4, "fp16": 4e-3, "bf16": 1.6e-2}  # kernels/cuda/harness.h's; fp32 EFFICIENT is 3xTF32
# The backward pass's, relative to max |reference| (kernels/cuda/backward/backward_harness.h: 4 units of rounding).
BACKWARD_TOLERANCE = {"fp32": 1e-4, "fp16": 4 / 2048, "bf16": 4 / 256}
COLUMNS = ["kernel", "dtype", "B", "H", "N", "d", "causal", "ms_median", "ms_min", "tflops", "max_abs_error",
           "hbm_bytes", "gpu", "status"]


def auto_heads(n):
    return max(1, min(1024, int(2**32 // (n * n))))


def csv_field(value):
    text = "" if value is None else str(value)
    if any(c in text for c in ',"\n'):
        text = '"' + text.replace('"', '""') + '"'
    return text


def reference_rows(q, k, v, rows, scale, causal):
    """float64 O for the given query rows of head (0, 0)."""
    q64, k64, v64 = q[0, 0, rows].double(), k[0, 0].double(), v[0, 0].double()
    s = scale * (q64 @ k64.T)
    if causal:
        cols = torch.arange(k64.shape[0], device=s.device)
        s = s.masked_fill(cols[None, :] > torch.tensor(rows, device=s.device)[:, None], float("-inf"))
    return torch.softmax(s, dim=-1) @ v64


def reference_gradients(q, k, v, dout, scale, causal):
    """float64 autograd of standard attention for head (0, 0): (dQ, dK, dV)."""
    q64, k64, v64 = (x[0, 0].detach().double().requires_grad_() for x in (q, k, v))
    s = scale * (q64 @ k64.T)
    if causal:
        n = s.shape[0]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    out = torch.softmax(s, dim=-1) @ v64
    return torch.autograd.grad(out, (q64, k64, v64), dout[0, 0].double())


def measure(backend, q, k, v, causal, repeats, warmup, flush, dout=None):
    """Times the forward (dout None) or the backward pass of one SDPA backend: ((result, times), None) or
    (None, reason). The backward's result is (dQ, dK, dV)."""
    with warnings.catch_warnings(record=True) as caught, sdpa_kernel(backend):
        warnings.simplefilter("always")
        try:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            if dout is not None:
                result = torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
            torch.cuda.synchronize()
        except RuntimeError as error:
            reasons = [str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()]
            reason = "; ".join(dict.fromkeys(reasons)) or str(error).strip().splitlines()[0]
            return None, reason
        if dout is None:
            result = out

            def step():
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            # The forward ran once above; its graph is kept (retain_graph) so only the backward is timed.
            def step():
                torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
        for _ in range(warmup):
            step()
        times = []
        for _ in range(repeats):
            flush.zero_()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            stop.record()
            times.append((start, stop))
        torch.cuda.synchronize()
        del out
    return (result, [s.elapsed_time(e) for s, e in times]), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pass", dest="which", choices=["forward", "backward"], default="forward",
                        help="time the forward pass (the default) or the backward pass (dQ, dK, dV from dO)")
    parser.add_argument("--n", default="512,1024,2048,4096,8192,16384", help="sequence lengths, comma-separated")
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp16")
    parser.add_argument("--batch", type=int, default=0, help="B (default: B·H = min(1024, 2^32/N^2))")
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated: " + ", ".join(BACKENDS))
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--append", action="store_true", help="append rows (no header) to an existing CSV")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("peers.py: no CUDA device visible to PyTorch")
    backends = [b for b in args.backends.split(",") if b]
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        sys.exit(f"peers.py: unknown backend {unknown[0]} (known: {', '.join(BACKENDS)})")
    if args.repeats < 20:
        sys.exit("peers.py: --repeats must be at least 20")

    gpu = torch.cuda.get_device_name()
    dtype = DTYPES[args.dtype]
    element = torch.tensor([], dtype=dtype).element_size()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # the MATH backend's fp32 GEMMs stay fp32, as flashviz's math
    torch.backends.cudnn.allow_tf32 = False
    lines = []
    backward = args.which == "backward"
    print(f"peers: {gpu}, torch {torch.__version__}, {args.which} pass, {args.dtype}, d = {args.d}", file=sys.stderr)
    for n in [int(x) for x in args.n.split(",") if x]:
        heads = args.heads
        batch = args.batch or max(1, auto_heads(n) // heads)
        generator = torch.Generator(device="cuda").manual_seed(args.seed + n)
        shape = (batch, heads, n, args.d)
        q, k, v = ((torch.rand(shape, generator=generator, device="cuda", dtype=torch.float32) * 2 - 1).to(dtype)
                   for _ in range(3))
        scale = 1.0 / math.sqrt(args.d)
        dout = None
        if backward:
            dout = (torch.rand(shape, generator=generator, device="cuda", dtype=torch.float32) * 2 - 1).to(dtype)
            q, k, v = (x.requires_grad_() for x in (q, k, v))
            expected = reference_gradients(q, k, v, dout, scale, args.causal)
        else:
            rows = sorted({0, 1, n // 2, n - 1} | {int(r) for r in torch.randint(0, n, (12,), generator=generator,
                                                                              device="cuda").tolist()})
            rows = [r for r in rows if 0 <= r < n]
            expected = reference_rows(q, k, v, rows, scale, args.causal)
        flops = (10.0 if backward else 4.0) * batch * heads * n * n * args.d / (2 if args.causal else 1)
        for name in backends:
            row = {"kernel": name + ("_bwd" if backward else ""), "dtype": args.dtype, "B": batch, "H": heads, "N": n,
                   "d": args.d, "causal": int(args.causal), "gpu": gpu}
            fused = 4.0 * batch * heads * n * args.d * element
            if not backward:  # the forward's byte model; PyTorch's backward kernels have none here
                materialized = 4.0 * batch * heads * n * n * element if name == "torch_math" else 0
                row["hbm_bytes"] = f"{fused + materialized:.6g}"
            try:
                result, reason = measure(BACKENDS[name], q, k, v, args.causal, args.repeats, args.warmup, flush, dout)
            except torch.OutOfMemoryError:
                result, reason = None, "out of device memory"
                torch.cuda.empty_cache()
            if result is None:
                row["status"] = "not applicable: " + reason
                print(f"  {name:16s} N={n:6d}: not applicable: {reason}", file=sys.stderr)
            else:
                out, times = result
                if backward:  # the worst of max |error| / max |reference| over dQ, dK, dV
                    error = max(((g[0, 0].double() - e).abs().max() / e.abs().max()).item()
                                for g, e in zip(out, expected))
                else:
                    error = (out[0, 0, rows].double() - expected).abs().max().item()
                del out
                tolerance = (BACKWARD_TOLERANCE if backward else TOLERANCE)[args.dtype]
                median = statistics.median(times)
                row.update(ms_median=f"{median:.6g}", ms_min=f"{min(times):.6g}", tflops=f"{flops / median * 1e-9:.5g}",
                           max_abs_error=f"{error:.3g}")
                row["status"] = "ok" if error <= tolerance else (
                    f"validation failed: max |error| {error:.3g} > tolerance {tolerance:.3g}")
                print(f"  {name:16s} N={n:6d} B={batch} H={heads}: {median:.4f} ms, {flops / median * 1e-9:.1f} "
                      f"TFLOP/s, max |err| {error:.2g}", file=sys.stderr)
            lines.append(",".join(csv_field(row.get(c)) for c in COLUMNS))
            torch.cuda.empty_cache()
        del q, k, v, dout, expected
        torch.cuda.empty_cache()
    mode = "a" if args.append else "w"
    with open(args.csv, mode) as f:
        if not args.append:
            f.write(",".join(COLUMNS) + "\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
