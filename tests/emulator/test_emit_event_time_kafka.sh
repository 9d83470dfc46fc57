#!/usr/bin/env bash
# test_emit_event_time_kafka.sh — kill -9 of a checkpointed
# `shape emit retail --order event-time` into `shape broker`, resumed: after
# keeping the first message of each key, the topic is the clean run.
#
# Why: an event-time stream resumes at its checkpoint's offset by a seek over
# time (docs/EMIT.md, "Event-time order"), generating nothing before it; a
# wrong seek would lose, repeat or reorder events, which this sees.
# How: a topic of 3 partitions (the embedded broker keeps ~5 MB per
# partition: one would drop the stream's start), a paced
# run (8,000 events/s, batches of 200, a checkpoint every batch) killed with
# SIGKILL twice and rerun to the end; the topic, read back with kcat and cut
# to the first message per key, must hold the console run's messages byte
# for byte, each partition in the console run's order; and that stream must
# pass event_time_check.py.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
cd "$TEST_TMP"
t=$(unique_topic eventtime)
kafka_up "$t:3"
export SHAPE_CONFIRM_REMOTE=0

"$SHAPE_BIN" emit retail --order event-time --no-progress >clean.jsonl 2>/dev/null
[[ $(wc -l <clean.jsonl) -eq 21750 ]] || fail "console run"
python3 "$SHAPE_SOURCE_DIR/tests/contract/event_time_check.py" clean.jsonl || fail "the clean stream"

cmd=("$SHAPE_BIN" emit retail --order event-time --realtime --rate 8000 --batch-events 200 --checkpoint-every 200
     --checkpoint "$TEST_TMP/et.ck" --sink "kafka://$BOOTSTRAP/$t" --no-progress)
offs=""
for pause in 0.6 0.9; do
    "${cmd[@]}" >/dev/null 2>>err.txt &
    pid=$!
    sleep "$pause"
    kill -KILL $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    sleep 0.3  # a request already on the wire may still land
    off=0
    [[ -f et.ck ]] && off=$(python3 -c "import json; print(json.load(open('et.ck'))['offset'])")
    offs="$offs $off"
done
"${cmd[@]}" >/dev/null 2>>err.txt || fail "rerun after kill: $(tail -3 err.txt)"
kcat -b "$BOOTSTRAP" -t "$t" -C -e -q -f '%p\t%k\t%s\n' >got.tsv
OFFS="$offs" python3 - <<'PY' || fail "kill -9, resume, first per key: not the clean run"
import json, os
seen, parts, total = {}, {}, 0
for line in open("got.tsv"):
    total += 1
    part, key, body = line.rstrip("\n").split("\t", 2)
    if key not in seen:
        seen[key] = body
        parts.setdefault(part, []).append(key)
clean = [l.rstrip("\n") for l in open("clean.jsonl")]
pos = {}
for i, body in enumerate(clean):
    e = json.loads(body)
    pos["%s/%d" % (e["_shape_table"], e["_shape_seq"])] = i
print("kill -9 x2 (checkpoints at%s): %d messages, %d distinct, clean %d"
      % (os.environ["OFFS"], total, len(seen), len(clean)))
assert set(seen) == set(pos), "keys differ: %d lost, %d invented" % (len(set(pos) - set(seen)), len(set(seen) - set(pos)))
bad = [k for k, b in seen.items() if clean[pos[k]] != b]
assert not bad, "bodies differ, e.g. %s" % bad[0]
for part, keys in parts.items():
    idx = [pos[k] for k in keys]
    assert idx == sorted(idx), "partition %s: not in the stream's order" % part
PY
echo "ok: event-time order into shape broker, killed twice and resumed, is the clean run"
