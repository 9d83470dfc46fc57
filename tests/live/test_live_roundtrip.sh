# live tier: a real cluster given by KAFKA_SERVERS and KAFKA_TOPIC (optional
# KAFKA_CONFIG: a JSON object of librdkafka properties, e.g. SASL/TLS).
# Skipped, visibly, when they are unset.
set -euo pipefail
missing=
for v in KAFKA_SERVERS KAFKA_TOPIC; do [ -n "${!v:-}" ] || missing="$missing $v"; done
if [ -n "$missing" ]; then
  echo "skipped: missing live setting:$missing"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
props=()
if [ -n "${KAFKA_CONFIG:-}" ]; then
  while IFS= read -r kv; do props+=(-X "$kv"); done < <(python3 -c '
import json, os, sys
cfg = json.loads(os.environ["KAFKA_CONFIG"])
if not isinstance(cfg, dict): sys.exit("KAFKA_CONFIG must be a JSON object")
for k, v in cfg.items():
    print(f"{k}={str(v).lower() if isinstance(v, bool) else v}")')
fi
marker="shape-live-$$-$RANDOM"
seq -f "$marker-%g" 1 100 >"$tmp/in"
kcat -b "$KAFKA_SERVERS" "${props[@]}" -t "$KAFKA_TOPIC" -P -l "$tmp/in"
kcat -b "$KAFKA_SERVERS" "${props[@]}" -t "$KAFKA_TOPIC" -C -e -q -o beginning | grep "^$marker-" | sort >"$tmp/out" || true
sort "$tmp/in" | cmp -s - "$tmp/out" || { echo "FAIL: the 100 marked lines did not come back"; exit 1; }
echo "ok: 100 lines round-tripped through $KAFKA_TOPIC"
