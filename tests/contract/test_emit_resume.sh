#!/usr/bin/env bash
# test_emit_resume.sh — kill -9 a checkpointed `shape emit` at several points,
# rerun the same command, and check that nothing was lost.
#
# Why: the at-least-once promise (spec-core §3.6): after any crash, rerunning
# the command continues from the checkpoint, which never passes an event the
# destination did not take; a consumer keeping the first event per key sees
# exactly the uninterrupted stream. Duplicates may only come from what was
# written after the last checkpoint (here: about one batch).
# How: a paced run (10,000 events/s, batches of 200, a checkpoint every
# batch) into a file is killed with SIGKILL three times, each once its run has
# checkpointed 1,500 / 2,500 / 3,500 events past the last kill (asserted: each
# kill landed, exit 137, mid-stream), and rerun; then the union is
# deduplicated (first line per key) and compared byte for byte with a clean run.
set -euo pipefail

: "${SHAPE_BIN:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$SHAPE_BIN" emit retail --no-progress >clean.jsonl 2>/dev/null
cmd=("$SHAPE_BIN" emit retail --realtime --rate 10000 --batch-events 200 --checkpoint-every 200
     --sink file -o out.jsonl --no-progress)
kills=0
after=0  # events written after the last checkpoint, summed over the kills
prev=0   # the checkpoint offset at the last kill
# offset FILE: the checkpoint's offset (0 when absent or not written yet)
offset() { grep -o '"offset":[0-9]*' "$1" 2>/dev/null | cut -d: -f2 || true; }
for step in 1500 2500 3500; do
    "${cmd[@]}" >/dev/null 2>&1 &
    pid=$!
    # kill once this run has checkpointed `step` events past the last kill
    # (never a fixed sleep: on a loaded machine it may land before the first
    # checkpoint or after the end, and the test would prove nothing)
    for _ in $(seq 1 3000); do
        off=$(offset out.jsonl.checkpoint)
        (( ${off:-0} >= prev + step )) && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.01
    done
    kill -KILL $pid 2>/dev/null || true
    rc=0
    wait $pid 2>/dev/null || rc=$?
    (( rc == 137 )) || fail "kill $((kills + 1)) did not land (the run exited $rc before it, checkpoint offset ${off:-none})"
    kills=$((kills + 1))
    off=$(offset out.jsonl.checkpoint)
    (( off >= prev + step && off < 21750 )) || fail "kill $kills landed at checkpoint offset $off, not mid-stream past $((prev + step))"
    # the stream position the file reached = its distinct lines (an earlier
    # rerun's duplicates are lines seen before); a torn last line (a kill in
    # the middle of a write) does not count: the rerun cuts it
    reached=$(python3 -c "import sys; print(len({l for l in open('out.jsonl') if l.endswith('\\n')}))")
    (( reached >= off )) || fail "checkpoint offset $off passes the $reached events in the file"
    after=$((after + reached - off))
    prev=$off
    # a kill -9 leaves the checkpoint's lock file (the lock itself went with the process)
    [ -e out.jsonl.checkpoint.lock ] || fail "kill $kills: no lock file left (was the checkpoint locked?)"
    echo "kill $kills landed: checkpoint offset $off, the file reached $reached"
done
(( kills == 3 )) || fail "$kills kills landed, not 3"
"${cmd[@]}" --json >final.json 2>final.err || { cat final.err >&2; fail "final run failed"; }
python3 -c "import json; d=json.load(open('final.json')); assert d['complete'] and d['end_offset']==21750, d" \
    || fail "final run not complete"
# the rerun took the lock a kill left behind and removed its file at its clean end
[ ! -e out.jsonl.checkpoint.lock ] || fail "the lock file outlived the clean rerun"

# first line per key (the lines of one key are identical) = the clean stream
awk '!seen[$0]++' out.jsonl >dedup.jsonl
cmp -s dedup.jsonl clean.jsonl || fail "deduplicated union differs from a clean run"
dups=$(( $(wc -l <out.jsonl) - $(wc -l <dedup.jsonl) ))
echo "kills: $kills, duplicates: $dups, written after the last checkpoint: $after"
# the duplicates are exactly what each killed run wrote after its last
# checkpoint (a batch or two: the checkpoint thread's fsync lags the sends a
# little, more on a loaded machine), nothing else
(( dups == after )) || fail "$dups duplicates, but only $after events were written after checkpoints"
echo "ok: kill -9 x$kills, rerun, nothing lost, $dups duplicates"
