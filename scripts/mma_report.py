#!/usr/bin/env python3
"""Joins flash2_mma_bench's CSV with sdpa_peers.py's CSV into the markdown tables of kernels/README.md (issue 8).

  python3 scripts/mma_report.py OURS.csv TORCH.csv
Table 1: default flash2_mma vs FLASH_ATTENTION (FA2) and CUDNN_ATTENTION, TFLOP/s and ours/FA2, per shape.
Table 2: every options combination that was timed, TFLOP/s and the ratio to the default at the same shape.
"""
import csv
import sys
from collections import defaultdict


def main():
    ours = list(csv.DictReader(open(sys.argv[1])))
    peers = list(csv.DictReader(open(sys.argv[2]))) if len(sys.argv) > 2 else []
    key = lambda r: (r["dtype"], int(r["d"]), int(r["causal"]), int(r["n"]))
    peer = defaultdict(dict)
    for r in peers:
        peer[key(r)][r["kernel"]] = float(r["tflops"])
    default = {key(r): float(r["tflops"]) for r in ours if r["options"] == "default"}
    print("| dtype | d | causal | N | B·H | flash2_mma | FA2 (FLASH) | cuDNN | ours / FA2 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in ours:
        if r["options"] != "default":
            continue
        k = key(r)
        fa2 = peer[k].get("FLASH_ATTENTION", float("nan"))
        cudnn = peer[k].get("CUDNN_ATTENTION", float("nan"))
        mine = float(r["tflops"])
        print(f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {r['batch_heads']} | {mine:.0f} | "
              f"{fa2:.0f} | {cudnn:.0f} | {mine / fa2:.2f} |")
    others = [r for r in ours if r["options"] != "default"]
    if others:
        print()
        print("| options (bits off) | dtype | d | causal | N | TFLOP/s | default / this |")
        print("|---|---|---|---|---|---|---|")
        for r in others:
            k = key(r)
            mine = float(r["tflops"])
            base = default.get(k, float("nan"))
            print(f"| {r['options']} | {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {mine:.0f} | "
                  f"{base / mine:.2f}× |")


if __name__ == "__main__":
    main()
