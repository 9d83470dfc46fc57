#!/usr/bin/env bash
# test_emit_domains.sh — generation-schema domains (docs/DOMAINS.md) into a
# real Kafka protocol: `shape broker` and `shape schema-registry`.
#
# Why: issue 22 item 3: everything emit does works on a schema domain. The
# schema's declared types decide the registry schemas, and every message of
# every table must decode back to exactly the flat JSON event a file run of
# the same schema writes (shape's decoder, schema from the registry).
# How: payments and iot (scale tiny) go to one topic per format (avro,
# protobuf, json-schema; subject strategy topic_record) and as flat JSON with
# CloudEvents envelopes and column keys; messages are read back with
# python3-confluent-kafka, grouped per table as test_emit_registry.sh does,
# and checked with wire_decode_check; the JSON topic is read back with
# `shape stream-read`: every event of the file run arrives once.
source "$(dirname "$0")/lib.sh"
: "${SHAPE_WIRE_DECODE_CHECK:?}"
examples=$(cd "$(dirname "$0")/../../examples/domains" && pwd)
cd "$TEST_TMP"
SYSTEM_PYTHON=/usr/bin/python3
[ -x "$SYSTEM_PYTHON" ] || SYSTEM_PYTHON=python3

tj=$(unique_topic json)
topics=()
for d in payments iot; do for f in avro protobuf json-schema; do topics+=("$(unique_topic "$d-$f"):3"); done; done
kafka_up "$tj:3" "${topics[@]}"
export SHAPE_CONFIRM_REMOTE=0
schema_registry_up
URL=$REG_URL

i=0
for d in payments iot; do
  "$SHAPE_BIN" emit "$examples/$d.json" --scale tiny --sink file -o "$d.expected.jsonl" --no-progress >/dev/null 2>&1 \
      || fail "$d file run"
  for fmt in avro protobuf json-schema; do
    topic=${topics[$i]%:3}
    i=$((i + 1))
    "$SHAPE_BIN" emit "$examples/$d.json" --scale tiny --sink "kafka://$BOOTSTRAP/$topic" --event-format "$fmt" \
        --sink-config "kafka.schema_registry_url=$URL" kafka.subject_strategy=topic_record \
        --no-progress >/dev/null 2>err.txt || fail "$d --event-format $fmt: $(cat err.txt)"
    "$SYSTEM_PYTHON" - "$BOOTSTRAP" "$topic" "$d-$fmt" "$URL" "$d.expected.jsonl" <<'PY' || fail "$d $fmt capture"
import json, os, struct, sys, urllib.request
from confluent_kafka import Consumer, TopicPartition
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ["SHAPE_SOURCE_DIR"], "tests", "emulator"))
import wire_dir
bootstrap, topic, out, url, expected_file = sys.argv[1:]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "x", "enable.auto.commit": False})
parts = sorted(c.list_topics(topic, timeout=10).topics[topic].partitions)
msgs = []
for p in parts:
    lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
    if hi <= lo:
        continue
    c.assign([TopicPartition(topic, p, lo)])
    got = 0
    while got < hi - lo:
        for m in c.consume(min(1000, hi - lo - got), 5):
            assert m.error() is None, m.error()
            msgs.append((m.key().decode(), m.value(), p))
            got += 1
c.close()
expected = {}
for line in open(expected_file):
    e = json.loads(line)
    expected["%s/%d" % (e["_shape_table"], e["_shape_seq"])] = line
assert len(msgs) == len(expected), (len(msgs), len(expected))
by_table = {}
for key, value, _ in msgs:
    by_table.setdefault(key.split("/")[0], []).append((key, value))
for table, items in by_table.items():
    d = os.path.join(out, table)
    ids = {struct.unpack(">I", v[1:5])[0] for _, v in items}
    assert len(ids) == 1, ids
    wire_dir.write(d, items, expected)
    answer = json.load(urllib.request.urlopen("%s/schemas/ids/%d" % (url, ids.pop())))
    with open(os.path.join(d, "schema.txt"), "w") as f:
        f.write(answer["schema"])
PY
    for dir in "$d-$fmt"/*/; do
      "$SHAPE_WIRE_DECODE_CHECK" "$URL" "$(basename "$dir")" "$dir" "$examples/$d.json" tiny >chk.out 2>&1 \
          || fail "$d $fmt $(basename "$dir"): $(cat chk.out)"
    done
    echo "$d $fmt: $(ls "$d-$fmt" | wc -l) tables decode to the file run's events"
  done
done

# flat JSON: the whole iot stream into one topic, every event read back
"$SHAPE_BIN" emit "$examples/iot.json" --scale tiny --sink "kafka://$BOOTSTRAP/$tj" --no-progress >/dev/null 2>err.txt \
    || fail "iot json: $(cat err.txt)"
timeout 60 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$tj" 2>/dev/null | python3 -c '
import json, sys
# stream-read prints decoded (typed) rows: compare which events arrived, and their ids
key = lambda e: (e["_shape_table"], e["_shape_seq"], e[{"site": "site_code", "device": "serial", "reading": "reading_id"}[e["_shape_table"]]])
got = sorted(key(json.loads(l)) for l in sys.stdin)
want = sorted(key(json.loads(l)) for l in open("iot.expected.jsonl"))
assert got == want, (len(got), len(want))
' || fail "iot read back differs from the file run"
echo "test_emit_domains: ok"
