"""Compare two `cuobjdump -sass` dumps function by function, ignoring addresses, encodings and constant-bank
offsets (the kernel parameters' offsets move when Flash3Params grows): prints each Flash3Wgmma function as same or
how many instructions differ."""
import re, sys
def functions(path):
    out, name = {}, None
    for line in open(path):
        m = re.match(r'\s+Function : (\S+)', line)
        if m:
            name = m.group(1); out[name] = []; continue
        m = re.match(r'\s*/\*[0-9a-f]+\*/\s+(.*?);', line)
        if m and name:
            out[name].append(re.sub(r'c\[0x0\]\[0x[0-9a-f]+\]', 'c[0x0][P]', re.sub(r'0x[0-9a-f]{6,}', 'ADDR', m.group(1))))
    return {k: v for k, v in out.items() if 'Flash3Wgmma' in k}
a, b = functions(sys.argv[1]), functions(sys.argv[2])
same = sum(1 for k in a if k in b and a[k] == b[k])
print(f"{len(a)} functions in the first, {len(b)} in the second, {same} identical")
for k in sorted(set(a) | set(b)):
    if k not in a or k not in b: print("only in", "second" if k in b else "first", k)
    elif a[k] != b[k]: print("differs", k, sum(x != y for x, y in zip(a[k], b[k])) + abs(len(a[k]) - len(b[k])), "instructions")
