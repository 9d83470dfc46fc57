#!/usr/bin/env bash
# test_stream_read_arrow.sh — `shape stream-read --format arrow`: the Arrow IPC
# stream that an independent reader (the Arrow JS library, tests/npm) reads
# back value for value as stream-read's own JSON lines.
#
# Why: the IPC writer is ours; only another implementation reading it shows
# the FlatBuffers metadata and buffer layout are the format's. How: over a
# JSON lines file holding every kind the decoder makes (int64 at both ends,
# floats with ±inf, unicode and escapes, bools, nested-as-text, all-null and
# mixed columns, event times) plus every metadata column, in one batch and in
# micro-batches of 3 and 1 rows, compare with tests/npm/arrow_matches_jsonl.mjs;
# stdout and -o give the same bytes; an empty input is a valid empty stream;
# the refusals are one line and exit 2; jsonl output is unchanged by -o.
# Without node or the npm packages (scripts/install-deps) the read-back part
# says SKIP and the test exits 77 after the checks that need no reader.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
npm_dir=$SHAPE_SOURCE_DIR/tests/npm

# The sample of every kind the decoder makes (tests/data/all_kinds.jsonl): int64 at both ends,
# floats with ±inf and -0.0, unicode and escapes (NUL too), bools, nested-as-text, all-null and
# mixed columns, event times before 1970 and in year 1, an undecodable line, a sparse row.
cp "$SHAPE_SOURCE_DIR/tests/data/all_kinds.jsonl" all.jsonl
meta=(--with-key --with-headers --with-timestamp --with-offsets)

# Output side, no reader needed.
run stream-read all.jsonl; expect_ok "jsonl"; cp out plain.jsonl
run stream-read all.jsonl -o rows.jsonl; expect_ok "jsonl -o"
[[ ! -s out ]] || fail "-o must leave stdout empty"
cmp -s plain.jsonl rows.jsonl || fail "jsonl through -o differs from stdout"
# A run resumed from its checkpoint appends to -o FILE (the rows before stay).
seq 1 10 | sed 's/.*/{"n": &}/' >ten.jsonl
run stream-read ten.jsonl --batch-size 3 --max-events 4 --checkpoint cp.json -o resumed.jsonl; expect_ok "first part"
run stream-read ten.jsonl --batch-size 3 --checkpoint cp.json -o resumed.jsonl; expect_ok "resumed"
run stream-read ten.jsonl; cmp -s out resumed.jsonl || fail "a resumed -o run must append: $(wc -l <resumed.jsonl) lines"
run stream-read all.jsonl --format arrow "${meta[@]}"; expect_ok "arrow to stdout"; cp out stdout.arrow
run stream-read all.jsonl --format arrow "${meta[@]}" -o file.arrow; expect_ok "arrow -o"
cmp -s stdout.arrow file.arrow || fail "--format arrow: stdout and -o differ"
[[ $(head -c 4 file.arrow | od -An -tx1 | tr -d ' ') == ffffffff ]] || fail "no continuation marker first"
[[ $(tail -c 8 file.arrow | od -An -tx1 | tr -d ' ') == ffffffff00000000 ]] || fail "no end-of-stream marker last"
grep -q "8 messages, 7 rows, 1 undecodable" err || fail "counters on stderr"

run stream-read all.jsonl --format arrow --checkpoint cp.json -o x.arrow
expect_error 2 "--checkpoint" "--format arrow"
[[ ! -e x.arrow ]] || fail "a refused run created its output"
run stream-read all.jsonl --format parquetx; expect_error 2 "--format must be"
run stream-read all.jsonl --format null -o x.null; expect_error 2 "-o" "--format null"
run stream-read all.jsonl --format arrow -o all.jsonl; expect_error 2 "-o"
cmp -s all.jsonl <(sed -n '1,$p' all.jsonl) || fail "the input was touched"
if command -v script >/dev/null; then
    script -qc "$SHAPE_BIN stream-read $work/all.jsonl --format arrow" /dev/null >tty.out 2>&1 </dev/null || true
    grep -q "binary data" tty.out || fail "--format arrow onto a terminal must be refused: $(cat tty.out)"
fi

if ! command -v node >/dev/null || ! [[ -d $npm_dir/node_modules/apache-arrow ]]; then
    echo "SKIP: the Arrow JS reader is not installed (node and 'npm ci' in tests/npm: scripts/install-deps)"
    exit 77
fi
check() { node "$npm_dir/arrow_matches_jsonl.mjs" "$@" || fail "the Arrow JS reader disagrees ($*)"; }

for bs in 65536 3 1; do
    run stream-read all.jsonl "${meta[@]}" --batch-size "$bs"; expect_ok "jsonl $bs"; cp out rows.jsonl
    run stream-read all.jsonl "${meta[@]}" --batch-size "$bs" --format arrow -o rows.arrow; expect_ok "arrow $bs"
    check rows.arrow rows.jsonl | tee check.out
    [[ $bs != 1 ]] || grep -Eq "ok: ([0-9]+) rows, 14 columns, \1 batches" check.out || fail "one batch per micro-batch: $(cat check.out)"
done
run stream-read all.jsonl --format arrow -o bare.arrow; expect_ok "no metadata columns"
check bare.arrow plain.jsonl
# The null type (here forced by the schema option): a node without buffers.
opt=(--option 'schema=[["id","n"],["name","u"],["ok","b"]]')
run stream-read all.jsonl "${opt[@]}"; expect_ok "jsonl, null type"; cp out null.jsonl
run stream-read all.jsonl "${opt[@]}" --format arrow -o null.arrow; expect_ok "arrow, null type"
check null.arrow null.jsonl

: >empty.jsonl
run stream-read empty.jsonl --format arrow -o empty.arrow; expect_ok "empty input"
node --input-type=module -e "
import { readFileSync } from 'node:fs';
import { tableFromIPC } from '$npm_dir/node_modules/apache-arrow/Arrow.node.mjs';
const t = tableFromIPC(readFileSync('empty.arrow'));
if (t.numRows !== 0 || t.schema.fields.length !== 0) { console.error('not empty'); process.exit(1); }
" || fail "an empty input must give an empty stream the reader accepts"
echo "ok: stream-read --format arrow is read back by the Arrow JS library, every value as its JSON line"
