#!/usr/bin/env python3
"""Counts the instructions that matter in each kernel of `cuobjdump --dump-sass` output (the flagships' check):
HMMA (mma.sync), LDSM (ldmatrix), LDGSTS (cp.async), HGMMA (wgmma), UTMALDG (TMA tensor loads), SYNCS (mbarrier
operations), MUFU.EX2, BAR.SYNC, and LDL/STL (local memory = spills).

  cuobjdump --dump-sass BINARY | python3 scripts/mma_sass_counts.py [--filter Flash2Mma]
"""
import re
import sys

OPCODES = ["HMMA", "LDSM", "LDGSTS", "HGMMA", "UTMALDG", "SYNCS", "MUFU.EX2", "BAR.SYNC", "LDL", "STL"]


def main():
    wanted = sys.argv[sys.argv.index("--filter") + 1] if "--filter" in sys.argv else ""
    counts, name = {}, None
    for line in sys.stdin:
        match = re.match(r"\s+Function : (\S+)", line)
        if match:
            name = match.group(1)
            counts[name] = dict.fromkeys(OPCODES, 0)
            continue
        if name is None:
            continue
        match = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if not match:
            continue
        opcode = match.group(1)
        for key in OPCODES:
            if opcode == key or opcode.startswith(key + "."):
                counts[name][key] += 1
    print("kernel," + ",".join(OPCODES))
    for name, row in counts.items():
        if wanted in name:
            print(name + "," + ",".join(str(row[k]) for k in OPCODES))


if __name__ == "__main__":
    main()
