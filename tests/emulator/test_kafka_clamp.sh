# test_kafka_clamp.sh — a resume position below a partition's low watermark
# (records already removed by retention) is clamped up to it, against a real
# Kafka-protocol broker.
#
# Why: a checkpoint can outlive the data it points at; resuming it must read
# what is left, from the first record still there, without an error, without
# a gap the broker could not have served, and without reading anything twice.
# How: `shape broker` keeps about the last 5 MB of each partition (older
# records are dropped like retention), so ~12 MB of rows into one partition
# raise its low watermark above 0. A real checkpoint of a short read is
# edited to point below it; the resumed read must start exactly at the low
# watermark (the first row the broker still has) and end at the high one.
source "$(dirname "$0")/lib.sh"
skip_on_real_kafka "needs the embedded broker's ~5 MB per-partition drop (retention the mock applies at once); test_real_kafka_topics.sh has real retention"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
kafka_up "clamp:1"
read_topic() { "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/clamp" "$@"; }

# 40,000 rows of ~300 bytes, row i at offset i.
awk 'BEGIN { pad = sprintf("%280s", ""); gsub(/ /, "x", pad);
             for (i = 0; i < 40000; i++) printf "{\"id\":%d,\"pad\":\"%s\"}\n", i, pad }' \
  | kcat -b "$BOOTSTRAP" -t clamp -P -p 0 || fail "kcat could not produce"

offsets() { sed -n 's/.*"_shape_offset":\([0-9]*\)}$/\1/p'; }
# What the broker still holds: the first offset of a read from the start.
first=$(read_topic --with-offsets --max-events 1 2>/dev/null | offsets)
[ -n "$first" ] || fail "no row read"
[ "$first" -gt 100 ] || fail "the broker kept every row (low watermark $first): retention did not advance, nothing to clamp"
id_first=$(read_topic --max-events 1 2>/dev/null | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
[ "$id_first" = "$first" ] || fail "row $id_first at offset $first"

# A real checkpoint, edited to point 100 records below the low watermark.
read_topic --max-events 10 --checkpoint "$TEST_TMP/ck" >/dev/null 2>"$TEST_TMP/err" || fail "short read: $(cat "$TEST_TMP/err")"
grep -q "\"offset\":{\"0\":$((first + 10))}" "$TEST_TMP/ck" || fail "checkpoint after 10 rows: $(cat "$TEST_TMP/ck")"
below=$((first - 100))
# (the checksum goes too: an edited checkpoint is refused by it, one without
# a checksum is read as an older shape wrote it)
sed -i -e "s/\"offset\":{\"0\":[0-9]*}/\"offset\":{\"0\":$below}/" -e 's/,"checksum":"[^"]*"//' "$TEST_TMP/ck"
grep -q "\"0\":$below}" "$TEST_TMP/ck" || fail "could not edit the checkpoint"

read_topic --with-offsets --checkpoint "$TEST_TMP/ck" >"$TEST_TMP/rest" 2>"$TEST_TMP/err" \
  || fail "resume below the low watermark failed: $(cat "$TEST_TMP/err")"
offsets <"$TEST_TMP/rest" >"$TEST_TMP/got"
seq "$first" 39999 | cmp -s - "$TEST_TMP/got" \
  || fail "resumed rows are not exactly offsets $first..39999 (first: $(head -1 "$TEST_TMP/got"), rows: $(wc -l <"$TEST_TMP/got"))"
grep -q "\"offset\":{\"0\":40000}" "$TEST_TMP/ck" || fail "final checkpoint: $(cat "$TEST_TMP/ck")"
echo "ok: a checkpoint at offset $below, below the low watermark $first, resumed from $first to the end (40000)"
