# The foundation's acceptance test: 1,000 lines through `shape broker` with
# kcat (an independent Kafka client) come back exactly, across 3 partitions.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"

topic=$(unique_topic demo)
[ -n "${SHAPE_TEST_KAFKA:-}" ] || topic=demo
kafka_up "$topic:3"

seq -f 'line-%04g' 1 1000 >"$TEST_TMP/in.txt"
# Non-sticky partitioning so unkeyed lines spread over every partition.
kcat -b "$BOOTSTRAP" -t "$topic" -P -X sticky.partitioning.linger.ms=0 -l "$TEST_TMP/in.txt"
kcat -b "$BOOTSTRAP" -t "$topic" -C -e -q -f '%p %s\n' >"$TEST_TMP/out.txt"

[ "$(wc -l <"$TEST_TMP/out.txt")" -eq 1000 ] || fail "expected 1000 lines back, got $(wc -l <"$TEST_TMP/out.txt")"
cut -d' ' -f2 "$TEST_TMP/out.txt" | sort >"$TEST_TMP/got.txt"
sort "$TEST_TMP/in.txt" | cmp -s - "$TEST_TMP/got.txt" || fail "lines differ from what was produced"
parts=$(cut -d' ' -f1 "$TEST_TMP/out.txt" | sort -u | tr '\n' ' ')
[ "$parts" = "0 1 2 " ] || fail "expected partitions 0 1 2, got: $parts"
# kcat's metadata view agrees on the partition count.
kcat -b "$BOOTSTRAP" -L -t "$topic" | grep -q "topic \"$topic\" with 3 partitions" || fail "metadata does not show 3 partitions"
echo "ok: 1000 lines round-tripped over partitions $parts"
