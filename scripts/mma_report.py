#!/usr/bin/env python3
"""Joins flash2_mma_bench's CSV with sdpa_peers.py's CSV into the markdown tables of kernels/README.md (issue 8).

  python3 scripts/mma_report.py OURS.csv TORCH.csv
Table 1: default flash2_mma and flash3_wgmma vs FLASH_ATTENTION (FA2) and CUDNN_ATTENTION, TFLOP/s, per shape.
Table 2: every other options word that was timed, TFLOP/s and the default's speed-up over it at the same shape
         (kernel names with '@' are other builds timed in the same run, e.g. flash2_mma@HEAD, the code before).
"""
import csv
import sys
from collections import defaultdict


def main():
    ours = list(csv.DictReader(open(sys.argv[1])))
    peers = list(csv.DictReader(open(sys.argv[2]))) if len(sys.argv) > 2 else []
    key = lambda r: (r["dtype"], int(r["d"]), int(r["causal"]), int(r["n"]))
    nan = float("nan")
    peer = defaultdict(dict)
    for r in peers:
        peer[key(r)][r["kernel"]] = float(r["tflops"])
    default = defaultdict(dict)  # shape -> kernel -> TFLOP/s of options "default"
    batch_heads = {}
    for r in ours:
        if r["options"] == "default":
            default[key(r)][r["kernel"]] = float(r["tflops"])
            batch_heads[key(r)] = r["batch_heads"]
    print("| dtype | d | causal | N | B·H | flash2_mma | flash3_wgmma | FA2 (FLASH) | cuDNN | flash2 / FA2 | "
          "flash3 / FA2 | flash3 / cuDNN |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in sorted(default, key=lambda k: (k[0] != "fp16", k[1], k[2], k[3])):
        f2 = default[k].get("flash2_mma", nan)
        f3 = default[k].get("flash3_wgmma", nan)
        fa2 = peer[k].get("FLASH_ATTENTION", nan)
        cudnn = peer[k].get("CUDNN_ATTENTION", nan)
        print(f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {batch_heads[k]} | {f2:.0f} | {f3:.0f} | "
              f"{fa2:.0f} | {cudnn:.0f} | {f2 / fa2:.2f} | {f3 / fa2:.2f} | {f3 / cudnn:.2f} |")
    others = [r for r in ours if r["options"] != "default" or "@" in r["kernel"]]
    if others:
        print()
        print("| kernel | options (vs default) | dtype | d | causal | N | TFLOP/s | default / this |")
        print("|---|---|---|---|---|---|---|---|")
        for r in others:
            k = key(r)
            mine = float(r["tflops"])
            base = default[k].get(r["kernel"].split("@")[0], nan)
            print(f"| {r['kernel']} | {r['options']} | {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | "
                  f"{mine:.0f} | {base / mine:.3f}× |")


if __name__ == "__main__":
    main()
