#!/usr/bin/env python3
"""Joins flash2_mma_bench's CSV with sdpa_peers.py's CSV into the markdown tables of kernels/README.md.

  python3 scripts/mma_report.py OURS.csv TORCH.csv [GEMM.csv]
Table 1: default flash2_mma and flash3_wgmma vs FLASH_ATTENTION (FA2) and CUDNN_ATTENTION, TFLOP/s, per shape; when
         OURS has the SM clock (flash2_mma_bench's sm_mhz), the clock flash3_wgmma's timed launches ended at.
Table 1 takes the first default row of each kernel and shape (the main timing pass).
Table 2: every other row, in order: TFLOP/s and the speed-up of the default over it, where "default" is the latest
         default row of the same kernel and shape before it (the ablation passes time option 0 in the same loop as
         the options they switch, so each ratio compares launches made back to back; a repeated default row is
         compared with the main pass, which shows the run-to-run spread). Kernel names with '@' are other builds
         timed in the same run (flash2_mma@HEAD: the code before this change), compared with the main pass.
Table 3 (when OURS has flash3_fp8 rows): flash3_fp8 with its quantization and alone (prequantized), against the
         fp8 GEMM ceiling of GEMM.csv (gemm_ceiling.py, same run), cuDNN and flash3_wgmma in bf16 at the same shape.
"""
import csv
import sys
from collections import defaultdict


def fp8_table(ours, peer, default, key, gemm_path):
    ceiling = {}
    if gemm_path:
        for r in csv.DictReader(open(gemm_path)):
            if r["dtype"] == "fp8_e4m3" and r["tflops"] not in ("", "nan"):
                ceiling[r["op"]] = float(r["tflops"])
    best = max(ceiling.values()) if ceiling else float("nan")
    rows = defaultdict(dict)
    for r in ours:
        if r["kernel"] == "flash3_fp8":
            rows[key(r)].setdefault(r["options"], float(r["tflops"]))
    if not rows:
        return
    nan = float("nan")
    print()
    print("fp8 GEMM ceiling (8192³, same run): " +
          ", ".join(f"{op} {t:.0f} TFLOP/s" for op, t in sorted(ceiling.items())))
    print()
    print("| d | causal | N | flash3_fp8 with quantization | attention alone | alone / fp8 GEMM ceiling | "
          "cuDNN bf16 | alone / cuDNN | flash3_wgmma bf16 | alone / flash3_wgmma |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in sorted(rows, key=lambda k: (k[1], k[2], k[3])):
        with_q, alone = rows[k].get("default", nan), rows[k].get("prequantized", nan)
        cudnn = peer[k].get("CUDNN_ATTENTION", nan)
        f3 = default[k].get("flash3_wgmma", nan)
        print(f"| {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {with_q:.0f} | {alone:.0f} | {alone / best:.2f} | "
              f"{cudnn:.0f} | {alone / cudnn:.2f} | {f3:.0f} | {alone / f3:.2f} |")


def main():
    ours = list(csv.DictReader(open(sys.argv[1])))
    peers = list(csv.DictReader(open(sys.argv[2]))) if len(sys.argv) > 2 else []
    key = lambda r: (r["dtype"], int(r["d"]), int(r["causal"]), int(r["n"]))
    nan = float("nan")
    peer = defaultdict(dict)
    for r in peers:
        peer[key(r)][r["kernel"]] = float(r["tflops"])
    default = defaultdict(dict)  # shape -> kernel -> TFLOP/s of the first options "default" row
    flash3_clock = {}  # shape -> the SM clock (MHz) after flash3_wgmma's default row, where the CSV has it
    batch_heads = {}
    first_rows = set()
    for index, r in enumerate(ours):
        if r["kernel"] == "flash3_fp8":
            continue  # table 3
        if r["options"] == "default" and "@" not in r["kernel"] and r["kernel"] not in default[key(r)]:
            default[key(r)][r["kernel"]] = float(r["tflops"])
            batch_heads[key(r)] = r["batch_heads"]
            if r["kernel"] == "flash3_wgmma" and (r.get("sm_mhz") or "").strip():
                flash3_clock[key(r)] = float(r["sm_mhz"])
            first_rows.add(index)
    # flash2_mma with the stagger trial (options "stagger"), when the main pass timed it too.
    stagger = {key(r): float(r["tflops"]) for r in ours if r["kernel"] == "flash2_mma" and r["options"] == "stagger"}
    extra = " flash2 stagger | stagger / FA2 |" if stagger else ""
    extra += " flash3 SM MHz |" if flash3_clock else ""
    print("| dtype | d | causal | N | B·H | flash2_mma | flash3_wgmma | FA2 (FLASH) | cuDNN | flash2 / FA2 | "
          "flash3 / FA2 | flash3 / cuDNN |" + extra)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if stagger else "") +
          ("---|" if flash3_clock else ""))
    for k in sorted(default, key=lambda k: (k[0] != "fp16", k[1], k[2], k[3])):
        f2 = default[k].get("flash2_mma", nan)
        f3 = default[k].get("flash3_wgmma", nan)
        fa2 = peer[k].get("FLASH_ATTENTION", nan)
        cudnn = peer[k].get("CUDNN_ATTENTION", nan)
        row = (f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {batch_heads[k]} | {f2:.0f} | {f3:.0f} | "
               f"{fa2:.0f} | {cudnn:.0f} | {f2 / fa2:.2f} | {f3 / fa2:.2f} | {f3 / cudnn:.2f} |")
        if stagger:
            s2 = stagger.get(k, nan)
            row += f" {s2:.0f} | {s2 / fa2:.2f} |"
        if flash3_clock:
            row += f" {flash3_clock[k]:.0f} |" if k in flash3_clock else " – |"
        print(row)
    print()
    print("| kernel | options | dtype | d | causal | N | TFLOP/s | default / this |")
    print("|---|---|---|---|---|---|---|---|")
    latest = {}
    for index, r in enumerate(ours):
        k, kernel, mine = key(r), r["kernel"], float(r["tflops"])
        if kernel == "flash3_fp8":
            continue
        if index in first_rows:
            latest[(kernel, k)] = mine
            continue
        if "@" in kernel:
            base = default[k].get(kernel.split("@")[0], nan)
        elif r["options"] == "default":
            base = default[k].get(kernel, nan)
            latest[(kernel, k)] = mine
        else:
            base = latest.get((kernel, k), nan)
        print(f"| {kernel} | {r['options']} | {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | "
              f"{mine:.0f} | {base / mine:.3f}× |")
    fp8_table(ours, peer, default, key, sys.argv[3] if len(sys.argv) > 3 else "")


if __name__ == "__main__":
    main()
