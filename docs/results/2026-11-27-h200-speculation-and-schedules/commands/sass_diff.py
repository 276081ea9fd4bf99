"""Compare two `cuobjdump -sass` dumps function by function (Flash3Wgmma kernels), ignoring addresses, encodings,
branch targets and constant-bank offsets: per function, how many instructions one has that the other lacks (difflib's
opcodes), so that one inserted instruction counts as one, not as every line after it."""
import difflib, re, sys
def functions(path):
    out, name = {}, None
    for line in open(path):
        m = re.match(r'\s+Function : (\S+)', line)
        if m:
            name = m.group(1); out[name] = []; continue
        m = re.match(r'\s*/\*[0-9a-f]+\*/\s+(.*?);', line)
        if m and name:
            text = re.sub(r'0x[0-9a-f]+', 'X', m.group(1))
            out[name].append(re.sub(r'c\[X\]\[X\]', 'c[P]', text))
    return {k: v for k, v in out.items() if (sys.argv[3] if len(sys.argv) > 3 else 'Flash3Wgmma') in k}
a, b = functions(sys.argv[1]), functions(sys.argv[2])
print(f"{len(a)} functions in the first, {len(b)} in the second")
for k in sorted(set(a) | set(b)):
    if k not in a or k not in b:
        print("only in", "second" if k in b else "first", k); continue
    ops = difflib.SequenceMatcher(None, a[k], b[k], autojunk=False).get_opcodes()
    removed = sum(i2 - i1 for t, i1, i2, j1, j2 in ops if t in ('delete', 'replace'))
    added = sum(j2 - j1 for t, i1, i2, j1, j2 in ops if t in ('insert', 'replace'))
    extra = [b[k][j] for t, i1, i2, j1, j2 in ops if t in ('insert', 'replace') for j in range(j1, j2)]
    print(f"{len(a[k])} -> {len(b[k])} (-{removed} +{added}) {k[:90]} {' | '.join(extra[:4])}")
