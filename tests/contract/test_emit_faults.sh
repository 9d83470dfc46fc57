#!/usr/bin/env bash
# test_emit_faults.sh — duplicates, poison and the answer key (issue 21 item 3)
# into a file, checked against the answer key.
#
# Why: a consumer's test scores what it caught against the answer key, so the
# key must list exactly what was delivered: every duplicate key arrives twice,
# the copy 1..W events after its original; every poisoned body is
# undecodable and the undecodable lines are exactly the poisoned ones; every
# event of the clean stream is there. The faults are drawn from the seed and
# the event, so a second run is byte-identical and another seed differs; a
# run stopped at a checkpoint and resumed gives, concatenated, the
# uninterrupted stream and answer key byte for byte.
# How: retail small into a file with 5 % duplicates (window 50) and 2 %
# poison; python3 replays the stream against the answer key.
set -euo pipefail

: "${SHAPE_BIN:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

faults=(--duplicate-fraction 0.05 --duplicate-window 50 --poison-fraction 0.02)
"$SHAPE_BIN" emit retail --no-progress >clean.jsonl 2>/dev/null
"$SHAPE_BIN" emit retail --sink file -o a.jsonl "${faults[@]}" --answer-key a.key --json --no-progress >a.report \
    || fail "faulted run"
python3 - <<'PY' || fail "stream against the answer key"
import json
lines = open("a.jsonl", encoding="utf-8", errors="surrogateescape").read().split("\n")[:-1]
key = [json.loads(l) for l in open("a.key")]
rep = json.load(open("a.report"))
dups = [k for k in key if k["kind"] == "duplicate"]
poison = [k for k in key if k["kind"] == "poison"]
assert rep["duplicates"] == len(dups) and rep["poisoned"] == len(poison), rep
assert len(lines) == 21750 + len(dups), (len(lines), len(dups))
assert 0.04 * 21750 < len(dups) < 0.06 * 21750 and 0.01 * 21750 < len(poison) < 0.03 * 21750
poison_keys = iter(p["key"] for p in poison)
seen, originals, copies, undecodable = {}, 0, {}, 0
for l in lines:
    try:
        d = json.loads(l)
        k = "%s/%d" % (d["_shape_table"], d["_shape_seq"])
    except ValueError:
        undecodable += 1
        k = next(poison_keys)  # the answer key lists them in stream order
        assert k not in seen, k
        seen[k] = originals
        originals += 1
        continue
    if k in seen:
        copies[k] = originals - 1 - seen[k]
    else:
        seen[k] = originals
        originals += 1
assert undecodable == len(poison), (undecodable, len(poison))
assert originals == 21750
clean = {json.loads(l)["_shape_table"] + "/" + str(json.loads(l)["_shape_seq"]) for l in open("clean.jsonl")}
assert set(seen) == clean, "not every event is there"
assert set(copies) == {d["key"] for d in dups}, "copies differ from the answer key"
for d in dups:
    assert 1 <= copies[d["key"]] <= 50 and copies[d["key"]] == d["copy_after"], (d, copies[d["key"]])
PY

# --- the same seed gives the same stream and key; another seed other faults ---------------
"$SHAPE_BIN" emit retail --sink file -o b.jsonl "${faults[@]}" --answer-key b.key --no-progress >/dev/null
cmp -s a.jsonl b.jsonl && cmp -s a.key b.key || fail "a second run differs"
"$SHAPE_BIN" emit retail --seed 43 --sink file -o c.jsonl "${faults[@]}" --answer-key c.key --no-progress >/dev/null
cmp -s a.key c.key && fail "another seed gave the same answer key"

# --- stopped at a checkpoint and resumed: the uninterrupted stream and key -------------------
for stop in 7000 7023 21000; do
    rm -f r.jsonl r.jsonl.checkpoint r.key
    "$SHAPE_BIN" emit retail --sink file -o r.jsonl "${faults[@]}" --answer-key r.key --max-events $stop \
        --no-progress >/dev/null || fail "first part to $stop"
    "$SHAPE_BIN" emit retail --sink file -o r.jsonl "${faults[@]}" --answer-key r.key --no-progress >/dev/null \
        || fail "resume from $stop"
    cmp -s a.jsonl r.jsonl || fail "resumed at $stop: the stream differs from the uninterrupted one"
    cmp -s a.key r.key || fail "resumed at $stop: the answer key differs"
done

# --- the default stream is untouched -----------------------------------------------------------
"$SHAPE_BIN" emit retail --duplicate-fraction 0 --poison-fraction 0 --no-progress 2>/dev/null | cmp -s - clean.jsonl \
    || fail "zero fractions changed the stream"

# --- out of order: late rows stay in their window, move at most moved_up_to later ---------
"$SHAPE_BIN" emit retail --sink file -o o.jsonl --out-of-order 0.1 --ooo-window 100 --answer-key o.key \
    --json --no-progress >o.report || fail "out-of-order run"
python3 - <<'PY' || fail "out-of-order stream against the answer key"
import json
lines = [json.loads(l) for l in open("o.jsonl")]
late = {k["key"]: k["moved_up_to"] for k in map(json.loads, open("o.key")) if k["kind"] == "late"}
assert json.load(open("o.report"))["late"] == len(late)
assert 0.08 * 21750 < len(late) < 0.12 * 21750, len(late)
clean = [json.loads(l) for l in open("clean.jsonl")]
tables = {}
for l in lines:
    tables.setdefault(l["_shape_table"], []).append(l)
for t, rows in tables.items():
    assert sorted(r["_shape_seq"] for r in rows) == list(range(len(rows))), "all seqs present: " + t
    for rank, r in enumerate(rows):
        s, k = r["_shape_seq"], "%s/%d" % (t, r["_shape_seq"])
        assert rank // 100 == s // 100, ("left its window", k, rank)
        assert rank - s <= (late[k] if k in late else 0) <= 100, (k, rank, s)
byseq = {(c["_shape_table"], c["_shape_seq"]): c for c in clean}
assert all(byseq[(l["_shape_table"], l["_shape_seq"])] == l for l in lines), "a moved event changed"
PY
"$SHAPE_BIN" emit retail --sink file -o o2.jsonl --out-of-order 0.1 --ooo-window 100 --no-progress >/dev/null
cmp -s o.jsonl o2.jsonl || fail "out-of-order: a second run differs"
# --- anomalies: 0.2 changes 10-24 % of the 12,500 order lines, each in the answer key -------
"$SHAPE_BIN" emit retail --sink file -o n.jsonl --anomaly-fraction 0.2 --answer-key n.key --json --no-progress \
    >n.report || fail "anomaly run"
python3 - <<'PY' || fail "anomalies against the answer key"
import json
got = [json.loads(l) for l in open("n.jsonl")]
clean = [json.loads(l) for l in open("clean.jsonl")]
key = {k["key"]: k for k in map(json.loads, open("n.key")) if k["kind"] == "anomaly"}
rep = json.load(open("n.report"))
assert rep["anomalies_affected"] == len(key) <= rep["anomalies_selected"], rep
changed = 0
for g, c in zip(got, clean):
    k = "%s/%d" % (c["_shape_table"], c["_shape_seq"])
    diff = [col for col in c if g.get(col) != c[col]]
    if diff:
        assert k in key and diff == [key[k]["column"]], (k, diff, key.get(k))
        assert key[k]["mutator"] == "value-anomaly" and key[k]["change"] in ("outlier", "null"), key[k]
        assert not key[k]["column"].endswith("_id"), key[k]
        changed += c["_shape_table"] == "order_line"
    else:
        assert k not in key, k
assert 0.10 * 12500 <= changed <= 0.24 * 12500, changed
PY
"$SHAPE_BIN" emit retail --sink file -o m.jsonl --anomaly-fraction 0.3 --answer-key m.key --no-progress \
    --anomaly-mutator wrong-type --anomaly-mutator long-string --anomaly-mutator time-skew >/dev/null
python3 - <<'PY' || fail "mutators"
import json
seen = {}
for k in map(json.loads, open("m.key")):
    seen.setdefault(k["mutator"], set()).add(k["change"])
assert seen == {"wrong-type": {"string"}, "long-string": {"long"}, "time-skew": {"future", "past"}}, seen
for l in open("m.jsonl"):
    json.loads(l)  # every mutated event is still JSON, one per row
PY
[[ $(wc -l <m.jsonl) -eq 21750 ]] || fail "mutators changed the row count"

# with duplicates and poison too, resumed at a checkpoint: the uninterrupted stream
all=(--out-of-order 0.1 --ooo-window 100 --anomaly-fraction 0.1 "${faults[@]}")
"$SHAPE_BIN" emit retail --sink file -o f.jsonl "${all[@]}" --answer-key f.key --no-progress >/dev/null
rm -f r.jsonl r.jsonl.checkpoint r.key
"$SHAPE_BIN" emit retail --sink file -o r.jsonl "${all[@]}" --answer-key r.key --max-events 9050 --no-progress >/dev/null
"$SHAPE_BIN" emit retail --sink file -o r.jsonl "${all[@]}" --answer-key r.key --no-progress >/dev/null
cmp -s f.jsonl r.jsonl && cmp -s f.key r.key || fail "all faults, resumed: differs from the uninterrupted run"
# the disorder is part of the fingerprint: a plain run does not resume its checkpoint
rm -f p.jsonl p.jsonl.checkpoint
"$SHAPE_BIN" emit retail --sink file -o p.jsonl --out-of-order 0.1 --max-events 100 --no-progress >/dev/null
set +e
"$SHAPE_BIN" emit retail --sink file -o p.jsonl --no-progress >/dev/null 2>err.txt
rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q 'belongs to a different stream' err.txt || fail "a plain run resumed an out-of-order checkpoint"

# --- --time-origin: one shift for every timestamp, kept by a resumed `now` --------------------
"$SHAPE_BIN" emit retail --time-origin 2030-01-01T00:00:00Z --no-progress >t.jsonl 2>/dev/null
rm -f n1.jsonl n1.jsonl.checkpoint
"$SHAPE_BIN" emit retail --sink file -o n1.jsonl --time-origin now --max-events 5000 --no-progress >/dev/null
sleep 1
"$SHAPE_BIN" emit retail --sink file -o n1.jsonl --time-origin now --no-progress >/dev/null
python3 - <<'PY' || fail "time origin"
import json, datetime
def ns(text):
    d = datetime.datetime.fromisoformat(text[:26]).replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 10**9 + int(text[20:29])
clean = [json.loads(l) for l in open("clean.jsonl")]
for name, want_first in (("t.jsonl", ns("2030-01-01T00:00:00.000000000")), ("n1.jsonl", None)):
    got = [json.loads(l) for l in open(name)]
    assert len(got) == len(clean)
    shifts = set()
    for g, c in zip(got, clean):
        for col, v in c.items():
            if isinstance(v, str) and len(v) == 29 and v[4] == "-" and v[10] == "T":
                shifts.add(ns(g[col]) - ns(v))
    assert len(shifts) == 1, (name, len(shifts))  # one amount for every timestamp, resumed or not
    if want_first is not None:
        assert ns(got[0]["_shape_event_time"]) == want_first, got[0]
PY
set +e
"$SHAPE_BIN" emit retail --sink file -o n1.jsonl --no-progress >/dev/null 2>err.txt
rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q 'different stream' err.txt || fail "a run without --time-origin resumed a shifted checkpoint"

# --- the dry run prints the schedule and the fault plan ------------------------------------
"$SHAPE_BIN" emit retail --realtime --rate 1000 --ramp 0:10:1:2 --burst 10:5:3 "${faults[@]}" --dry-run >dry.txt
grep -q '^  expected duration 11.1 s for 21750 events$' dry.txt || fail "dry run schedule: $(cat dry.txt)"
grep -q 'duplicates 0.05 (window 50, ~1088 expected), poison 0.02 (~435 expected)' dry.txt || fail "dry run faults: $(cat dry.txt)"
"$SHAPE_BIN" emit retail --out-of-order 0.1 --ooo-window 20 --dry-run | grep -q 'windows of 20 rows of a table' ||
    fail "dry run: the table-order disorder windows"
"$SHAPE_BIN" emit retail --order event-time --out-of-order 0.1 --ooo-window 20 --dry-run |
    grep -q 'windows of 20 events of the merged stream' || fail "dry run: the event-time disorder windows"

# --- bad input: one line, exit 2, nothing written ------------------------------------------------
bad() { # EXPECTED ARGS...
    local want=$1
    shift
    set +e
    "$SHAPE_BIN" emit retail --sink file -o bad.jsonl --no-progress "$@" >/dev/null 2>err.txt
    local rc=$?
    set -e
    [[ $rc -eq 2 ]] || fail "emit $* exited $rc"
    [[ $(wc -l <err.txt) -eq 1 ]] && grep -q "^shape: error: .*$want" err.txt || fail "emit $*: $(cat err.txt)"
    [[ ! -s bad.jsonl ]] || fail "emit $* wrote events"
}
bad "from 0 to 1" --duplicate-fraction 1.5
bad "from 0 to 1" --out-of-order 2
bad "ooo-window" --out-of-order 0.1 --ooo-window 0
bad "available: value-anomaly, wrong-type, long-string, time-skew" --anomaly-fraction 0.1 --anomaly-mutator shuffle
bad "needs --anomaly-fraction" --anomaly-mutator long-string
bad "time-origin wants now or an ISO-8601" --time-origin yesterday
bad "JSON only" --event-format avro --anomaly-fraction 0.1 --anomaly-mutator wrong-type
bad "must be a number" --poison-fraction -0.1
bad "duplicate-window" --duplicate-fraction 0.1 --duplicate-window 0
bad "order wants table or event-time, got 'time'" --order time
# --order table is today's stream, byte for byte
"$SHAPE_BIN" emit retail --order table --max-events 3000 --no-progress >order-table.jsonl 2>/dev/null
head -n 3000 clean.jsonl | cmp -s - order-table.jsonl || fail "--order table is not the default stream"
echo "ok: duplicates, poison and the answer key agree, repeat, and resume exactly"
