#!/usr/bin/env python3
"""Writes the README tables that report device runs, from the CSVs in docs/results/ (nothing typed by hand).

    python3 scripts/results_tables.py [--check]

Each table sits between `<!-- BEGIN TABLE: name (...) -->` and `<!-- END TABLE -->` in README.md or
kernels/README.md; the run it is read from is named in the marker. --check exits 1 when a table differs from
what its CSVs give (a hand edit, or a new run not yet written in). The progression's tables are written by
scripts/kernel_results.py the same way.
"""
import csv
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HW4_RUN = "docs/results/2026-11-21-h200-hw4"
MMA_RUN = "docs/results/mma-run6-2026-11-21"
FLAGSHIP_RUN = "docs/results/2026-11-28-h200-softmax-turns/table-eaeba35"
CAUSAL_RUN = "docs/results/2026-11-21-h200-check"
ABLATION_RUN = "docs/results/2026-11-27-h200-speculation-and-schedules/ablation-3ead09e"
CPU_RUN = "docs/results/2026-11-25-cpu"
GPU_CHECK_RUN = "docs/results/2026-11-25-h100-check"
BACKWARD_RUN = "docs/results/2026-11-25-h100-backward-29b2cc1"
DECODE_RUN = "docs/results/2026-11-25-h200-decode-clean-l2"
RING_RUN = "docs/results/2026-11-26-h200x4-ring"


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


def flagship_key(r):
    return (r["dtype"], int(r["d"]), int(r["causal"]), int(r["n"]))


def flagship_peers():
    peer = {}
    for r in rows(f"{FLAGSHIP_RUN}/torch.csv"):
        peer.setdefault(flagship_key(r), {})[r["kernel"]] = float(r["tflops"])
    return peer


def flagships():
    """flash2_mma and flash3_wgmma (their main pass) against FA2 and cuDNN, TFLOP/s per shape; where the run recorded
    the SM clock (flash2_mma_bench's sm_mhz), the clock flash3_wgmma's timed launches ended at."""
    key = flagship_key
    peer = flagship_peers()
    main, batch_heads, clock = {}, {}, {}
    for r in rows(f"{FLAGSHIP_RUN}/ours.csv"):
        if r["kernel"] == "flash3_fp8":
            continue  # its own table
        if r["options"] == "default" and "@" not in r["kernel"] and r["kernel"] not in main.setdefault(key(r), {}):
            main[key(r)][r["kernel"]] = float(r["tflops"])
            batch_heads[key(r)] = r["batch_heads"]
            if r["kernel"] == "flash3_wgmma" and (r.get("sm_mhz") or "").strip():
                clock[key(r)] = float(r["sm_mhz"])
    out = ["| dtype | d | causal | N | B·H | flash2_mma | flash3_wgmma | FA2 (FLASH) | cuDNN | flash2 / FA2 | "
           "flash3 / FA2 | flash3 / cuDNN |" + (" flash3 SM MHz |" if clock else ""),
           "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if clock else "")]
    for k in main:  # in the order the run timed them
        f2, f3 = main[k].get("flash2_mma"), main[k].get("flash3_wgmma")
        fa2, cudnn = peer.get(k, {}).get("FLASH_ATTENTION"), peer.get(k, {}).get("CUDNN_ATTENTION")
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "–"
        number = lambda x: f"{x:.0f}" if x else "–"
        out.append(f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {batch_heads[k]} | {number(f2)} | "
                   f"{number(f3)} | {number(fa2)} | {number(cudnn)} | {ratio(f2, fa2)} | {ratio(f3, fa2)} | "
                   f"{ratio(f3, cudnn)} |" + (f" {number(clock.get(k))} |" if clock else ""))
    return out


def fp8():
    """flash3_fp8 with its quantization and alone, against the fp8 GEMM ceiling, cuDNN and flash3_wgmma (bf16)."""
    ceiling = {r["op"]: float(r["tflops"]) for r in rows(f"{FLAGSHIP_RUN}/gemm.csv") if r["dtype"] == "fp8_e4m3"}
    peer = flagship_peers()
    f3, fp8_rows = {}, {}
    for r in rows(f"{FLAGSHIP_RUN}/ours.csv"):
        if r["kernel"] == "flash3_wgmma" and r["options"] == "default":
            f3.setdefault(flagship_key(r), float(r["tflops"]))
        if r["kernel"] == "flash3_fp8":
            fp8_rows.setdefault(flagship_key(r), {}).setdefault(r["options"], float(r["tflops"]))
    best = max(ceiling["scaled_mm"], ceiling["scaled_mm_fast_accum"])
    out = ["| d | causal | N | with quantization | attention alone | alone / fp8 GEMM | cuDNN (bf16) | alone / cuDNN | "
           "flash3_wgmma (bf16) | alone / flash3_wgmma |", "|---|---|---|---|---|---|---|---|---|---|"]
    for k, v in fp8_rows.items():  # in the order the run timed them
        alone, cudnn = v["prequantized"], peer[k]["CUDNN_ATTENTION"]
        out.append(f"| {k[1]} | {'yes' if k[2] else 'no'} | {k[3]} | {v['default']:.0f} | **{alone:.0f}** | "
                   f"{alone / best:.2f} | {cudnn:.0f} | {alone / cudnn:.2f} | {f3[k]:.0f} | {alone / f3[k]:.2f} |")
    out.append("")
    out.append(f"Dense GEMM ceiling, 8192³, same run (`scripts/gemm_ceiling.py`): fp8 e4m3 `torch._scaled_mm` "
               f"{ceiling['scaled_mm']:.0f} TFLOP/s, {ceiling['scaled_mm_fast_accum']:.0f} with use_fast_accum (the "
               f"\"fp8 GEMM\" column divides by the larger).")
    return out


def fp8_error():
    """flash3_fp8's largest error against float64 and its share of the derived bound (the fp8 test's lines)."""
    pattern = re.compile(r"fp8 error (\S+) d=(\d+) (\S+) (\S+): on its inputs max \|error\| (\S+) \((\S+) of the "
                         r"bound\); end to end (\S+) \((\S+)\)")
    out = ["| d | mask | softmax | on its quantized inputs: max abs error | share of the bound | "
           "end to end: max abs error | share of the bound |", "|---|---|---|---|---|---|---|"]
    found = []
    for line in text(f"{FLAGSHIP_RUN}/tests.log").splitlines():
        m = pattern.search(line)
        if m and m.group(1) == "default":
            found.append(m)
    # In the order of the test's cases, also when the tests ran in shards: d, then full before causal, spread first.
    found.sort(key=lambda m: (int(m.group(2)), m.group(3) != "full", m.group(4) != "spread"))
    for m in found:
        out.append(f"| {m.group(2)} | {m.group(3)} | {m.group(4)} | {m.group(5)} | {m.group(6)} | {m.group(7)} | "
                   f"{m.group(8)} |")
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


def text(path):
    return open(os.path.join(ROOT, path), encoding="utf-8").read()


def flash2_ablation():
    """flash2_mma's options bits, one at a time and all together, against the default kernel of the same run."""
    key = lambda r: (r["dtype"], int(r["d"]), int(r["causal"]), int(r["n"]))
    default = {key(r): float(r["tflops"]) for r in rows(f"{ABLATION_RUN}/ours.csv") if r["options"] == "default"}
    out = ["| options (bits off) | dtype | d | causal | N | TFLOP/s | default / this |",
           "|---|---|---|---|---|---|---|"]
    for r in rows(f"{ABLATION_RUN}/ours.csv"):
        if r["options"] != "default":
            tflops = float(r["tflops"])
            out.append(f"| {r['options']} | {r['dtype']} | {r['d']} | {'yes' if r['causal'] == '1' else 'no'} | "
                       f"{r['n']} | {tflops:.0f} | {default[key(r)] / tflops:.2f}× |")
    return out


def flash3_options():
    """flash3_wgmma's options bits: the range of default / this over dtypes and N, per d and mask. The ablation
    pass times the default right before its variants, so each ratio is taken against that default."""
    ratios, default = {}, None
    for r in rows(f"{MMA_RUN}/ours.csv"):
        if r["kernel"] != "flash3_wgmma":
            continue
        if r["options"] == "default":
            default = float(r["tflops"])
        elif default:
            ratios.setdefault(r["options"], {}).setdefault((int(r["d"]), int(r["causal"])), []).append(
                default / float(r["tflops"]))
    what = {"serial-softmax": "the intra-warpgroup overlap (softmax of tile j while the tensor cores add "
                              "P̃_{j−1}V_{j−1}; FA3's Algorithm 2)",
            "direct-store": "O through shared memory and 16-byte stores",
            "other-grid": "the persistent grid (causal d = 128: one block per Q tile, the default there)"}
    columns = [(64, 0), (64, 1), (128, 0), (128, 1)]
    out = ["| options bit | what it turns off | d = 64 full | d = 64 causal | d = 128 full | d = 128 causal |",
           "|---|---|---|---|---|---|"]
    for option, by_shape in ratios.items():
        cells = [f"{min(by_shape[c]):.2f}-{max(by_shape[c]):.2f}×" for c in columns]
        out.append(f"| {option} | {what[option]} | " + " | ".join(cells) + " |")
    return out


def ncu():
    """Nsight Compute's launch figures for flash2_mma and FA2, fp16, d = 128, without the mask."""
    metrics = {"duration (ms)": r"Duration\s+ms\s+(\S+)",
               "registers / thread, blocks / SM": None,
               "shared memory / block (KB)": r"Dynamic Shared Memory Per Block\s+Kbyte/block\s+(\S+)",
               "issued warps / scheduler / cycle": r"Issued Warp Per Scheduler\s+(\S+)",
               "eligible warps / scheduler": r"Eligible Warps Per Scheduler\s+warp\s+(\S+)",
               "DRAM throughput (%)": r"DRAM Throughput\s+%\s+(\S+)"}
    launches = [("flash2_mma", "flash2_mma", 1024), ("FA2", "fa2", 1024), ("flash2_mma", "flash2_mma", 16384),
                ("FA2", "fa2", 16384)]
    reports = [text(f"{CAUSAL_RUN}/ncu-{file}-n{n}.txt") for _, file, n in launches]
    out = ["| | " + " | ".join(f"{name} N = {n}" for name, _, n in launches) + " |", "|---" * 5 + "|"]
    for label, pattern in metrics.items():
        cells = []
        for report in reports:
            if pattern:
                value = re.search(pattern, report).group(1)
                cells.append(f"{float(value):.1f}" if label.startswith("shared") or label.startswith("DRAM")
                             else value)
            else:
                limits = [int(v) for v in re.findall(r"Block Limit \w[\w ]*?\s+block\s+(\d+)", report)]
                registers = re.search(r"Registers Per Thread\s+register/thread\s+(\d+)", report).group(1)
                cells.append(f"{registers}, {min(limits)}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return out


def sass():
    """Static SASS instruction counts of the four default kernels (fp16), from the run's cuobjdump."""
    lines = text(f"{MMA_RUN}/info.txt").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("kernel,HMMA"))
    counts = {}
    for line in lines[header + 1:]:
        if not line.startswith("_Z"):
            break
        name, *values = line.split(",")
        counts[name] = values
    # The template's last argument is the set of flags turned on. flash2_mma's defaults are DefaultFlags<kD>() in
    # kernels/cuda/mma/flash2_mma_kernel.cuh: swizzle, pipeline, P̃ in registers and 32 rows a warp (1+2+4+16),
    # with Q_i in registers (8) at d = 64 only; flash3_wgmma's turns on both of its flags (3). Since 2026-11-27 the
    # shipped flash2_mma kernel has no flags argument (its switches are the ablation kernels'): runs before that
    # name it with its flags, later ones without; since its whole-tiles form (kWhole, the one without the mask at
    # N a multiple of 128) it has a bool argument, and that form is the one counted.
    kernels = [("flash2_mma d = 64 (default)", ("Flash2MmaKernelI6__halfLi64ELj31E", "Flash2MmaKernelI6__halfLi64EE",
                                                "Flash2MmaKernelI6__halfLi64ELb1EE")),
               ("flash2_mma d = 128 (default)",
                ("Flash2MmaKernelI6__halfLi128ELj23E", "Flash2MmaKernelI6__halfLi128EE",
                 "Flash2MmaKernelI6__halfLi128ELb1EE")),
               ("flash3_wgmma d = 64 (default)", ("Flash3WgmmaKernelI6__halfLi64ELj3E",)),
               ("flash3_wgmma d = 128 (default)", ("Flash3WgmmaKernelI6__halfLi128ELj3E",))]
    columns = lines[header].split(",")[1:]
    out = ["| kernel | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for label, mangled in kernels:
        values = next(v for name, v in counts.items() if any(m in name for m in mangled))
        out.append(f"| {label} | " + " | ".join(values) + " |")
    return out


def benchmark_medians(name):
    data = json.load(open(os.path.join(ROOT, CPU_RUN, name), encoding="utf-8"))
    return {b["run_name"]: b for b in data["benchmarks"] if b.get("aggregate_name") == "median"}


def cpu_benchmarks():
    """The model and the CPU path on the machine without a GPU: medians of Google Benchmark repetitions."""
    cpu, stepper = benchmark_medians("cpu_attention.json"), benchmark_medians("stepper.json")
    ms = lambda b: b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
    fast, ref = cpu["BM_FastFloat32/2048/64/real_time"], cpu["BM_ReferenceFloat64/2048/64/real_time"]
    fast4k = cpu["BM_FastFloat32/4096/64/real_time"]
    kv, q = stepper["BM_StateAtN4096/0/50"], stepper["BM_StateAtN4096/1/50"]
    ledger48, ledger16 = stepper["BM_CountOnlyN32768/0/64/49152"], stepper["BM_CountOnlyN32768/0/64/16384"]
    steps = lambda b: f"{int(b['label'].split()[0]) / 1e6:.1f} M steps"  # the label: "N steps, B_r=…"
    out = ["| what | command | result |", "|---|---|---|",
           f"| fast CPU FlashAttention vs the float64 reference, N = 2048, d = 64 | `build/bench/cpu_attention_bench "
           f"--benchmark_repetitions=5` | {ms(fast):.3g} ms vs {ms(ref):.3g} ms: **{ms(ref) / ms(fast):.0f}×** "
           f"({fast['GFLOP/s']:.0f} GFLOP/s vs {ref['GFLOP/s']:.1f}) |",
           f"| the same at N = 4096, d = 64 | same | {ms(fast4k):.3g} ms ({fast4k['GFLOP/s']:.0f} GFLOP/s) |",
           f"| StateAt (jump to any step) at N = 4096, d = 64, M = 48 KiB, middle of the run | "
           f"`build/bench/stepper_bench` | {ms(kv):.2g} ms (kv), {ms(q):.2g} ms (q: tile i computed through all its "
           f"K/V tiles) |",
           f"| backward pass: StateAt at N = 4096, d = 64, M = 48 KiB (B_r = B_c = "
           f"{stepper['BM_BackwardStateAtN4096']['label'].split('=')[-1]}), middle of the run | same | "
           f"{ms(stepper['BM_BackwardStateAtN4096']):.2g} ms |",
           f"| backward pass: opening that problem (the forward pass for O, L and D, its Q tiles on both cores) | "
           f"same | {ms(stepper['BM_BackwardOpenN4096']):.3g} ms |",
           f"| count-only ledger, N = 32768, d = 64, M = 48 KiB ({steps(ledger48)}) | same | {ms(ledger48):.3g} ms |",
           f"| count-only ledger, N = 32768, d = 64, M = 16 KiB (B_r = B_c = 16, {steps(ledger16)}) | same | "
           f"{ms(ledger16):.3g} ms |"]
    return out


def frame_cells(line):
    """'frame time: median 7.70 ms (130.0 fps), p95 9.40 ms (106.4 fps)' -> the two table cells."""
    m = re.search(r"median (\S+) ms \((\S+) fps\), p95 (\S+) ms \((\S+) fps\)", line)
    return (f"{float(m.group(1)):.1f} ms ({float(m.group(2)):.0f} fps)",
            f"{float(m.group(3)):.1f} ms ({float(m.group(4)):.0f} fps)")


def gpu_check_summary():
    """The newest summary of the GPU check run (scripts/gpu_check.sh writes one per commit it checked)."""
    paths = glob.glob(os.path.join(ROOT, GPU_CHECK_RUN, "summary-*.txt"))
    return text(os.path.relpath(max(paths, key=lambda p: re.search(r"^date: (\S+)", open(p).read(), re.M)[1]), ROOT))


def gui_frames():
    """--bench-frames under Xvfb and llvmpipe on the machine without a GPU, and through EGL on the GPU."""
    cpu = re.search(r"^cpu: (.*)$", text(f"{CPU_RUN}/machine.txt"), re.M)[1]
    frames = text(f"{CPU_RUN}/frames.txt")
    load = re.search(r"^# load average before: (\S+)", frames, re.M)[1]
    out = ["| where | command | median | p95 |", "|---|---|---|---|"]
    for i, line in enumerate(line for line in frames.splitlines() if not line.startswith("#")):
        options, result = line.split("\t")[:2]  # then the UI-and-model part, not tabled
        where = f"{cpu}, Xvfb + Mesa llvmpipe, load ≈ {float(load):.1f}" if i == 0 else "same"
        command = f'`xvfb-run -a -s "-screen 0 1920x1080x24" flashviz {options}`'
        out.append(f"| {where} | {command} | " + " | ".join(frame_cells(result)) + " |")
    summary = gpu_check_summary()
    gpu = re.search(r"^(NVIDIA [^,]+),", summary, re.M)[1]
    command = re.search(r"^(--bench-frames: .*|bench-frames: .*)$", summary, re.M)
    gpu_frames = re.search(r"^frame time: .*$", summary, re.M)[0]
    out.append(f"| {gpu}, EGL (no display) | `flashviz --n 1024 --d 64 --sram 49152 --step 2000 --width 1920 "
               f"--height 1080 --gl egl --bench-frames 300` | " + " | ".join(frame_cells(gpu_frames)) + " |")
    return out


def build_time():
    """A fresh build of the CUDA flagships' library on the machine without a GPU."""
    fields = dict(line.split(": ", 1) for line in text(f"{CPU_RUN}/build_time.txt").splitlines())
    cpu = re.search(r"^cpu: (.*)$", text(f"{CPU_RUN}/machine.txt"), re.M)[1]
    commit = fields["commit"]
    return ["| tree | machine | command | wall | CPU (user + sys) |", "|---|---|---|---|---|",
            f"| {commit} | {cpu}, load average {fields['load average before the build'].split()[0]} before | "
            f"`{fields['command']}` | {float(fields['wall_s']):.0f} s | {float(fields['cpu_s']):.0f} s |"]


def record():
    """`flashviz --record` of 100 steps at 1280×720 on the machine without a GPU (llvmpipe)."""
    out = ["| file | command | wall (s) | what it wrote |", "|---|---|---:|---|"]
    for line in text(f"{CPU_RUN}/record.txt").splitlines():
        options, wall, said = line.split("\t")
        file = options.split()[-1]
        what = said.split(": ", 1)[1].split(" (EGL")[0]
        out.append(f"| {file} | `flashviz {options}` | {float(wall):.1f} | {what} |")
    return out


def rounding():
    """The hw4 rounding model: worst |O − float64| per arithmetic; bold past the assignment's 5e-3 margin."""
    names = {"fp16": "fp16 (RNE)", "tf32-rna": "TF32, cvt.rna", "tf32-trunc": "TF32, raw fp32 bits (truncated)",
             "3xtf32": "3×TF32 (the tf32x3 kernel's arithmetic)", "fp32": "fp32"}

    def cell(value):
        mantissa, exponent = f"{value:.1e}".split("e")
        text = f"{mantissa}e{int(exponent)}"
        return f"**{text}**" if value > 5e-3 else text

    out = ["| arithmetic | random inputs | two-key, nearest rounding | two-key, truncation |", "|---|---:|---:|---:|"]
    for line in text(f"{CPU_RUN}/rounding.txt").splitlines()[2:]:
        name, *values = line.split()
        out.append(f"| {names[name]} | " + " | ".join(cell(float(v)) for v in values) + " |")
    return out


def live_gpu():
    """What the GPU check run says of the instrumented kernels, trace --gpu and the live tab."""
    summary = gpu_check_summary()
    tests = {m[1]: m[2].strip() for m in re.finditer(r"^(\w+_tests)\s+rc=\d+\s+(.*)$", summary, re.M)}
    out = ["| check | result |", "|---|---|",
           f"| instrumented kernels vs the stepper, random shapes, both orders, causal (`cuda_probe_tests`) | "
           f"{tests['cuda_probe_tests']} |",
           f"| interop texture vs the host-computed colormap, pixel for pixel (`interop_tests`, EGL) | "
           f"{tests['interop_tests']} |",
           f"| the live tab rendered headless, both orders, causal and not, and the backward pass (`live_view_tests`) | "
           f"{tests['live_view_tests']} |"]
    if "kernels_cuda_backward_gpu_tests" in tests:
        out.append(f"| the backward variants against the float64 reference, every dtype, d, mask, edge N "
                   f"(`kernels_cuda_backward_gpu_tests`) | {tests['kernels_cuda_backward_gpu_tests']} |")
    for order, line in re.findall(r"^(kv|q): (.*agrees.*)$", summary, re.M):
        agreement = line.split(": agrees")[1].split(" (tolerance")[0].replace("|", "\\|")
        out.append(f"| `trace --gpu --n 1000 --d 64 --sram 49152 --causal --order {order}` | agrees{agreement} |")
    for line in re.findall(r"^backward: (.*agrees.*)$", summary, re.M)[:1]:
        agreement = line.split(": agrees")[1].split(" (relative")[0].replace("|", "\\|")
        out.append(f"| `trace --gpu --pass backward --n 1000 --d 64 --br 64 --bc 64 --causal` | agrees{agreement} |")
    # The check draws the tab at 1280×720 and 1920×1080 through interop, then at 1920×1080 through the host; the
    # backward pass's tab through interop.
    for path in ["interop", "host copy"]:
        timings = [t for t in re.findall(rf"^live GPU timings: (.*\({path}\))$", summary, re.M) if "naive" in t]
        if timings:
            out.append(f"| live tab, N = 512, d = 64, q order, drawn through {'the ' if path == 'host copy' else ''}"
                       f"{path}: what it times | {timings[-1]} |")
    backward = [t for t in re.findall(r"^live GPU timings: (.*)$", summary, re.M) if "flash2_bwd" in t]
    if backward:
        out.append(f"| live tab, backward pass, N = 512, d = 64, B_r = B_c = 64, causal, drawn through interop: what it "
                   f"times | {backward[-1]} |")
    frames = re.search(r"^frame time: .*$", summary, re.M)
    if frames:
        out.append(f"| the GUI at N = 1024 (1920×1080, EGL), `--bench-frames 300` | "
                   f"{frames[0][len('frame time: '):]} |")
    return out


def backward():
    """The backward pass: each of our rows beside every PyTorch backend's on the same (dtype, d, mask, N), TFLOP/s
    (10·B·H·N²·d, halved causal) with ours/theirs; _atomic and _dqpass rows are flash2_bwd_mma's other dQ strategy."""
    all_rows = [r for path in sorted(glob.glob(os.path.join(ROOT, BACKWARD_RUN, "bwd_*.csv"))) for r in rows(path)]
    key = lambda r: (r["dtype"], int(r["d"]), int(r["causal"]), int(r["N"]))
    peers = {}
    for r in all_rows:
        if r["kernel"].startswith("torch_"):
            peers.setdefault(key(r), {})[r["kernel"]] = r
    names = [("torch_flash_bwd", "FLASH"), ("torch_cudnn_bwd", "CUDNN"), ("torch_efficient_bwd", "EFFICIENT"),
             ("torch_math_bwd", "MATH")]
    out = ["| kernel | dtype | d | causal | N | TFLOP/s | " + " | ".join(label for _, label in names) + " |",
           "|---|---|---|---|---|---|" + "---|" * len(names)]
    ours = [r for r in all_rows if not r["kernel"].startswith("torch_")]
    for r in sorted(ours, key=lambda r: (r["dtype"] != "fp16", key(r), r["kernel"])):
        ok = r["status"] == "ok"
        cells = []
        for name, _ in names:
            p = peers.get(key(r), {}).get(name)
            if p is None:
                cells.append("–")
            elif p["status"] != "ok":
                cells.append("n/a")
            else:
                theirs = float(p["tflops"])
                cells.append(f"{theirs:.1f} ({float(r['tflops']) / theirs:.2f}×)" if ok else f"{theirs:.1f}")
        mine = f"{float(r['tflops']):.1f}" if ok else r["status"].replace("|", "\\|")
        out.append(f"| {r['kernel']} | {r['dtype']} | {r['d']} | {'yes' if r['causal'] == '1' else 'no'} | {r['N']} | "
                   f"{mine} | " + " | ".join(cells) + " |")
    return out


def decode():
    """Decoding: GB/s of the KV cache per (dtype, B, N), ours and PyTorch's SDPA backends from one run (gpu_check.sh's
    decode part), each with its share of the run's device copy; flash_decode / cuDNN and paged / flash_decode."""
    ours = [r for path in sorted(glob.glob(os.path.join(ROOT, DECODE_RUN, "decode_fp16.csv")) +
                                 glob.glob(os.path.join(ROOT, DECODE_RUN, "decode_bf16.csv"))) for r in rows(path)]
    peers = [r for path in sorted(glob.glob(os.path.join(ROOT, DECODE_RUN, "decode_peers_*.csv"))) for r in rows(path)]
    table = {}
    for r in ours + peers:
        if r["kernel"] == "torch_copy":
            continue
        table.setdefault((r["dtype"], int(r["B"]), int(r["N"])), {})[r["kernel"]] = r
    copy = {r["dtype"]: float(r["copy_gbps"]) for r in ours if r.get("copy_gbps")}
    paged256 = {(r["dtype"], int(r["B"]), int(r["N"])): r
                for r in rows(os.path.join(DECODE_RUN, "decode_paged256_fp16.csv"))}
    gbps = lambda r: float(r["gbps"]) if r and r["status"] == "ok" else None
    cell = lambda v, c: "n/a" if v is None else f"{v:.0f} ({100 * v / c:.0f}%)"
    ratio = lambda a, b: "–" if a is None or b is None else f"{a / b:.2f}×"
    out = ["| dtype | B | N | cache | decode_naive | flash_decode | paged, P = 64 | paged / flash | paged, P = 256 | "
           "cuDNN | flash / cuDNN | FLASH | MATH |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (dtype, b, n), k in sorted(table.items(), key=lambda kv: (kv[0][0] != "fp16", kv[0][1], kv[0][2])):
        c = copy[dtype]
        any_row = next(iter(k.values()))
        cache = 2 * b * int(any_row["kv_heads"] or 8) * n * int(any_row["d"]) * 2 / 2**20
        naive, flash, paged = (gbps(k.get(x)) for x in ("decode_naive", "flash_decode", "flash_decode_paged"))
        cudnn, fa, math_ = (gbps(k.get(x)) for x in ("torch_cudnn_decode", "torch_flash_decode", "torch_math_decode"))
        p256 = gbps(paged256.get((dtype, b, n)))
        p256_cell = "–" if (dtype, b, n) not in paged256 else f"{cell(p256, c)}, {ratio(p256, flash)}"
        out.append(f"| {dtype} | {b} | {n} | {cache:.0f} MiB | {cell(naive, c)} | {cell(flash, c)} | {cell(paged, c)} | "
                   f"{ratio(paged, flash)} | {p256_cell} | {cell(cudnn, c)} | {ratio(flash, cudnn)} | {cell(fa, c)} | "
                   f"{cell(math_, c)} |")
    out.append("")
    out.append("Shares are of the same run's device copy (flashviz's copy kernel, read + write): " +
               ", ".join(f"{copy[d]:.0f} GB/s in the {d} sweep" for d in sorted(copy)) + ".")
    return out


def decode_splits():
    """flash_decode's split count forced from 1 to 128 against the automatic rule, fp16: GB/s (splits run)."""
    table, forced = {}, [1, 2, 4, 8, 16, 32, 64, 128, 0]
    for s in forced:
        for r in rows(os.path.join(DECODE_RUN, f"decode_splits_{s}.csv")):
            table.setdefault((int(r["B"]), int(r["N"])), {})[s] = (
                f"{float(r['gbps']):.0f} ({r['splits']})" if r["status"] == "ok" else "n/a")
    out = ["| B | N | " + " | ".join("rule" if s == 0 else str(s) for s in forced) + " |",
           "|---|---|" + "---|" * len(forced)]
    for (b, n), cells in sorted(table.items()):
        best = max((float(v.split()[0]) for k, v in cells.items() if k and v != "n/a"), default=0)
        marked = {k: (f"**{v}**" if k and v != "n/a" and float(v.split()[0]) == best else v) for k, v in cells.items()}
        out.append(f"| {b} | {n} | " + " | ".join(marked.get(s, "–") for s in forced) + " |")
    return out


def ring():
    """Ring attention over the GPUs of one machine (bench --ring through NCCL, both sweeps of one run): per (mask, N,
    P) the median time, TFLOP/s per GPU, the speedup over P = 1 and its efficiency against the ideal P×, compute and
    exchanges timed alone, the share of the exchange hidden, and the validated error; N that a GPU's budget cannot
    hold on one GPU say so."""
    out = ["| mask, slices | N | P | ms | TFLOP/s a GPU | speedup (ideal P×) | efficiency | compute alone, ms | "
           "exchanges alone, ms | exchange hidden | max abs error |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in ("non-causal", "causal"):
        for r in rows(os.path.join(RING_RUN, f"ring_{name}.csv")):
            mask = f"causal, {r['assignment']}" if r["causal"] == "1" else f"none, {r['assignment']}"
            head = f"| {mask} | {r['N']} | {r['P']} |"
            if r["fits"] != "1":
                out.append(head + " does not fit the budget | – | – | – | – | – | – | – |")
                continue
            base = "" if r["efficiency_base_n"] == r["N"] else f" (against P = 1 at N = {r['efficiency_base_n']})"
            speedup = f"{float(r['speedup']):.2f}× ({r['ideal']}×)" if r["efficiency_base_n"] == r["N"] else \
                f"– ({r['ideal']}×)"
            hidden = "–" if r["hidden"] == "nan" else f"{100 * float(r['hidden']):.0f}%"
            out.append(f"{head} {float(r['ms_median']):.2f} | {float(r['tflops_per_gpu']):.0f} | {speedup} | "
                       f"{100 * float(r['efficiency']):.0f}%{base} | {float(r['compute_ms']):.2f} | "
                       f"{float(r['exchange_ms']):.2f} | {hidden} | {float(r['max_abs_error']):.1e} |")
    first = rows(os.path.join(RING_RUN, "ring_non-causal.csv"))[0]
    out.append("")
    out.append(f"{first['gpu']}, {first['transport']}, {first['dtype']}, B = {first['B']}, H = {first['H']}, "
               f"d = {first['d']}; budget {int(first['budget_bytes']) / 2**30:.0f} GiB a GPU.")
    return out


TABLES = {"hw4-kernels": ("README.md", hw4_kernels, HW4_RUN),
          "hw4-end-to-end": ("README.md", hw4_end_to_end, HW4_RUN),
          "flagships": ("kernels/README.md", flagships, FLAGSHIP_RUN),
          "fp8": ("kernels/README.md", fp8, FLAGSHIP_RUN),
          "fp8-error": ("kernels/README.md", fp8_error, FLAGSHIP_RUN),
          "causal": ("kernels/README.md", causal, CAUSAL_RUN),
          "flash2-ablation": ("kernels/README.md", flash2_ablation, ABLATION_RUN),
          "flash3-options": ("kernels/README.md", flash3_options, MMA_RUN),
          "ncu": ("kernels/README.md", ncu, CAUSAL_RUN),
          "sass": ("kernels/README.md", sass, MMA_RUN),
          "cpu-benchmarks": ("README.md", cpu_benchmarks, CPU_RUN),
          "gui-frames": ("README.md", gui_frames, CPU_RUN + " and " + GPU_CHECK_RUN),
          "live-gpu": ("README.md", live_gpu, GPU_CHECK_RUN),
          "build-time": ("kernels/README.md", build_time, CPU_RUN),
          "record": ("README.md", record, CPU_RUN),
          "rounding": ("README.md", rounding, CPU_RUN),
          "backward": ("kernels/README.md", backward, BACKWARD_RUN),
          "decode": ("kernels/README.md", decode, DECODE_RUN),
          "decode-splits": ("kernels/README.md", decode_splits, DECODE_RUN),
          "ring": ("kernels/README.md", ring, RING_RUN)}


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
