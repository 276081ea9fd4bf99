#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention, one backend at a time, on `flashviz bench`'s shapes.

Runs on the GPU machine, in the same device run as `flashviz bench`, and writes the same CSV columns
(kernel, dtype, B, H, N, d, causal, ms_median, ms_min, tflops, max_abs_error, hbm_bytes, gpu, status), so both
land on one plot. Each backend is restricted with torch.nn.attention.sdpa_kernel; a backend that cannot run a
shape gets a row whose status says "not applicable: <PyTorch's reason>".

Protocol, the same as flashviz bench's: inputs uniform in [-1, 1] (fresh per shape), B·H = min(1024, 2^32/N²)
with H = 16 unless --batch is given, checked against a float64 reference on sampled rows before timing, then
--warmup untimed calls and --repeats calls timed with CUDA events, each after writing 256 MB to flush the L2 (and,
with --decode, reading it back);
median and minimum reported. TFLOP/s = 4·B·H·N²·d / time (halved for causal).

--pass backward times the backward pass instead, as `flashviz bench --pass backward` does ours: dO uniform in
[-1, 1], the forward run once outside the timed region, then each timed call is
torch.autograd.grad(out, (q, k, v), dO, retain_graph=True) (what out.backward(dO) runs). The gradients of head
(0, 0) are checked against float64 autograd of standard attention by max |error| / max |reference| per tensor (the
max_abs_error column holds the worst of dQ, dK, dV) at kernels/cuda/backward/backward_harness.h's tolerances;
TFLOP/s = 10·B·H·N²·d / time (2.5 forwards, halved for causal); rows are named torch_flash_bwd etc., so that
one CSV can hold both passes and `flashviz bench --replot` draws them as separate curves.

--decode times a decoding step as `flashviz bench --decode` does ours (kernels/cuda/decode): Q (B, H, R, d) against
K, V (B, G, N, d) with enable_gqa=True (query head h reads KV head h·G/H), no mask, for every B × N of --batch and
--kv-len (defaults 1,8,64 × 4096,32768,131072; H = 32, G = 8, R = 1, d = 128, fp16), K and V uniform in [-1, 1]
generated in the dtype. Head (0, 0) is checked against float64 (max |error| within kernels/cuda/decode/
decode_harness.h's 2u: fp16 2/2048, bf16 2/256), then timed with the same protocol. A shape whose K and V do not
fit in the free memory gets "not applicable: does not fit ..." rows; a backend that fails or runs out of memory
(MATH expands K and V to H heads) gets "not applicable: <reason>". The CSV has the bench columns followed by
kv_heads, q_rows, page, splits, gbps, copy_gbps, share (gbps = 2·B·G·N·d·element bytes / ms_median; page and
splits empty), rows named torch_cudnn_decode etc., and one torch_copy row: y.copy_(x) of 2 GiB, (read + written
bytes) / median time, the ceiling every row's share is taken of (its status says it is no decode row).

    python3 scripts/peers.py --n 512,1024,2048 --d 64 --dtype fp16 --csv peers.csv
    python3 scripts/peers.py --decode --batch 1,8,64 --kv-len 4096,32768,131072 --dtype fp16 --csv peers_decode.csv
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
DECODE_COLUMNS = COLUMNS + ["kv_heads", "q_rows", "page", "splits", "gbps", "copy_gbps", "share"]
DECODE_TOLERANCE = {"fp16": 2 / 2048, "bf16": 2 / 256}  # decode_harness.h: P̃ and O rounded, u each


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


def measure(backend, q, k, v, causal, repeats, warmup, flush, dout=None, gqa=False):
    """Times the forward (dout None) or the backward pass of one SDPA backend: ((result, times), None) or
    (None, reason). The backward's result is (dQ, dK, dV). gqa: K and V have fewer heads than Q (enable_gqa)."""
    extra = {"enable_gqa": True} if gqa else {}
    with warnings.catch_warnings(record=True) as caught, sdpa_kernel(backend):
        warnings.simplefilter("always")
        try:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra)
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
                F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra)
        else:
            # The forward ran once above; its graph is kept (retain_graph) so only the backward is timed.
            def step():
                torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
        for _ in range(warmup):
            step()
        times = []
        for _ in range(repeats):
            flush.zero_()
            if gqa:
                # Decoding: the flush is read back too, so the L2 holds clean lines; a few-µs step would otherwise
                # time the write-back of the dirty ones (flashviz's decode harness does the same).
                flush.max()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            stop.record()
            times.append((start, stop))
        torch.cuda.synchronize()
        del out
    return (result, [s.elapsed_time(e) for s, e in times]), None


def copy_bandwidth(repeats, warmup):
    """(GB/s, ms): y.copy_(x) of 2 GiB, read + written bytes over the median time."""
    nbytes = 2 << 30
    x = torch.ones(nbytes, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    for _ in range(warmup):
        y.copy_(x)
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y.copy_(x)
        stop.record()
        times.append((start, stop))
    torch.cuda.synchronize()
    median = statistics.median(s.elapsed_time(e) for s, e in times)
    del x, y
    torch.cuda.empty_cache()
    return 2.0 * nbytes / (median * 1e-3) * 1e-9, median


def decode_main(args, backends, gpu):
    """--decode: every backend on every (B, N), one CSV row each, after the copy line."""
    dtype = DTYPES[args.dtype]
    if args.dtype not in DECODE_TOLERANCE:
        sys.exit("peers.py: --decode runs fp16 or bf16")
    heads, d, kv_heads, q_rows = args.heads or 32, args.d or 128, args.kv_heads, args.q_rows
    if heads % kv_heads:
        sys.exit(f"peers.py: --kv-heads {kv_heads} must divide --heads {heads}")
    element = torch.tensor([], dtype=dtype).element_size()
    scale = 1.0 / math.sqrt(d)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    copy_gbps, copy_ms = copy_bandwidth(args.repeats, args.warmup)
    print(f"peers: {gpu}, torch {torch.__version__}, decode, {args.dtype}, H = {heads}, G = {kv_heads}, R = {q_rows}, "
          f"d = {d}; copy {copy_gbps:.0f} GB/s", file=sys.stderr)
    lines = [{"kernel": "torch_copy", "dtype": "uint8", "B": 1, "H": 1, "N": 2 << 30, "d": 1, "causal": 0,
              "ms_median": f"{copy_ms:.6g}", "hbm_bytes": f"{2.0 * (2 << 30):.6g}", "gpu": gpu,
              "status": "reference: y.copy_(x) of 2 GiB, not a decoding step", "gbps": f"{copy_gbps:.5g}",
              "copy_gbps": f"{copy_gbps:.5g}", "share": "1"}]
    for batch in [int(x) for x in (args.batch or "1,8,64").split(",") if x]:
        for n in [int(x) for x in args.kv_len.split(",") if x]:
            kv_bytes = 2.0 * batch * kv_heads * n * d * element
            base = {"dtype": args.dtype, "B": batch, "H": heads, "N": n, "d": d, "causal": 0, "gpu": gpu,
                    "hbm_bytes": f"{kv_bytes:.6g}", "kv_heads": kv_heads, "q_rows": q_rows,
                    "copy_gbps": f"{copy_gbps:.5g}"}
            free, _ = torch.cuda.mem_get_info()
            if kv_bytes + (1 << 30) > free:
                for name in backends:
                    reason = f"does not fit: K and V need {kv_bytes / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free"
                    lines.append(dict(base, kernel=name + "_decode", status="not applicable: " + reason))
                    print(f"  {name:16s} B={batch} N={n}: not applicable: {reason}", file=sys.stderr)
                continue
            generator = torch.Generator(device="cuda").manual_seed(args.seed + batch * 1000003 + n)
            q = torch.empty((batch, heads, q_rows, d), dtype=dtype, device="cuda").uniform_(-1, 1, generator=generator)
            k, v = (torch.empty((batch, kv_heads, n, d), dtype=dtype, device="cuda").uniform_(-1, 1, generator=generator)
                    for _ in range(2))
            s = scale * (q[0, 0].double() @ k[0, 0].double().T)  # query head 0 reads KV head 0
            expected = torch.softmax(s, dim=-1) @ v[0, 0].double()
            flops = 4.0 * batch * heads * q_rows * n * d
            for name in backends:
                row = dict(base, kernel=name + "_decode")
                try:
                    result, reason = measure(BACKENDS[name], q, k, v, False, args.repeats, args.warmup, flush, gqa=True)
                except torch.OutOfMemoryError:
                    result, reason = None, "out of device memory"
                torch.cuda.empty_cache()
                if result is None:
                    row["status"] = "not applicable: " + reason
                    print(f"  {name:16s} B={batch} N={n}: not applicable: {reason}", file=sys.stderr)
                else:
                    out, times = result
                    error = (out[0, 0].double() - expected).abs().max().item()
                    del out
                    median = statistics.median(times)
                    gbps = kv_bytes / (median * 1e-3) * 1e-9
                    tolerance = DECODE_TOLERANCE[args.dtype]
                    row.update(ms_median=f"{median:.6g}", ms_min=f"{min(times):.6g}",
                               tflops=f"{flops / median * 1e-9:.5g}", max_abs_error=f"{error:.3g}",
                               gbps=f"{gbps:.5g}", share=f"{gbps / copy_gbps:.4f}")
                    row["status"] = "ok" if error <= tolerance else (
                        f"validation failed: max |error| {error:.3g} > tolerance {tolerance:.3g}")
                    print(f"  {name:16s} B={batch} N={n}: {median:.4f} ms, {gbps:.0f} GB/s "
                          f"({100 * gbps / copy_gbps:.0f}% of copy), max |err| {error:.2g}", file=sys.stderr)
                lines.append(row)
            del q, k, v, expected
            torch.cuda.empty_cache()
    with open(args.csv, "a" if args.append else "w") as f:
        if not args.append:
            f.write(",".join(DECODE_COLUMNS) + "\n")
        f.write("\n".join(",".join(csv_field(r.get(c)) for c in DECODE_COLUMNS) for r in lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pass", dest="which", choices=["forward", "backward"], default="forward",
                        help="time the forward pass (the default) or the backward pass (dQ, dK, dV from dO)")
    parser.add_argument("--n", default="512,1024,2048,4096,8192,16384", help="sequence lengths, comma-separated")
    parser.add_argument("--d", type=int, default=0, help="head dimension (default 64; --decode: 128)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp16")
    parser.add_argument("--batch", default="",
                        help="B (default: B·H = min(1024, 2^32/N^2)); --decode: a list (default 1,8,64)")
    parser.add_argument("--heads", type=int, default=0, help="heads H (default 16; --decode: 32 query heads)")
    parser.add_argument("--decode", action="store_true", help="time a decoding step against a KV cache instead")
    parser.add_argument("--kv-len", default="4096,32768,131072", help="--decode: KV cache lengths N")
    parser.add_argument("--kv-heads", type=int, default=8, help="--decode: KV heads G (enable_gqa)")
    parser.add_argument("--q-rows", type=int, default=1, help="--decode: query rows R per head (query length)")
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
    if args.decode:
        decode_main(args, backends, gpu)
        return
    args.d = args.d or 64
    args.heads = args.heads or 16
    args.batch = int(args.batch or 0)
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
