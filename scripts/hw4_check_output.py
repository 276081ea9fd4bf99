#!/usr/bin/env python3
"""Spot-check an hw4 output against float64 numpy: max |O - reference| over sampled rows of the first and last
batch (every row for N <= 256). For the large end-to-end cases, whose full float64 reference would take long.

    python3 scripts/hw4_check_output.py INPUT OUTPUT [--rows R]
"""
import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--rows", type=int, default=24)
    args = parser.parse_args()
    b, n, d = (int(x) for x in np.fromfile(args.input, dtype=np.int32, count=3))
    x = np.memmap(args.input, dtype=np.float32, mode="r", offset=12, shape=(b, 3, n, d))
    o = np.memmap(args.output, dtype=np.float32, mode="r", shape=(b, n, d))
    rng = np.random.default_rng(0)
    if n <= 256:
        rows = np.arange(n)
    else:
        rows = np.unique(np.concatenate([[0, 63, 64, n // 2, n - 1], rng.integers(0, n, args.rows)]))
    worst = 0.0
    for batch in sorted({0, b - 1}):
        q = x[batch, 0, rows].astype(np.float64)
        k = x[batch, 1].astype(np.float64)
        v = x[batch, 2].astype(np.float64)
        s = q @ k.T / np.sqrt(d)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        ref = (p / p.sum(axis=1, keepdims=True)) @ v
        worst = max(worst, float(np.abs(o[batch, rows].astype(np.float64) - ref).max()))
    print(f"B={b} N={n} d={d} rows={len(rows)}x{len({0, b - 1})} max_err={worst:.3g} "
          f"{'ok' if worst <= 5e-3 else 'FAIL'}")


if __name__ == "__main__":
    main()
