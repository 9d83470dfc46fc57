#!/usr/bin/env bash
# test_stream_profile_split.sh — `shape stream-profile --split-by`: one
# profile table per distinct value of a body field (or header).
#
# How: the retail topic from `shape emit retail --sink file` (every row
# carries _shape_table) is profiled with --split-by field:_shape_table; the
# nine tables' row counts must be the emitted counts per table, and every
# column's statistics must equal a profile of that table's rows alone (the
# file filtered by python into one file per table) — columns null in every
# row of a table are left out of the split (the split's promise), so they
# are left out of the comparison too; 200-row batches give the same tables
# as one batch (each table's columns are its own, whichever batch it starts
# in). Then --max-tables overflow into
# _other with one warning line, rows without the field going to --name, and
# --state merged by profile-merge, kill -9 and resume, and the refusals
# (one line, exit 2, nothing written).
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

run emit retail --sink file -o retail.jsonl; expect_ok "emit retail"
run stream-profile retail.jsonl --split-by field:_shape_table -o split.json; expect_ok "split"
[[ ! -s err ]] || fail "a clean split warns: $(cat err)"
python3 - "$SHAPE_BIN" <<'PY' || fail "split tables differ from the tables alone"
import collections, json, subprocess, sys
shape = sys.argv[1]
lines = collections.defaultdict(list)
for line in open("retail.jsonl"):
    lines[json.loads(line)["_shape_table"]].append(line)
split = json.load(open("split.json"))["tables"]
assert len(lines) == 9 and sorted(split) == sorted(lines), (sorted(split), sorted(lines))
for t, ls in lines.items():
    assert split[t]["rows"] == len(ls), (t, split[t]["rows"], len(ls))
    open(f"alone-{t}.jsonl", "w").writelines(ls)
    subprocess.run([shape, "stream-profile", f"alone-{t}.jsonl", "--name", t, "-o", f"alone-{t}.json"],
                   check=True, stdout=subprocess.DEVNULL)
    alone = json.load(open(f"alone-{t}.json"))["tables"][t]
    want = {c["name"]: c for c in alone["columns"] if c["null_count"] != c["count"]}
    got = {c["name"]: c for c in split[t]["columns"]}
    assert sorted(got) == sorted(want), (t, sorted(got), sorted(want))
    for name, c in want.items():
        assert got[name] == c, (t, name, {k: (c.get(k), got[name].get(k)) for k in set(c) | set(got[name])
                                          if c.get(k) != got[name].get(k)})
print("nine tables equal their rows profiled alone")
PY

# --max-tables: the first three values get their tables, the rest share _other.
run stream-profile retail.jsonl --split-by field:_shape_table --max-tables 3 -o over.json; expect_ok "--max-tables 3"
[[ $(wc -l <err) -eq 1 ]] && grep -q '^shape: warning: .*more than 3 distinct values.*_other' err ||
    fail "one warning line for the overflow"
python3 - <<'PY' || fail "overflow tables"
import collections, json
counts = collections.Counter(json.loads(l)["_shape_table"] for l in open("retail.jsonl"))
first = list(dict.fromkeys(json.loads(l)["_shape_table"] for l in open("retail.jsonl")))[:3]
t = json.load(open("over.json"))["tables"]
assert sorted(t) == sorted(first + ["_other"]), sorted(t)
for name in first: assert t[name]["rows"] == counts[name], name
assert t["_other"]["rows"] == sum(counts.values()) - sum(counts[n] for n in first), t["_other"]["rows"]
PY

# Rows without the field (absent or null) go to the table named by --name;
# an integer field names tables by its decimal text.
printf '%s\n' '{"kind": "a", "n": 1, "x": 1.5}' '{"n": 2}' '{"kind": null, "n": 3}' '{"kind": "b", "n": 4, "y": "t"}' \
    '{"kind": "a", "n": 5, "x": 2.5}' >mixed.jsonl
run stream-profile mixed.jsonl --split-by field:kind --name rest -o mixed.json; expect_ok "mixed"
python3 - <<'PY' || fail "rows without the field"
import json
t = json.load(open("mixed.json"))["tables"]
assert list(t) == ["a", "rest", "b"], list(t)
assert (t["a"]["rows"], t["rest"]["rows"], t["b"]["rows"]) == (2, 2, 1), t
cols = lambda n: [c["name"] for c in t[n]["columns"]]
assert cols("a") == ["kind", "n", "x"] and cols("rest") == ["n"] and cols("b") == ["kind", "n", "y"], t
PY
run stream-profile mixed.jsonl --split-by field:n -o byint.json; expect_ok "integer field"
python3 -c 'import json; t = json.load(open("byint.json"))["tables"]; assert sorted(t) == ["1", "2", "3", "4", "5"], t' ||
    fail "integer values name tables"

# Refusals: one line, exit 2, nothing written.
for bad in "--split-by table" "--split-by field:" "--split-by header:" "--split-by field:x --max-tables 0" \
    "--max-tables 3"; do
    # shellcheck disable=SC2086
    run stream-profile mixed.jsonl $bad -o bad.json; expect_error 2 "--"
    [[ ! -e bad.json && ! -e s.state && ! -e c.json ]] || fail "$bad wrote a file"
done
# with windows (test_stream_profile_split_windows.sh) a float column is refused the same way, no file written
run stream-profile mixed.jsonl --split-by field:x --window tumbling --size 1m --windows w.jsonl
expect_error 2 "field:x" "text, integer and bool"
[[ ! -s w.jsonl ]] || fail "a refused windowed split wrote windows"
run stream-profile mixed.jsonl --split-by field:x -o bad.json; expect_error 2 "field:x" "text, integer and bool"
[[ ! -e bad.json ]] || fail "a float split column wrote a file"

# --state: one line per table; profile-merge merges them table by table. One
# state merged alone gives the run's own document; two halves of the file,
# profiled apart, merge into the whole file's tables (exact fields).
run stream-profile retail.jsonl --split-by field:_shape_table -o whole.json --state whole.state; expect_ok "--state"
[[ $(wc -l <whole.state) -eq 9 ]] || fail "nine state lines"
run profile-merge whole.state -o remerged.json; expect_ok "merge one split state"
cmp -s split.json remerged.json || fail "one split state merged alone differs from the run's document"
head -n 10000 retail.jsonl >half1.jsonl
tail -n +10001 retail.jsonl >half2.jsonl
run stream-profile half1.jsonl --split-by field:_shape_table -o h1.json --state h1.state; expect_ok "half 1"
run stream-profile half2.jsonl --split-by field:_shape_table -o h2.json --state h2.state; expect_ok "half 2"
run profile-merge h1.state h2.state -o merged.json; expect_error 2 "h2.state line 1 profiles" "half2.jsonl" "--any-source"
run profile-merge --any-source h1.state h2.state -o merged.json --state merged.state; expect_ok "merge halves"
grep -q '"tables": 9' out && grep -q '"events": 21750' out || fail "merge summary"
source "$SHAPE_SOURCE_DIR/tests/support/reliability_rows.sh"  # report_input: rows of docs/RELIABILITY.md
report_input '`profile-merge` of two files'"'"' split states without `--any-source`' contract_stream_profile_split 'exit 2 `h2.state line 1 profiles .../half2.jsonl ...`; with it the halves merge to the whole (21,750 events, 9 tables)'
python3 - <<'PY' || fail "merged halves differ from the whole"
import json
a = json.load(open("merged.json"))["tables"]
b = json.load(open("split.json"))["tables"]
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for t in b:
    assert a[t]["rows"] == b[t]["rows"], t
    ac = {c["name"]: c for c in a[t]["columns"]}
    for c in b[t]["columns"]:
        for k in ("kind", "count", "null_count", "min", "max", "true_count", "false_count", "length", "patterns"):
            assert ac[c["name"]].get(k) == c.get(k), (t, c["name"], k)
PY
[[ $(wc -l <merged.state) -eq 9 ]] || fail "the merged state has nine lines"
run stream-profile mixed.jsonl -o plain.json --state plain.state; expect_ok "plain state"
run profile-merge whole.state plain.state -o x.json; expect_error 2 "plain.state" "merge them apart"
[[ ! -e x.json ]] || fail "a refused merge wrote -o"

# kill -9 at two points with a checkpoint after every batch, then resume:
# byte-identical to a clean run (every table's state is in the checkpoint).
run stream-profile retail.jsonl --split-by field:_shape_table --batch-size 200 -o clean.json; expect_ok "clean"
# Small batches (issue 23): each table's columns are its own whatever batch
# its first rows come in (the decoder grows the schema when splitting), so
# 200-row batches give the one-batch run's columns, in its order, with its
# exact fields (sums of squares and means may differ in the last bits, as
# they do unsplit across batch boundaries), and drop no field.
grep -q '"dropped_fields": 0' out || fail "small batches dropped fields: $(cat out)"
python3 - <<'PY' || fail "200-row batches give other tables than one batch"
import json
a = json.load(open("split.json"))["tables"]
b = json.load(open("clean.json"))["tables"]
assert list(a) == list(b), (list(a), list(b))
loose = ("mean", "m2", "variance_population", "variance_sample")
for t in a:
    assert a[t]["rows"] == b[t]["rows"], t
    assert [c["name"] for c in a[t]["columns"]] == [c["name"] for c in b[t]["columns"]], \
        (t, [c["name"] for c in a[t]["columns"]], [c["name"] for c in b[t]["columns"]])
    for x, y in zip(a[t]["columns"], b[t]["columns"]):
        for k in set(x) | set(y):
            if k in loose and x.get(k) is not None and y.get(k) is not None:
                assert abs(x[k] - y[k]) <= 1e-9 * max(1.0, abs(x[k])), (t, x["name"], k, x[k], y[k])
            else:
                assert x.get(k) == y.get(k), (t, x["name"], k, x.get(k), y.get(k))
print("200-row batches: the one-batch tables")
PY
batches_at() { python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["counters"]["batches_processed"])
except Exception: print(0)' "$1"; }
points=""
for target in 15 50; do
    "$SHAPE_BIN" stream-profile retail.jsonl --split-by field:_shape_table --batch-size 200 -o killed.json \
        --checkpoint ck9 --checkpoint-every 1 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 3000); do
        [ "$(batches_at ck9)" -ge $target ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.005
    done
    kill -9 $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    points="$points $(batches_at ck9)"
done
python3 -c 'import json,sys; s = json.load(open("ck9"))["profiler"]["split"]; assert s["by"] == "field:_shape_table" and s["tables"], s' ||
    fail "the checkpoint holds no split tables"
run stream-profile retail.jsonl --split-by field:_shape_table --batch-size 200 -o resumed.json --checkpoint ck9 \
    --checkpoint-every 1
expect_ok "final resume"
cmp -s clean.json resumed.json || fail "resumed split differs from the clean run (killed at batches:$points)"
grep -q '"events": 21750' out || fail "resumed summary"
echo "ok: killed at batches$points, resumed, byte-identical"
# a checkpoint keeps its split: another --split-by, none, or another --max-tables is refused
run stream-profile retail.jsonl --split-by field:other -o x.json --checkpoint ck9; expect_error 2 "different profiler" "--split-by"
run stream-profile retail.jsonl -o x.json --checkpoint ck9; expect_error 2 "different profiler" "--split-by"
run stream-profile retail.jsonl --split-by field:_shape_table --max-tables 5 -o x.json --checkpoint ck9
expect_error 2 "different profiler" "--max-tables"
[[ ! -e x.json ]] || fail "a refused resume wrote -o"
# a damaged split section is refused, not resumed (the edits drop the
# checksum, which would refuse them first: the structure's own checks are tested)
python3 -c 'import json; d = json.load(open("ck9")); d["finished"] = False; d["profiler"]["split"]["values"] = -1; del d["checksum"]
json.dump(d, open("bad.ck", "w"))'
run stream-profile retail.jsonl --split-by field:_shape_table -o x.json --checkpoint bad.ck; expect_error 2 "bad.ck" "use another file"
python3 -c 'import json; d = json.load(open("ck9")); d["finished"] = False; t = d["profiler"]["split"]["tables"]; t.append(t[0]); del d["checksum"]
json.dump(d, open("bad.ck", "w"))'
run stream-profile retail.jsonl --split-by field:_shape_table -o x.json --checkpoint bad.ck; expect_error 2 "two split tables"
[[ ! -e x.json ]] || fail "a damaged checkpoint wrote -o"
echo "ok"
