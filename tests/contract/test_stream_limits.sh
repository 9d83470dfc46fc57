#!/usr/bin/env bash
# test_stream_limits.sh — a stream's width is bounded and its silent effects
# are counted (issue 24, items 9 and 12).
#
# Why: a profile column costs ~45 KB of sketches, so one line with 20,000
# keys once took 931 MB (30,000 keys: 1.37 GB); the first batch now creates
# at most --max-columns (default 4096) columns and says so. A field new since
# the first batch, and a number beyond the double range, used to vanish
# without a count: both are counted in the summary and warned of once.
# How: a 20,000-key line profiled under /usr/bin/time with a peak-RSS budget
# of 400 MB (4096 columns measured ~195 MB; no limit ~930 MB); the budget is
# skipped under a sanitizer build (ASan's shadow memory and quarantine
# inflate RSS; detected in ldd's output, read whole). Then the counters and
# warnings of stream-profile and stream-read, and --on-error raise refusing
# the wide line with exit 2 naming the limit.
set -euo pipefail
: "${SHAPE_BIN:?}"
source "$(dirname "$0")/cli_lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }

python3 -c "
import json
print(json.dumps({'k%d' % i: i for i in range(20000)}))" >wide.jsonl

budget_kb=400000
sanitized=0
grep -q -e libasan -e libtsan <<<"$(ldd "$SHAPE_BIN" 2>/dev/null)" && sanitized=1
if [ -x /usr/bin/time ]; then
    set +e
    /usr/bin/time -f '%M' -o rss.txt timeout 120 "$SHAPE_BIN" stream-profile wide.jsonl -o wide.json >"$work/out" 2>"$work/err"
    RC=$?
    set -e
else
    run stream-profile wide.jsonl -o wide.json
fi
expect_ok "stream-profile of a 20,000-key line"
grep -q '"dropped_fields": 15904' out || fail "the 15,904 fields past the limit are not counted as dropped_fields"
grep -q 'warning: the first batch had 15904 fields past the limit of 4096 columns' err ||
    fail "no warning naming the column limit"
[ "$(grep -c 'warning: the first batch had' err)" -eq 1 ] || fail "the column warning is not printed once"
cols=$(python3 -c "import json; print(len(json.load(open('wide.json'))['tables']['stream']['columns']))")
[ "$cols" -eq 4097 ] || fail "the profile has $cols columns, not 4096 + _shape_event_time"
rss_note="RSS budget skipped"
if [ -s rss.txt ] && [ "$sanitized" -eq 0 ]; then
    rss=$(tail -n 1 rss.txt)
    [ "$rss" -lt "$budget_kb" ] || fail "peak RSS $rss KB for a 20,000-key line, over the $budget_kb KB budget"
    rss_note="peak RSS $rss KB < $budget_kb KB"
fi

run stream-profile wide.jsonl -o wide.json --on-error raise
expect_error 2 "more than the limit of 4096 columns" "--max-columns"
[ ! -e wide.json ] || [ "$(python3 -c "import json; print(len(json.load(open('wide.json'))['tables']['stream']['columns']))")" -eq 4097 ] ||
    fail "the refused run changed the earlier profile"
run stream-profile wide.jsonl -o w2.json --max-columns 100
expect_ok "--max-columns 100"
grep -q 'past the limit of 100 columns' err || fail "--max-columns 100 is not the limit named"
run stream-profile wide.jsonl -o w2.json --max-columns -1
expect_error 2 "max-columns"

# A field absent from the first batch, and 1e400 in a float column.
printf '{"x":1.5,"a":1}\n{"x":1e400,"a":2,"late":1}\n{"x":2.5,"late":2,"later":"y"}\n' >f.jsonl
run stream-profile f.jsonl -o f.json --batch-size 1
expect_ok "stream-profile of f.jsonl"
grep -q '"dropped_fields": 3' out || fail "stream-profile: dropped_fields is not 3"
grep -q '"values_overflowed": 1' out || fail "stream-profile: values_overflowed is not 1"
[ "$(grep -c 'warning: 3 values of fields that are not columns were dropped' err)" -eq 1 ] ||
    fail "stream-profile: no single warning of the dropped fields"
[ "$(grep -c 'warning: 1 numbers beyond the double range' err)" -eq 1 ] ||
    fail "stream-profile: no single warning of the overflowed number"
run stream-profile f.jsonl -o f.json --batch-size 1 --on-error raise
expect_ok "stream-profile --on-error raise (a dropped field is no error)"
grep -q '"dropped_fields": 3' out || fail "stream-profile --on-error raise: dropped_fields is not 3"
run stream-read f.jsonl --batch-size 1
expect_ok "stream-read of f.jsonl"
grep -q '3 dropped_fields, 1 values_nulled' err || fail "stream-read: the summary does not count dropped_fields and values_nulled"
grep -q 'were written as null (values_nulled' err || fail "stream-read: no warning of the nulled value"
[ "$(sed -n 2p out)" = '{"x":null,"a":2,"_shape_event_time":null}' ] || fail "stream-read: row 2 is not as expected"
run stream-read f.jsonl --batch-size 1 --format null
grep -q '1 values_overflowed' err || fail "stream-read --format null: values_overflowed not counted"

# rows for docs/RELIABILITY.md (tests/emulator/reliability-report.sh runs this test too)
source "$SHAPE_SOURCE_DIR/tests/support/reliability_rows.sh"
report "stream-profile: one line of 20,000 keys" "python3-made line (318 KB)" - - "0; 2 with --on-error raise" \
    "4096 columns kept, 15904 fields counted as dropped_fields, one warning naming the limit; $rss_note"
report "stream-profile / stream-read: a field new after the first batch, 1e400 in a float column" \
    "3 lines, --batch-size 1" - - 0 "dropped_fields 3 and values_overflowed 1 in the summary (stream-read: values_nulled 1), each warned once"
echo "ok: 20,000 keys -> 4096 columns ($rss_note), dropped_fields and values_nulled/values_overflowed counted, warned once"
