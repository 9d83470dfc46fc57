# live tier: `shape emit` into a real cluster (reference spec-kafka.md §6.6),
# given by KAFKA_SERVERS and KAFKA_TOPIC (optional KAFKA_CONFIG: a JSON object
# of librdkafka properties, e.g. SASL/TLS). Skipped, visibly, when unset.
#
# Cases: (1) 1,000 order_line events (batches of 250) read back from the
# topic's end before the run: exactly the keys order_line/0..999, each body's
# _shape_seq equal to its key's seq; (2) 3 events with --key order_line_id,
# --partition 0 and --header rehearsal=yes: partition 0 gains exactly 3
# messages keyed by their order_line_id, each with the header rehearsal=yes
# and shape-key order_line/0..2. The topic must exist (any partition count).
source "$(dirname "$0")/live_lib.sh"
: "${SHAPE_BIN:?}"
[ -z "${KAFKA_CONFIG:-}" ] || printf '{"config": %s}\n' "$KAFKA_CONFIG" >"$tmp/options.json"
emit_opts=()
[ -z "${KAFKA_CONFIG:-}" ] || emit_opts=(--options-file "$tmp/options.json")
sink="kafka://$KAFKA_SERVERS/$KAFKA_TOPIC"

# ends PARTITION...: "partition offset" lines of the topic's current ends.
ends() {
  kcat -b "$KAFKA_SERVERS" "${props[@]}" -L -t "$KAFKA_TOPIC" -J | python3 -c '
import json, sys
md = json.load(sys.stdin)
print(" ".join(str(p["partition"]) for p in md["topics"][0]["partitions"]))' >"$tmp/parts"
  local p
  for p in $(cat "$tmp/parts"); do
    echo "$p $(kcat -b "$KAFKA_SERVERS" "${props[@]}" -Q -t "$KAFKA_TOPIC:$p:-1" | awk '{print $NF}')"
  done
}
# read_from ENDS_FILE FORMAT: every message after those ends, one line each.
read_from() {
  local p o
  while read -r p o; do
    kcat -b "$KAFKA_SERVERS" "${props[@]}" -C -e -q -t "$KAFKA_TOPIC" -p "$p" -o "$o" -f "$2"
  done <"$1"
}

ends >"$tmp/before1"
"$SHAPE_BIN" emit retail -t order_line --max-events 1000 --batch-events 250 --no-progress "${emit_opts[@]}" \
  --sink "$sink" >/dev/null 2>"$tmp/err1" || { echo "FAIL: emit of 1000 events: $(cat "$tmp/err1")"; exit 1; }
read_from "$tmp/before1" '%k\t%s\n' >"$tmp/got1"
python3 - "$tmp/got1" <<'PY' || exit 1
import json, sys
rows = [l.rstrip("\n").split("\t", 1) for l in open(sys.argv[1]) if l.strip()]
keys = sorted(k for k, _ in rows)
want = sorted("order_line/%d" % i for i in range(1000))
if keys != want:
    sys.exit("FAIL: read back %d messages, keys %s... not order_line/0..999" % (len(keys), keys[:3]))
for k, body in rows:
    if json.loads(body)["_shape_seq"] != int(k.split("/")[1]):
        sys.exit("FAIL: key %s has _shape_seq %s" % (k, json.loads(body)["_shape_seq"]))
PY

ends >"$tmp/before2"
"$SHAPE_BIN" emit retail -t order_line --max-events 3 --key order_line_id --partition 0 --header rehearsal=yes \
  --no-progress "${emit_opts[@]}" --sink "$sink" >/dev/null 2>"$tmp/err2" ||
  { echo "FAIL: emit of 3 events with key, partition and header: $(cat "$tmp/err2")"; exit 1; }
read_from "$tmp/before2" '%p\t%k\t%h\t%s\n' >"$tmp/got2"
python3 - "$tmp/got2" <<'PY' || exit 1
import json, sys
rows = [l.rstrip("\n").split("\t", 3) for l in open(sys.argv[1]) if l.strip()]
if len(rows) != 3:
    sys.exit("FAIL: %d messages arrived after the 3-event run, not 3" % len(rows))
seen = []
for part, key, headers, body in rows:
    b = json.loads(body)
    if part != "0":
        sys.exit("FAIL: a message went to partition %s, not 0" % part)
    if key != str(b["order_line_id"]):
        sys.exit("FAIL: key %r is not the body's order_line_id %r" % (key, b["order_line_id"]))
    h = dict(x.split("=", 1) for x in headers.split(",") if "=" in x)
    if h.get("rehearsal") != "yes":
        sys.exit("FAIL: header rehearsal=yes missing: %r" % headers)
    seen.append(h.get("shape-key"))
if sorted(seen) != ["order_line/0", "order_line/1", "order_line/2"]:
    sys.exit("FAIL: shape-key headers %r, not order_line/0..2" % seen)
PY
echo "ok: emit 1000 events read back (keys order_line/0..999, _shape_seq matches); 3 events keyed, on partition 0, with headers"
