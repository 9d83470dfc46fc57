# `shape stream-read` over the file source: rows as JSON lines, offsets,
# errors, and a checkpointed run killed with kill -9 then rerun: every row
# at least once, at most the one in-flight batch repeated.
set -euo pipefail
: "${SHAPE_BIN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
shape() { "$SHAPE_BIN" "$@"; }

cat >"$tmp/orders.jsonl" <<'JSON'
{"order_id":1,"amount":9.5,"status":"placed","_shape_event_time":"2024-03-01T12:00:00Z"}

{"order_id":2,"amount":12,"status":"shipped","items":[{"sku":"A","qty":2}]}
not json
{"order_id":3,"amount":null,"status":"plac\u00e9d","_shape_event_time":1709294400123}
JSON

out=$(shape stream-read "$tmp/orders.jsonl" --with-offsets 2>"$tmp/err")
expected='{"order_id":1,"amount":9.5,"status":"placed","items":null,"_shape_event_time":"2024-03-01T12:00:00.000000Z","_shape_partition":"0","_shape_offset":0}
{"order_id":2,"amount":12.0,"status":"shipped","items":"[{\"qty\":2,\"sku\":\"A\"}]","_shape_event_time":null,"_shape_partition":"0","_shape_offset":1}
{"order_id":3,"amount":null,"status":"placéd","items":null,"_shape_event_time":"2024-03-01T12:00:00.123000Z","_shape_partition":"0","_shape_offset":3}'
[ "$out" = "$expected" ] || fail "unexpected rows:
$out"
grep -q '4 messages, 3 rows, 1 undecodable, 0 rejected' "$tmp/err" || fail "summary: $(cat "$tmp/err")"

# The same through stdin, a file:// URI and a folder; --max-events stops early.
[ "$(shape stream-read - <"$tmp/orders.jsonl" 2>/dev/null | wc -l)" -eq 3 ] || fail "stdin"
[ "$(shape stream-read "file://$tmp/orders.jsonl" 2>/dev/null | wc -l)" -eq 3 ] || fail "file:// URI"
mkdir "$tmp/dir"; cp "$tmp/orders.jsonl" "$tmp/dir/a.jsonl"; cp "$tmp/orders.jsonl" "$tmp/dir/b.ndjson"
touch "$tmp/dir/_skip.jsonl" "$tmp/dir/notes.txt"
[ "$(shape stream-read "$tmp/dir" 2>/dev/null | wc -l)" -eq 6 ] || fail "folder"
[ "$(shape stream-read "$tmp/dir/*.jsonl" 2>/dev/null | wc -l)" -eq 3 ] || fail "glob"
[ "$(shape stream-read "$tmp/orders.jsonl" --max-events 2 2>/dev/null | wc -l)" -eq 2 ] || fail "--max-events"
# --format null decodes everything and prints nothing (benchmarks); counters still go to stderr.
[ -z "$(shape stream-read "$tmp/orders.jsonl" --format null 2>"$tmp/err")" ] || fail "--format null printed rows"
grep -q '4 messages, 3 rows, 1 undecodable' "$tmp/err" || fail "--format null summary: $(cat "$tmp/err")"

# Bad input: one error line, exit 2, nothing on stdout.
expect_refusal() { # expect_refusal NEEDLE ARGS...
  local needle=$1 rc=0; shift
  shape stream-read "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc"
  [ ! -s "$tmp/out" ] || fail "'$*' printed rows"
  grep -q "^shape: error: .*$needle" "$tmp/err" || fail "'$*': expected '$needle' in: $(cat "$tmp/err")"
}
expect_refusal "no such file" "$tmp/missing.jsonl"
expect_refusal "--format must be 'jsonl', 'null', 'arrow' or 'parquet'" "$tmp/orders.jsonl" --format xml
expect_refusal "no file matches" "$tmp/*.nothing"
expect_refusal "unknown file source options: \['bogus'\]" "$tmp/orders.jsonl" --option bogus=1
expect_refusal "--event-time-unit must be one of s, ms, us, not 'h'" "$tmp/orders.jsonl" --event-time-unit h
expect_refusal "on_error must be 'skip' or 'raise'" "$tmp/orders.jsonl" --on-error maybe
expect_refusal "batch-size must be an integer" "$tmp/orders.jsonl" --batch-size 0
expect_refusal "following is not supported for files" "$tmp/orders.jsonl" --option stop_at_end=false
expect_refusal "partition 0 offset 2: " "$tmp/orders.jsonl" --on-error raise
expect_refusal "credentials must be supplied outside the URI" "kafka://user:credential-sentinel@host/t"
if grep -q credential-sentinel "$tmp/err"; then fail "the secret was echoed"; fi
echo '[1]' >"$tmp/opts.json"
expect_refusal "opts.json" "$tmp/orders.jsonl" --options-file "$tmp/opts.json"

# Checkpoint: a finished run resumes at the end and prints nothing more.
shape stream-read "$tmp/orders.jsonl" --checkpoint "$tmp/ck" >/dev/null 2>&1
[ "$(shape stream-read "$tmp/orders.jsonl" --checkpoint "$tmp/ck" 2>/dev/null | wc -l)" -eq 0 ] || fail "finished checkpoint re-read rows"
grep -q '"offset":{"0":4}' "$tmp/ck" || fail "checkpoint offset: $(cat "$tmp/ck")"
expect_refusal "belongs to another stream" "$tmp/dir/a.jsonl" --checkpoint "$tmp/ck"

# kill -9 mid-run, rerun: every row at least once, at most one batch twice.
rows=300000 batch=1000
awk -v n=$rows 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":%d,\"pad\":\"%060d\"}\n", i, i }' >"$tmp/big.jsonl"
for attempt in 1 2 3; do
  rm -f "$tmp/ck2" "$tmp/run1" "$tmp/run2"
  # The binary itself, not the shell function: kill -9 must hit the reader.
  "$SHAPE_BIN" stream-read "$tmp/big.jsonl" --batch-size $batch --checkpoint "$tmp/ck2" >"$tmp/run1" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 400); do
    [ "$(wc -l <"$tmp/run1")" -ge 20000 ] && break
    sleep 0.01
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  got=$(wc -l <"$tmp/run1")
  [ "$got" -lt $rows ] && break # the kill landed mid-run
done
[ "$got" -lt $rows ] || fail "could not kill the run before it finished"
shape stream-read "$tmp/big.jsonl" --batch-size $batch --checkpoint "$tmp/ck2" >"$tmp/run2" 2>/dev/null
# A torn last line of the killed run is not a row: keep complete lines only.
grep -h '^{"id":[0-9]*,"pad":"[0-9]*","_shape_event_time":null}$' "$tmp/run1" "$tmp/run2" | sed 's/^{"id":\([0-9]*\),.*/\1/' | sort -n >"$tmp/ids"
[ "$(sort -nu "$tmp/ids" | wc -l)" -eq $rows ] || fail "rows missing after resume: $(sort -nu "$tmp/ids" | wc -l) of $rows"
dups=$(( $(wc -l <"$tmp/ids") - rows ))
[ "$dups" -le $batch ] || fail "$dups rows repeated, more than one batch ($batch)"
echo "ok: killed after $got lines, resumed; $dups rows repeated (at most one batch of $batch)"

# ---- a line longer than max_message_bytes is one undecodable message, never
# buffered whole (issue 24, item 8): a 3 MB line between two short ones, and
# 300 MB of NUL bytes with no newline at all, read in bounded memory
python3 - "$tmp/long.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"id": 1}) + "\n")
    f.write(json.dumps({"id": 2, "pad": "x" * 3000000}) + "\n")
    f.write(json.dumps({"id": 3}) + "\n")
PY
shape stream-read "$tmp/long.jsonl" >"$tmp/out" 2>"$tmp/err" || fail "long line: $(cat "$tmp/err")"
[ "$(cut -c1-8 "$tmp/out" | tr '\n' ' ')" = '{"id":1, {"id":3, ' ] || fail "long line: rows $(cut -c1-20 "$tmp/out")"
grep -q '3 messages, 2 rows, 1 undecodable' "$tmp/err" || fail "long line not counted undecodable: $(cat "$tmp/err")"
[ "$(shape stream-read "$tmp/long.jsonl" --option max_message_bytes=0 2>/dev/null | wc -l)" -eq 3 ] \
  || fail "max_message_bytes=0 did not lift the limit"
[ "$(shape stream-read "$tmp/long.jsonl" --option max_message_bytes=4000000 2>/dev/null | wc -l)" -eq 3 ] \
  || fail "max_message_bytes=4000000 did not keep a 3 MB line"
rc=0; shape stream-read "$tmp/long.jsonl" --on-error raise >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] && grep -q 'offset 1: a line longer than max_message_bytes (1048576 bytes)' "$tmp/err" \
  || fail "--on-error raise on a long line: rc $rc $(cat "$tmp/err")"
if [ -x /usr/bin/time ]; then
  head -c 300000000 /dev/zero | /usr/bin/time -f '%M' -o "$tmp/rss" "$SHAPE_BIN" stream-read - >/dev/null 2>"$tmp/err" \
    || fail "300 MB without a newline: $(cat "$tmp/err")"
  grep -q '1 messages, 0 rows, 1 undecodable' "$tmp/err" || fail "300 MB without a newline: $(cat "$tmp/err")"
  [ "$(tail -1 "$tmp/rss")" -lt 100000 ] || fail "300 MB without a newline took $(tail -1 "$tmp/rss") KB of memory"
  echo "ok: 300 MB with no newline read in $(tail -1 "$tmp/rss") KB"
else
  echo "note: /usr/bin/time missing; the memory bound of a line without end is not measured"
fi
