# `shape stream-profile kafka://...` against a real Kafka protocol peer: the
# profile of a 3-partition topic equals the profile of the same rows read
# from a file (column documents), a run killed with kill -9 and resumed from
# its checkpoint equals a clean run byte for byte, and following stops on
# --idle-timeout or on SIGINT (checkpointed, interrupted: true, exit 0).
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }
small=$(unique_topic profile-small); big=$(unique_topic profile-big)
[ -n "${SHAPE_TEST_KAFKA:-}" ] || { small=small; big=big; }
kafka_up "$small:3" "$big:3"
T=$TEST_TMP

# 1500 rows, row i in partition i % 3; the file holds them in the order a
# bounded read hands them out: partition 0's, then 1's, then 2's.
gen() { # gen PARTITION ROWS
  awk -v p="$1" -v n="$2" 'BEGIN { for (i = p; i < n; i += 3) printf "{\"id\":%d,\"amount\":%d.25,\"kind\":\"k%d\",\"flag\":%s,\"note\":%s,\"_shape_event_time\":%d}\n", i, (i * 7919) % 1000, i % 7, (i % 2 ? "true" : "false"), (i % 5 ? "\"n\"" : "null"), 1700000000000 + i * 1000 }'
}
: >"$T/small.jsonl"
for p in 0 1 2; do
  gen $p 1500 | tee -a "$T/small.jsonl" | kcat -b "$BOOTSTRAP" -t "$small" -P -p $p
done
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$small" -o "$T/kafka.json" --batch-size 100 >"$T/ksum" 2>"$T/err" \
  || fail "kafka profile: $(cat "$T/err")"
"$SHAPE_BIN" stream-profile "$T/small.jsonl" -o "$T/file.json" --batch-size 100 >"$T/fsum" 2>"$T/err" \
  || fail "file profile: $(cat "$T/err")"
python3 - "$T/kafka.json" "$T/file.json" "$T/ksum" <<'PY' || fail "kafka and file profiles differ"
import json, sys
a, b = (json.load(open(p))["tables"]["stream"] for p in sys.argv[1:3])
s = json.loads(open(sys.argv[3]).read())
assert s["events"] == 1500 and s["batches"] == 15 and s["undecodable"] == 0 and s["window"] == "global", s
assert a["rows"] == b["rows"] == 1500, (a["rows"], b["rows"])
for x, y in zip(a["columns"], b["columns"]):
    for k in set(x) | set(y):
        if k in ("mean", "m2", "variance_population", "variance_sample"):
            assert abs(x[k] - y[k]) <= 1e-9 * max(1.0, abs(y[k])), (x["name"], k, x[k], y[k])
        else:
            assert x.get(k) == y.get(k), (x["name"], k, x.get(k), y.get(k))
assert [c["name"] for c in a["columns"]] == [c["name"] for c in b["columns"]]
PY

# kill -9 mid-run, resume: the same profile as a clean run, byte for byte.
for p in 0 1 2; do gen $p 60000 | kcat -b "$BOOTSTRAP" -t "$big" -P -p $p; done
uri="kafka://$BOOTSTRAP/$big"
"$SHAPE_BIN" stream-profile "$uri" -o "$T/clean.json" --batch-size 100 >"$T/csum" 2>"$T/err" || fail "clean run: $(cat "$T/err")"
grep -q '"events": 60000' "$T/csum" || fail "clean run summary: $(cat "$T/csum")"
batches_at() { python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["counters"]["batches_processed"])
except Exception: print(0)' "$1"; }
points=""
for target in 90 330; do
  "$SHAPE_BIN" stream-profile "$uri" -o "$T/run.json" --batch-size 100 --checkpoint "$T/ck" --checkpoint-every 1 \
    >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    [ "$(batches_at "$T/ck")" -ge $target ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.005
  done
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  points="$points $(batches_at "$T/ck")"
done
"$SHAPE_BIN" stream-profile "$uri" -o "$T/run.json" --batch-size 100 --checkpoint "$T/ck" --checkpoint-every 1 \
  >"$T/rsum" 2>"$T/err" || fail "resume: $(cat "$T/err")"
cmp -s "$T/clean.json" "$T/run.json" || fail "resumed profile differs from a clean run (killed at batches:$points)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["finished"] and d["positions"] == {"0": 20000, "1": 20000, "2": 20000}, d["positions"]' "$T/ck" \
  || fail "final checkpoint: $(head -c 300 "$T/ck")"
echo "ok: killed at batches$points of 600, resumed, byte-identical"

# Scale-out: workers over disjoint partitions, states merged = one run (exact fields).
"$SHAPE_BIN" stream-profile "$uri" -o "$T/w1.json" --partitions 0 --state "$T/w1.state" --batch-size 100 >/dev/null 2>"$T/err" \
  || fail "worker 1: $(cat "$T/err")"
"$SHAPE_BIN" stream-profile "$uri" -o "$T/w2.json" --partitions 1-2 --state "$T/w2.state" --batch-size 100 >/dev/null 2>"$T/err" \
  || fail "worker 2: $(cat "$T/err")"
"$SHAPE_BIN" stream-profile "$uri" -o "$T/w1ck.json" --partitions 0 --checkpoint "$T/w1.ck" --max-events 10 >/dev/null 2>&1 \
  || fail "worker checkpoint"
rc=0; "$SHAPE_BIN" stream-profile "$uri" -o "$T/w1ck.json" --partitions 1 --checkpoint "$T/w1.ck" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'taken with --partitions 0, not 1: use another file' "$T/err" || fail "other partitions: $rc $(cat "$T/err")"
"$SHAPE_BIN" profile-merge "$T/w1.state" "$T/w2.state" -o "$T/merged.json" >/dev/null 2>"$T/err" || fail "merge: $(cat "$T/err")"
python3 - "$T/merged.json" "$T/clean.json" "$T/w1.json" <<'PY' || fail "merged workers differ from one run"
import json, sys
a, b, w = (json.load(open(p))["tables"]["stream"] for p in sys.argv[1:4])
assert a["rows"] == b["rows"] == 60000 and w["rows"] == 20000, (a["rows"], b["rows"], w["rows"])
for x, y in zip(a["columns"], b["columns"]):
    for k in set(x) | set(y):
        if k in ("mean", "m2", "variance_population", "variance_sample"):
            assert abs(x[k] - y[k]) <= 1e-9 * max(1.0, abs(y[k])), (x["name"], k)
        elif k not in ("top", "quantiles"):
            assert x.get(k) == y.get(k), (x["name"], k, x.get(k), y.get(k))
PY

# Following: --idle-timeout ends the read; without a limit a notice, then SIGINT.
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$small" -o "$T/f.json" --follow --idle-timeout 1 >"$T/out" 2>"$T/err" \
  || fail "follow with idle timeout: $(cat "$T/err")"
grep -q '"events": 1500' "$T/out" || fail "follow summary: $(cat "$T/out")"
! grep -q "following until interrupted" "$T/err" || fail "notice with --idle-timeout"
# (interrupted once its checkpoint, written after every batch, shows all 1500 rows read: what the
# test waits for is observed, not assumed from a fixed sleep, so a slow run only takes longer)
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$small" -o "$T/g.json" --follow --checkpoint "$T/ckf" \
  --checkpoint-every 1 >"$T/out" 2>"$T/err" &
pid=$!
read_all() { python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["positions"] != {"0": 500, "1": 500, "2": 500})' "$T/ckf" 2>/dev/null; }
for _ in $(seq 1 1200); do read_all && break; sleep 0.05; done
read_all || { kill -9 $pid; fail "follow: the checkpoint never showed the 1500 rows read: $(cat "$T/err")"; }
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 0 ] || fail "SIGINT exit $rc: $(cat "$T/err")"
grep -q "following until interrupted" "$T/err" || fail "no follow notice: $(cat "$T/err")"
grep -q '"interrupted": true' "$T/out" && grep -q '"events": 1500' "$T/out" || fail "interrupted summary: $(cat "$T/out")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert not d["finished"] and d["positions"] == {"0": 500, "1": 500, "2": 500}, d' "$T/ckf" \
  || fail "checkpoint after SIGINT"
# No broker at all: one reconnect after 1 s, then give up with the source's message (exit 2).
rc=0; "$SHAPE_BIN" stream-profile "kafka://127.0.0.1:1/nothing" -o "$T/none.json" --max-reconnects 1 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] || fail "unreachable broker exited $rc"
# never connected: not retried, one line (the reconnects are for a cluster lost mid-read)
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q '^shape: error: cannot connect to the source (not retried before a first connection): kafka: ' "$T/err" \
  || fail "unreachable broker messages: $(cat "$T/err")"
[ ! -e "$T/none.json" ] && [ ! -s "$T/out" ] || fail "an unreachable broker wrote something"

echo "ok: stream-profile against the emulator"
