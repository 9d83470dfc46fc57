#!/usr/bin/env bash
# test_emit_event_time.sh — `shape emit --order event-time` (docs/EMIT.md,
# "Event-time order") from outside the process.
#
# Why: the event-time stream promises an order (head tables, then times that
# never decrease, every foreign key's target earlier), the retail rules,
# determinism, a resume that continues exactly, and bounded memory at every
# preset; each is checked here on what the command writes.
# How: `small` to a file, checked by event_time_check.py against the
# --order table stream's row counts; a second run byte-compared; a run
# stopped by --max-events and resumed from its checkpoint equals the whole
# run; peak RSS of all of small, of 600,000 events of medium and of the first
# 5,000,000 of large (issue 21: flat), and of
# table order's 600,000 (--sink null; skipped under ASan, whose shadow memory
# is not the program's); the refusals (a schema domain, another order's
# checkpoint). Faults in event-time order (disorder over the merged stream's
# positions, duplicates, poison, anomalies): checked by
# event_time_faults_check.py against the answer key and the clean stream,
# the same bytes and key on a second run, stopped and resumed byte for byte;
# shards: shard i is positions i, i+3, ... of the (disordered) merged stream;
# --time-origin anchors on the first timed event with promotion selected.
set -euo pipefail

: "${SHAPE_BIN:?}"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- the order, the rules, the row counts ---
"$SHAPE_BIN" emit retail --order event-time --sink file -o et.jsonl --no-progress >/dev/null
"$SHAPE_BIN" emit retail --sink file -o table.jsonl --no-progress >/dev/null
python3 "$here/event_time_check.py" et.jsonl table.jsonl || fail "the event-time stream"

# --- same seed, same bytes; another seed, another stream ---
"$SHAPE_BIN" emit retail --order event-time --sink file -o et2.jsonl --no-progress >/dev/null
cmp -s et.jsonl et2.jsonl || fail "two runs with the same seed differ"
"$SHAPE_BIN" emit retail --order event-time --seed 7 --max-events 2000 --sink file -o et7.jsonl --no-progress >/dev/null
head -2000 et.jsonl | cmp -s - et7.jsonl && fail "seed 7 gives seed 42's stream"

# --- stopped, then resumed from the checkpoint: exactly the whole run ---
# stops inside the timeline: in an order's run of lines, and right after a
# return (the seek finds the time, then walks the events at that time)
stops=$(python3 - <<'PY'
import json
t = [json.loads(l)["_shape_table"] for l in open("et.jsonl")]
mid = next(i for i in range(7000, len(t)) if t[i] == "order_line" and t[i - 1] == "order_line")
ret = next(i for i in range(12000, len(t)) if t[i - 1] == "return")
print(mid, ret)
PY
)
for stop in $stops; do
    rm -f r.jsonl r.jsonl.checkpoint
    "$SHAPE_BIN" emit retail --order event-time --max-events "$stop" --checkpoint-every 500 --sink file -o r.jsonl \
        --no-progress >/dev/null
    [ "$(wc -l <r.jsonl)" -eq "$stop" ] || fail "--max-events $stop wrote $(wc -l <r.jsonl) lines"
    "$SHAPE_BIN" emit retail --order event-time --checkpoint-every 500 --sink file -o r.jsonl --no-progress >/dev/null
    cmp -s r.jsonl et.jsonl || fail "the run resumed at $stop differs from the whole run"
done
# a checkpoint of one order never resumes the other (the fingerprint has the order)
"$SHAPE_BIN" emit retail --max-events 100 --checkpoint-every 50 --sink file -o o.jsonl --no-progress >/dev/null
rc=0
"$SHAPE_BIN" emit retail --order event-time --checkpoint-every 50 --sink file -o o.jsonl --no-progress \
    >/dev/null 2>o.err || rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <o.err)" -eq 1 ] || { cat o.err; fail "a table-order checkpoint resumed event-time (exit $rc)"; }
[ "$(wc -l <o.jsonl)" -eq 100 ] || fail "the refused run changed the file"

# --- refusals: one line, exit 2, nothing written ---
refuse() { # WANT ARGS...
    local want=$1 rc=0
    shift
    "$SHAPE_BIN" emit "$@" --order event-time --sink file -o refused.jsonl --no-progress >/dev/null 2>err || rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] && grep -qF -- "$want" err || { cat err; fail "$* (exit $rc)"; }
    [ ! -s refused.jsonl ] || fail "$*: wrote events"
}
refuse "needs a domain whose event times are ordered by row; payments has none" "$here/../../examples/domains/payments.json"

# --- faults in event-time order: against the answer key and the clean stream ---
faults=(--out-of-order 0.05 --ooo-window 200 --duplicate-fraction 0.03 --duplicate-window 100 --poison-fraction 0.01
        --anomaly-fraction 0.02 --anomaly-mutator value-anomaly --anomaly-mutator long-string --anomaly-mutator time-skew)
"$SHAPE_BIN" emit retail --order event-time "${faults[@]}" --sink file -o f.jsonl --answer-key f.key --json \
    --no-progress >f.report || fail "faulted event-time run"
python3 "$here/event_time_faults_check.py" f.jsonl f.key et.jsonl 200 100 f.report || fail "faults in event-time order"
"$SHAPE_BIN" emit retail --order event-time "${faults[@]}" --sink file -o f2.jsonl --answer-key f2.key \
    --no-progress >/dev/null
cmp -s f.jsonl f2.jsonl && cmp -s f.key f2.key || fail "faults in event-time order: a second run differs"
"$SHAPE_BIN" emit retail --order event-time "${faults[@]}" --seed 7 --sink file -o f7.jsonl --answer-key f7.key \
    --no-progress >/dev/null
cmp -s f.key f7.key && fail "faults in event-time order: seed 7 gives seed 42's answer key"
# stopped inside the timeline (the checkpoint keeps an offset) and resumed:
# the uninterrupted stream and answer key, byte for byte (the resume re-queues
# the copies that fall due after its start)
for stop in 9001 15555; do
    rm -f r.jsonl r.jsonl.checkpoint r.key
    "$SHAPE_BIN" emit retail --order event-time "${faults[@]}" --max-events "$stop" --checkpoint-every 500 \
        --sink file -o r.jsonl --answer-key r.key --no-progress >/dev/null
    "$SHAPE_BIN" emit retail --order event-time "${faults[@]}" --checkpoint-every 500 --sink file -o r.jsonl \
        --answer-key r.key --no-progress >/dev/null
    cmp -s r.jsonl f.jsonl || fail "faulted, resumed at $stop: the stream differs from the uninterrupted one"
    cmp -s r.key f.key || fail "faulted, resumed at $stop: the answer key differs"
done

# --- shards: shard i of 3 is positions i, i+3, ... of the merged stream ---
# (disorder and anomalies included: the shards together are the disordered
# stream and its answer key, each event once)
shard=(--order event-time --out-of-order 0.1 --ooo-window 50 --anomaly-fraction 0.05 --no-progress)
"$SHAPE_BIN" emit retail "${shard[@]}" --sink file -o w.jsonl --answer-key w.key >/dev/null
for i in 0 1 2; do
    "$SHAPE_BIN" emit retail "${shard[@]}" --shard $i/3 --sink file -o s$i.jsonl --answer-key s$i.key >/dev/null
done
python3 - <<'PY' || fail "event-time shards do not partition the stream"
whole = open("w.jsonl").read().split("\n")[:-1]
for i in range(3):
    assert open("s%d.jsonl" % i).read().split("\n")[:-1] == whole[i::3], "shard %d" % i
keys = sorted(l for i in range(3) for l in open("s%d.key" % i))
assert keys == sorted(open("w.key")) and len(keys) > 2000, "the shards' answer keys are not the stream's"
PY

# --- --time-origin: the first timed event is the origin (promotion, a head
# table with a start_date, is selected and comes first) ---
"$SHAPE_BIN" emit retail --order event-time --table promotion --table order --time-origin 2030-01-01T00:00:00Z \
    --max-events 300 --sink file -o o2030.jsonl --no-progress >/dev/null
python3 - <<'PY' || fail "--time-origin in event-time order"
import json
ev = [json.loads(l) for l in open("o2030.jsonl")]
first = next(e for e in ev if e["_shape_table"] == "order")
assert first["_shape_event_time"] == "2030-01-01T00:00:00.000000000", first["_shape_event_time"]
assert ev[0]["_shape_table"] == "promotion"
PY

# --- bounded memory: peak RSS of small and of the middle of medium ---
if grep -q libasan <<<"$(ldd "$SHAPE_BIN")"; then # (read whole: grep -q must not cut ldd short under pipefail)
    echo "peak RSS: skipped under ASan"
else
    peak() { # peak RSS in KB of: shape emit retail ARGS... --sink null
        python3 - "$SHAPE_BIN" "$@" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "emit", "retail"] + sys.argv[2:] + ["--sink", "null", "--no-progress"],
               check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
    }
    small_kb=$(peak --order event-time --scale small)
    medium_kb=$(peak --order event-time --scale medium --max-events 600000)
    large_kb=$(peak --order event-time --scale large --max-events 5000000)
    table_kb=$(peak --order table --scale medium --max-events 600000)
    echo "peak RSS: event-time small ${small_kb} KB, medium (600,000 events) ${medium_kb} KB," \
        "large (5,000,000 events) ${large_kb} KB; table order ${table_kb} KB"
    # small never fills the event queue, 600,000 events may, as far as the
    # sink lags the generator (timing: seen +17 MB beside other tests): what
    # grows is the queue (as in table order, checked below: seen +8.7 MB), not
    # the merge (held whole, 600,000 events would take over 100 MB more)
    (( medium_kb < small_kb + 32768 )) || fail "peak RSS grows with the preset: ${small_kb} KB -> ${medium_kb} KB"
    (( large_kb < small_kb + 32768 )) || fail "peak RSS grows with the preset: ${small_kb} KB -> ${large_kb} KB (large)"
    (( medium_kb < table_kb + 16384 )) || fail "event-time order takes ${medium_kb} KB, table order ${table_kb} KB"
fi
echo "ok"
