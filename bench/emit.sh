#!/usr/bin/env bash
# bench/emit.sh — `shape emit` into `shape broker` side by side with `kcat -P`
# producing the same pre-rendered events, same producer settings (acks=all,
# enable.idempotence=true, linger.ms=5), in one run; plus `--sink null`
# (generation + encoding alone, fault-free and with every fault at 1 %) and
# peak RSS.
#
# Usage (after `make`): bench/emit.sh [SCALE [EVENTS]]   (default: medium 500000)
# The embedded broker keeps ~5 MB per partition (older data is dropped like
# retention), which does not change what the producers do.
set -euo pipefail
cd "$(dirname "$0")/.."
shape=${SHAPE_BIN:-build/shape}
scale=${1:-medium}
events=${2:-500000}
tmp=$(mktemp -d)
cleanup() { [ -n "${pid:-}" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
command -v kcat >/dev/null || { echo "bench/emit.sh needs kcat" >&2; exit 2; }

"$shape" broker --topic shape:6 --topic kcat:6 --bootstrap-file "$tmp/bs" >/dev/null 2>"$tmp/broker.log" &
pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/bs" ] && break; sleep 0.1; done
bs=$(cat "$tmp/bs")

now() { date +%s.%N; }
rate() { python3 -c "print('%12.0f' % ($1 / ($3 - $2)))"; }

"$shape" emit retail --scale "$scale" --max-events "$events" --sink file -o "$tmp/events.jsonl" --fresh \
    --no-progress >/dev/null
# kcat gets each event with its key, as shape sends it: "<table>/<seq>\t<json>"
python3 - "$tmp/events.jsonl" "$tmp/keyed.txt" <<'PY'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        d = json.loads(line)
        out.write("%s/%d\t%s" % (d["_shape_table"], d["_shape_seq"], line))
PY

echo "emit benchmark: retail $scale, $events events, embedded broker, acks=all, idempotence, linger.ms=5"
t0=$(now)
kcat -b "$bs" -t kcat -P -K $'\t' -X acks=all -X enable.idempotence=true -X linger.ms=5 -l "$tmp/keyed.txt"
t1=$(now)
/usr/bin/time -f '%M' -o "$tmp/rss" "$shape" emit retail --scale "$scale" --max-events "$events" \
    --sink "kafka://$bs/shape" --no-progress >/dev/null
t2=$(now)
/usr/bin/time -f '%M' -o "$tmp/rss-null" "$shape" emit retail --scale "$scale" --sink null --no-progress \
    --json >"$tmp/null.json"
# issue 21: the same with every fault at 1 % (late, anomaly, duplicate, poison)
"$shape" emit retail --scale "$scale" --sink null --no-progress --json --out-of-order 0.01 \
    --anomaly-fraction 0.01 --duplicate-fraction 0.01 --poison-fraction 0.01 >"$tmp/faults.json"
kc=$(rate "$events" "$t0" "$t1"); sh=$(rate "$events" "$t1" "$t2")
printf '  kcat -P (pre-rendered)     %s events/s\n' "$kc"
printf '  shape emit --sink kafka:// %s events/s  (%.2fx kcat; peak RSS %s KB)\n' "$sh" \
    "$(python3 -c "print($sh / $kc)")" "$(cat "$tmp/rss")"
python3 -c "
import json; d=json.load(open('$tmp/null.json'))
print('  shape emit --sink null     %12.0f events/s  (whole %s stream, %d events; peak RSS %s KB)' % (d['per_second'], '$scale', d['events'], open('$tmp/rss-null').read().strip()))
f=json.load(open('$tmp/faults.json'))
print('  ... all faults at 1 %%      %12.0f events/s  (%.2fx fault-free)' % (f['per_second'], f['per_second'] / d['per_second']))"
/usr/bin/time -f '%M' -o "$tmp/rss-et" "$shape" emit retail --scale "$scale" --order event-time --sink null \
    --no-progress --json >"$tmp/et.json"
python3 -c "
import json; d=json.load(open('$tmp/et.json')); t=json.load(open('$tmp/null.json'))
print('  ... --order event-time     %12.0f events/s  (%.2fx --order table; peak RSS %s KB)' % (d['per_second'], d['per_second'] / t['per_second'], open('$tmp/rss-et').read().strip()))"
