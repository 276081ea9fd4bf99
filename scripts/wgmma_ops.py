#!/usr/bin/env python3
"""Writes kernels/cuda/mma/wgmma_ops.inc: the wgmma.mma_async instructions the Hopper kernels issue, one
specialization of `Wgmma<Element, N>` per element type and N, with the SS form (A and B from shared memory, both
K-major), the RS form (A from registers; in 16 bits with B N-major, P̃V's) and in 16 bits at N = 128 `RSKMajor` (A from
registers, B K-major: S = Q_i K_jᵀ with Q_i in registers).

Inline PTX takes no arrays, so every accumulator register of an instruction (N/2 of them: 64 rows x N columns over
128 threads) is spelled out; this script spells them out instead of a person. The accumulator layout, the A
register layout and the descriptors are explained where the kernels use them (flash3_kernel.cuh).

  python3 scripts/wgmma_ops.py            rewrite the file
  python3 scripts/wgmma_ops.py --check    exit 1 when the file differs from what this script writes (a test)
"""
import argparse
import pathlib
import sys

OUTPUT = pathlib.Path(__file__).resolve().parent.parent / "kernels" / "cuda" / "mma" / "wgmma_ops.inc"

# (C++ element type, PTX type, k per instruction, SS widths, RS widths, B major-ness of the RS form, widths of a
# second RS form with B K-major, `RSKMajor`: S = Q_i K_jᵀ with Q_i in registers, where the RS form is P̃V's)
ELEMENTS = [
    ("__half", "f16", 16, (64, 80, 128), (64, 72, 128, 256), "N-major", (128,)),
    ("__nv_bfloat16", "bf16", 16, (64, 80, 128), (64, 72, 128, 256), "N-major", (128,)),
    ("__nv_fp8_e4m3", "e4m3", 32, (128,), (64, 128, 136, 256), "K-major", ()),
]


def registers(first, count):
    return ", ".join(f"%{first + i}" for i in range(count))


def outputs(count):
    items = [f'"+f"(d[{i}])' for i in range(count)]
    lines, line = [], "        : "
    for item in items:
        piece = item + ", "
        if len(line) + len(piece) > 118:
            lines.append(line.rstrip())
            line = "          "
        line += piece
    lines.append(line.rstrip().rstrip(","))
    return "\n".join(lines)


def instruction(n, ptx, k):
    return f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptx}.{ptx} "


def asm_string(text):
    """The PTX text as C string literal lines of at most ~110 characters."""
    pieces, line = [], ""
    for token in text.split(" "):
        if len(line) + len(token) + 1 > 100:
            pieces.append(line)
            line = ""
        line += token + " "
    pieces.append(line.rstrip())
    return "\n".join(f'        "{piece}"' for piece in pieces if piece)


def ss(n, ptx, k, sixteen_bit):
    acc = n // 2
    pred = acc + 2
    # f16/bf16 carry the two transpose immediates (0, 0: both K-major); fp8 has none (always K-major).
    tail = "p, 1, 1, 0, 0;" if sixteen_bit else "p, 1, 1;"
    body = (f"{{{registers(0, acc)}}}, %{acc}, %{acc + 1}, {tail}\\n}}\\n")
    return (
        f"  // D (+)= A·B, m64n{n}k{k}, A and B from shared memory, both K-major; accumulate = 0 ignores D's old value.\n"
        f"  static __device__ __forceinline__ void SS(float (&d)[{acc}], std::uint64_t a_desc, std::uint64_t b_desc,\n"
        f"                                            int accumulate) {{\n"
        f"    asm volatile(\n"
        f'        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{pred}, 0;\\n"\n'
        f"{asm_string(instruction(n, ptx, k) + body)}\n"
        f"{outputs(acc)}\n"
        f'        : "l"(a_desc), "l"(b_desc), "r"(accumulate));\n'
        f"  }}\n")


def rs(n, ptx, k, sixteen_bit, b_major, name="RS"):
    acc = n // 2
    pred = acc + 5
    # f16/bf16: the one transpose immediate of B (1: N-major, 0: K-major); fp8 B is always K-major.
    tail = ("p, 1, 1, 1;" if b_major == "N-major" else "p, 1, 1, 0;") if sixteen_bit else "p, 1, 1;"
    body = f"{{{registers(0, acc)}}}, {{{registers(acc, 4)}}}, %{acc + 4}, {tail}\\n}}\\n"
    return (
        f"  // D (+)= A·B, m64n{n}k{k}, A from registers (per warp the m16n8k{k} A layout), B from shared memory, "
        f"{b_major}.\n"
        f"  static __device__ __forceinline__ void {name}(float (&d)[{acc}], const std::uint32_t (&a)[4], "
        f"std::uint64_t b_desc,\n"
        f"{' ' * (len(name) + 42)}int accumulate) {{\n"
        f"    asm volatile(\n"
        f'        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{pred}, 0;\\n"\n'
        f"{asm_string(instruction(n, ptx, k) + body)}\n"
        f"{outputs(acc)}\n"
        f'        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));\n'
        f"  }}\n")


def generate():
    out = ["// Written by scripts/wgmma_ops.py (do not edit; run the script): the wgmma.mma_async instructions of the",
           "// Hopper kernels, one Wgmma<Element, N> per element type and N. Included by kernels/cuda/mma/hopper.cuh.",
           "",
           "template <typename Element, int kN>",
           "struct Wgmma;",
           ""]
    for cpp, ptx, k, ss_widths, rs_widths, b_major, rs_k_major_widths in ELEMENTS:
        sixteen_bit = k == 16
        for n in sorted(set(ss_widths) | set(rs_widths) | set(rs_k_major_widths)):
            out.append("template <>")
            out.append(f"struct Wgmma<{cpp}, {n}> {{")
            parts = []
            if n in ss_widths:
                parts.append(ss(n, ptx, k, sixteen_bit))
            if n in rs_widths:
                parts.append(rs(n, ptx, k, sixteen_bit, b_major))
            if n in rs_k_major_widths:
                parts.append(rs(n, ptx, k, sixteen_bit, "K-major", "RSKMajor"))
            out.append("".join(parts).rstrip("\n"))
            out.append("};")
            out.append("")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = generate()
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT} is not what scripts/wgmma_ops.py writes: run the script", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
