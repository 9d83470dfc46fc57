#!/usr/bin/env bash
# test_emit_registry_faults.sh — duplicates and poison in the registry formats
# (--event-format avro|protobuf|json-schema into `shape broker`, schemas in
# `shape schema-registry`), read back through the registry.
#
# Why: issue 21 item 3 and spec-kafka §4.9: a duplicate is the same key and
# the same wire bytes again, 1..--duplicate-window events later; a poisoned
# event's whole wire bytes (magic byte and schema id included) are cut to
# max(1, floor(2*len/3)), so it never decodes to its event; the answer key
# counts the wire bytes a consumer sees. Copies of an earlier table's rows
# land in the next table's batch (store rows copied among order rows), so a
# batch carries typed rows of two tables.
# How: per format, a clean run and a faulted run of the same 600 events
# (store, then order) into two one-partition topics; python3-confluent-kafka
# reads both back. Every faulted message that is not poison must be
# byte-equal to the clean message of its key, and decode through the
# registry (shape's decoder, schema fetched by the id in the message) to the
# file-sink run's flat event; every poison message must be the clean bytes'
# prefix of the cut length the answer key names, and must not decode to its
# event.
source "$(dirname "$0")/lib.sh"
: "${SHAPE_WIRE_DECODE_CHECK:?}"
cd "$TEST_TMP"
SYSTEM_PYTHON=/usr/bin/python3
[ -x "$SYSTEM_PYTHON" ] || SYSTEM_PYTHON=python3

declare -A clean_topic fault_topic
topics=()
for fmt in avro protobuf json-schema; do
  clean_topic[$fmt]=$(unique_topic "clean-$fmt"); fault_topic[$fmt]=$(unique_topic "faults-$fmt")
  topics+=("${clean_topic[$fmt]}:1" "${fault_topic[$fmt]}:1")
done
kafka_up "${topics[@]}"
export SHAPE_CONFIRM_REMOTE=0
schema_registry_up
URL=$REG_URL

run=(--table store --table order --max-events 600 --no-progress)
faults=(--duplicate-fraction 0.05 --duplicate-window 60 --poison-fraction 0.03)
"$SHAPE_BIN" emit retail "${run[@]}" --sink file -o expected.jsonl >/dev/null 2>err.txt || fail "file run: $(cat err.txt)"

for fmt in avro protobuf json-schema; do
  reg=(--event-format "$fmt" --sink-config "kafka.schema_registry_url=$URL" kafka.subject_strategy=topic_record)
  "$SHAPE_BIN" emit retail "${run[@]}" "${reg[@]}" --sink "kafka://$BOOTSTRAP/${clean_topic[$fmt]}" >/dev/null 2>err.txt ||
    fail "$fmt clean run: $(cat err.txt)"
  "$SHAPE_BIN" emit retail "${run[@]}" "${reg[@]}" "${faults[@]}" --answer-key "$fmt.key" --json \
      --sink "kafka://$BOOTSTRAP/${fault_topic[$fmt]}" >"$fmt.report" 2>err.txt || fail "$fmt faulted run: $(cat err.txt)"
  mkdir "$fmt"
  "$SYSTEM_PYTHON" - "$BOOTSTRAP" "${clean_topic[$fmt]}" "${fault_topic[$fmt]}" "$fmt" <<'PY' || fail "$fmt: stream against the answer key"
import json, os, sys
from confluent_kafka import Consumer, TopicPartition
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ["SHAPE_SOURCE_DIR"], "tests", "emulator"))
import wire_dir
bootstrap, clean_topic, fault_topic, fmt = sys.argv[1:]

def read(topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "x", "enable.auto.commit": False})
    lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    c.assign([TopicPartition(topic, 0, lo)])
    out = []
    while len(out) < hi - lo:
        for m in c.consume(min(1000, hi - lo - len(out)), 5):
            assert m.error() is None, m.error()
            out.append((m.key().decode(), m.value()))
    c.close()
    return out

clean = dict(read(clean_topic))
msgs = read(fault_topic)
assert len(clean) == 600, len(clean)
key = [json.loads(l) for l in open(fmt + ".key")]
dups = {k["key"]: k for k in key if k["kind"] == "duplicate"}
poison = {k["key"]: k for k in key if k["kind"] == "poison"}
assert dups and poison, "no faults drawn"
assert {k["kind"] for k in key} == {"duplicate", "poison"}, key[:3]
assert len(msgs) == 600 + len(dups), (len(msgs), len(dups))
rep = json.load(open(fmt + ".report"))
assert rep["duplicates"] == len(dups) and rep["poisoned"] == len(poison), rep
where = {}
for i, (k, v) in enumerate(msgs):
    where.setdefault(k, []).append(i)
# copies of store rows delivered among order rows: a batch with two tables' rows
first_order = min(where["order/0"])
assert any(k.startswith("store/") and where[k][1] > first_order for k in dups), "no store copy among orders"
assert set(where) == set(clean), "keys differ"
for k, d in dups.items():
    p = where[k]
    assert len(p) == 2 and 1 <= p[1] - p[0] <= 60 + 60, (k, p)  # the window, plus copies between
    assert msgs[p[1]][1] == clean[k], "a copy is not the clean bytes: " + k
expected = {}
for line in open("expected.jsonl"):
    e = json.loads(line)
    expected["%s/%d" % (e["_shape_table"], e["_shape_seq"])] = line
good, bad = {}, []
for i, (k, v) in enumerate(msgs):
    first = where[k][0] == i
    if first and k in poison:
        whole = clean[k]
        cut = max(1, len(whole) * 2 // 3)
        assert v == whole[:cut], "poison is not the clean wire bytes cut: " + k
        assert poison[k]["bytes"] == cut and poison[k]["original_bytes"] == len(whole), (poison[k], cut, len(whole))
        bad.append((k, v))
    else:
        assert v == clean[k], "a message that is not poison differs from the clean run: " + k
        good.setdefault(k.split("/")[0], []).append((k, v))
assert len(bad) == len(poison)
for table, items in good.items():
    wire_dir.write(os.path.join(fmt, "good", table), items, expected)
for n, (k, v) in enumerate(bad):
    wire_dir.write(os.path.join(fmt, "bad", "%s-%d" % (k.split("/")[0], n)), [(k, v)], expected)
print(fmt, len(msgs), "messages,", len(dups), "duplicates,", len(poison), "poison")
PY
  for dir in "$fmt"/good/*/; do
    "$SHAPE_WIRE_DECODE_CHECK" "$URL" "$(basename "$dir")" "$dir" >/dev/null ||
      fail "$fmt $(basename "$dir"): a message that is not poison does not decode to its event"
  done
  for dir in "$fmt"/bad/*/; do
    table=$(basename "$dir"); table=${table%-*}
    if "$SHAPE_WIRE_DECODE_CHECK" "$URL" "$table" "$dir" >/dev/null 2>&1; then
      fail "$fmt: a poison message decodes to its event ($dir)"
    fi
  done
done
echo "ok: duplicates and poison in avro, protobuf and json-schema, read back through the registry"
