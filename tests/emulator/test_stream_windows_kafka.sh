#!/usr/bin/env bash
# test_stream_windows_kafka.sh — windowed stream profiles of a 4-partition
# topic on `shape broker`: the interleaved read order, per-partition
# watermarks, and kill -9 exactness.
#
# Why: issue 20 — with a window kind, a bounded read must interleave the
# partitions (deterministically) so that partitions that are each in
# event-time order give no late rows; a lagging partition, one that goes
# quiet early, and rows out of order must give exactly the windows and late
# counts of the reference's rules; a killed and resumed run must leave the
# windows of an uninterrupted one.
# How: topic w4 (4 partitions, each in event-time order, an hour of events);
# topic mix (partition 3 lags 4 minutes, partition 2 stops after 6 minutes,
# partition 1 has rows up to 90 s out of order and a few 20 minutes late).
# tests/contract/window_oracle.py models the windows; its batches follow the
# documented order (each batch from the partition read least, ties to the
# lower id; all partitions known from the start). Then kill -9 at several
# points of checkpointed runs, without and with --follow, each resumed to
# the end: the windows file, sorted, equals a clean run's.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
oracle_dir=$(cd "$(dirname "$0")/../contract" && pwd)
w4=$(unique_topic w4) mix=$(unique_topic wmix) idle1=$(unique_topic widle1) idle0=$(unique_topic widle0)
[ -n "${SHAPE_TEST_KAFKA:-}" ] || { w4=w4; mix=wmix; idle1=widle1; idle0=widle0; }
kafka_up "$w4:4" "$mix:4" "$idle1:2" "$idle0:2"
T=$TEST_TMP
S=1000000

python3 - "$T" <<'PY'
import json, random, sys
d = sys.argv[1]
rnd = random.Random(3)
base = 1767225600000  # 2026-01-01T00:00:00Z, ms
def row(p, i, t):
    return {"p": p, "i": i, "v": None if i % 11 == 4 else round(rnd.uniform(0, 1000), 2),
            "_shape_event_time": t}  # no null: Kafka would take the broker time instead
# w4: 4 partitions x 3000 rows, each in order, spanning an hour
for p in range(4):
    with open("%s/w4-%d.jsonl" % (d, p), "w") as f:
        t = base + p * 7
        for i in range(3000):
            t += rnd.randint(600, 1800)
            f.write(json.dumps(row(p, i, t)) + "\n")
# mix
for p in range(4):
    with open("%s/mix-%d.jsonl" % (d, p), "w") as f:
        n = 400 if p == 2 else 2400
        t = base
        for i in range(n):
            t += 900 if p != 2 else 900
            e = t
            if p == 3: e = t - 240000                    # lags 4 minutes
            if p == 1: e = t - rnd.randint(0, 90000)     # out of order by up to 90 s
            if p == 1 and i % 150 == 149: e = t - 1200000  # 20 minutes late
            f.write(json.dumps(row(p, i, e)) + "\n")
PY
for p in 0 1 2 3; do
  kcat -b "$BOOTSTRAP" -t "$w4" -P -p $p <"$T/w4-$p.jsonl"
  kcat -b "$BOOTSTRAP" -t "$mix" -P -p $p <"$T/mix-$p.jsonl"
done

# The oracle for a topic: rows per partition in offset order; batches in the
# documented interleaved order.
cat >"$T/kafka_oracle.py" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import window_oracle as wo
prefix, windows, summary, batch, kind = sys.argv[2:7]
opts = {k: int(v) for k, v in (a.split("=") for a in sys.argv[7:])}
batch = int(batch)
rows, parts = [], []
for p in range(4):
    for line in open("%s-%d.jsonl" % (prefix, p)):
        rows.append(json.loads(line)); parts.append(p)
idx = {p: [i for i in range(len(rows)) if parts[i] == p] for p in range(4)}
pos = {p: 0 for p in range(4)}
order = []
while any(pos[p] < len(idx[p]) for p in range(4)):
    p = min((p for p in range(4) if pos[p] < len(idx[p])), key=lambda p: (pos[p], p))
    take = idx[p][pos[p]:pos[p] + batch]
    pos[p] += len(take)
    order.append((p, take))
with open(prefix + "-all.jsonl", "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
m = wo.run(prefix + "-all.jsonl", batch, kind, parts=[0, 1, 2, 3], order=order, **opts)
wo.compare(m, windows, summary, kind)
print("oracle: %d windows, %d late" % (len(m.closed), m.late))
PY

late_of() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["late_events"])' "$1"; }

# ---- four in-order partitions over an hour: no late row, every timed row in a window
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$w4" --window tumbling --size 1m --windows "$T/w4.jsonl" \
  --batch-size 100 >"$T/w4.sum" 2>"$T/err" || fail "w4: $(cat "$T/err")"
[ "$(late_of "$T/w4.sum")" -eq 0 ] || fail "in-order partitions had late rows: $(cat "$T/w4.sum")"
python3 - "$T/w4.jsonl" "$T/w4.sum" <<'PY' || fail "w4 windows"
import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]
s = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
assert s["events"] == 12000, s
assert sum(x["rows"] for x in w) == 12000 - s["null_event_time"], (sum(x["rows"] for x in w), s)
assert 55 <= len(w) <= 65, len(w)
PY
python3 "$T/kafka_oracle.py" "$oracle_dir" "$T/w4" "$T/w4.jsonl" "$T/w4.sum" 100 tumbling size=$((60 * S)) >/dev/null \
  || fail "w4 oracle"

# ---- lagging, quiet and disordered partitions, every kind, against the oracle
run_mix() { # run_mix BATCH KIND ORACLE_ARGS -- SHAPE_ARGS...
  local batch=$1 kind=$2 oargs=$3; shift 4
  rm -f "$T/mix.jsonl"
  "$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$mix" --window "$kind" --windows "$T/mix.jsonl" --batch-size "$batch" "$@" \
    >"$T/mix.sum" 2>"$T/err" || fail "mix $kind $*: $(cat "$T/err")"
  # shellcheck disable=SC2086
  python3 "$T/kafka_oracle.py" "$oracle_dir" "$T/mix" "$T/mix.jsonl" "$T/mix.sum" "$batch" "$kind" $oargs >/dev/null \
    || fail "mix oracle: $kind --batch-size $batch $*"
}
# Every kind at both batch sizes; under memcheck (SHAPE_UNDER_MEMCHECK, set by
# tests/valgrind/run-emulator) each kind once, the batch sizes alternating:
# the same code paths for memcheck to watch at half the cost (~40 s there),
# every pair still compared with the oracle in the plain run.
b1=50 b2=333 b3=50 b4=333
[ -n "${SHAPE_UNDER_MEMCHECK:-}" ] || b1="50 333" b2="50 333" b3="50 333" b4="50 333"
for batch in $b1; do run_mix $batch tumbling "size=$((60 * S))" -- --size 1m; done
for batch in $b2; do
  run_mix $batch tumbling "size=$((60 * S)) lateness=$((60 * S)) skew=$((120 * S))" -- --size 1m --allowed-lateness 1m --max-partition-skew 2m
done
for batch in $b3; do run_mix $batch sliding "size=$((120 * S)) slide=$((30 * S))" -- --size 2m --slide 30s; done
for batch in $b4; do run_mix $batch session "gap=$((2 * S))" -- --gap 2s; done
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$mix" --window tumbling --size 1m --windows "$T/m.jsonl" --batch-size 50 \
  >"$T/m.sum" 2>/dev/null
[ "$(late_of "$T/m.sum")" -gt 0 ] || fail "the 20-minute-late rows were not late"

# ---- scale-out: two workers over disjoint partitions write window states;
# profile-merge gives the single run's windows on exact fields (in-order
# partitions: no row is late for either, whatever each worker's watermark)
for part in 0-1 2-3; do
  "$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$w4" --window sliding --size 2m --slide 1m --windows "$T/part$part.jsonl" \
    --batch-size 100 --partitions $part --state "$T/part$part.wstate" >/dev/null 2>"$T/err" || fail "worker $part: $(cat "$T/err")"
done
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$w4" --window sliding --size 2m --slide 1m --windows "$T/single.jsonl" \
  --batch-size 100 >/dev/null 2>&1
"$SHAPE_BIN" profile-merge "$T/part0-1.wstate" "$T/part2-3.wstate" -o "$T/merged.jsonl" --state "$T/merged.wstate" \
  >"$T/merge.sum" 2>"$T/err" || fail "profile-merge of window states: $(cat "$T/err")"
python3 - "$T/single.jsonl" "$T/merged.jsonl" "$T/merge.sum" <<'PY' || fail "merged windows differ from the single run's"
import json, sys
def load(path):
    return {(w["start_us"], w["end_us"]): w for w in map(json.loads, open(path))}
a, b = load(sys.argv[1]), load(sys.argv[2])
s = json.loads(open(sys.argv[3]).read().strip().splitlines()[-1])
assert sorted(a) == sorted(b), (len(a), len(b))
assert s["windows"] == len(a) and s["states"] == 2, s
exact = ("count", "null_count", "min", "max", "distinct", "true_count", "false_count", "min_length", "max_length")
for k, wa in a.items():
    wb = b[k]
    assert wa["rows"] == wb["rows"] and wa["kind"] == wb["kind"] and wa["start"] == wb["start"], k
    ca = {c["name"]: c for c in wa["profile"]["columns"]}
    cb = {c["name"]: c for c in wb["profile"]["columns"]}
    assert sorted(ca) == sorted(cb), k
    for n in ca:
        for f in exact:
            assert ca[n].get(f) == cb[n].get(f), (k, n, f, ca[n].get(f), cb[n].get(f))
        m, o = ca[n].get("mean"), cb[n].get("mean")
        assert (m is None) == (o is None) and (m is None or abs(m - o) <= 1e-9 * max(1, abs(m))), (k, n, m, o)
PY
# the merged state merges again (with nothing: the same windows)
"$SHAPE_BIN" profile-merge "$T/merged.wstate" -o "$T/merged2.jsonl" >/dev/null || fail "re-merge"
cmp -s "$T/merged.jsonl" "$T/merged2.jsonl" || fail "a merged window state merged alone changed"
rc=0; "$SHAPE_BIN" profile-merge "$T/merged.wstate" "$T/w4.jsonl" -o "$T/x.jsonl" >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "^shape: error: .*is not a window state" "$T/err" || fail "a windows file taken for states: $rc $(cat "$T/err")"

# ---- an idle partition stops holding the watermark (--follow, wall clock)
# p1 delivers one row at 0 s, then nothing; p0 delivers 0-600 s, and 2.5 s
# later 600-700 s: by then p1 has been silent past --partition-idle-timeout 1,
# so the watermark follows p0 and window [0, 60 s) closes. A row for p1 at
# 10 s, sent at 4 s, is then late (the run ends at its 702nd message). With the idle timeout off (0), p1 holds
# the watermark at its newest time and nothing is late.
idle_run() { # idle_run TOPIC IDLE_TIMEOUT SUMMARY
  local topic=$1 t0=1767225600000 pid
  python3 -c "import json; print(json.dumps({'p': 1, 'v': 0.5, '_shape_event_time': $t0}))" | kcat -b "$BOOTSTRAP" -t "$topic" -P -p 1
  python3 -c "
import json
for i in range(600): print(json.dumps({'p': 0, 'v': i * 1.0, '_shape_event_time': $t0 + i * 1000}))" | kcat -b "$BOOTSTRAP" -t "$topic" -P -p 0
  "$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$topic" --window tumbling --size 1m --windows "$T/$topic.jsonl" \
    --follow --max-events 702 --idle-timeout 30 --max-partition-skew 2h --partition-idle-timeout "$2" >"$3" 2>"$T/$topic.err" &
  pid=$!
  sleep 2.5
  python3 -c "
import json
for i in range(600, 700): print(json.dumps({'p': 0, 'v': i * 1.0, '_shape_event_time': $t0 + i * 1000}))" | kcat -b "$BOOTSTRAP" -t "$topic" -P -p 0
  sleep 1.5
  python3 -c "import json; print(json.dumps({'p': 1, 'v': 0.25, '_shape_event_time': $t0 + 10000}))" | kcat -b "$BOOTSTRAP" -t "$topic" -P -p 1
  wait "$pid" || fail "idle run ($topic): $(cat "$T/$topic.err")"
}
idle_run "$idle1" 1 "$T/idle1.sum"
[ "$(late_of "$T/idle1.sum")" -eq 1 ] || fail "an idle partition still held the watermark: $(cat "$T/idle1.sum")"
idle_run "$idle0" 0 "$T/idle0.sum"
[ "$(late_of "$T/idle0.sum")" -eq 0 ] || fail "with --partition-idle-timeout 0 a silent partition let rows be late: $(cat "$T/idle0.sum")"
python3 - "$T/$idle0.jsonl" <<'PY' || fail "idle0 windows"
import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]
assert sum(x["rows"] for x in w) == 702 and w[0]["start_us"] == 1767225600000000 and w[0]["rows"] == 62, [(x["start"], x["rows"]) for x in w][:3]
PY

# ---- kill -9 at several points, then resume: the windows of a clean run, each once
kill_and_resume() { # kill_and_resume NAME DELAYS -- ARGS...
  local name=$1 delays=$2; shift 3
  rm -f "$T/$name.jsonl" "$T/$name.ck"
  local d pid
  for d in $delays; do
    "$SHAPE_BIN" stream-profile "$@" --windows "$T/$name.jsonl" --checkpoint "$T/$name.ck" --checkpoint-every 2 \
      >/dev/null 2>&1 &
    pid=$!
    sleep "$d"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  "$SHAPE_BIN" stream-profile "$@" --windows "$T/$name.jsonl" --checkpoint "$T/$name.ck" --checkpoint-every 2 \
    >"$T/$name.sum" 2>"$T/err" || fail "$name: the last run: $(cat "$T/err")"
  sort "$T/$name.jsonl" >"$T/$name.sorted"
  [ "$(sort -u "$T/$name.sorted" | wc -l)" -eq "$(wc -l <"$T/$name.sorted")" ] || fail "$name: a window twice"
}
args=("kafka://$BOOTSTRAP/$mix" --window sliding --size 2m --slide 30s --batch-size 40)
"$SHAPE_BIN" stream-profile "${args[@]}" --windows "$T/clean.jsonl" >/dev/null 2>&1
kill_and_resume bounded "0.4 0.8 1.2 1.6" -- "${args[@]}"
sort "$T/clean.jsonl" | cmp -s - "$T/bounded.sorted" || fail "bounded: killed and resumed windows differ from a clean run's"

# --follow: batches follow arrival; with in-order partitions and a skew cap
# above the topic's span no row can be late, so every window is complete
fargs=("kafka://$BOOTSTRAP/$w4" --window tumbling --size 1m --batch-size 64 --max-partition-skew 2h --follow --idle-timeout 5)
"$SHAPE_BIN" stream-profile "${fargs[@]}" --windows "$T/fclean.jsonl" >"$T/fclean.sum" 2>/dev/null
[ "$(late_of "$T/fclean.sum")" -eq 0 ] || fail "follow: late rows"
kill_and_resume follow "0.5 1.0 1.5" -- "${fargs[@]}"
# batch boundaries differ between the runs, so sketches may too: compare the exact fields
python3 - "$T/fclean.jsonl" "$T/follow.sorted" <<'PY' || fail "follow: killed and resumed windows differ from a clean run's"
import json, sys
def load(path):
    out = {}
    for line in open(path):
        w = json.loads(line)
        cols = {c["name"]: c for c in w["profile"]["columns"]}
        out[(w["start_us"], w["end_us"])] = (w["rows"], [(n, c["count"], c["null_count"], c.get("min"), c.get("max"))
                                                     for n, c in sorted(cols.items())],
                                         {n: c.get("mean") for n, c in cols.items()})
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
assert sorted(a) == sorted(b), "windows differ"
for k in a:
    assert a[k][0] == b[k][0] and a[k][1] == b[k][1], k
    for n, m in a[k][2].items():
        o = b[k][2][n]
        assert (m is None) == (o is None) and (m is None or abs(m - o) <= 1e-9 * max(1, abs(m))), (k, n, m, o)
PY
echo ok
