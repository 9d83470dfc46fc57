#!/usr/bin/env bash
# test_stream_read_arrow_kafka.sh — a topic on `shape broker` read with every
# metadata column (binary keys, the headers map, broker timestamps, partitions
# and offsets) as an Arrow IPC stream, read back by the Arrow JS library value
# for value as stream-read's JSON lines of the same topic.
#
# How: kcat produces messages across 3 partitions: keyed ones (a key with
# bytes that are not UTF-8) carrying two headers, then unkeyed ones without
# headers; the topic is read twice, bounded, with the same flags: --format
# jsonl and --format arrow in micro-batches of 4; tests/npm/arrow_matches_jsonl.mjs
# compares. SKIP (77) without kcat, node or the npm packages.
source "$(dirname "$0")/lib.sh"
npm_dir=$SHAPE_SOURCE_DIR/tests/npm
command -v kcat >/dev/null || { echo "SKIP: kcat is not installed"; exit 77; }
if ! command -v node >/dev/null || ! [ -d "$npm_dir/node_modules/apache-arrow" ]; then
  echo "SKIP: the Arrow JS reader is not installed (node and 'npm ci' in tests/npm: scripts/install-deps)"
  exit 77
fi
topic=$(unique_topic arrowmeta)
kafka_up "$topic:3"

for i in $(seq 1 12); do printf 'k%d\xff\xfe|{"n": %d, "s": "v\\u00e9%d", "x": %d.5}\n' "$i" "$i" "$i" "$i"; done >"$TEST_TMP/keyed.txt"
for i in $(seq 13 20); do printf '{"n": %d, "s": null, "x": -%d}\n' "$i" "$i"; done >"$TEST_TMP/plain.txt"
kcat -b "$BOOTSTRAP" -t "$topic" -P -K '|' -H "trace=abc" -H "bytes=é1" -X sticky.partitioning.linger.ms=0 -l "$TEST_TMP/keyed.txt"
kcat -b "$BOOTSTRAP" -t "$topic" -P -X sticky.partitioning.linger.ms=0 -l "$TEST_TMP/plain.txt"

flags=(--with-key --with-headers --with-timestamp --with-offsets --batch-size 4)
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$topic" "${flags[@]}" >"$TEST_TMP/rows.jsonl" 2>"$TEST_TMP/err1" ||
  fail "stream-read jsonl: $(cat "$TEST_TMP/err1")"
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$topic" "${flags[@]}" --format arrow -o "$TEST_TMP/rows.arrow" 2>"$TEST_TMP/err2" ||
  fail "stream-read arrow: $(cat "$TEST_TMP/err2")"
[ "$(wc -l <"$TEST_TMP/rows.jsonl")" -eq 20 ] || fail "expected 20 rows, got $(wc -l <"$TEST_TMP/rows.jsonl")"
grep -q '"_shape_key":"azH//g=="' "$TEST_TMP/rows.jsonl" || fail "the binary key is not in the JSON lines"
grep -q '"_shape_headers":{"trace":"YWJj","bytes":"w6kx"}' "$TEST_TMP/rows.jsonl" || fail "the headers are not in the JSON lines"
out=$(node "$npm_dir/arrow_matches_jsonl.mjs" "$TEST_TMP/rows.arrow" "$TEST_TMP/rows.jsonl") || fail "the Arrow JS reader disagrees: $out"
echo "$out"

# The same topic as Parquet: DuckDB sees the binary keys and the headers map.
if [ -d "$npm_dir/node_modules/@duckdb/node-api" ]; then
  "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$topic" "${flags[@]}" --format parquet -o "$TEST_TMP/rows.parquet" 2>"$TEST_TMP/err3" ||
    fail "stream-read parquet: $(cat "$TEST_TMP/err3")"
  got=$(node "$npm_dir/duckdb_row.mjs" "$TEST_TMP/rows.parquet" "select count(*)::int as n,
    count(*) filter (where _shape_key = 'k7\\xFF\\xFE'::blob)::int as k7,
    count(*) filter (where map_extract(_shape_headers, 'trace')[1] = 'abc'::blob
                       and map_extract(_shape_headers, 'bytes')[1] = '\\xC3\\xA91'::blob
                       and cardinality(_shape_headers) = 2)::int as headed,
    count(*) filter (where cardinality(_shape_headers) = 0 and _shape_key is null)::int as bare,
    count(distinct _shape_partition)::int as partitions,
    count(*) filter (where _shape_timestamp is not null)::int as timed,
    sum(n)::int as total from {f}") || fail "DuckDB cannot read the topic's Parquet file"
  [ "$got" = '{"n":20,"k7":1,"headed":12,"bare":8,"partitions":3,"timed":20,"total":210}' ] ||
    fail "DuckDB reads the topic's Parquet file otherwise: $got"
  echo "ok: DuckDB reads the keys and headers of the topic's Parquet file: $got"
fi
echo "ok: a topic's batches with keys, headers, timestamps and offsets read back by Arrow JS as stream-read's JSON lines"
