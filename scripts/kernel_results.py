#!/usr/bin/env python3
"""Writes the measured figures of the CUDA progression where they are read, from one run's CSVs.

    python3 scripts/kernel_results.py [docs/results/<run>] [--check]

Reads every CSV of the run (`flashviz bench` and scripts/peers.py rows, the same columns) plus its info.txt and
commands.txt (docs/results/README.md indexes the runs), and rewrites, between its BEGIN/END MEASURED markers, the
progression section of kernels/README.md (one row per variant, runtime against N, PyTorch's backends). The
kernels' own files explain the kernels and hold no measurements. Nothing is typed by hand: rerun after a new
device run. --check writes nothing and exits 1 when the section differs from what the run gives (the test
docs.kernel_results runs it). The variants' names and ideas come from
kernels/cuda/registry_rows.inc.
"""
import csv
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRESSION = ["naive", "tiled", "flash1", "flash2_row", "flash2_warp", "flash2_wmma", "math"]
PEERS = [("torch_flash", "FLASH_ATTENTION (FA2)"), ("torch_cudnn", "CUDNN_ATTENTION"),
         ("torch_efficient", "EFFICIENT_ATTENTION"), ("torch_math", "MATH")]


def registry_fields():
    """id -> {name, teaches, ...} from registry_rows.inc (adjacent string literals joined)."""
    text = open(os.path.join(ROOT, "kernels/cuda/registry_rows.inc"), encoding="utf-8").read()
    rows = {}
    for block in re.split(r"\nFLASHVIZ_VARIANT\(", text)[1:]:
        fields = {}
        for name, literals in re.findall(r'\.(\w+) = ((?:"(?:[^"\\]|\\.)*"\s*)+)', block):
            fields[name] = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', literals))
        if "id" in fields:
            rows[fields["id"]] = fields
    return rows


def load(run):
    rows = []
    for path in sorted(glob.glob(os.path.join(run, "*.csv"))):
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                rows.append(row)
    table = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        key = (r["kernel"], r["dtype"], int(r["d"]), int(r["N"]), r.get("causal", "0") == "1")
        table[key] = (float(r["ms_median"]), float(r["tflops"]), int(r["B"]) * int(r["H"]), r["gpu"])
    return table


def info(run):
    text = open(os.path.join(run, "info.txt"), encoding="utf-8").read()
    date = re.search(r"date: (\d{4}-\d{2}-\d{2})", text).group(1)
    gpu_line = text.splitlines()[1].split(", ")
    return date, gpu_line[0], gpu_line[1]


def fmt_ms(ms):
    return f"{ms:.4g}" if ms < 1000 else f"{ms:.0f}"


def speedup(a, b):
    return f"{b / a:.2f}×" if b / a < 100 else f"{b / a:.0f}×"



def rewrite_between(path, begin, end, new_lines, comment, check=False):
    """Puts `new_lines` between the markers; with `check`, only says whether they are there already."""
    text = open(path, encoding="utf-8").read()
    start = text.index(begin) + len(begin)
    stop = text.index(end)
    body = "".join(f"{comment}{line}\n" if comment else f"{line}\n" for line in new_lines)
    if check:
        return text[start:stop] == body
    text = text[:start] + body + text[stop:]
    open(path, "w", encoding="utf-8").write(text)
    return True


def readme_block(table, registry, date, gpu, driver, run_rel, commands):
    out = []
    out.append(f"Measured on {gpu} (driver {driver}), {date}, CUDA 13.0, PyTorch 2.11.0+cu130, all in one device run: "
               f"`scripts/cuda_device_run.sh measure` (the exact `flashviz bench` and `scripts/peers.py` command "
               f"lines: `{run_rel}/commands.txt`; CSVs beside it). Non-causal; B·H = min(1024, 2³²/N²) with H = 16 "
               "(docs/peers.md's shapes); inputs uniform in [−1, 1], fresh per point; every point validated against "
               "the float64 CPU reference (sampled rows; every output element checked written) before 2 warm-ups and "
               "20 timed runs, 256 MB written before each to flush the L2; the median is reported. "
               "TFLOP/s = 4·B·H·N²·d / time.")
    out.append("")
    out.append("### One row per variant (N = 2048, d = 64, B·H = 1024)")
    out.append("")
    out.append("| # | variant | dtype | what it changes | the idea it teaches | ms | TFLOP/s | × previous | "
               "× naive |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    naive = table.get(("naive", "fp32", 64, 2048, False))
    previous_ms = None
    for index, kernel in enumerate(PROGRESSION, 1):
        fields = registry.get(kernel, {})
        change = fields.get("name", kernel).split(": ", 1)[-1]
        idea = fields.get("teaches", "")
        for dtype in (("fp32", "fp16") if kernel == "math" else ("fp16",) if kernel == "flash2_wmma" else ("fp32",)):
            here = table.get((kernel, dtype, 64, 2048, False))
            if not here:
                continue
            if kernel == "math":
                prev = "the yardstick"
            elif previous_ms:
                prev = speedup(here[0], previous_ms)
            else:
                prev = "–"
            vs_naive = (speedup(here[0], naive[0]) if naive and kernel != "naive"
                        else "1×" if kernel == "naive" else "–")
            out.append(f"| {index} | `{kernel}` | {dtype} | {change} | {idea} | {fmt_ms(here[0])} | {here[1]:.1f} | "
                       f"{prev} | {vs_naive} |")
            if kernel != "math":
                previous_ms = here[0]
    for peer, name in PEERS:
        for dtype in ("fp16", "fp32"):
            here = table.get((peer, dtype, 64, 2048, False))
            if here:
                vs_naive = speedup(here[0], naive[0]) if naive else "–"
                out.append(f"| – | PyTorch {name} | {dtype} | `scaled_dot_product_attention`, this backend only | | "
                           f"{fmt_ms(here[0])} | {here[1]:.1f} | | {vs_naive} |")
    out.append("")
    out.append("flash2_wmma's \"× previous\" compares fp16 with flash2_warp's fp32 at the same shape. naive was not "
               "run at N ≥ 4096 (over a second a call).")
    for d in (64, 128):
        ns = sorted({k[3] for k in table if k[2] == d and not k[4]})
        kernels = [(k, dt) for k in PROGRESSION + [p for p, _ in PEERS] for dt in ("fp32", "fp16", "bf16")
                   if any((k, dt, d, n, False) in table for n in ns)]
        if not kernels:
            continue
        out.append("")
        out.append(f"### Runtime against N, d = {d} (ms, TFLOP/s in parentheses)")
        out.append("")
        out.append("| kernel | dtype | " + " | ".join(f"N = {n}" for n in ns) + " |")
        out.append("|---|---|" + "---|" * len(ns))
        for k, dt in kernels:
            cells = []
            for n in ns:
                v = table.get((k, dt, d, n, False))
                cells.append(f"{fmt_ms(v[0])} ({v[1]:.1f})" if v else "–")
            out.append(f"| `{k}` | {dt} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("### The goals, checked on these numbers")
    out.append("")
    steps = PROGRESSION[:6]
    misses = []
    checked = 0
    for n in (1024, 2048, 4096, 8192, 16384):
        chain = [(k, table.get((k, "fp16" if k == "flash2_wmma" else "fp32", 64, n, False))) for k in steps]
        chain = [(k, v) for k, v in chain if v]
        for (a, va), (b, vb) in zip(chain, chain[1:]):
            checked += 1
            if vb[0] >= va[0]:
                misses.append(f"{b} not faster than {a} at N = {n}")
    out.append(f"- Every step faster than the one before at N ≥ 1024 (d = 64): {checked} consecutive pairs compared, "
               + ("all faster." if not misses else "misses: " + "; ".join(misses) + "."))
    for d, peer, ours, dtype in ((64, "torch_math", "flash2_warp", "fp32"),
                                 (64, "torch_efficient", "flash2_wmma", "fp16"),
                                 (128, "torch_efficient", "flash2_wmma", "fp16")):
        ratios = []
        for n in (2048, 4096, 8192, 16384):
            a, b = table.get((ours, dtype, d, n, False)), table.get((peer, dtype, d, n, False))
            if a and b:
                ratios.append(f"N = {n}: {b[0] / a[0]:.2f}×")
        out.append(f"- `{ours}` ({dtype}, d = {d}) against PyTorch {dict(PEERS)[peer]} {dtype}, N ≥ 2048 "
                   f"(their time / ours): " + ", ".join(ratios) + ".")
    return out


def main():
    check = "--check" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--check"]
    runs = sorted(glob.glob(os.path.join(ROOT, "docs/results/*-h200")))
    run = os.path.abspath(args[0]) if args else runs[-1]
    run_rel = os.path.relpath(run, ROOT)
    table = load(run)
    date, gpu, driver = info(run)
    registry = registry_fields()
    commands = open(os.path.join(run, "commands.txt"), encoding="utf-8").read()
    readme = os.path.join(ROOT, "kernels/README.md")
    same = rewrite_between(readme, "<!-- BEGIN MEASURED: scripts/kernel_results.py -->\n", "<!-- END MEASURED -->",
                           [""] + readme_block(table, registry, date, gpu, driver, run_rel, commands) + [""], "",
                           check)
    if check:
        if not same:
            sys.exit(f"kernel_results: kernels/README.md's progression section differs from {run_rel}")
        print(f"kernel_results: up to date with {run_rel}")
        return
    print(f"kernel_results: {len(table)} measured points from {run_rel} written into kernels/README.md")


if __name__ == "__main__":
    main()
