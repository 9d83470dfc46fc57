#!/usr/bin/env bash
# test_stream_read_parquet.sh — `shape stream-read --format parquet -o FILE`:
# one Parquet file that DuckDB (tests/npm, @duckdb/node-api) reads, whose
# count(*), and per column count, min, max, sum (and inf/NaN, true/false,
# text length) equal shape's own profile of the same input, and whose footer
# statistics agree (tests/npm/parquet_matches_profile.mjs).
#
# How: tests/data/all_kinds.jsonl (int64 at both ends,
# ±inf, unicode, all-null and mixed columns, event times, every metadata
# column) and 3,000 generated rows with nulls scattered in every column, in
# row groups of 1,000 and 7 rows, ZSTD and uncompressed, plain and dictionary
# encodings (a file of few distinct values too, and its fallback to plain for
# a column of distinct ones) (the map column's
# values: emulator_stream_read_arrow, through DuckDB's map access); refusals are one line and
# exit 2. Without node or the npm packages: SKIP (77) after the refusals.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
npm_dir=$SHAPE_SOURCE_DIR/tests/npm

# The sample of every kind the decoder makes (tests/data/all_kinds.jsonl): int64 at both ends,
# floats with ±inf and -0.0, unicode and escapes (NUL too), bools, nested-as-text, all-null and
# mixed columns, event times before 1970 and in year 1, an undecodable line, a sparse row.
cp "$SHAPE_SOURCE_DIR/tests/data/all_kinds.jsonl" all.jsonl
python3 - >many.jsonl <<'PY'
import json, random
r = random.Random(7)
for i in range(3000):
    row = {"n": i * 7919 % 100003 - 50000, "x": r.uniform(-1e6, 1e6), "s": "".join(r.choice("abcé☕xyz") for _ in range(r.randint(0, 12))),
           "b": r.random() < 0.3, "_shape_event_time": 1700000000000 + i * 1000}
    for k in list(row):
        if r.random() < 0.1: row[k] = None
    print(json.dumps(row))
PY
meta=(--with-key --with-headers --with-timestamp --with-offsets)

run stream-read all.jsonl --format parquet --checkpoint cp.json -o x.parquet; expect_error 2 "--checkpoint" "--format parquet"
run stream-read all.jsonl --format parquet --compression lz4 -o x.parquet; expect_error 2 "--compression must be"
run stream-read all.jsonl --compression none; expect_error 2 "--compression applies to --format parquet"
run stream-read all.jsonl --format parquet --parquet-encoding rle -o x.parquet; expect_error 2 "--parquet-encoding must be"
run stream-read all.jsonl --parquet-encoding dictionary; expect_error 2 "--parquet-encoding applies to --format parquet"
[[ ! -e x.parquet ]] || fail "a refused run created its output"
# A column of the null type (here forced by the schema option) has no Parquet form: one line, exit 2, no file.
run stream-read all.jsonl --option 'schema=[["id","n"],["name","u"]]' --format parquet -o null.parquet
[[ $RC -eq 2 ]] || fail "the null type must be refused (exit $RC)"
grep -q "^shape: error: cannot write column 'id' of Arrow format 'n' as Parquet$" err || fail "the refusal names the column"
[[ -z $(ls null.parquet* 2>/dev/null) ]] || fail "a refused Parquet run left a file: $(ls null.parquet*)"
run stream-read all.jsonl --format parquet -o /dev/null; expect_ok "a device is written through"
run stream-read all.jsonl --format parquet "${meta[@]}" -o all.parquet; expect_ok "parquet -o"
[[ $(head -c 4 all.parquet) == PAR1 && $(tail -c 4 all.parquet) == PAR1 ]] || fail "not framed by PAR1"
run stream-read all.jsonl --format parquet "${meta[@]}"; expect_ok "parquet to stdout"
cmp -s out all.parquet || fail "--format parquet: stdout and -o differ"

if ! command -v node >/dev/null || ! [[ -d $npm_dir/node_modules/@duckdb/node-api ]]; then
    echo "SKIP: DuckDB for node is not installed (node and 'npm ci' in tests/npm: scripts/install-deps)"
    exit 77
fi
check() { node "$npm_dir/parquet_matches_profile.mjs" "$@" || fail "DuckDB disagrees with the profile ($*)"; }

for bs in 65536 2; do
    # The same micro-batches as the profile's: a schema frozen from 2 rows rejects later ones.
    run stream-profile all.jsonl "${meta[@]}" --batch-size "$bs" -o all.profile.json; expect_ok "profile $bs"
    run stream-read all.jsonl --format parquet "${meta[@]}" --batch-size "$bs" -o all.parquet; expect_ok "parquet $bs"
    check all.parquet all.profile.json
    run stream-read all.jsonl --format parquet "${meta[@]}" --batch-size "$bs" --compression none -o plain.parquet
    expect_ok "uncompressed $bs"
    check plain.parquet all.profile.json stream --uncompressed
    run stream-read all.jsonl --format parquet "${meta[@]}" --batch-size "$bs" --parquet-encoding dictionary -o dict.parquet
    expect_ok "dictionary $bs"
    check dict.parquet all.profile.json stream --dictionary
done
run stream-read all.jsonl --format parquet "${meta[@]}" --batch-size 2 --parquet-encoding dictionary --compression none \
    -o dict.parquet
expect_ok "dictionary uncompressed"
check dict.parquet all.profile.json stream --dictionary --uncompressed
# Few distinct values (dictionary pages), many (the fallback to plain), in one file; widths 1 to 10 bits.
python3 - >few.jsonl <<'PY'
import json, random
r = random.Random(11)
for i in range(3000):
    row = {"k": i % 3, "w": r.randrange(1000), "f": [0.5, -2.25, 1e300][i % 3], "s": ["a", "bé", "☕☕", ""][i % 4],
           "u": "id%d" % i, "b": i % 7 == 0, "_shape_event_time": 1700000000000 + (i % 5) * 1000}
    for k in list(row):
        if r.random() < 0.05: row[k] = None
    print(json.dumps(row))
PY
run stream-profile few.jsonl -o few.profile.json; expect_ok "profile few"
for bs in 3000 7; do
    run stream-read few.jsonl --format parquet --batch-size "$bs" --parquet-encoding dictionary -o few.parquet
    expect_ok "dictionary few $bs"
    check few.parquet few.profile.json stream --dictionary
done
run stream-read few.jsonl --format parquet --parquet-encoding plain -o few.parquet; expect_ok "plain few"
check few.parquet few.profile.json
run stream-profile many.jsonl -o many.profile.json; expect_ok "profile many"
for bs in 1000 7; do
    run stream-read many.jsonl --format parquet --batch-size "$bs" -o many.parquet; expect_ok "parquet many $bs"
    check many.parquet many.profile.json | tee check.out
done
grep -q "ok: 3000 rows, 5 columns, 2145 column chunks" check.out || fail "429 row groups of 7 rows, 5 chunks each: $(cat check.out)"
echo "ok: stream-read --format parquet is read by DuckDB with the profile's exact figures"
