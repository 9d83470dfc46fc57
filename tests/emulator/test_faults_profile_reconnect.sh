#!/usr/bin/env bash
# test_faults_profile_reconnect.sh — `shape stream-profile kafka://` rides out
# a broker outage shorter than its --max-reconnects back-off allows.
#
# Why: issue 5 — a transient connection failure reopens the source at the
# last processed position; the profile must be exactly the one a run without
# the outage writes (no row lost, none profiled twice) and the summary must
# count the reconnects. Other tests only cover giving up (no broker at all).
# How: 6,000 rows over 3 partitions, produced with kcat. A clean run gives
# the reference profile. Then the broker answers slowly (`ctl rtt`) and the
# consumer fetches little at a time, so the read takes several seconds; once
# its checkpoint shows a processed batch the broker goes down (`ctl down 1`)
# for 3 s and comes back. The run must exit 0 with reconnects >= 1, events
# 6000, a profile equal to the clean one in every field (sketches included;
# mean/m2 to 1e-12 relative, see below — bytes are equal whenever the
# batches were cut alike), and a final checkpoint at the end of every
# partition. When the read had finished before the outage the test is not
# effective and fails.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"
N=6000
faults_broker_up --topic rows:3
for p in 0 1 2; do
  awk -v p=$p -v n=$N 'BEGIN { for (i = p; i < n; i += 3)
    printf "{\"id\":%d,\"amount\":%d.5,\"kind\":\"k%d\",\"flag\":%s,\"note\":%s,\"pad\":\"%0150d\"}\n",
      i, (i * 7919) % 1000, i % 11, (i % 2 ? "true" : "false"), (i % 5 ? "\"n\"" : "null"), i }' |
    kcat -b "$BOOTSTRAP" -t rows -P -p $p
done
uri="kafka://$BOOTSTRAP/rows"
small='config={"fetch.max.bytes":"4096","message.max.bytes":"4096","max.partition.fetch.bytes":"4096","fetch.wait.max.ms":"50","queued.min.messages":"1","queued.max.messages.kbytes":"1"}'
profile() { "$SHAPE_BIN" stream-profile "$uri" --batch-size 100 --option "$small" "$@"; }
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())[sys.argv[2]])' "$1" "$2"; }
batches_at() { python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["counters"]["batches_processed"])
except Exception: print(0)' "$1"; }

profile -o clean.json >clean.sum 2>clean.err || fail "clean run: $(cat clean.err)"
[ "$(field clean.sum events)" -eq $N ] && [ "$(field clean.sum reconnects)" -eq 0 ] || fail "clean summary: $(cat clean.sum)"

ctl rtt 1 40
start=$(date +%s)
profile -o out.json --checkpoint ck --checkpoint-every 1 --max-reconnects 5 >out.sum 2>out.err &
pid=$!
for _ in $(seq 1 400); do
  [ "$(batches_at ck)" -ge 1 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
kill -0 $pid 2>/dev/null || fail "the read ended before the outage (test not effective): $(cat out.err)"
at=$(batches_at ck)
ctl down 1
sleep 3
ctl up 1
ctl rtt 1 0
rc=0; wait $pid || rc=$?
secs=$(( $(date +%s) - start ))
reconnects=$(field out.sum reconnects 2>/dev/null || echo "?")
echo "broker down 3 s after batch $at: exit $rc after $secs s, reconnects $reconnects"
echo "stderr: $(grep -c 'reconnecting in' out.err) reconnect warning(s); $(head -1 out.err)"
same_bytes=$(cmp -s clean.json out.json && echo yes || echo "no (mean/m2 rounding)")
echo "profile byte-identical to the clean run: $same_bytes"
report "stream-profile: broker down 3 s mid-read" "ctl 'down 1' after batch $at; 'up 1' 3 s later" 0 0 "$rc" \
  "reconnects $reconnects; every profile field as in a clean run; bytes identical: $same_bytes"
[ $rc -eq 0 ] || fail "the run with an outage exited $rc: $(cat out.err)"
[ "$at" -lt 60 ] || fail "the read had every batch before the outage (test not effective)"
[ "$(field out.sum events)" -eq $N ] || fail "events after the outage: $(cat out.sum)"
[ "$reconnects" -ge 1 ] || fail "no reconnect counted although the broker was down 3 s: $(cat out.sum) $(cat out.err)"
grep -q 'reconnecting in 1 s (1 of 5)' out.err || fail "no reconnect warning: $(cat out.err)"
# Every field as in the clean run. Sketches (HyperLogLog, SpaceSaving, KLL)
# are fed in row order, so they must match exactly; mean and m2 are merged
# per batch (src/profile/moments.c), and a batch cut short by the outage (or
# by a slow poll, even in a clean run) moves their last bits: 1e-12 relative.
python3 - clean.json out.json <<'PY' || fail "the profile after $reconnects reconnect(s) differs from a clean run"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ta, tb = a.pop("tables")["stream"], b.pop("tables")["stream"]
assert a == b, (a, b)
assert ta["rows"] == tb["rows"] == 6000, (ta["rows"], tb["rows"])
assert [c["name"] for c in ta["columns"]] == [c["name"] for c in tb["columns"]]
bad = []
for x, y in zip(ta["columns"], tb["columns"]):
    for k in set(x) | set(y):
        if k in ("mean", "m2", "variance_population", "variance_sample") and x.get(k) is not None:
            if y.get(k) is None or abs(x[k] - y[k]) > 1e-12 * max(1.0, abs(x[k])):
                bad.append((x["name"], k, x[k], y.get(k)))
        elif x.get(k) != y.get(k):
            bad.append((x["name"], k, str(x.get(k))[:120], str(y.get(k))[:120]))
for d in bad:
    print("  %s.%s: clean %s, after the outage %s" % d)
sys.exit(1 if bad else 0)
PY
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["finished"] and d["positions"] == {"0": 2000, "1": 2000, "2": 2000}, d["positions"]' ck \
  || fail "final checkpoint: $(head -c 300 ck)"
faults_broker_down
echo "ok: stream-profile reconnected $reconnects time(s); its profile equals the clean run's in every field"
