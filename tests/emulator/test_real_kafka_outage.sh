#!/usr/bin/env bash
# test_real_kafka_outage.sh — a real Apache Kafka node killed with SIGKILL and
# restarted on the same port and storage, mid-emit and mid-profile.
#
# Why: issue 25 — the mock's outages (`ctl down`) are librdkafka's own idea of
# a broker going away; here the broker process really dies (sockets reset, no
# goodbye, the log recovered on restart, a new broker epoch, the old session
# fenced first). Nothing may be lost: emit delivers every event of the stream
# exactly once (idempotent producer), and stream-profile's result is the one
# an uninterrupted run writes.
# How: a private node (kafka_node_up: the tier's shared node must not die under
# the other tests). emit: `shape emit retail` paced at 3,000 events/s (~7 s);
# once the first events are confirmed the node is killed, held down 2 s
# and started again (its own start-up takes 5-15 s here); the run must exit 0
# and the topic hold every <table>/<seq> key once (the kill follows emit's
# first checkpoint, 500 events confirmed). stream-profile: rows over
# 3 partitions, a clean run, then a run with small fetches and batches whose
# first checkpoint triggers the kill (the reader held with SIGSTOP across the
# kill itself, so it is mid-read: a clean run takes ~2 s); it must ride the outage out
# (--max-reconnects 8: 1+2+...+128 s of back-off) and write the clean profile:
# every field equal, mean/m2/variances to 1e-12 relative. Not byte for byte:
# the reopen after the outage cuts one batch in two (1,501 batches, not 1,500),
# so the floating-point sums are added in another grouping — the same rule as
# test_faults_profile_reconnect.sh's batches of 100 on the mock.
source "$(dirname "$0")/lib.sh"
FAULTS_ANY_BROKER=1
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"
export SHAPE_CONFIRM_REMOTE=0
kafka_node_up --topic events:3 --topic rows:3

outage() {  # [PID]: kill -9, 2 s down, start again on the same port and storage
  # With PID, that client is stopped (SIGSTOP) across the kill, so the kill
  # lands mid-read however fast the read goes, and resumed while the node is
  # down: it meets the outage itself (connections reset, then refused).
  local t0=$SECONDS
  [ -z "${1:-}" ] || kill -STOP "$1"
  kafka_node kill || fail "kill -9 of the node"
  [ -z "${1:-}" ] || kill -CONT "$1"
  sleep 2
  kafka_node start >/dev/null 2>restart.err || fail "restart: $(cat restart.err)"
  echo "outage: node killed, restarted in $((SECONDS - t0)) s ($(grep -o 'up at .*' restart.err))"
}

mid_run() {  # PID CHECKPOINT WHAT ERR: wait for the run's first checkpoint; fail if it ended first
  for _ in $(seq 1 3000); do
    [ -s "$2" ] && break
    kill -0 "$1" 2>/dev/null || break
    sleep 0.01
  done
  kill -0 "$1" 2>/dev/null || fail "$3 ended before the outage (test not effective): $(tail -3 "$4")"
}

# ------------------------------------------------------------------ emit --------
"$SHAPE_BIN" emit retail --no-progress >stream.jsonl 2>/dev/null || fail "emit to the console"
EVENTS=$(wc -l <stream.jsonl)
"$SHAPE_BIN" emit retail --realtime --rate 3000 --sink "kafka://$BOOTSTRAP/events" --json --no-progress \
  --checkpoint emit.ck --checkpoint-every 500 >emit.json 2>emit.err &
pid=$!
mid_run $pid emit.ck emit emit.err  # the first checkpoint: 500 events confirmed by the broker
outage
rc=0; wait $pid || rc=$?
[ $rc -eq 0 ] || fail "emit through a broker kill -9 exited $rc: $(tail -3 emit.err)"
kcat -b "$BOOTSTRAP" -t events -C -e -q -f '%k\n' >keys
read -r lost dups invented <<<"$(python3 - "$EVENTS" <<'PY'
import json, sys
want = {"%s/%d" % (e["_shape_table"], e["_shape_seq"]) for e in map(json.loads, open("stream.jsonl"))}
got = open("keys").read().split()
print(len(want - set(got)), len(got) - len(set(got)), len(set(got) - want))
PY
)"
echo "emit: $EVENTS events through a kill -9 of the broker: exit $rc, lost $lost, duplicates $dups," \
  "invented $invented; report: $(head -c 300 emit.json)"
report "real Kafka: broker kill -9 + restart mid-emit" \
  "scripts/kafka kill, 2 s down, restart on the same port and storage (emit --realtime --rate 3000)" \
  "$lost" "$dups" "$rc" "$EVENTS events; idempotent producer"
[ "$lost" -eq 0 ] && [ "$invented" -eq 0 ] || fail "emit: lost $lost, invented $invented"
[ "$dups" -eq 0 ] || fail "emit: $dups duplicates although the producer is idempotent"

# -------------------------------------------------------------- stream-profile --
N=30000
fill_rows rows "$N" 100 -X batch.num.messages=50
# Small fetches and a 16 KiB prefetch queue per partition: after the first
# checkpoint almost all rows must still come from the broker. (Not
# queued.min.messages=1 as the mock's tests use: against a real broker
# librdkafka 2.0.2 then fetches once a second per partition, ~60 rows/s.)
small='config={"fetch.max.bytes":"4096","message.max.bytes":"4096","max.partition.fetch.bytes":"2048","queued.max.messages.kbytes":"16"}'
profile=("$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/rows" --batch-size 20 --option "$small")
t0=$(date +%s%N)
"${profile[@]}" -o clean.json >clean.sum 2>clean.err || fail "stream-profile: clean run: $(cat clean.err)"
echo "stream-profile: a clean run of $N rows takes $(( ($(date +%s%N) - t0) / 1000000 )) ms"
"${profile[@]}" -o run.json --checkpoint prof.ck --checkpoint-every 5 --max-reconnects 8 >run.sum 2>run.err &
pid=$!
mid_run $pid prof.ck stream-profile run.err
outage $pid
at=$(python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' prof.ck 2>/dev/null || echo "?")
rc=0; wait $pid || rc=$?
[ $rc -eq 0 ] || fail "stream-profile through a broker kill -9 exited $rc: $(tail -3 run.err)"
fields=$(profile_diff clean.json run.json "$N" 1e-12)
bytes=$(cmp -s clean.json run.json && echo yes || echo no)
echo "stream-profile: killed with rows to $at checkpointed; exit $rc; summary $(cat run.sum); byte-identical: $bytes; fields: $fields"
report "real Kafka: broker kill -9 + restart mid-profile" \
  "scripts/kafka kill, 2 s down, restart on the same port and storage (--batch-size 20, small fetches)" \
  "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["tables"]["stream"]["rows"]; print(max(0, int(sys.argv[2]) - r))' run.json "$N")" \
  0 "$rc" "profile byte-identical to a clean run: $bytes; fields: $fields"
[ "$fields" = equal ] || fail "the profile after a broker kill differs from a clean run: $fields"
echo "ok: a real broker killed and restarted mid-emit and mid-profile: nothing lost, profile as a clean run"
