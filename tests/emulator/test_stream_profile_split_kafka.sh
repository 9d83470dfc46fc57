# `shape stream-profile kafka://... --split-by header:shape-table` on a topic
# from `shape emit retail` into `shape broker`: one table per value of the
# header every emitted message carries, read in 1000-message batches, with
# the emitted rows per table
# (the same run also wrote them to a file with --to), the exact figures of
# each column equal to the file split by field:_shape_table (count, nulls,
# min, max: the topic's partitions hand the rows out in another order; the
# event time aside, which on a topic falls back to the broker's time), no
# _shape_headers column unless asked for, and messages without the header
# (produced by kcat; their event time is the broker's) in the table named by --name.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }
topic=$(unique_topic retail)
[ -n "${SHAPE_TEST_KAFKA:-}" ] || topic=retail
kafka_up "$topic:3"
T=$TEST_TMP

"$SHAPE_BIN" emit retail --sink "kafka://$BOOTSTRAP/$topic" --to "file://$T/retail.jsonl" >/dev/null 2>"$T/err" ||
  fail "emit: $(cat "$T/err")"
printf '%s\n' '{"note": "no header", "n": 1}' '{"note": "no header", "n": 2}' '{"n": 3}' |
  kcat -b "$BOOTSTRAP" -t "$topic" -P -p 0
# 1000-message batches: a table whose first rows come in a later batch still
# gets every field of its own (issue 23), none dropped
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$topic" --split-by header:shape-table --name rest -o "$T/k.json" \
  --batch-size 1000 >"$T/sum" 2>"$T/err" || fail "split profile: $(cat "$T/err")"
grep -q '"dropped_fields": 0' "$T/sum" || fail "the split dropped fields: $(cat "$T/sum")"
"$SHAPE_BIN" stream-profile "$T/retail.jsonl" --split-by field:_shape_table -o "$T/f.json" >/dev/null 2>"$T/err" ||
  fail "file split: $(cat "$T/err")"
python3 - "$T/k.json" "$T/f.json" "$T/retail.jsonl" "$T/sum" <<'PY' || fail "the topic's tables differ"
import collections, json, sys
k = json.load(open(sys.argv[1]))["tables"]
f = json.load(open(sys.argv[2]))["tables"]
counts = collections.Counter(json.loads(l)["_shape_table"] for l in open(sys.argv[3]))
assert json.loads(open(sys.argv[4]).read())["events"] == sum(counts.values()) + 3
assert sorted(k) == sorted(list(counts) + ["rest"]) and len(counts) == 9, sorted(k)
assert k["rest"]["rows"] == 3 and [c["name"] for c in k["rest"]["columns"]] == ["note", "n", "_shape_event_time"], k["rest"]
for t, n in counts.items():
    assert k[t]["rows"] == n, (t, k[t]["rows"], n)
    # _shape_event_time: the broker's time on the topic when a row has none, null in the file
    kc = {c["name"]: c for c in k[t]["columns"] if c["name"] != "_shape_event_time"}
    fc = {c["name"]: c for c in f[t]["columns"] if c["name"] != "_shape_event_time"}
    assert "_shape_headers" not in kc, t
    assert sorted(kc) == sorted(fc), (t, sorted(kc), sorted(fc))
    for name, c in fc.items():
        for key in ("kind", "count", "null_count", "min", "max", "true_count", "false_count"):
            assert c.get(key) == kc[name].get(key), (t, name, key, c.get(key), kc[name].get(key))
print("ten tables from the topic")
PY
# --with-headers keeps the header map as a column of each table
"$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$topic" --split-by header:shape-table --with-headers -o "$T/h.json" \
  >/dev/null 2>"$T/err" || fail "split with headers: $(cat "$T/err")"
python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["tables"]["order"]
assert "_shape_headers" in [c["name"] for c in t["columns"]], t' "$T/h.json" || fail "--with-headers lost the column"
echo "ok"
