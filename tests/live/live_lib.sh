# live_lib.sh — sourced by the live tests: the settings of a real cluster.
#
# KAFKA_SERVERS and KAFKA_TOPIC are required (the test exits 77, "skipped:
# missing live setting: NAME", without them); KAFKA_CONFIG, optional, is a
# JSON object of librdkafka properties (SASL/TLS ...). Sets: $tmp (a scratch
# folder removed on exit) and props (kcat's -X arguments for KAFKA_CONFIG).
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
