#!/usr/bin/env bash
# test_emit.sh — `shape emit retail` with the core's destinations (console,
# file, jsonl, null): event counts, limits, checkpoints and resume, the
# report, signals, and every bad input refused with one line and exit 2.
#
# Why: these are the promises of issue 7 that need no broker: the stream is
# complete and exact (21,750 events for small seed 42), a finished run is not
# repeated, a stopped run resumes exactly, and bad input sends nothing.
# How: run the built binary; compare outputs between sinks and runs; JSON
# reports are checked with python3.
set -euo pipefail

: "${SHAPE_BIN:?}"
# shellcheck source=cli_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
json_check() { python3 -c "import json,sys; d=json.loads(open('$1').read().strip().splitlines()[-1]); $2" || fail "json check: $2"; }

# --- console: the whole small stream ------------------------------------------------
run emit retail
expect_ok "console"
[[ $(wc -l <out) -eq 21750 ]] || fail "console: expected 21,750 lines, got $(wc -l <out)"
cp out console.jsonl
head -n 1 console.jsonl | grep -qxF '{"customer_id":1,"first_name":"Steven","last_name":"Ellis","email":"steven.ellis774@example.com","gender":"M","loyalty_tier":"Basic","signup_date":"2022-12-26T20:26:58.020781000","is_active":"true","_shape_table":"customer","_shape_seq":0,"_shape_event_time":"2022-12-26T20:26:58.020781000"}' \
    || fail "first event differs"
tail -n 1 console.jsonl | grep -q '"_shape_table":"return","_shape_seq":849,' || fail "last event is not return/849"
grep -qx 'shape emit: 21,750 events delivered, offset 21,750 of 21,750, complete, .* events/s' err \
    || fail "console report (stderr) wrong"
# tables in dependency order, contiguous
python3 - <<'PY' || fail "table order"
import json
order = []
for line in open("console.jsonl"):
    t = json.loads(line)["_shape_table"]
    if not order or order[-1] != t:
        order.append(t)
assert order == ["customer", "address", "product_category", "product", "promotion", "store",
                 "order", "order_line", "return"], order
PY

# --- --max-events is exact; --table keeps order ---------------------------------------
run emit retail --max-events 1200
expect_ok "max-events"
[[ $(wc -l <out) -eq 1200 ]] || fail "--max-events 1200 gave $(wc -l <out) lines"
head -n 1200 console.jsonl | cmp -s - out || fail "--max-events output is not the stream's head"
grep -q 'max-events' err || fail "stopped_by max-events missing"
run emit retail --table return --table customer --max-events 1001 --no-progress
expect_ok "tables"
[[ $(grep -c '"_shape_table":"customer"' out) -eq 1000 && $(grep -c '"_shape_table":"return"' out) -eq 1 ]] \
    || fail "--table selection wrong"
run emit retail --max-events 0
expect_ok "max-events 0"
[[ ! -s out ]] || fail "--max-events 0 sent events"

# --- null and file sinks, checkpoint, rerun ------------------------------------------------
run emit retail --sink null --json
expect_ok "null"
json_check out "assert d['events']==21750 and d['complete'] and d['stopped_by']=='complete', d"
run emit retail --sink file -o ev.jsonl --json
expect_ok "file"
cmp -s ev.jsonl console.jsonl || fail "file sink differs from console"
json_check out "assert d['events']==21750 and d['end_offset']==21750 and d['checkpoints']>=1, d"
json_check ev.jsonl.checkpoint "assert d=={'format':'shape-emit-v1','fingerprint':d['fingerprint'],'offset':21750,'total':21750,'complete':True,'destinations':'file://ev.jsonl','checksum':d['checksum']} and len(d['fingerprint'])==64, d"
run emit retail --sink file -o ev.jsonl
expect_ok "rerun"
grep -qx 'shape emit: 0 events delivered, offset 21,750 of 21,750, complete (already complete)' out \
    || fail "rerun must be already complete"
cmp -s ev.jsonl console.jsonl || fail "rerun changed the file"
# limited run, then resume to the end: byte-identical
run emit retail --sink file -o part.jsonl --max-events 7000
expect_ok "partial"
printf '{"torn":' >>part.jsonl  # a torn line a crash could leave
run emit retail --sink file -o part.jsonl --json
expect_ok "resume"
json_check out "assert d['start_offset']==7000 and d['events']==14750 and d['complete'], d"
cmp -s part.jsonl console.jsonl || fail "resumed file differs from a clean run"
# another stream's checkpoint is refused; --fresh starts over
run emit retail --seed 7 --sink file -o ev.jsonl
expect_error 2 "belongs to a different stream" "use --fresh"
run emit retail --seed 7 --sink file -o ev.jsonl --fresh --max-events 10
expect_ok "fresh"
[[ $(wc -l <ev.jsonl) -eq 10 ]] || fail "--fresh did not truncate"
echo '{"format":"other"}' >bad.ck
run emit retail --checkpoint bad.ck
expect_error 2 "not an emit checkpoint"

# --- jsonl:///DIR and cloudevents ----------------------------------------------------------
run emit retail --sink "jsonl://$work/tables" --to "file://$work/all.jsonl" --envelope cloudevents
expect_ok "jsonl + file"
[[ $(wc -l <"tables/order_line.jsonl") -eq 12500 && $(wc -l <"tables/customer.jsonl") -eq 1000 ]] \
    || fail "jsonl per-table counts"
[[ $(cat tables/*.jsonl | wc -l) -eq 21750 && $(wc -l <all.jsonl) -eq 21750 ]] || fail "fan-out counts"
python3 - <<'PY' || fail "cloudevents"
import json
keys = ["specversion", "id", "source", "type", "datacontenttype", "shapetable", "shapeseq", "data"]
for line in open("all.jsonl"):
    e = json.loads(line)
    d = e["data"]
    assert e["specversion"] == "1.0" and e["source"] == "shape://shape"
    assert e["id"] == "%s/%d" % (d["_shape_table"], d["_shape_seq"]), e["id"]
    assert e["type"] == "shape.%s.row" % d["_shape_table"]
    assert [k for k in e if k != "time"] == keys, list(e)
    assert ("time" in e) == (d.get("_shape_event_time") is not None)
    if "time" in e:
        assert list(e).index("time") == 4 and e["time"] == d["_shape_event_time"]
PY

# --- dry run touches nothing --------------------------------------------------------------
run emit retail --sink file -o dry.jsonl --dry-run
expect_ok "dry-run"
grep -q '21,750 events' out || fail "dry-run plan"
[[ ! -e dry.jsonl && ! -e dry.jsonl.checkpoint ]] || fail "dry-run wrote files"

# --- SIGTERM: finish the batch, checkpoint, report, exit 0 -------------------------------------
"$SHAPE_BIN" emit retail --realtime --rate 2000 --sink file -o sig.jsonl --json >sig.out 2>sig.err &
pid=$!
sleep 1
kill -TERM $pid
set +e; wait $pid; rc=$?; set -e
[[ $rc -eq 0 ]] || { cat sig.err >&2; fail "SIGTERM: exit $rc"; }
json_check sig.out "assert d['stopped_by']=='stop-request' and not d['complete'] and 0<d['events']<21750, d"
n=$(wc -l <sig.jsonl)
json_check sig.jsonl.checkpoint "assert d['offset']==$n and not d['complete'], (d, $n)"
head -n "$n" console.jsonl | cmp -s - sig.jsonl || fail "SIGTERM: file is not the stream's head"

# --- bad input: one line, exit 2, nothing sent ------------------------------------------------
run emit nosuch;                               expect_error 2 "unknown domain 'nosuch'"
run emit retail --table orders;                expect_error 2 "unknown table 'orders'"
run emit retail --bogus;                       expect_error 2 "bogus"
run emit retail --envelope xml;                expect_error 2 "unknown envelope 'xml'"
run emit retail --event-format xml;            expect_error 2 "unknown event format 'xml'"
run emit retail --header novalue;              expect_error 2 "headers must use name=value or name=@column"
run emit retail --header =x;                   expect_error 2 "header names must be nonempty"
run emit retail --header shape-table=x;        expect_error 2 "reserved"
run emit retail --header x=@nosuch;            expect_error 2 "unknown metadata columns: ['nosuch']"
run emit retail --key nosuch;                  expect_error 2 "unknown metadata columns"
run emit retail --rate -5;                     expect_error 2 "--rate"
run emit retail --rate 0;                      expect_error 2 "--rate"
run emit retail --rate nan;                    expect_error 2 "--rate"
run emit retail --max-rate 0;                  expect_error 2 "--max-rate"
run emit retail --duration -1;                 expect_error 2 "--duration"
run emit retail --max-events -1;               expect_error 2 "max-events"
run emit retail --batch-events 0;              expect_error 2 "batch-events"
run emit retail --queue-batches 0;             expect_error 2 "queue-batches"
run emit retail --checkpoint-every 0;          expect_error 2 "checkpoint-every"
run emit retail --retries -1;                  expect_error 2 "retries"
run emit retail --scale huge;                  expect_error 2 "unknown scale 'huge'"
run emit retail --seed x;                      expect_error 2 "seed"
run emit retail --partition -1;                expect_error 2 "partition must be a nonnegative number or 'by_key'"
run emit retail --timestamp wall;              expect_error 2 "timestamp must be 'broker' or 'event_time'"
run emit retail --sink file;                   expect_error 2 "--sink file needs --output FILE"
run emit retail --sink nowhere;                expect_error 2 "unknown sink 'nowhere'"
run emit retail --sink "nosuch://x";           expect_error 2 "nosuch"
run emit retail --max-dead-letter 3;           expect_error 2 "--max-dead-letter needs --dead-letter"
run emit retail --sink file -o x.jsonl --dead-letter file://x.jsonl; expect_error 2 "--dead-letter must differ"
run emit retail --dead-letter kafka://dl.example.com:9092/dead; expect_error 2 "refusing to write to non-local target"
run emit retail --sink-config junk;            expect_error 2 "--sink-config wants SINK.KEY=VALUE"
run emit retail --sink-config console.password=hunter2; expect_error 2 "credential reference"
grep -q hunter2 err && fail "a secret was echoed"
run emit retail --options-file nosuch.json --sink null; expect_error 2 "nosuch.json"
run emit;                                      expect_error 2

# --- registry formats: what is refused before anything is sent (no broker needed) ---
K=kafka://127.0.0.1:1/t
REG=kafka.schema_registry_url=http://127.0.0.1:1
run emit retail --event-format avro -o x.jsonl --sink file; expect_error 2 "--event-format avro applies to kafka:// targets only; file:// does not take it"
run emit retail --event-format xml --sink $K;  expect_error 2 "unknown event format 'xml'; choose from json, avro, protobuf, json-schema"
# --dry-run checks what the kafka emitter would refuse, without connecting
run emit retail --dry-run --event-format avro --sink $K; expect_error 2 "--event-format avro needs a schema registry: --sink-config kafka.schema_registry_url=URL"
run emit retail --dry-run --event-format protobuf --envelope cloudevents --sink $K --sink-config $REG
expect_error 2 "--envelope cloudevents is JSON only: it cannot be combined with --event-format protobuf"
run emit retail --dry-run --event-format avro --sink $K --sink-config $REG kafka.subject_strategy=x
expect_error 2 "unknown subject strategy 'x'; choose from topic, record, topic_record"
run emit retail --dry-run --event-format avro --sink $K --sink-config kafka.schema_registry_url=ftp://r
expect_error 2 "kafka.schema_registry_url 'ftp://r' is not an http(s) URL"
run emit retail --dry-run --event-format avro --sink $K --sink-config kafka.schema_registry_url=http://u:s3cret@r
expect_error 2 "must not carry credentials"
grep -q s3cret err && fail "a secret was echoed"
run emit retail --dry-run --event-format avro --sink $K --sink-config $REG kafka.schema_registry_username=svc \
    kafka.schema_registry_password=env://SHAPE_TEST_UNSET_PW
expect_error 2 "SHAPE_TEST_UNSET_PW"
run emit retail --dry-run --event-format avro --sink $K --sink-config $REG kafka.schema_registry_username=svc
expect_error 2 "needs both kafka.schema_registry_username and kafka.schema_registry_password"
run emit retail --dry-run --event-format avro --sink $K --sink-config $REG kafka.subject_strategy=record
expect_ok "registry dry run"
grep -q "event format avro" out || fail "dry run does not show the event format"
grep -q "service kafka.schema_registry_url$" out || fail "dry run does not list the registry"
# a registry elsewhere is a remote target too
run emit retail --event-format avro --sink $K --sink-config kafka.schema_registry_url=https://registry.example.com
expect_error 2 "refusing to write to non-local service kafka.schema_registry_url"
# a checkpoint of the JSON stream does not resume another event format
run emit retail --max-events 5 --sink file -o ck.jsonl --checkpoint fmt.ck; expect_ok "json run"
run emit retail --event-format avro --sink $K --sink-config $REG --checkpoint fmt.ck
expect_error 2 "belongs to a different stream"
echo "ok: shape emit (console, file, jsonl, null, checkpoints, signals, bad input)"
