#!/usr/bin/env bash
# test_emit_registry.sh — `shape emit retail --event-format avro|protobuf|json-schema`
# into `shape broker`, with `shape schema-registry` over real HTTP.
#
# Why: issue 8's acceptance test. Every message of every table must decode
# back to exactly the flat JSON event — with shape's decoder (schema from the
# registry's copy) and with independent oracles (avro-c, protoc, a draft-07
# validator); the registry's refusals, authentication and literal passwords
# must behave as documented. (Registry outages, 503s and TLS refusals are in
# test_faults_registry.sh, which also writes them into docs/RELIABILITY.md.)
# How: one topic per format (3 partitions); messages are read back with
# python3-confluent-kafka, grouped per table into DIR/<table>/ (messages.bin
# = 4-byte big-endian length + value, expected.jsonl = the flat events of
# those keys from a file-sink run of the same seed, schema.* = the registered
# text fetched by the id in the messages), then checked by each decoder.
source "$(dirname "$0")/lib.sh"
: "${SHAPE_WIRE_DECODE_CHECK:?}" "${SHAPE_AVRO_ORACLE:?}" "${SHAPE_PROTOBUF_ORACLE:?}" "${SHAPE_JSONSCHEMA_ORACLE:?}"
cd "$TEST_TMP"
SYSTEM_PYTHON=/usr/bin/python3
[ -x "$SYSTEM_PYTHON" ] || SYSTEM_PYTHON=python3

ta=$(unique_topic avro); tp=$(unique_topic proto); tj=$(unique_topic jsonschema)
tr=$(unique_topic refused); tu=$(unique_topic auth)
kafka_up "$ta:3" "$tp:3" "$tj:3" "$tr:1" "$tu:1"
export SHAPE_CONFIRM_REMOTE=0

REG_PIDS=()
registry_up() { # NAME [args...]: starts a registry, sets REG_URL
  local name=$1
  shift
  "$SHAPE_BIN" schema-registry --listen 127.0.0.1:0 --url-file "$name.url" "$@" 2>"$name.err" &
  REG_PIDS+=($!)
  local i
  for i in $(seq 1 100); do
    [ -s "$name.url" ] && break
    sleep 0.05
  done
  [ -s "$name.url" ] || fail "schema registry $name did not start: $(cat "$name.err")"
  REG_URL=$(cat "$name.url")
}
registry_down() { for p in "${REG_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; }
trap 'registry_down; cleanup' EXIT

registry_up main
MAIN_URL=$REG_URL
"$SHAPE_BIN" emit retail --sink file -o expected.jsonl --no-progress >/dev/null 2>&1 || fail "file run"

# Read a topic back and lay it out per table (see the header).
capture() { # TOPIC DIR FORMAT
  # Debian's python3 has python3-confluent-kafka (scripts/install-deps); a pyenv python3 first on PATH may not
  "$SYSTEM_PYTHON" - "$BOOTSTRAP" "$1" "$2" "$3" "$MAIN_URL" <<'PY'
import json, os, struct, sys, urllib.request
from confluent_kafka import Consumer, TopicPartition
bootstrap, topic, out, fmt, url = sys.argv[1:]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "x", "enable.auto.commit": False})
md = c.list_topics(topic, timeout=10)
parts = sorted(md.topics[topic].partitions)
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
            msgs.append((m.key().decode(), m.value(), dict(m.headers() or [])))
            got += 1
c.close()
expected = {}
for line in open("expected.jsonl"):
    e = json.loads(line)
    expected["%s/%d" % (e["_shape_table"], e["_shape_seq"])] = line
assert len(msgs) == len(expected), (len(msgs), len(expected))
by_table = {}
for key, value, headers in msgs:
    table = key.split("/")[0]
    assert headers.get("shape-table") == table.encode(), headers
    assert value[0] == 0, "magic byte %r" % value[0]
    if fmt == "protobuf":
        assert value[5] == 0, "message index %r" % value[5]
    by_table.setdefault(table, []).append((int(key.split("/")[1]), key, value))
ext = {"avro": "avsc", "protobuf": "proto", "json-schema": "json"}[fmt]
for table, items in by_table.items():
    items.sort()
    ids = {struct.unpack(">I", v[1:5])[0] for _, _, v in items}
    assert len(ids) == 1, (table, ids)
    d = os.path.join(out, table)
    os.makedirs(d)
    with open(os.path.join(d, "messages.bin"), "wb") as f:
        for _, _, v in items:
            f.write(struct.pack(">I", len(v)) + v)
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        for _, k, _ in items:
            f.write(expected[k])
    answer = json.load(urllib.request.urlopen("%s/schemas/ids/%d" % (url, ids.pop())))
    with open(os.path.join(d, "schema." + ext), "w") as f:
        f.write(answer["schema"])
print(len(msgs), "messages,", len(by_table), "tables")
PY
}

for fmt in avro protobuf json-schema; do
  case $fmt in avro) topic=$ta ;; protobuf) topic=$tp ;; json-schema) topic=$tj ;; esac
  "$SHAPE_BIN" emit retail --sink "kafka://$BOOTSTRAP/$topic" --event-format "$fmt" \
      --sink-config "kafka.schema_registry_url=$MAIN_URL" kafka.subject_strategy=topic_record \
      --json --no-progress >"$fmt.report" 2>err.txt || fail "emit --event-format $fmt: $(cat err.txt)"
  python3 -c "import json,sys; d=json.load(open('$fmt.report')); assert d['events']==21750 and d['complete'], d" \
      || fail "$fmt report"
  capture "$topic" "$fmt" "$fmt" >"$fmt.capture" || fail "$fmt capture"
  for dir in "$fmt"/*/; do
    table=$(basename "$dir")
    "$SHAPE_WIRE_DECODE_CHECK" "$MAIN_URL" "$table" "$dir" >/dev/null || fail "$fmt $table: shape's decoder"
    case $fmt in
      avro) "$SHAPE_AVRO_ORACLE" "$dir" >/dev/null || fail "$fmt $table: avro-c" ;;
      protobuf) PYTHON=$SYSTEM_PYTHON "$SHAPE_PROTOBUF_ORACLE" "$dir" >/dev/null || fail "$fmt $table: protoc" ;;
      json-schema) "$SYSTEM_PYTHON" "$SHAPE_JSONSCHEMA_ORACLE" "$dir" >/dev/null || fail "$fmt $table: jsonschema" ;;
    esac
  done
done
# one subject per topic and table (strategy topic_record), one version each: registered once
python3 - "$MAIN_URL" "$ta" "$tp" "$tj" <<'PY' || fail "subjects"
import json, sys, urllib.parse, urllib.request
url, topics = sys.argv[1], sys.argv[2:]
subjects = json.load(urllib.request.urlopen(url + "/subjects"))
tables = ["customer", "address", "product_category", "product", "promotion", "store", "order", "order_line", "return"]
want = ["%s-shape.events.%s" % (t, table) for t in topics for table in tables]
assert sorted(subjects) == sorted(want), subjects
for s in want:
    versions = json.load(urllib.request.urlopen(url + "/subjects/" + urllib.parse.quote(s, safe="") + "/versions"))
    assert versions == [1], (s, versions)
PY

# --- refusals: nothing is sent ---------------------------------------------------------
expect_refusal() { # WANT-TEXT args...
  local want=$1
  shift
  set +e
  "$SHAPE_BIN" emit retail --max-events 600 --no-progress "$@" >out.txt 2>err.txt
  local rc=$?
  set -e
  [ $rc -eq 2 ] || fail "expected exit 2, got $rc for $*: $(cat err.txt)"
  grep -qF -- "$want" err.txt || fail "expected '$want' in: $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "more than one line on stderr: $(cat err.txt)"
}
registry_up refusing --refuse "$tr-value=no thanks"
REFUSING_URL=$REG_URL
expect_refusal "schema registry refused the schema for subject $tr-value: no thanks" \
    --sink "kafka://$BOOTSTRAP/$tr" --event-format protobuf --sink-config "kafka.schema_registry_url=$REFUSING_URL"
expect_refusal "--event-format avro needs a schema registry: --sink-config kafka.schema_registry_url" \
    --sink "kafka://$BOOTSTRAP/$tr" --event-format avro
expect_refusal "--envelope cloudevents is JSON only: it cannot be combined with --event-format avro" \
    --sink "kafka://$BOOTSTRAP/$tr" --event-format avro --envelope cloudevents \
    --sink-config "kafka.schema_registry_url=$MAIN_URL"
expect_refusal "unknown subject strategy 'x'; choose from topic, record, topic_record" \
    --sink "kafka://$BOOTSTRAP/$tr" --event-format avro --sink-config "kafka.schema_registry_url=$MAIN_URL" \
    kafka.subject_strategy=x
expect_refusal "--event-format avro applies to kafka:// targets only; file:// does not take it" \
    --sink file -o x.jsonl --event-format avro
expect_refusal "unknown event format 'xml'; choose from json, avro, protobuf, json-schema" \
    --sink "kafka://$BOOTSTRAP/$tr" --event-format xml
expect_refusal "must be a credential reference" --sink "kafka://$BOOTSTRAP/$tr" --event-format avro \
    --sink-config "kafka.schema_registry_url=$MAIN_URL" kafka.schema_registry_username=svc \
    kafka.schema_registry_password=hunter2
grep -q hunter2 err.txt && fail "the literal password was printed"
expect_refusal "must not carry credentials" --sink "kafka://$BOOTSTRAP/$tr" --event-format avro \
    --sink-config "kafka.schema_registry_url=http://svc:pw@127.0.0.1:1"
grep -q ":pw@" err.txt && fail "the URL's password was printed"
n=$(kcat -b "$BOOTSTRAP" -t "$tr" -C -e -q -f '%o\n' | wc -l)
[ "$n" -eq 0 ] || fail "refused runs produced $n messages"

# --- basic auth, topic_record subjects ----------------------------------------------------
export REG_PW=s3cret
registry_up auth --user svc --password-env REG_PW
AUTH_URL=$REG_URL
expect_refusal "schema registry refused the schema for subject $tu-value: Unauthorized" \
    --sink "kafka://$BOOTSTRAP/$tu" --event-format avro --sink-config "kafka.schema_registry_url=$AUTH_URL"
"$SHAPE_BIN" emit retail --table order_line --max-events 600 --sink "kafka://$BOOTSTRAP/$tu" --event-format avro \
    --sink-config "kafka.schema_registry_url=$AUTH_URL" kafka.subject_strategy=topic_record \
    kafka.schema_registry_username=svc kafka.schema_registry_password=env://REG_PW \
    --json --no-progress >auth.json 2>err.txt || fail "authenticated emit: $(cat err.txt)"
python3 - "$AUTH_URL" "$tu" <<'PY' || fail "authenticated run"
import base64, json, sys, urllib.request
url, topic = sys.argv[1:]
assert json.load(open("auth.json"))["events"] == 600
req = urllib.request.Request(url + "/subjects", headers={"Authorization": "Basic " + base64.b64encode(b"svc:s3cret").decode()})
assert json.load(urllib.request.urlopen(req)) == [topic + "-shape.events.order_line"]
PY
n=$(kcat -b "$BOOTSTRAP" -t "$tu" -C -e -q -f '%o\n' | wc -l)
[ "$n" -eq 600 ] || fail "authenticated run produced $n messages"

echo "ok: registry formats"
