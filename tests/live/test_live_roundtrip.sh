# live tier: a real cluster given by KAFKA_SERVERS and KAFKA_TOPIC (optional
# KAFKA_CONFIG: a JSON object of librdkafka properties, e.g. SASL/TLS).
# Skipped, visibly, when they are unset.
source "$(dirname "$0")/live_lib.sh"
marker="shape-live-$$-$RANDOM"
for i in $(seq 1 100); do echo "{\"marker\":\"$marker\",\"n\":$i}"; done >"$tmp/in"
kcat -b "$KAFKA_SERVERS" "${props[@]}" -t "$KAFKA_TOPIC" -P -l "$tmp/in"
kcat -b "$KAFKA_SERVERS" "${props[@]}" -t "$KAFKA_TOPIC" -C -e -q -o beginning | grep -F "\"$marker\"" | sort >"$tmp/out" || true
sort "$tmp/in" | cmp -s - "$tmp/out" || { echo "FAIL: the 100 marked lines did not come back through kcat"; exit 1; }
# shape's own kafka:// source reads them too (bounded read of the whole topic).
: "${SHAPE_BIN:?}"
config=()
[ -z "${KAFKA_CONFIG:-}" ] || config=(--option "config=$KAFKA_CONFIG")
# The columns are given (--option schema): the topic may hold other rows
# first (test_live_emit.sh's, a user's), whose first batch would otherwise
# fix columns without marker and n.
"$SHAPE_BIN" stream-read "kafka://$KAFKA_SERVERS/$KAFKA_TOPIC" "${config[@]}" \
  --option 'schema=[["marker","u"],["n","l"],["_shape_event_time","tsu:UTC"]]' 2>"$tmp/err" \
  | grep -F "\"$marker\"" | sed 's/,"_shape_event_time".*}$/}/' | sort >"$tmp/shape" || true
sort "$tmp/in" | cmp -s - "$tmp/shape" || { echo "FAIL: shape stream-read did not return the 100 marked rows: $(cat "$tmp/err")"; exit 1; }
echo "ok: 100 rows round-tripped through $KAFKA_TOPIC (kcat and shape stream-read)"
