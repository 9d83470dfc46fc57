#!/usr/bin/env bash
# test_emit_event_time_faults_kafka.sh — kill -9 at several points of a
# faulted (out of order, duplicates, poison, anomalies), event-time-ordered
# `shape emit retail --order event-time` into `shape broker`, resumed: after
# keeping the first message of each key, the topic is the clean run's, in its
# order, and the answer key (repeats dropped) is the clean run's.
#
# Why: issue 21's test for faults in event-time order. Every fault is drawn
# from the seed and the event (its table and row), the disorder is ordered
# over windows of the merged stream's positions, and a resume seeks the
# timeline to its checkpoint's offset and re-queues the copies that fall due
# after it (docs/EMIT.md, "Event-time order"); a resume that drew anything
# from the run's history instead would lose, add or move faults, which this
# sees.
# How: one partition (one order to compare); 5,000 events (the head's 900,
# then the timeline), ~1.6 MB with the copies and re-sends: under the
# embedded broker's ~5 MB per partition. A clean (never killed) run into one
# topic; a paced run (10,000 events/s, batches of 200, a checkpoint every
# batch) into another, killed with SIGKILL three times and rerun to the end;
# both read back with kcat -J.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
cd "$TEST_TMP"
tc=$(unique_topic etclean); tk=$(unique_topic etkilled)
kafka_up "$tc:1" "$tk:1"
export SHAPE_CONFIRM_REMOTE=0

faults=(--order event-time --max-events 5000 --out-of-order 0.05 --ooo-window 150 --duplicate-fraction 0.03
        --duplicate-window 100 --poison-fraction 0.01 --anomaly-fraction 0.02 --anomaly-mutator value-anomaly
        --anomaly-mutator time-skew)
"$SHAPE_BIN" emit retail "${faults[@]}" --sink "kafka://$BOOTSTRAP/$tc" --answer-key c.key --no-progress \
    >/dev/null 2>err.txt || fail "clean faulted run: $(tail -3 err.txt)"
cmd=("$SHAPE_BIN" emit retail "${faults[@]}" --realtime --rate 10000 --batch-events 200 --checkpoint-every 200
     --checkpoint "$TEST_TMP/k.ck" --sink "kafka://$BOOTSTRAP/$tk" --answer-key k.key --no-progress)
offs=""
for pause in 0.2 0.35 0.3; do
    "${cmd[@]}" >/dev/null 2>>err.txt &
    pid=$!
    sleep "$pause"
    kill -KILL "$pid" 2>/dev/null && midway=$((${midway:-0} + 1))
    wait "$pid" 2>/dev/null || true
    sleep 0.3  # a request already on the wire may still land
    off=0
    [[ -f k.ck ]] && off=$(python3 -c "import json; print(json.load(open('k.ck'))['offset'])")
    offs="$offs $off"
done
[[ ${midway:-0} -ge 1 ]] || fail "no run was killed before it ended"
"${cmd[@]}" >/dev/null 2>>err.txt || fail "final resume: $(tail -3 err.txt)"
kcat -b "$BOOTSTRAP" -t "$tc" -C -e -q -J >c.json
kcat -b "$BOOTSTRAP" -t "$tk" -C -e -q -J >k.json
OFFS="$offs" python3 - <<'PY' || fail "killed and resumed differs from the clean run"
import json, os
def firsts(path):
    seen, out, total = set(), [], 0
    for l in open(path):
        m = json.loads(l)
        total += 1
        if m["key"] not in seen:
            seen.add(m["key"])
            out.append((m["key"], m["payload"]))
    return out, total
def lines(path):
    return sorted(set(open(path)))
clean, nclean = firsts("c.json")
killed, nkilled = firsts("k.json")
key = [json.loads(l) for l in lines("c.key")]
kinds = {k: sum(1 for a in key if a["kind"] == k) for k in ("late", "duplicate", "poison", "anomaly")}
print("kill -9 x3 (checkpoints at%s): %d messages, %d distinct; clean %d messages, %d distinct; faults %s"
      % (os.environ["OFFS"], nkilled, len(killed), nclean, len(clean), kinds))
assert len(clean) == 5000 and nclean == 5000 + kinds["duplicate"], "the clean run"
assert all(kinds.values()), "a fault kind is missing from the run"
assert [k for k, _ in killed] == [k for k, _ in clean], "keys differ (or their order) after keeping the first of each"
bad = [k for (k, b), (_, c) in zip(killed, clean) if b != c]
assert not bad, "bodies differ, e.g. %s" % bad[0]
assert lines("k.key") == lines("c.key"), "answer keys differ after dropping repeats"
PY
echo "ok: a faulted event-time stream into shape broker, killed three times and resumed, is the clean run and answer key"
