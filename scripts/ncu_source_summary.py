#!/usr/bin/env python3
"""Where a kernel's warps spend their time, per SASS instruction, from Nsight Compute's source page.

Input: `ncu -i REPORT.ncu-rep --page source --csv --print-source sass > KERNEL.sass.csv` of a report taken with
the SourceCounters and WarpStateStats sections (scripts/ncu_source.sh takes them on the GPU machine).
Output: the opcode mix (share of executed warp instructions and of warp stall samples), the stall reasons over
all samples, the main loop (of the groups of instructions that ran equally often, the one with the most executions
in all: its length in SASS instructions, i.e. instructions per warp per trip, its whole opcode mix and how many of
them run on the uniform datapath) and the N instructions with the most samples, each with its execution count and
main stall reasons.

  scripts/ncu_source_summary.py KERNEL.sass.csv[.gz] [--top N]
"""
import argparse
import collections
import csv
import gzip
import re


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    # Row 0 names the kernel, row 1 is the header.
    header = rows[1]
    return rows[0], header, [dict(zip(header, r)) for r in rows[2:] if len(r) == len(header)]


def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0


def opcode(source):
    match = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_.]+)", source)
    return match.group(2).split(".")[0] if match else "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    kernel, header, rows = load(args.csv)
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    executed = sum(number(r["Instructions Executed"]) for r in rows)
    samples = sum(number(r["Warp Stall Sampling (All Samples)"]) for r in rows)
    print(f"{kernel[1] if len(kernel) > 1 else args.csv}")
    print(f"{len(rows)} SASS instructions, {executed:.3e} warp instructions executed, {samples:.0f} stall samples")
    by_executed, by_samples = collections.Counter(), collections.Counter()
    for r in rows:
        op = opcode(r["Source"])
        by_executed[op] += number(r["Instructions Executed"])
        by_samples[op] += number(r["Warp Stall Sampling (All Samples)"])
    print("\nopcode      executed  samples")
    for op, count in by_executed.most_common(24):
        print(f"  {op:10s} {count / executed * 100:6.1f}% {by_samples[op] / samples * 100:6.1f}%")
    totals = {s[6:]: sum(number(r[s]) for r in rows) for s in stalls}
    print("\nstall reasons: " + ", ".join(f"{k} {v / samples * 100:.1f}%"
                                         for k, v in sorted(totals.items(), key=lambda kv: -kv[1])
                                         if v / samples >= 0.005))
    # The main loop: of the blocks of instructions that ran equally often, the one with the most executions in all.
    by_count = collections.Counter(number(r["Instructions Executed"]) for r in rows)
    trips = max((c for c in by_count if c > 0), key=lambda c: c * by_count[c])
    loop = collections.Counter(opcode(r["Source"]) for r in rows if number(r["Instructions Executed"]) == trips)
    uniform = sum(count for op, count in loop.items() if op.startswith("U"))
    mix = ", ".join(f"{op} {count}" for op, count in loop.most_common())
    print(f"\nmain loop: {by_count[trips]} instructions, each executed {trips:.0f} times; {uniform} on the uniform "
          f"datapath (U…), {loop.get('R2UR', 0)} R2UR: {mix}")
    print(f"\nthe {args.top} instructions with the most samples (index, executions, share of samples, reasons)")
    top = sorted(range(len(rows)), key=lambda i: -number(rows[i]["Warp Stall Sampling (All Samples)"]))[:args.top]
    for i in sorted(top):
        r = rows[i]
        reasons = sorted(((number(r[s]), s[6:]) for s in stalls), reverse=True)[:2]
        share = number(r["Warp Stall Sampling (All Samples)"]) / samples * 100
        print(f"  {i:5d} {number(r['Instructions Executed']):10.0f} {share:5.1f}%  {r['Source'].strip()[:64]:64s} "
              + ", ".join(f"{name} {count:.0f}" for count, name in reasons))


if __name__ == "__main__":
    main()
