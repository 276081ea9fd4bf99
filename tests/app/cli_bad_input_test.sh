#!/usr/bin/env bash
# The bad-input table of the command line: every case exits non-zero with exactly one line on stderr, creates
# no output file and leaves an existing one untouched. Usage: cli_bad_input_test.sh path/to/flashviz
set -u
flashviz=$1
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
failures=0

# int32 header + float32 payload, written with printf so the test needs nothing but bash.
header() {
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(( $1 & 255 )) $(( ($1 >> 8) & 255 )) \
    $(( ($1 >> 16) & 255 )) $(( ($1 >> 24) & 255 )))"
}
make_file() {  # make_file NAME B N d FLOATS
  { header "$2"; header "$3"; header "$4"; head -c $(( $5 * 4 )) /dev/zero; } > "$work/$1"
}
make_file good.bin 1 4 2 24
make_file short_header.bin 1 4 2 0
head -c 7 "$work/short_header.bin" > "$work/tmp" && mv "$work/tmp" "$work/short_header.bin"
make_file zero_b.bin 0 4 2 0
make_file negative_n.bin 1 -4 2 0
make_file zero_d.bin 1 4 0 0
make_file overflow.bin 2147483647 2147483647 2147483647 0
make_file truncated.bin 1 4 2 23
make_file trailing.bin 1 4 2 25
{ header 1; header 2; header 1; printf '\x00\x00\xc0\x7f'; head -c 20 /dev/zero; } > "$work/nan.bin"

expect_failure() {  # expect_failure DESCRIPTION OUTPUT_PATH -- ARGS...
  local description=$1 output=$2; shift 3
  local before=""
  [ -e "$output" ] && before=$(md5sum < "$output")
  "$flashviz" "$@" > "$work/stdout" 2> "$work/stderr"
  local status=$? lines
  lines=$(wc -l < "$work/stderr")
  local ok=1
  [ $status -ne 0 ] || { echo "FAIL $description: exit status 0"; ok=0; }
  [ "$lines" -eq 1 ] || { echo "FAIL $description: $lines lines on stderr:"; cat "$work/stderr"; ok=0; }
  if [ -n "$before" ]; then
    [ "$(md5sum < "$output")" = "$before" ] || { echo "FAIL $description: existing output changed"; ok=0; }
  else
    [ ! -e "$output" ] || { echo "FAIL $description: output file created"; ok=0; }
  fi
  ls "$work" | grep -q partial && { echo "FAIL $description: temporary file left"; ok=0; }
  [ $ok -eq 1 ] && echo "ok   $description: $(cat "$work/stderr")"
  [ $ok -eq 1 ] || failures=$((failures + 1))
}

out=$work/out.bin
expect_failure "missing input"        "$out" -- hw4 "$work/absent.bin" "$out" --backend cpu
expect_failure "header under 12 bytes" "$out" -- hw4 "$work/short_header.bin" "$out" --backend cpu
expect_failure "B = 0"                 "$out" -- hw4 "$work/zero_b.bin" "$out" --backend cpu
expect_failure "N < 0"                 "$out" -- hw4 "$work/negative_n.bin" "$out" --backend cpu
expect_failure "d = 0"                 "$out" -- hw4 "$work/zero_d.bin" "$out" --backend cpu
expect_failure "size overflow"         "$out" -- hw4 "$work/overflow.bin" "$out" --backend cpu
expect_failure "truncated data"        "$out" -- hw4 "$work/truncated.bin" "$out" --backend cpu
expect_failure "trailing bytes"        "$out" -- hw4 "$work/trailing.bin" "$out" --backend cpu
expect_failure "non-finite value"      "$out" -- hw4 "$work/nan.bin" "$out" --backend cpu
expect_failure "input is a directory"  "$out" -- hw4 "$work" "$out" --backend cpu
expect_failure "unwritable output"     "$work/no/such/dir/out.bin" -- hw4 "$work/good.bin" "$work/no/such/dir/out.bin" \
  --backend cpu
expect_failure "output is a directory" "$work/outdir/x" -- hw4 "$work/good.bin" "$work" --backend cpu
echo previous > "$out"
expect_failure "existing output kept on bad input" "$out" -- hw4 "$work/truncated.bin" "$out" --backend cpu
rm -f "$out"
expect_failure "--br 0"                "$work/t.jsonl" -- trace --br 0 --out "$work/t.jsonl"
expect_failure "--bc -1"               "$work/t.jsonl" -- trace --bc -1 --out "$work/t.jsonl"
expect_failure "--sram too small"      "$work/t.jsonl" -- trace --d 64 --sram 512 --out "$work/t.jsonl"
expect_failure "--n 0"                 "$work/t.jsonl" -- trace --n 0 --out "$work/t.jsonl"
expect_failure "--scale not a number"  "$work/t.jsonl" -- trace --scale abc --out "$work/t.jsonl"
expect_failure "--input missing"       "$work/t.jsonl" -- trace --input "$work/absent.bin" --out "$work/t.jsonl"
expect_failure "--input truncated"     "$work/t.jsonl" -- trace --input "$work/truncated.bin" --out "$work/t.jsonl"
expect_failure "--batch out of range"  "$work/t.jsonl" -- trace --input "$work/good.bin" --batch 3 --out "$work/t.jsonl"
expect_failure "--n disagrees with file" "$work/t.jsonl" -- trace --input "$work/good.bin" --n 5 --out "$work/t.jsonl"
expect_failure "trace without output"  "$work/t.jsonl" -- trace --n 8
expect_failure "unknown order"         "$work/t.jsonl" -- trace --order zq --out "$work/t.jsonl"
expect_failure "gen B = 0"             "$work/g.bin" -- gen --b 0 --n 4 --d 2 --out "$work/g.bin"
expect_failure "gen unwritable"        "$work/no/g.bin" -- gen --b 1 --n 4 --d 2 --out "$work/no/g.bin"
expect_failure "unknown subcommand option" "$out" -- hw4 "$work/good.bin" "$out" --backend tpu

echo "$failures failure(s)"
[ $failures -eq 0 ]
