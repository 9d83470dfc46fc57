#!/usr/bin/env bash
# test_faults_registry.sh — schema registry faults during `shape emit
# --event-format avro`, with rows for docs/RELIABILITY.md.
#
# Why: issue 9 asks that a registry that goes down, answers errors, refuses
# or cannot be verified is "retried or refused as specified, never a crash",
# and the reliability table should show it next to the broker faults.
# How: `shape broker` (lib.sh) and `shape schema-registry` instances, each
# scenario on its own topic; what arrived is read back with kcat keys
# (<table>/<seq>) and compared with the keys the run had to deliver.
#   - down mid-run: the registry is killed (-9) once the first subject is
#     registered (customer's 1,000 events are paced at 250/s, so the kill
#     has 4 s to land before address's subject would be registered: at
#     1,000/s a loaded machine once missed that window and the run
#     completed); exit 2 after the retries, the checkpoint at the last
#     delivered event (every key before it arrived, none after it), then a
#     rerun against a fresh registry completes the set;
#   - 503 to the first two requests (--fail-next 2:503): the run completes,
#     the report counts >= 1 retry, every event arrives once;
#   - refusing (--refuse SUBJECT=...): exit 2, nothing sent;
#   - unknown TLS CA (tls_proxy.py in front of the registry, a throwaway CA
#     the client is not given): exit 2, nothing sent.
source "$(dirname "$0")/lib.sh"
FAULTS_ANY_BROKER=1  # the faults are the registry's: runs on a real cluster too
source "$(dirname "$0")/faults_lib.sh"
command -v openssl >/dev/null || fail "openssl is needed for the TLS scenario"
here=$(cd "$(dirname "$0")" && pwd)
cd "$TEST_TMP"

td=$(unique_topic regdown); t5=$(unique_topic reg503); tr=$(unique_topic regrefuse); tt=$(unique_topic regtls)
kafka_up "$td:1" "$t5:1" "$tr:1" "$tt:1"
export SHAPE_CONFIRM_REMOTE=0

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; cleanup' EXIT
registry_up() { # NAME [args...]: a registry on a free port; sets REG_URL, REG_PID
  local name=$1
  shift
  "$SHAPE_BIN" schema-registry --listen 127.0.0.1:0 --url-file "$name.url" "$@" 2>"$name.err" &
  REG_PID=$!
  PIDS+=($REG_PID)
  for _ in $(seq 1 100); do [ -s "$name.url" ] && break; sleep 0.05; done
  [ -s "$name.url" ] || fail "schema registry $name did not start: $(cat "$name.err")"
  REG_URL=$(cat "$name.url")
}
keys() { kcat -b "$BOOTSTRAP" -t "$1" -C -e -q -f '%k\n'; }
first_line() { # the error line, without what differs between runs (ports, topic names)
  head -n 1 "$1" | sed -E 's/^shape: error: //; s/port [0-9]+/port N/g; s/reg[a-z0-9]+-[0-9]+-[0-9]+/TOPIC/g' | cut -c1-160
}

# --- registry down mid-run ---------------------------------------------------------------
registry_up down
set +e
"$SHAPE_BIN" emit retail --table customer --table address --realtime --rate 250 --sink "kafka://$BOOTSTRAP/$td" \
    --event-format avro --sink-config "kafka.schema_registry_url=$REG_URL" kafka.subject_strategy=record \
    --checkpoint down.ck --no-progress >/dev/null 2>down.err &
EMIT_PID=$!
# killed once emit has registered customer's subject (60 s at most: a slow
# start, memcheck or a loaded machine, only delays it; never a fixed wait)
registered=0
for _ in $(seq 1 600); do
  python3 -c "import urllib.request,sys; sys.exit(0 if b'customer' in urllib.request.urlopen('$REG_URL/subjects').read() else 1)" 2>/dev/null && { registered=1; break; }
  kill -0 "$EMIT_PID" 2>/dev/null || break
  sleep 0.05
done
kill -9 "$REG_PID"
wait "$EMIT_PID"
rc1=$?
set -e
[ $registered -eq 1 ] || fail "registry down: emit registered no subject for customer (exit $rc1): $(cat down.err)"
[ $rc1 -eq 2 ] || fail "registry down: expected exit 2, got $rc1: $(cat down.err)"
grep -q "delivery failed after 3 retries" down.err || fail "registry down: not retried: $(cat down.err)"
grep -q "schema registry unreachable" down.err || fail "registry down: message: $(cat down.err)"
# killed once customer's schema was registered: every customer delivered, no address (no schema).
# The last customers may still be unconfirmed when the first address send
# fails (delivery takes longer on a real broker, or on a loaded machine: seen
# at 992 under ASan on 2 busy cores): the checkpoint is then a few events short
# of 1000, and the check below still asks that exactly the events before it
# arrived.
lowest=990
ck=$(python3 -c "import json; d=json.load(open('down.ck')); assert not d['complete'] and $lowest <= d['offset'] <= 1000, d; print(d['offset'])") ||
  fail "registry down: no checkpoint: $(cat down.ck 2>/dev/null)"
keys "$td" | sort >down.keys1
python3 - "$ck" <<'PY' || fail "registry down: the checkpoint is not at the last delivered event"
import sys
ck = int(sys.argv[1])
got = open("down.keys1").read().split()
want = ["customer/%d" % i for i in range(1000)] + ["address/%d" % i for i in range(1500)]
assert len(got) == len(set(got)), "duplicates before the rerun"
assert set(got) == set(want[:ck]), (ck, len(got))
PY
registry_up again
set +e
"$SHAPE_BIN" emit retail --table customer --table address --sink "kafka://$BOOTSTRAP/$td" --event-format avro \
    --sink-config "kafka.schema_registry_url=$REG_URL" kafka.subject_strategy=record --checkpoint down.ck \
    --no-progress >/dev/null 2>down2.err
rc2=$?
set -e
[ $rc2 -eq 0 ] || fail "registry down: the rerun failed ($rc2): $(cat down2.err)"
keys "$td" >down.keys2
read -r lost dups < <(python3 - <<'PY'
got = open("down.keys2").read().split()
want = {"customer/%d" % i for i in range(1000)} | {"address/%d" % i for i in range(1500)}
print(len(want - set(got)), len(got) - len(set(got)))
PY
)
[ "$lost" -eq 0 ] && [ "$dups" -eq 0 ] || fail "registry down: lost $lost, duplicates $dups after the rerun"
report "emit avro: registry down mid-run, resumed" "kill -9 of shape schema-registry once a subject is registered; rerun with a new registry" \
  "$lost" "$dups" "$rc1 then $rc2" "$(first_line down.err); checkpoint at $ck = last delivered event"

# --- 503 to the first requests -------------------------------------------------------------
registry_up r503 --fail-next 2:503
set +e
"$SHAPE_BIN" emit retail --table customer --max-events 500 --sink "kafka://$BOOTSTRAP/$t5" --event-format avro \
    --sink-config "kafka.schema_registry_url=$REG_URL" --json --no-progress >r503.json 2>r503.err
rc=$?
set -e
[ $rc -eq 0 ] || fail "registry 503: expected exit 0, got $rc: $(cat r503.err)"
retries=$(python3 -c "import json; d=json.load(open('r503.json')); assert d['events'] == 500 and d['complete'], d; print(d['retries'])") ||
  fail "registry 503: report $(cat r503.json)"
[ "$retries" -ge 1 ] || fail "registry 503: the report counts no retry"
keys "$t5" >r503.keys
read -r lost dups < <(python3 - <<'PY'
got = open("r503.keys").read().split()
want = {"customer/%d" % i for i in range(500)}
print(len(want - set(got)), len(got) - len(set(got)))
PY
)
[ "$lost" -eq 0 ] || fail "registry 503: $lost events lost"
[ "$dups" -le "$retries" ] || [ "$dups" -eq 0 ] || fail "registry 503: $dups duplicates for $retries retries"
report "emit avro: registry answers 503 twice" "shape schema-registry --fail-next 2:503" "$lost" "$dups" "$rc" \
  "completed; report: $retries retries, 500 events"

# --- refusing ---------------------------------------------------------------------------------
registry_up refusing --refuse "$tr-value=not today"
set +e
"$SHAPE_BIN" emit retail --table customer --max-events 500 --sink "kafka://$BOOTSTRAP/$tr" --event-format avro \
    --sink-config "kafka.schema_registry_url=$REG_URL" --no-progress >/dev/null 2>refuse.err
rc=$?
set -e
[ $rc -eq 2 ] || fail "registry refusing: expected exit 2, got $rc"
grep -q "schema registry refused the schema for subject $tr-value: not today" refuse.err || fail "refusal: $(cat refuse.err)"
n=$(keys "$tr" | wc -l)
[ "$n" -eq 0 ] || fail "registry refusing: $n messages sent"
report "emit avro: registry refuses the schema" "shape schema-registry --refuse SUBJECT=MESSAGE (422)" 0 0 "$rc" \
  "$(first_line refuse.err); $n messages sent"

# --- unknown TLS CA ----------------------------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=unknown CA" -keyout ca.key -out ca.pem 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr 2>/dev/null
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext \
    -out server.pem 2>/dev/null
chmod 600 ./*.key
registry_up plain
python3 "$here/tls_proxy.py" tls.port 127.0.0.1 "${REG_URL##*:}" server.pem server.key 2>tls.err &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s tls.port ] && break; sleep 0.05; done
[ -s tls.port ] || fail "tls_proxy did not start: $(cat tls.err)"
set +e
"$SHAPE_BIN" emit retail --table customer --max-events 500 --sink "kafka://$BOOTSTRAP/$tt" --event-format avro \
    --sink-config "kafka.schema_registry_url=https://127.0.0.1:$(cat tls.port)" --no-progress >/dev/null 2>tls.run.err
rc=$?
set -e
[ $rc -eq 2 ] || fail "unknown CA: expected exit 2, got $rc: $(cat tls.run.err)"
n=$(keys "$tt" | wc -l)
[ "$n" -eq 0 ] || fail "unknown CA: $n messages sent"
report "emit avro: registry certificate from an unknown CA" "tls_proxy.py with a throwaway CA the client is not given" 0 0 "$rc" \
  "$(first_line tls.run.err); $n messages sent"
echo "ok: registry faults"
