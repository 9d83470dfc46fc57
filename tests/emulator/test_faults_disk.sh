#!/usr/bin/env bash
# test_faults_disk.sh — the disk fills up while a checkpoint is written.
#
# Why: issue 9 — a checkpoint that cannot be written must stop the run with
# a clear error and leave the previous checkpoint whole, so a rerun (after
# space is freed) resumes from it and nothing is lost.
# How: a 64 KiB tmpfs holds the checkpoints (needs root or CAP_SYS_ADMIN;
# skipped with exit 77 otherwise). A first run writes a valid checkpoint, a
# filler file takes the rest of the space, the next run must exit 2 naming
# the checkpoint and "No space left on device" with the old checkpoint
# byte-identical and no temp file left behind; then the filler goes and the
# rerun completes: every row / event at least once, repeats at most what was
# delivered after the kept checkpoint.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"
export SHAPE_CONFIRM_REMOTE=0
mkdir small
if ! mount -t tmpfs -o size=64k tmpfs small 2>mount.err; then
  echo "SKIP: cannot mount a small tmpfs here ($(cat mount.err)); the full-disk test needs root"
  exit 77
fi
trap 'umount "$TEST_TMP/small" 2>/dev/null || true; cleanup' EXIT
fill() { dd if=/dev/zero of=small/fill bs=1k 2>/dev/null || true; }

# --- stream-read ---------------------------------------------------------------------
N=2000
faults_broker_up --topic rows:2
for p in 0 1; do seq $p 2 $((N - 1)) | sed 's/.*/{"id":&}/' | kcat -b "$BOOTSTRAP" -t rows -P -p $p; done
read_rows() { "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --batch-size 100 --checkpoint small/read.ck "$@"; }
read_rows --max-events 300 >r1 2>/dev/null || fail "first read"
cp small/read.ck read.ck.good
fill
rc=0; read_rows >r2 2>r2.err || rc=$?
line=$(grep '^shape: error: ' r2.err | head -1)
echo "stream-read, disk full: exit $rc: $line; $(wc -l <r2) rows printed before it"
left=$(ls small | grep -v '^fill$' | grep -v '^read.ck$' || true)
rm -f small/fill
rc3=0; read_rows >r3 2>r3.err || rc3=$?
read -r lost dups <<<"$(cat r1 r2 r3 | sed -n 's/^{"id":\([0-9]*\).*/\1/p' | python3 -c '
import sys, collections
c = collections.Counter(int(l) for l in sys.stdin)
print(len(set(range(int(sys.argv[1]))) - set(c)), sum(v - 1 for v in c.values()))' $N)"
report "stream-read: disk full while checkpointing" "checkpoint on a 64 KiB tmpfs filled by dd; rerun after freeing it" \
  "$lost" "$dups" "$rc then $rc3" "${line#shape: error: }; the batch printed before the failed save is read again"
[ $rc -eq 2 ] || fail "stream-read, disk full: exit $rc (expected 2): $(cat r2.err)"
grep -q 'read\.ck' <<<"$line" && grep -q 'No space left on device' <<<"$line" || fail "stream-read, disk full: message '$line'"
[ -z "$left" ] || fail "stream-read, disk full: left behind in the checkpoint folder: $left"
[ $rc3 -eq 0 ] || fail "stream-read after freeing space: exit $rc3: $(cat r3.err)"
[ "$lost" -eq 0 ] || fail "stream-read, disk full: $lost rows lost"
[ "$dups" -le 100 ] || fail "stream-read, disk full: $dups rows repeated, more than the one batch printed before the failed save"
faults_broker_down

# --- emit ----------------------------------------------------------------------------
emit_run() {
  "$SHAPE_BIN" emit retail --table order_line --sink file -o out.jsonl --checkpoint small/emit.ck --checkpoint-every 100 \
    --no-progress "$@"
}
emit_run --max-events 300 >/dev/null 2>&1 || fail "first emit"
cp small/emit.ck emit.ck.good
fill
rc=0; emit_run --max-events 3000 --realtime --rate 5000 >e2.out 2>e2.err || rc=$?  # paced: the failure lands mid-run
line=$(grep '^shape: error: ' e2.err | head -1)
same=no; cmp -s small/emit.ck emit.ck.good && same=yes
left=$(ls small | grep -v '^fill$' | grep -v '^emit.ck$' | grep -v '^read.ck$' || true)
n2=$(wc -l <out.jsonl)  # the file sink appends: events written by the run that failed
echo "emit, disk full: exit $rc: $line; previous checkpoint intact: $same"
rm -f small/fill
rc3=0; emit_run --max-events 3000 >/dev/null 2>e3.err || rc3=$?
read -r lost dups invented <<<"$(python3 - <<'PY'
import json, collections
c = collections.Counter()
for l in open("out.jsonl"):
    d = json.loads(l)
    c[d["_shape_seq"]] += 1
print(len(set(range(3000)) - set(c)), sum(v - 1 for v in c.values()), len(set(c) - set(range(3000))))
PY
)"
report "emit: disk full while checkpointing" "checkpoint on a 64 KiB tmpfs filled by dd; rerun after freeing it" \
  "$lost" "$dups" "$rc then $rc3" "${line#shape: error: }; previous checkpoint intact: $same; $((n2 - 300)) events written past it before the stop"
[ $rc -eq 2 ] || fail "emit, disk full: exit $rc (expected 2): $(cat e2.err)"
grep -q 'emit\.ck' <<<"$line" && grep -q 'No space left on device' <<<"$line" || fail "emit, disk full: message '$line'"
[ $same = yes ] || fail "emit, disk full: the previous checkpoint changed: $(cat small/emit.ck)"
[ -z "$left" ] || fail "emit, disk full: left behind in the checkpoint folder: $left"
[ $rc3 -eq 0 ] || fail "emit after freeing space: exit $rc3: $(cat e3.err)"
[ "$lost" -eq 0 ] && [ "$invented" -eq 0 ] || fail "emit, disk full: lost $lost, invented $invented"
[ "$dups" -le $((n2 - 300)) ] || fail "emit, disk full: $dups repeats, more than the $((n2 - 300)) events written after the kept checkpoint"
echo "ok: a full disk stops both commands cleanly and keeps the previous checkpoint "
