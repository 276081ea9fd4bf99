#!/usr/bin/env bash
# `flashviz kernels` and `flashviz bench` as a user runs them: exit status, messages, files left behind.
# With a GPU, a tiny sweep must produce a CSV with a validated row; without one, bench must say why and exit 1.
set -u
flashviz=${1:?path to flashviz}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$flashviz" kernels --brief) || fail "kernels exited $?"
for id in naive tiled flash1 flash2_row flash2_warp flash2_wmma math; do
  grep -q " $id " <<<"$out" || fail "kernels does not list $id"
done

err=$("$flashviz" bench --kernels no_such --n 64 --csv "$dir/x.csv" 2>&1) && fail "unknown kernel accepted"
grep -q "unknown kernel 'no_such'" <<<"$err" || fail "unknown kernel message: $err"
err=$("$flashviz" bench --n 64 --repeats 3 --csv "$dir/x.csv" 2>&1) && fail "--repeats 3 accepted"
grep -q "at least 20" <<<"$err" || fail "repeats message: $err"
[ -e "$dir/x.csv" ] && fail "a refused bench left a CSV"

if err=$("$flashviz" bench --kernels flash2_warp,flash2_wmma --n 100 --d 64 --batch 1 --heads 2 \
    --csv "$dir/b.csv" 2>&1); then
  # A GPU: the CSV has the header, a validated flash2_warp row and flash2_wmma's "not applicable" (fp32).
  head -1 "$dir/b.csv" | grep -q "^kernel,dtype,B,H,N,d,causal,ms_median" || fail "CSV header"
  grep -q "^flash2_warp,fp32,1,2,100,64,0,[0-9.]" "$dir/b.csv" || fail "no measured flash2_warp row"
  grep -q "^flash2_wmma,.*not applicable: fp32: flash2_wmma runs fp16, bf16 only" "$dir/b.csv" || fail "no n/a row"
else
  grep -Eq "bench (needs a CUDA GPU|runs the CUDA kernels: this flashviz was built without CUDA)" <<<"$err" ||
    fail "no-GPU message: $err"
  [ -e "$dir/b.csv" ] && fail "bench without a GPU left a CSV"
fi

# --replot draws the PNG from CSVs alone, where viz/ is built; elsewhere it says why.
printf 'kernel,dtype,B,H,N,d,ms_median\nnaive,fp32,1,1,512,64,2.5\nnaive,fp32,1,1,1024,64,9.8\n'\
'torch_math,fp32,1,1,1024,64,1.0\n' > "$dir/r.csv"
if "$flashviz" bench --replot "$dir/r.csv" --png "$dir/r.png" 2> "$dir/err"; then
  [ "$(head -c 4 "$dir/r.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "--replot wrote no PNG"
else
  grep -q "built without viz" "$dir/err" || fail "--replot: $(cat "$dir/err")"
fi
echo "bench CLI: ok"
