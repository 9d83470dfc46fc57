#!/usr/bin/env bash
# test_writers_random.sh — random Arrow batches (tests/support/random_batch.h:
# every core type, NaN/±inf/-0, multi-byte text, binary, both timestamp
# units, maps with null values, nulls at any rate, empty and sliced batches)
# through both writers, read back by the independent readers: Arrow JS must
# give every value as the JSON printer gives the same rows, DuckDB every row
# and every column's non-null count. 12 seeds of 6 batches each; the even
# seeds' Parquet files dictionary-encoded.
# SKIP (77) without node or the npm packages (scripts/install-deps).
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
npm_dir=$SHAPE_SOURCE_DIR/tests/npm
gen=$SHAPE_BUILD_DIR/tests/bin/random_batches
[[ -x $gen ]] || fail "no $gen (built with the tests)"
if ! command -v node >/dev/null || ! [[ -d $npm_dir/node_modules/apache-arrow && -d $npm_dir/node_modules/@duckdb/node-api ]]; then
    echo "SKIP: the Arrow JS and DuckDB readers are not installed (node and 'npm ci' in tests/npm: scripts/install-deps)"
    exit 77
fi
for seed in $(seq 1 12); do
    mkdir -p "s$seed"
    "$gen" "s$seed" "$seed" 6 $([[ $((seed % 2)) -eq 0 ]] && echo dictionary) >gen.out || fail "seed $seed: $(cat gen.out)"
    node "$npm_dir/arrow_matches_jsonl.mjs" "s$seed/rand.arrow" "s$seed/rand.jsonl" >a.out ||
        fail "seed $seed ($(cat gen.out)): Arrow JS disagrees: $(cat a.out)"
    node "$npm_dir/parquet_counts_jsonl.mjs" "s$seed/rand.parquet" "s$seed/rand.jsonl" >p.out ||
        fail "seed $seed ($(cat gen.out)): DuckDB disagrees: $(cat p.out)"
    echo "seed $seed: $(cat gen.out); arrow $(cat a.out); parquet $(cat p.out)"
done
echo "ok: random batches through both writers, read back by Arrow JS and DuckDB"
