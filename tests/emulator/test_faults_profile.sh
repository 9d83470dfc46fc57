#!/usr/bin/env bash
# test_faults_profile.sh — `shape stream-profile kafka://` while `shape broker`
# fails Fetch requests, and while it stays down past --max-reconnects.
#
# Why: issue 9 — a retriable Fetch error must be ridden out with the profile
# of a clean run (no row skipped, none profiled twice); a broker gone for
# longer than the reconnect budget must end the run cleanly (exit 2, one
# `shape: error:` line) with its --checkpoint intact, and the same command
# rerun once the broker is back must finish with the clean run's profile.
# How: 6,000 rows over 3 partitions, produced with kcat. Fetch errors are
# pushed with `ctl fail Fetch ERR 5` before a run; its profile must equal the
# clean one byte for byte when it was cut into as many batches (bounded
# batches depend only on --batch-size, partition ends and errors), else on
# every field (mean/m2 within 1e-12 relative). For the outage the read goes
# through a slow broker (`ctl rtt`) with small fetches; at its first
# checkpoint the broker goes down (`ctl down 1`) and stays down with
# --max-reconnects 1; then a second run while still down must leave the
# checkpoint alone; `ctl up 1` and a rerun must complete (a rerun stalled by
# the broker and cut by `timeout` checkpoints and is resumed, at most 3 runs).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"
N=6000
faults_broker_up --topic rows:3
fill_rows rows "$N" 150
uri="kafka://$BOOTSTRAP/rows"
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())[sys.argv[2]])' "$1" "$2"; }
FAILURES=()


# --- Fetch errors: retriable, ridden out --------------------------------------------
"$SHAPE_BIN" stream-profile "$uri" --batch-size 500 -o clean.json >clean.sum 2>clean.err ||
  fail "clean run: $(cat clean.err)"
clean_batches=$(field clean.sum batches)
for e in NOT_LEADER_OR_FOLLOWER REQUEST_TIMED_OUT; do
  ctl fail Fetch $e 5
  rm -f ck.$e
  rc=0; timeout 60 "$SHAPE_BIN" stream-profile "$uri" --batch-size 500 -o $e.json --checkpoint ck.$e \
    >$e.sum 2>$e.err || rc=$?
  rcs=$rc reruns=0
  # When the run gives up, rerun from its checkpoint to measure what the
  # profile would be; the test fails anyway (a retriable error must be ridden out).
  while [ $rc -ne 0 ] && [ $reruns -lt 4 ]; do
    reruns=$((reruns + 1)); rc=0
    timeout 60 "$SHAPE_BIN" stream-profile "$uri" --batch-size 500 -o $e.json --checkpoint ck.$e \
      >$e.sum 2>>$e.err || rc=$?
    rcs="$rcs,$rc"
  done
  ctl clear Fetch
  msg=$(sed -n 's/^shape: error: //p' $e.err | head -1 | cut -c1-90)
  bytes=no fields="no profile written" batches="?"
  if [ -s $e.json ]; then
    bytes=$(cmp -s clean.json $e.json && echo yes || echo no)
    fields=$(profile_diff clean.json $e.json "$N" 1e-12)
    batches=$(field $e.sum batches 2>/dev/null || echo "?")
  fi
  echo "Fetch $e x5: exit codes $rcs; batches $batches (clean $clean_batches); profile bytes identical: $bytes; fields: $fields${msg:+; error: $msg}"
  note="profile byte-identical to a clean run: $bytes; fields: $fields"
  [ -z "$msg" ] || note="FAILS: the run ended on a retriable fetch error ($msg); $note after reruns"
  report "stream-profile: Fetch $e x5" "ctl 'fail Fetch $e 5'" \
    "$( [ "$fields" = equal ] && echo 0 || echo "?")" 0 "$rcs" "$note"
  [ "${rcs%%,*}" -eq 0 ] || FAILURES+=("Fetch $e x5: exit ${rcs%%,*} ($msg) instead of riding out a retriable fetch error")
  [ "$fields" = equal ] || FAILURES+=("Fetch $e x5: the profile differs from a clean run: $fields")
  if [ "$batches" = "$clean_batches" ] && [ "$bytes" != yes ]; then
    FAILURES+=("Fetch $e x5: cut into the clean run's $batches batches but the profile is not byte-identical")
  fi
done

# --- the broker down past --max-reconnects ------------------------------------------
small='config={"fetch.max.bytes":"4096","message.max.bytes":"4096","max.partition.fetch.bytes":"4096","fetch.wait.max.ms":"50","queued.min.messages":"1","queued.max.messages.kbytes":"1"}'
run=("$SHAPE_BIN" stream-profile "$uri" --batch-size 100 --option "$small" -o down.json
     --checkpoint down.ck --checkpoint-every 1 --max-reconnects 1)
"$SHAPE_BIN" stream-profile "$uri" --batch-size 100 --option "$small" -o down.clean.json >down.clean.sum 2>down.clean.err ||
  fail "clean run (batch 100): $(cat down.clean.err)"
ctl rtt 1 20
start=$(date +%s)
timeout 60 "${run[@]}" >down.sum 2>down.err &
pid=$!
for _ in $(seq 1 1000); do  # the first checkpoint starts the outage
  [ -s down.ck ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.02
done
kill -0 $pid 2>/dev/null || fail "the read ended before the outage (test not effective): $(cat down.err)"
ctl down 1
rc=0; wait $pid || rc=$?
secs=$(( $(date +%s) - start ))
errors=$(grep -c '^shape: error: ' down.err || true)
msg=$(sed -n 's/^shape: error: //p' down.err | head -1)
at=$(python3 -c 'import json,sys
try:
    d = json.load(open(sys.argv[1])); print(sum(d["positions"].values()), "finished" if d["finished"] else "open")
except Exception as e: print("unreadable", e)' down.ck)
echo "broker down past --max-reconnects 1: exit $rc after $secs s; checkpoint: $at; error: ${msg:-none}"
if [ $rc -eq 124 ]; then
  FAILURES+=("broker down: stream-profile still running after 60 s with --max-reconnects 1")
elif [ $rc -ne 2 ]; then
  FAILURES+=("broker down: exit $rc (expected 2): $(tail -2 down.err)")
fi
[ "$errors" -eq 1 ] && [ "$(tail -n 1 down.err)" = "shape: error: $msg" ] ||
  FAILURES+=("broker down: expected one 'shape: error:' line ending stderr, got $errors: $(tail -3 down.err | tr '\n' '|')")
case $msg in *"gave up after 1 reconnect"*) ;; *) FAILURES+=("broker down: the error does not say it gave up after 1 reconnect: $msg") ;; esac
read -r done_rows state <<<"$at"
[ "$state" = open ] && [ "$done_rows" -lt $N ] || FAILURES+=("broker down: the checkpoint is not an open, partial one: $at")
# started while the broker is still down: exit 2, the checkpoint untouched
cp down.ck down.ck.before
rc2=0; timeout 60 "${run[@]}" >/dev/null 2>down2.err || rc2=$?
msg2=$(sed -n 's/^shape: error: //p' down2.err | head -1)
cmp -s down.ck down.ck.before || FAILURES+=("a run that failed while the broker was down changed the checkpoint")
[ $rc2 -eq 2 ] || FAILURES+=("a run started while the broker is down: exit $rc2 (expected 2): $msg2")
ctl up 1
ctl rtt 1 0
# A rerun cut by `timeout` (SIGTERM: it checkpoints, writes what it read and
# exits 0) is resumed again: the embedded broker, once up again, has been seen
# (once, on a loaded CI machine) to leave a fetch unanswered until the
# client's socket.timeout.ms (60 s). Any other exit fails the test.
rc3=124 tries=0 rcs3=""
while [ $rc3 -eq 124 ] && [ $tries -lt 3 ]; do
  tries=$((tries + 1)); rc3=0
  timeout 60 "${run[@]}" >down.sum 2>>down.err || rc3=$?
  rcs3="$rcs3${rcs3:+,}$rc3"
done
[ $rc3 -eq 0 ] || FAILURES+=("rerun after the broker is back: exits $rcs3: $(tail -1 down.err)")
[ $tries -eq 1 ] || echo "note: the rerun after the outage needed $tries runs (exits $rcs3)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["finished"] and d["positions"] == {"0": 2000, "1": 2000, "2": 2000}, d["positions"]' down.ck \
  || FAILURES+=("final checkpoint after the rerun: $(head -c 200 down.ck)")
bytes=no fields="no profile written"
if [ -s down.json ]; then
  bytes=$(cmp -s down.clean.json down.json && echo yes || echo no)
  fields=$(profile_diff down.clean.json down.json "$N" 1e-12)
fi
echo "rerun after 'up 1': exit $rcs3; profile byte-identical to a clean run: $bytes; fields: $fields"
[ "$fields" = equal ] || FAILURES+=("rerun after the outage: the profile differs from a clean run: $fields")
report "stream-profile: broker down past --max-reconnects 1, then resumed" \
  "ctl 'down 1' at the first checkpoint; a run while down; ctl 'up 1'; rerun with --checkpoint" \
  "$( [ "$fields" = equal ] && echo 0 || echo "?")" 0 "$rc, $rc2 then $rcs3" \
  "${msg:-no error message} (after $secs s, $done_rows rows checkpointed, checkpoint kept by the run while down); profile byte-identical to a clean run: $bytes; fields: $fields"
faults_broker_down
if [ ${#FAILURES[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${FAILURES[@]}" >&2
  exit 1
fi
echo "ok: stream-profile rode out Fetch errors and resumed after giving up on a broker that stayed down"
