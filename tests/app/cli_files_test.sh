#!/usr/bin/env bash
# Nothing lost: the command line's outputs and inputs against devices, links, aliases, FIFOs, signals, full
# devices and overflowing values, run the way a user runs them. Each case is one of the defects the output module
# (kernels/common/files.h) and its callers fix; a case that needs root (a device node, a tmpfs) is skipped with
# the reason where the machine does not allow it. Usage: cli_files_test.sh path/to/flashviz
set -u
flashviz=$1
work=$(mktemp -d)
mounted=""
cleanup() { [ -n "$mounted" ] && umount "$mounted" 2> /dev/null; chmod -R u+w "$work"; rm -rf "$work"; }
trap cleanup EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }
partials() { find "$work" -name '*partial*' -o -name '*.previous-*' | wc -l; }  # temporaries, undo copies

"$flashviz" gen --b 2 --n 64 --d 8 --out good.bin 2> /dev/null || { echo "gen failed"; exit 1; }
good_sum=$(md5sum < good.bin)
have_gui=0
"$flashviz" gui --help > /dev/null 2>&1 && have_gui=1

# refused CASE OUTPUT_STATE_CMD -- ARGS: exit non-zero, exactly one line on stderr, no temporary left.
refused() {
  local description=$1; shift
  "$flashviz" "$@" > stdout.txt 2> stderr.txt
  local status=$? lines
  lines=$(wc -l < stderr.txt)
  if [ $status -ne 0 ] && [ "$lines" -eq 1 ] && [ "$(partials)" -eq 0 ]; then
    ok "$description: $(cat stderr.txt)"
  else
    fail "$description: status $status, $lines lines on stderr, $(partials) temporaries"; cat stderr.txt
  fi
}

# 1. Outputs replace what they should write through.
if mknod devnull c 1 3 2> /dev/null; then
  "$flashviz" hw4 good.bin devnull --backend cpu 2> /dev/null
  [ -c devnull ] && ok "a device node as the output stays a device" || fail "devnull became $(stat -c %F devnull)"
else
  echo "skip a device node as the output: mknod is not permitted here"
fi
ln -s /dev/null null-link
"$flashviz" hw4 good.bin null-link --backend cpu 2> /dev/null
[ -L null-link ] && [ -c /dev/null ] && ok "a link to /dev/null stays a link" || fail "null-link replaced"
ln -s target.bin link.bin
"$flashviz" hw4 good.bin link.bin --backend cpu 2> /dev/null
[ -L link.bin ] && [ "$(stat -c %s target.bin)" -eq 4096 ] && ok "a symbolic link is written through to its target" \
  || fail "symbolic link: $(stat -c %F link.bin)"
# 0640: neither a temporary file's 0600 nor what the umask gives a new file.
echo old > private.bin; chmod 640 private.bin
"$flashviz" hw4 good.bin private.bin --backend cpu 2> /dev/null
[ "$(stat -c %a private.bin)" = 640 ] && ok "the target keeps mode 0640" || fail "mode became $(stat -c %a private.bin)"
echo old > shared.bin; ln shared.bin shared-link.bin
"$flashviz" hw4 good.bin shared.bin --backend cpu 2> /dev/null
[ "$(stat -c %h shared.bin)" = 2 ] && [ "$(stat -c %s shared-link.bin)" -eq 4096 ] \
  && ok "the target keeps its hard link" || fail "hard link lost"
# Standard output through links of our own to where /dev/stdout and /dev/fd/1 lead: the same path through the
# output module, but a regression that replaces the link replaces ours, never the system's /dev/stdout (run as
# root, a version without the fix did exactly that to the machine's /dev/stdout).
ln -s /proc/self/fd/1 stdout-link
ln -s /proc/self/fd/1 fd1-link
"$flashviz" hw4 good.bin stdout-link --backend cpu 2> /dev/null | cat > piped.bin
[ "$(stat -c %s piped.bin)" -eq 4096 ] && [ -L stdout-link ] && ok "standard output into a pipe is written through" \
  || fail "standard output into a pipe: $(stat -c %s piped.bin) bytes"
echo "kept" > appended.bin
"$flashviz" hw4 good.bin fd1-link --backend cpu >> appended.bin 2> /dev/null
[ "$(stat -c %s appended.bin)" -eq 4101 ] && [ "$(head -c 4 appended.bin)" = kept ] \
  && ok "standard output opened by the shell's >> is appended to" \
  || fail "fd 1 with >>: $(stat -c %s appended.bin) bytes"
rm -f piped.bin appended.bin stdout-link fd1-link target.bin private.bin shared.bin shared-link.bin null-link link.bin \
  devnull

# 2. Aliased paths lose data.
cp good.bin x
refused "hw4 INPUT = OUTPUT" hw4 x x --backend cpu
ln x x-hard
refused "hw4 OUTPUT a hard link of INPUT" hw4 x x-hard --backend cpu
refused "trace --input = --out" trace --input x --out x
refused "trace --input = --o-out (another spelling)" trace --input x --o-out ./x
[ "$(md5sum < x)" = "$good_sum" ] && ok "the input survived every alias" || fail "the input changed"
refused "gen --out = --ref" gen --b 1 --n 4 --d 2 --out g --ref g
refused "trace --out = --o-out" trace --out s --o-out s
[ ! -e g ] && [ ! -e s ] && ok "aliased outputs created nothing" || fail "an aliased output was created"
rm -f x x-hard

# 4. Signals leave temporary files. Job control on: a non-interactive shell would start background jobs with
# SIGINT ignored, and an ignored signal stays ignored (as under nohup).
set -m
for signal in INT TERM HUP; do
  "$flashviz" trace --n 4096 --d 64 --out sig.jsonl 2> /dev/null &
  pid=$!
  seen=0
  for _ in $(seq 400); do [ "$(partials)" -gt 0 ] && { seen=1; break; }; sleep 0.05; done
  [ $seen -eq 1 ] || fail "SIG$signal: no temporary file appeared within 20 s: the case proves nothing"
  kill -s "$signal" "$pid"
  wait "$pid"
  status=$?
  expected=$((128 + $(kill -l "$signal")))
  if [ $status -eq $expected ] && [ "$(partials)" -eq 0 ] && [ ! -e sig.jsonl ]; then
    ok "SIG$signal: status $status, no temporary file, no output"
  else
    fail "SIG$signal: status $status (expected $expected), $(partials) temporaries"
  fi
done
set +m

# 5. A FIFO as input hangs forever.
mkfifo fifo
for args in "hw4 fifo o.bin --backend cpu" "trace --input fifo --out t.jsonl"; do
  # shellcheck disable=SC2086
  timeout 20 "$flashviz" $args > /dev/null 2> stderr.txt
  status=$?
  [ $status -ne 0 ] && [ $status -ne 124 ] && grep -q "a FIFO" stderr.txt && ok "FIFO input refused: $args" \
    || fail "FIFO input: $args: status $status"
done
if [ $have_gui -eq 1 ]; then
  timeout 20 "$flashviz" --session fifo --screenshot f.png > /dev/null 2> stderr.txt
  status=$?
  [ $status -ne 0 ] && [ $status -ne 124 ] && ok "FIFO session refused: $(cat stderr.txt)" \
    || fail "FIFO session: $status"
fi

# 6. Silent NaN: finite inputs whose float32 scores overflow. Q and K of 3e38 (0x7f61b1e6), V of 1; then every
# value 1e19 (0x5f0ac723). The result is finite (V's weighted average) and is written with exit 0.
floats() { local count=$1 bytes=$2; for _ in $(seq "$count"); do printf "$bytes"; done; }
{ printf '\x01\x00\x00\x00\x04\x00\x00\x00\x02\x00\x00\x00'; floats 16 '\xe6\xb1\x61\x7f'
  floats 8 '\x00\x00\x80\x3f'; } > huge.bin
{ printf '\x01\x00\x00\x00\x04\x00\x00\x00\x08\x00\x00\x00'; floats 96 '\x23\xc7\x0a\x5f'; } > big.bin
for input in huge.bin big.bin; do
  "$flashviz" hw4 "$input" out.bin --backend cpu 2> stderr.txt
  status=$?
  values=$(od -An -v -tf4 out.bin | tr -s ' \n' '\n' | grep -v '^$')
  expected=$(( ($(stat -c %s "$input") - 12) / 12 ))  # B·N·d: a third of the floats after the header
  # Every row is a weighted average of V's equal rows: exactly V's value, 1 and 1e19 (as float32).
  want=$([ "$input" = huge.bin ] && echo 1 || echo 1e+19)
  if [ $status -eq 0 ] && [ "$(echo "$values" | wc -l)" -eq "$expected" ] &&
     [ "$(echo "$values" | sort -u)" = "$want" ]; then
    ok "$input: finite result ($(echo "$values" | head -1)), $(cat stderr.txt)"
  else
    fail "$input: status $status, values $(echo "$values" | tr '\n' ' ')"
  fi
done
rm -f out.bin

# 7. Errors writing standard output.
for args in "trace --n 8 --summary" "kernels" "vortex" "vortex --json" "--help" "trace --help"; do
  # shellcheck disable=SC2086
  "$flashviz" $args > /dev/full 2> stderr.txt
  status=$?
  [ $status -ne 0 ] && grep -q "cannot write standard output" stderr.txt && ok "$args > /dev/full: status $status" \
    || fail "$args > /dev/full: status $status"
  # shellcheck disable=SC2086
  "$flashviz" $args >&- 2> stderr.txt
  status=$?
  [ $status -ne 0 ] && grep -q "cannot write standard output" stderr.txt \
    && ok "$args with stdout closed: status $status" || fail "$args with stdout closed: status $status"
done

# 8. Two outputs are committed together: the second over the file-size limit (as a full disk), the first kept.
echo old > t.jsonl; echo old > o.bin
(ulimit -f 16; "$flashviz" trace --n 8 --d 1024 --br 8 --bc 8 --sram 1000000 --out t.jsonl --o-out o.bin 2> stderr.txt)
status=$?
if [ $status -ne 0 ] && [ "$(cat t.jsonl)" = old ] && [ "$(cat o.bin)" = old ] && [ "$(partials)" -eq 0 ]; then
  ok "second output too large: neither replaced ($(cat stderr.txt))"
else
  fail "second output too large: status $status, t.jsonl $(head -c 10 t.jsonl)"
fi
rm -f t.jsonl o.bin
# A small full file system where we may mount one: a trace too large for it is refused before the work.
mkdir small
if mount -t tmpfs -o size=8m tmpfs small 2> /dev/null; then
  mounted=$work/small
  refused "trace larger than its file system's free space" trace --n 2048 --d 64 --out small/t.jsonl
  echo old > small/keep.bin
  head -c 8372224 /dev/zero > small/filler
  refused "gen on a full file system" gen --b 1 --n 64 --d 64 --out small/keep.bin
  [ "$(cat small/keep.bin)" = old ] && ok "a full file system kept the old output" \
    || fail "full file system: output changed"
  umount small; mounted=""
else
  echo "skip a full tmpfs: mounting is not permitted here"
fi

# 9. Smaller ones.
refused "--seed -1" trace --n 8 --seed -1 --summary
refused "--seed past 2^64" trace --n 8 --seed 18446744073709551616 --summary
refused "--batch without --input" trace --n 8 --batch 2 --summary
{ printf '\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00'; printf '\x00\x00\x80\xff'
  floats 2 '\x00\x00\x80\x3f'; } > neg-inf.bin
refused "-inf in the input" hw4 neg-inf.bin o.bin --backend cpu
grep -q "(-inf)" stderr.txt && ok "-inf is named -inf" || fail "-inf named as: $(cat stderr.txt)"
printf 'kernel,dtype,B,H,N,d,ms_median\nflash1,fp32,1,1,64,8,nan\n' > nan.csv
printf 'kernel,dtype,B,H,N,d,ms_median\nflash1,fp32,1,1,64,8,-2\n' > negative.csv
printf 'kernel,dtype,B,H,N,d,ms_median\n' > empty.csv
printf 'kernel,dtype,B,H,N,d,ms_median,status\nflash1,fp32,1,1,64,8,,ok\n' > ok-without-time.csv
if "$flashviz" bench --replot empty.csv --png p.png 2>&1 | grep -q "without viz"; then
  echo "skip bench --replot: built without viz/"
else
  refused "bench --replot of a negative time" bench --replot negative.csv --png p.png
  refused "bench --replot of an empty CSV" bench --replot empty.csv --png p.png
  refused "bench --replot of a row marked ok without a time" bench --replot ok-without-time.csv --png p.png
  refused "bench --replot with nothing measured" bench --replot nan.csv --png p.png
  printf 'kernel,dtype,B,H,N,d,ms_median\nflash1,fp32,1,1,64,8,0.5\n' > measured.csv
  refused "bench --replot --png over its CSV" bench --replot measured.csv --png measured.csv
  grep -q "same file" stderr.txt || fail "bench --png over its CSV: refused for another reason"
fi
if [ $have_gui -eq 1 ]; then
  refused "--screenshot ''" --screenshot ''
  refused "a directory as the session" --session "$work" --screenshot s.png
  refused "/dev/zero as the session" --session /dev/zero --screenshot s.png
  echo '{"flashviz_session": 1, "problem": {"n": 4294967360}}' > wide.json
  refused "a session's N beyond int" --session wide.json --screenshot s.png
  refused "a screenshot over its session" --session wide.json --screenshot wide.json
fi
[ "$(partials)" -eq 0 ] && ok "no temporary file anywhere" || fail "$(partials) temporary files left"

echo "$failures failure(s)"
[ $failures -eq 0 ]
