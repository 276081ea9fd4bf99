#!/usr/bin/env python3
"""The A/B table of scripts/mma_ab.sh's CSV: per shape, each binary's TFLOP/s round by round and its best over the
first binary's best; last, each binary's geometric mean of those ratios.

  scripts/mma_ab_report.py AB.csv [--base LABEL]

Rows: label (binary name and round: "new.r2"; older files run the round number on: "new2"), then
flash2_mma_bench's CSV columns (kernel, options, dtype, d, N, B·H, causal, median ms, min ms, TFLOP/s, validated, and
in rows since the SM clock was recorded, sm_mhz). Where the rows have the clock, each binary's rounds are followed by
the clocks they ended at ("@ 1979 1845 MHz"): under the power cap a slow round is often a slow clock.
"""
import argparse
import collections
import csv
import math
import re


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--base", help="the binary the others are set against (default: the first in the file)")
    args = parser.parse_args()
    runs = collections.defaultdict(list)  # (binary, shape) -> TFLOP/s per round, in file order
    clocks = collections.defaultdict(list)  # (binary, shape) -> SM MHz per round, where the rows have it
    binaries, shapes, invalid = [], [], []
    with open(args.csv, newline="") as f:
        for row in csv.reader(f):
            if len(row) < 12 or not re.match(r".*\d$", row[0]):
                continue
            binary = re.sub(r"\.r\d+$", "", row[0]) if re.search(r"\.r\d+$", row[0]) else re.sub(r"\d$", "", row[0])
            shape = (row[1], row[2], row[3], int(row[4]), int(row[7]), int(row[5]))
            if binary not in binaries:
                binaries.append(binary)
            if shape not in shapes:
                shapes.append(shape)
            runs[(binary, shape)].append(float(row[10]))
            if len(row) > 12 and re.fullmatch(r"\d+(\.\d*)?", row[12].strip()):
                clocks[(binary, shape)].append(float(row[12]))
            if row[11].strip() != "1":
                invalid.append(f"{row[0]} {shape}")
    base = args.base or binaries[0]
    others = [b for b in binaries if b != base]
    print("kernel options dtype d causal N | " + " | ".join([base] + [f"{b} (best/{base})" for b in others]))
    ratios = collections.defaultdict(list)

    def with_clocks(cell, binary, shape):
        rounds = clocks.get((binary, shape))
        return cell + (" @ " + " ".join(f"{c:.0f}" for c in rounds) + " MHz" if rounds else "")

    for shape in sorted(shapes, key=lambda s: (s[0], s[1], s[2], s[3], s[4], s[5])):
        if (base, shape) not in runs:
            continue
        base_best = max(runs[(base, shape)])
        cells = [with_clocks(" ".join(f"{v:.0f}" for v in runs[(base, shape)]), base, shape)]
        for b in others:
            values = runs.get((b, shape))
            if not values:
                cells.append("–")
                continue
            ratio = max(values) / base_best
            ratios[b].append(ratio)
            cells.append(with_clocks(" ".join(f"{v:.0f}" for v in values) + f" ({ratio:.2f})", b, shape))
        kernel, options, dtype, d, causal, n = shape
        print(f"{kernel} {options} {dtype} {d} {causal} {n} | " + " | ".join(cells))
    for b in others:
        if ratios[b]:
            geomean = math.exp(sum(math.log(r) for r in ratios[b]) / len(ratios[b]))
            print(f"{b}: geometric mean of best/{base} {geomean:.3f} over {len(ratios[b])} shapes "
                  f"({min(ratios[b]):.2f}-{max(ratios[b]):.2f})")
    for line in invalid:
        print(f"NOT VALIDATED: {line}")


if __name__ == "__main__":
    main()
