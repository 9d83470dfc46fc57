#!/usr/bin/env bash
# test_emit_shard.sh — `shape emit --shard i/n`: n processes split one stream.
#
# Why: the shards of a stream must together be that stream exactly — every
# event once, same body, same key (<table>/<seq> with the original seq), none
# in two shards — and each shard is resumable on its own, so a checkpoint
# of one shard must never resume another (DESIGN.md "Scale-out").
# How: the small retail stream (21,750 events) into files: unsharded, then
# as 3 shards; the shards' lines are checked against the unsharded run's
# positions (shard i holds exactly positions ≡ i mod 3, in order). Then a
# shard is stopped by --max-events and by kill -9 and rerun (resume), a
# wrong-shard checkpoint is refused, bad --shard values are refused with one
# line and exit 2, and the reports name the shard.
set -euo pipefail

: "${SHAPE_BIN:?}"
# shellcheck source=cli_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"

# --- the whole stream, then 3 shards ---------------------------------------------
run emit retail --sink file -o all.jsonl --no-progress --json
expect_ok "unsharded"
for i in 0 1 2; do
    run emit retail --sink file -o "s$i.jsonl" --shard "$i/3" --no-progress --json
    expect_ok "shard $i/3"
    cp out "report$i.json"
done
python3 - <<'PY' || fail "shards are not the stream split by position mod 3"
import json
allv = open("all.jsonl").read().splitlines()
assert len(allv) == 21750, len(allv)
seen = {}
for i in range(3):
    lines = open("s%d.jsonl" % i).read().splitlines()
    # shard i holds exactly the positions ≡ i (mod 3), in stream order
    assert lines == allv[i::3], "shard %d differs from positions %d::3" % (i, i)
    rep = json.loads(open("report%d.json" % i).read().splitlines()[-1])
    assert rep["shard"] == "%d/3" % i, rep
    assert rep["events"] == len(lines) == rep["total_events"] == rep["end_offset"], rep
    assert rep["complete"], rep
    for l in lines:
        d = json.loads(l)
        key = "%s/%d" % (d["_shape_table"], d["_shape_seq"])  # the idempotency key
        assert key not in seen, "key %s in shards %d and %d" % (key, seen[key], i)
        seen[key] = i
assert len(seen) == 21750
assert sorted(sum((open("s%d.jsonl" % i).read().splitlines() for i in range(3)), [])) == sorted(allv)
PY
# --shard 0/1 is the whole stream, with the unsharded checkpoint
run emit retail --sink file -o all.jsonl --shard 0/1 --no-progress
expect_ok "0/1 resumes the unsharded checkpoint"
grep -q 'offset 21,750 of 21,750, complete (already complete)' out || fail "0/1 is not the whole stream"
grep -q 'shard' out && fail "0/1 must not name a shard"

# --- text report and dry run name the shard ------------------------------------------
run emit retail --shard 1/4 --max-events 10 --sink null --no-progress
expect_ok "text report"
grep -q '^shape emit: 10 events delivered, offset 10 of 5,438 in shard 1/4, max-events' out || fail "text report"
run emit retail --shard 3/4 --sink null --dry-run
expect_ok "dry run"
grep -q '5,437 events in shard 3/4 (limit 5,437)' out || fail "dry run does not name the shard"

# --- --max-events counts the shard's events; the rerun resumes ------------------------
run emit retail --sink file -o r1.jsonl --shard 1/3 --max-events 1000 --no-progress --json
expect_ok "shard with --max-events"
[[ $(wc -l <r1.jsonl) -eq 1000 ]] || fail "--max-events 1000 wrote $(wc -l <r1.jsonl) lines"
python3 -c "import json; d=json.load(open('r1.jsonl.checkpoint')); assert d['offset']==1000 and d['total']==7250 and d['shard']=='1/3', d" \
    || fail "checkpoint of a stopped shard"
run emit retail --sink file -o r1.jsonl --shard 1/3 --no-progress --json
expect_ok "shard resume"
python3 -c "import json; d=json.loads(open('out').read()); assert d['start_offset']==1000 and d['events']==6250 and d['complete'], d" \
    || fail "resume report"
cmp -s r1.jsonl s1.jsonl || fail "resumed shard differs from an uninterrupted one"

# --- kill -9 mid-run, rerun: nothing lost, duplicates only after the checkpoint -------
cmd=("$SHAPE_BIN" emit retail --shard 2/3 --realtime --rate 20000 --batch-events 200 --checkpoint-every 200
     --sink file -o k2.jsonl --no-progress)
"${cmd[@]}" >/dev/null 2>&1 &
pid=$!
sleep 0.2
kill -KILL $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
"${cmd[@]}" --json >out 2>err || fail "rerun after kill -9"
python3 -c "import json; d=json.loads(open('out').read()); assert d['complete'] and d['end_offset']==7250 and d['shard']=='2/3', d" \
    || fail "rerun not complete"
awk '!seen[$0]++' k2.jsonl >k2.dedup
cmp -s k2.dedup s2.jsonl || fail "killed and resumed shard differs from an uninterrupted one"

# --- a checkpoint of one shard never resumes another, nor the whole stream --------------
run emit retail --sink file -o r1.jsonl --shard 0/3 --no-progress
expect_error 2 "belongs to a different stream" "written by --shard 1/3" "use --fresh"
run emit retail --sink file -o r1.jsonl --shard 1/2 --no-progress
expect_error 2 "belongs to a different stream" "use --fresh"
run emit retail --sink file -o r1.jsonl --no-progress
expect_error 2 "belongs to a different stream" "written by --shard 1/3"
run emit retail --sink file -o all.jsonl --shard 1/3 --no-progress
expect_error 2 "belongs to a different stream" "use --fresh"
run emit retail --sink file -o r1.jsonl --shard 0/3 --no-progress --fresh
expect_ok "--fresh starts the other shard over"
cmp -s r1.jsonl s0.jsonl || fail "--fresh shard 0/3 differs"

# --- other tables and more shards than events -------------------------------------------
run emit retail --table store --sink file -o st.jsonl --no-progress
expect_ok "store table"
n=$(wc -l <st.jsonl)
for i in 0 1; do
    run emit retail --table store --shard "$i/$((n + 1))" --sink file -o "st$i.jsonl" --no-progress
    expect_ok "shard $i of $((n + 1))"
done
[[ $(head -1 st.jsonl) == "$(cat st0.jsonl)" ]] || fail "first of n+1 shards is not the first event"
[[ $(sed -n 2p st.jsonl) == "$(cat st1.jsonl)" ]] || fail "second of n+1 shards is not the second event"
run emit retail --table store --shard "$n/$((n + 1))" --sink null --no-progress
expect_ok "an empty shard"
grep -q '0 events delivered, offset 0 of 0 in shard' out || fail "empty shard report"

# --- bad values: one line, exit 2 ---------------------------------------------------------
for bad in 3/3 -1/3 1/0 x 1 /3 1/ 1/3/4 "1 /3" 0x1/3 1/99999999; do
    run emit retail --shard "$bad" --sink null
    expect_error 2 "--shard must be I/N"
done
echo "ok: shards split the stream exactly, resume alone, refuse each other's checkpoints"
