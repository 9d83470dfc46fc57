#!/usr/bin/env bash
# test_faults_read.sh — `shape stream-read kafka://` while `shape broker`
# fails Fetch requests or goes away: every row read exactly once.
#
# Why: issue 9 — the source keeps its own offsets; a Fetch error must not
# skip or repeat a row, and a broker gone longer than the read can wait must
# end the read cleanly (exit 2, "kafka: ...") with a checkpoint that resumes
# to the full set once the broker is back (with --max-reconnects 0: no
# reopening); an outage shorter than the reconnect back-off is ridden out
# by the read itself (issue 18: stream-read runs on the stream runtime).
# How: 3,000 rows (ids 0..2999) over 3 partitions, produced with kcat.
# Fetch errors are pushed with `ctl fail Fetch ...` before the read. For the
# outage the read goes through a FIFO with small fetches (so it cannot have
# prefetched everything); after its first row the broker is taken down, the
# rest is drained, the exit code and message checked, the broker brought
# back and the read rerun from its checkpoint.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"
N=3000
ids() { sed -n 's/^{"id":\([0-9]*\),.*/\1/p'; }
faults_broker_up --topic rows:3
for p in 0 1 2; do
  awk -v p=$p -v n=$N 'BEGIN { for (i = p; i < n; i += 3) printf "{\"id\":%d,\"pad\":\"%0200d\"}\n", i, i }' |
    kcat -b "$BOOTSTRAP" -t rows -P -p $p
done
read_rows() { "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" "$@"; }

# exactly_once NAME FILE...: ids 0..N-1, each once; prints "lost dups".
exactly_once() {
  local name=$1; shift
  cat "$@" | ids | python3 -c '
import sys, collections
c = collections.Counter(int(l) for l in sys.stdin if l.strip())
exp = set(range(int(sys.argv[1])))
print(len(exp - set(c)), sum(v - 1 for v in c.values()), len(set(c) - exp))' $N
}

# --- Fetch errors (retriable ones; librdkafka retries the fetch itself) -----------
# The guarantee: the read completes (exit 0) with every row exactly once. When
# it does not, the read is rerun from its checkpoint (at most 8 times) to
# measure whether anything was lost, and the test fails at the end.
FAILURES=()
for e in NOT_LEADER_OR_FOLLOWER REQUEST_TIMED_OUT UNKNOWN_TOPIC_OR_PART; do
  ctl fail Fetch $e 5
  rm -f ck.$e
  rc=0; timeout 50 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --batch-size 250 --checkpoint ck.$e \
    >out.$e 2>err.$e || rc=$?
  reruns=0; rcs=$rc
  while [ $rc -ne 0 ] && [ $reruns -lt 8 ]; do
    reruns=$((reruns + 1)); rc=0
    timeout 50 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --batch-size 250 --checkpoint ck.$e \
      >>out.$e 2>>err.$e || rc=$?
    rcs="$rcs,$rc"
  done
  read -r lost dups invented <<<"$(exactly_once "$e" out.$e)"
  msg=$(sed -n 's/^shape: error: //p' err.$e | head -1 | cut -c1-90)
  echo "Fetch $e x5: exit codes $rcs, lost $lost, duplicates $dups${msg:+; first error: $msg}"
  note="read completed"
  [ -z "$msg" ] || note="FAILS: the read ended on a retriable fetch error ($msg); completed by rerunning from --checkpoint"
  report "stream-read: Fetch $e x5" "ctl 'fail Fetch $e 5'" "$lost" "$dups" "$rcs" "$note"
  [ "${rcs%%,*}" -eq 0 ] || FAILURES+=("Fetch $e x5: the read ended with exit ${rcs%%,*} ($msg) instead of riding out a retriable fetch error")
  [ "$lost" -eq 0 ] && [ "$dups" -eq 0 ] && [ "$invented" -eq 0 ] ||
    FAILURES+=("Fetch $e: lost $lost, duplicates $dups, invented $invented (after reruns from the checkpoint)")
  ctl clear Fetch
done

# --- the broker down mid-read for longer than the read waits -----------------------
small='config={"fetch.max.bytes":"4096","message.max.bytes":"4096","max.partition.fetch.bytes":"4096","fetch.wait.max.ms":"50","queued.min.messages":"1","queued.max.messages.kbytes":"1"}'
mkfifo fifo
WAIT=20  # how long the test lets a read wait for a broker that stays down
start=$(date +%s)
timeout $WAIT "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --batch-size 100 --option "$small" --checkpoint ck \
  --max-reconnects 0 >fifo 2>down.err &
reader=$!
exec 3<fifo
IFS= read -r first <&3
ctl down 1
{ echo "$first"; cat <&3; } >part1
exec 3<&-
rc=0; wait $reader || rc=$?
secs=$(( $(date +%s) - start ))
n1=$(wc -l <part1)
msg=$(sed -n 's/^shape: error: //p' down.err | head -1 | cut -c1-90)
echo "broker down mid-read: exit $rc after $secs s with $n1 rows${msg:+; error: $msg}"
[ "$n1" -lt $N ] || fail "broker down: the read had everything before the broker went down (test not effective)"
if [ $rc -eq 124 ]; then
  FAILURES+=("broker down mid-read: stream-read was still waiting after $WAIT s (killed by timeout) instead of exiting 2 with 'kafka: ...'")
elif [ $rc -ne 2 ] || [ -z "$msg" ] || [ "${msg#kafka: }" = "$msg" ]; then
  FAILURES+=("broker down mid-read: exit $rc, message '$msg' (expected exit 2 and 'shape: error: kafka: ...')")
fi
[ -s ck ] || FAILURES+=("broker down mid-read: no checkpoint written before the outage")
# a read started while the broker is still down: exit 2, checkpoint untouched;
# not retried (the default --max-reconnects 5 would back off for ~90 s: it
# applies once a first connection succeeded), one error line and none of
# librdkafka's own log lines (issue 24, item 11)
cp ck ck.before
start=$(date +%s)
rc2=0; timeout 40 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --checkpoint ck >/dev/null 2>down2.err || rc2=$?
secs2=$(( $(date +%s) - start ))
msg2=$(sed -n 's/^shape: error: //p' down2.err | head -1 | cut -c1-90)
echo "read started while down: exit $rc2 after $secs2 s${msg2:+; error: $msg2}"
report "stream-read: started while the broker is down" "ctl 'down 1'; stream-read --checkpoint" 0 0 "$rc2" \
  "$( [ $rc2 -eq 124 ] && echo "FAILS: no exit within 40 s" || echo "after $secs2 s: ${msg2:-no message}")"
[ $rc2 -eq 2 ] && [ "${msg2#cannot connect to the source (not retried before a first connection): kafka: }" != "$msg2" ] ||
  FAILURES+=("read started while the broker is down: exit $rc2 after $secs2 s, message '$msg2' (expected 2, 'cannot connect to the source ...: kafka: ...')")
[ "$(wc -l <down2.err)" -eq 1 ] || FAILURES+=("read started while the broker is down: more than one line on stderr: $(head -c 400 down2.err)")
cmp -s ck ck.before || FAILURES+=("a read that failed while the broker was down changed the checkpoint")
ctl up 1
rc3=0; timeout $WAIT "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --batch-size 500 --checkpoint ck >part2 2>up.err || rc3=$?
[ $rc3 -eq 0 ] || FAILURES+=("resume after the broker is back: exit $rc3: $(tail -1 up.err)")
read -r lost dups invented <<<"$(exactly_once resume part1 part2)"
echo "resumed: $(wc -l <part2) more rows (exit $rc3); lost $lost, duplicates $dups"
note="${msg:-no error message}; $n1 + $(wc -l <part2) rows"
[ $rc -eq 124 ] && note="FAILS: no exit while the broker was down (killed after $WAIT s); $n1 + $(wc -l <part2) rows"
report "stream-read: broker down mid-read, then resumed" \
  "ctl 'down 1' after the first row; ctl 'up 1'; rerun with --checkpoint" "$lost" "$dups" "$rc then $rc3" "$note"
[ "$lost" -eq 0 ] && [ "$dups" -eq 0 ] && [ "$invented" -eq 0 ] ||
  FAILURES+=("resume: lost $lost, duplicates $dups, invented $invented")

# --- the broker down 3 s mid-read: the read reconnects and completes ---------------
ctl rtt 1 20
rm -f ck.ride
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --batch-size 100 --option "$small" --checkpoint ck.ride \
  >ride.out 2>ride.err &
reader=$!
for _ in $(seq 1 1000); do
  [ -s ck.ride ] && break
  kill -0 $reader 2>/dev/null || break
  sleep 0.02
done
kill -0 $reader 2>/dev/null || fail "ride-out: the read ended before the outage (test not effective): $(cat ride.err)"
ctl down 1
sleep 3
ctl up 1
ctl rtt 1 0
rc4=0; wait $reader || rc4=$?
read -r lost dups invented <<<"$(exactly_once ride ride.out)"
echo "broker down 3 s mid-read: exit $rc4; lost $lost, duplicates $dups; $(tail -1 ride.err)"
report "stream-read: broker down 3 s mid-read" "ctl 'down 1' after the first checkpoint; 'up 1' 3 s later" \
  "$lost" "$dups" "$rc4" "$(grep -c 'reconnecting in' ride.err) reconnect warnings"
[ $rc4 -eq 0 ] || FAILURES+=("ride-out: stream-read exited $rc4 through a 3 s outage: $(tail -2 ride.err)")
grep -q 'reconnecting in 1 s (1 of 5)' ride.err || FAILURES+=("ride-out: no reconnect warning: $(cat ride.err)")
grep -q 'reconnects' ride.err || FAILURES+=("ride-out: the summary does not count the reconnects: $(tail -1 ride.err)")
[ "$lost" -eq 0 ] && [ "$dups" -eq 0 ] && [ "$invented" -eq 0 ] ||
  FAILURES+=("ride-out: lost $lost, duplicates $dups, invented $invented")
faults_broker_down
if [ ${#FAILURES[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${FAILURES[@]}" >&2
  exit 1
fi
echo "ok: stream-read under broker faults: every row exactly once"
