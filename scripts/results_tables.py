#!/usr/bin/env python3
"""Writes the README tables that report device runs, from the CSVs in docs/results/ (nothing typed by hand).

    python3 scripts/results_tables.py [--check]

Each table sits between `<!-- BEGIN TABLE: name (...) -->` and `<!-- END TABLE -->` in README.md or
kernels/README.md; the run it is read from is named in the marker. --check exits 1 when a table differs from
what its CSVs give (a hand edit, or a new run not yet written in). The progression's tables are written by
scripts/kernel_results.py the same way.
"""
import csv
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HW4_RUN = "docs/results/2026-11-21-h200-hw4"
MMA_RUN = "docs/results/mma-run6-2026-11-21"
CAUSAL_RUN = "docs/results/2026-11-21-h200-check"


def rows(path):
    return list(csv.DictReader(open(os.path.join(ROOT, path), encoding="utf-8")))


def hw4_kernels():
    """tf32x3 and fp32-simt against PyTorch's fp32 backends on the assignment's shapes (TFLOP/s)."""
    ours = {(r["kernel"], int(r["B"]), int(r["N"]), int(r["d"])): float(r["tflops"])
            for r in rows(f"{HW4_RUN}/bench.csv") if r["tflops"]}
    torch = {(r["backend"], int(r["B"]), int(r["N"]), int(r["d"])): float(r["tflops"])
             for r in rows(f"{HW4_RUN}/torch.csv") if r["tflops"]}
    shapes = [(b, n, d) for (kernel, b, n, d) in ours if kernel == "tf32x3"]
    out = ["| B | N | d | tf32x3 | fp32-simt | PyTorch EFFICIENT (3×TF32) | PyTorch MATH (SGEMM) | "
           "tf32x3 vs EFFICIENT |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for b, n, d in shapes:
        math = torch.get(("MATH", b, n, d))
        # MATH materializes the B·N² fp32 scores; where they do not fit it was not run.
        math_text = f"{math:.1f}" if math else f"– ({b * n * n * 4 / 2**30:.0f} GiB of scores)"
        tf, efficient = ours[("tf32x3", b, n, d)], torch[("EFFICIENT", b, n, d)]
        out.append(f"| {b} | {n} | {d} | {tf:.1f} | {ours[('fp32-simt', b, n, d)]:.1f} | {efficient:.1f} | "
                   f"{math_text} | {tf / efficient:.2f}× |")
    return out


def hw4_end_to_end():
    """`flashviz hw4` end to end at every case size, cold and warm page cache."""
    out = ["| d | N | B | cold (s) | warm (s) | kernel TFLOP/s in the pipeline |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows(f"{HW4_RUN}/e2e.csv"):
        out.append(f"| {r['d']} | {r['N']} | {r['B']} | {r['cold_s']} | {r['warm_s']} | {r['kernel_tflops']} |")
    return out


def flagships():
    """flash2_mma and flash3_wgmma (their main pass) against FA2 and cuDNN, TFLOP/s per shape."""
    key = lambda r: (r["dtype"], int(r["d"]), int(r["causal"]), int(r["n"]))
    peer = {}
    for r in rows(f"{MMA_RUN}/torch.csv"):
        peer.setdefault(key(r), {})[r["kernel"]] = float(r["tflops"])
    main, batch_heads = {}, {}
    for r in rows(f"{MMA_RUN}/ours.csv"):
        if r["options"] == "default" and "@" not in r["kernel"] and r["kernel"] not in main.setdefault(key(r), {}):
            main[key(r)][r["kernel"]] = float(r["tflops"])
            batch_heads[key(r)] = r["batch_heads"]
    out = ["| dtype | d | causal | N | B·H | flash2_mma | flash3_wgmma | FA2 (FLASH) | cuDNN | flash2 / FA2 | "
           "flash3 / FA2 | flash3 / cuDNN |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in main:  # in the order the run timed them
        f2, f3 = main[k].get("flash2_mma"), main[k].get("flash3_wgmma")
        fa2, cudnn = peer.get(k, {}).get("FLASH_ATTENTION"), peer.get(k, {}).get("CUDNN_ATTENTION")
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "–"
        number = lambda x: f"{x:.0f}" if x else "–"
        out.append(f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {batch_heads[k]} | {number(f2)} | "
                   f"{number(f3)} | {number(fa2)} | {number(cudnn)} | {ratio(f2, fa2)} | {ratio(f3, fa2)} | "
                   f"{ratio(f3, cudnn)} |")
    return out


def causal():
    """The progression and PyTorch with the causal mask, d = 64: ms (TFLOP/s) per kernel and N."""
    order = ["naive", "tiled", "flash1", "flash2_row", "flash2_warp", "flash2_wmma", "flash2_mma", "math",
             "torch_flash", "torch_cudnn", "torch_efficient", "torch_math"]
    cells, ns = {}, set()
    for name in ["causal_fp32_naive.csv", "causal_fp32.csv", "causal_fp16.csv", "causal_peers.csv"]:
        for r in rows(f"{CAUSAL_RUN}/{name}"):
            if r["status"] == "ok":
                cells[(r["kernel"], r["dtype"], int(r["N"]))] = (float(r["ms_median"]), float(r["tflops"]))
                ns.add(int(r["N"]))
    ns = sorted(ns)
    out = ["| kernel | dtype | " + " | ".join(f"N = {n}" for n in ns) + " |", "|---|---|" + "---|" * len(ns)]
    for dtype in ["fp32", "fp16"]:
        for kernel in sorted({k for (k, t, _) in cells if t == dtype}, key=order.index):
            texts = [f"{cells[(kernel, dtype, n)][0]:.4g} ({cells[(kernel, dtype, n)][1]:.1f})"
                     if (kernel, dtype, n) in cells else "–" for n in ns]
            out.append(f"| `{kernel}` | {dtype} | " + " | ".join(texts) + " |")
    return out


TABLES = {"hw4-kernels": ("README.md", hw4_kernels, HW4_RUN),
          "hw4-end-to-end": ("README.md", hw4_end_to_end, HW4_RUN),
          "flagships": ("kernels/README.md", flagships, MMA_RUN),
          "causal": ("kernels/README.md", causal, CAUSAL_RUN)}


def main():
    check = "--check" in sys.argv
    stale = []
    for name, (doc, make, run) in TABLES.items():
        path = os.path.join(ROOT, doc)
        text = open(path, encoding="utf-8").read()
        begin = f"<!-- BEGIN TABLE: {name} (scripts/results_tables.py, from {run}) -->\n"
        pattern = re.compile(re.escape(begin) + r"(.*?)<!-- END TABLE -->", re.S)
        match = pattern.search(text)
        if not match:
            sys.exit(f"results_tables: {doc} has no marker for the table {name}")
        table = "\n".join(make()) + "\n"
        if match.group(1) != table:
            stale.append(name)
            text = text[:match.start(1)] + table + text[match.end(1):]
            if not check:
                open(path, "w", encoding="utf-8").write(text)
    if check and stale:
        sys.exit("results_tables: differs from its CSVs: " + ", ".join(stale))
    if check:
        print("results_tables: up to date")
    else:
        print(f"results_tables: {len(TABLES)} tables, {len(stale)} rewritten")


if __name__ == "__main__":
    main()
