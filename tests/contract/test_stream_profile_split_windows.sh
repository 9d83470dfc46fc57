#!/usr/bin/env bash
# test_stream_profile_split_windows.sh — `--split-by` with a window kind:
# one profile per table per window, on one clock.
#
# How: a mixed topic of three tables (each its own fields) and rows without
# the field, interleaved in event-time order over 50 minutes, is profiled
# with --split-by field:tbl --window tumbling --size 5m (and sliding
# 10m/5m): every (table, window) line must equal, column for column, the
# window of a run over that table's rows alone (moments to rounding: the
# table's rows come in more slices) (python filters them into one
# file per table), no row is late, the rows add up; a table's window lines
# carry only the fields its rows have; rows out of order are late exactly
# as in one profile of all the rows (one clock, a table first seen late
# included). Then kill -9 at two points with a
# checkpoint after every batch and resume: the windows file, sorted, equals
# a clean run's, each (table, window) once. --state of two workers (the
# file cut in two by time) merged by profile-merge (--any-source: two files are two streams): each (table, window)
# equals the single run's on the exact fields. profile-show reads the file.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

python3 - <<'PY'
import json, random
r = random.Random(5)
t0 = 1700000000000
with open("mixed.jsonl", "w") as f:
    for i in range(3000):
        t = t0 + i * 1000
        k = r.random()
        if k < 0.5:
            row = {"tbl": "orders", "id": i, "amount": round(r.uniform(1, 500), 2), "status": r.choice(["new", "paid"])}
        elif k < 0.8:
            row = {"tbl": "refunds", "rid": i, "reason": r.choice(["late", "broken", "other"])}
        elif k < 0.95:
            row = {"tbl": "views", "page": "/p/%d" % r.randrange(40), "ms": r.randrange(5000)}
        else:
            row = {"note": "no table"}
        row["_shape_event_time"] = t
        f.write(json.dumps(row) + "\n")
PY
win=(--window tumbling --size 5m)
run stream-profile mixed.jsonl --split-by field:tbl "${win[@]}" --batch-size 256 --windows split.jsonl --name misc
expect_ok "split tumbling"
grep -q '"late_events": 0' out || fail "rows were late"
grep -q '"events": 3000' out || fail "not every row counted"

check_alone() { # KIND-ARGS...: every (table, window) equals the table's rows alone
    python3 - "$SHAPE_BIN" "$@" <<'PY'
import collections, json, subprocess, sys
shape, args = sys.argv[1], sys.argv[2:]
rows = collections.defaultdict(list)
for line in open("mixed.jsonl"):
    rows[json.loads(line).get("tbl", "misc")].append(line)
split = collections.defaultdict(dict)
for line in open("split.jsonl"):
    d = json.loads(line)
    key = (d["start_us"], d["end_us"])
    assert key not in split[d["table"]], ("twice", d["table"], key)
    split[d["table"]][key] = d
assert sorted(split) == sorted(rows), (sorted(split), sorted(rows))
for t, ls in rows.items():
    open(f"alone-{t}.jsonl", "w").writelines(ls)
    subprocess.run([shape, "stream-profile", f"alone-{t}.jsonl", "--name", t, "--batch-size", "256", *args,
                    "--windows", f"alone-{t}.wjsonl"], check=True, stdout=subprocess.DEVNULL)
    alone = {(d["start_us"], d["end_us"]): d for d in map(json.loads, open(f"alone-{t}.wjsonl"))}
    assert sorted(alone) == sorted(split[t]), (t, sorted(alone), sorted(split[t]))
    for key, a in alone.items():
        s = split[t][key]
        assert s["rows"] == a["rows"] and s["profile"]["rows"] == a["profile"]["rows"], (t, key)
        want = {c["name"]: c for c in a["profile"]["columns"] if c["null_count"] != c["count"]}
        got = {c["name"]: c for c in s["profile"]["columns"]}
        assert sorted(got) == sorted(want), (t, key, sorted(got), sorted(want))
        for name, c in want.items():
            g = got[name]
            # the moments of rows interleaved with other tables' come in more slices: equal to rounding
            for k in ("mean", "m2", "variance_population", "variance_sample"):
                if isinstance(c.get(k), float) and isinstance(g.get(k), float):
                    assert abs(c[k] - g[k]) <= 1e-9 * max(abs(c[k]), 1.0), (t, key, name, k, c[k], g[k])
                    g = dict(g, **{k: c[k]})
            assert g == c, (t, key, name, [k for k in set(c) | set(g) if c.get(k) != g.get(k)])
print("ok", {t: len(v) for t, v in split.items()})
PY
}
check_alone "${win[@]}" || fail "split windows differ from the tables alone (tumbling)"
# a table's lines carry its own fields only
python3 -c '
import json
for l in open("split.jsonl"):
    d = json.loads(l)
    names = {c["name"] for c in d["profile"]["columns"]}
    if d["table"] == "refunds": assert "amount" not in names and "reason" in names, names
' || fail "a refunds window carries the orders' fields"
run stream-profile mixed.jsonl --split-by field:tbl --window sliding --size 10m --slide 5m --batch-size 256 \
    --windows split.jsonl --name misc
expect_ok "split sliding"
check_alone --window sliding --size 10m --slide 5m || fail "split windows differ from the tables alone (sliding)"
run profile-show split.jsonl; expect_ok "profile-show of split windows"
grep -q "refunds" out || fail "profile-show does not name the tables: $(head -5 out)"

# One clock: rows out of order (some 12 minutes late, a table whose first row is late) are late
# in the split run exactly as in one profile of all the rows.
python3 - <<'PY'
import json
rows = [json.loads(l) for l in open("mixed.jsonl")]
for i in range(1000, 3000, 97):
    rows[i]["_shape_event_time"] -= 720000
rows[2000] = {"tbl": "newcomer", "x": 1, "_shape_event_time": rows[2000]["_shape_event_time"] - 720000}
with open("disorder.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
PY
run stream-profile disorder.jsonl "${win[@]}" --batch-size 64 --windows one.jsonl; expect_ok "disorder, one table"
late_one=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["late_events"])' out)
run stream-profile disorder.jsonl --split-by field:tbl "${win[@]}" --batch-size 64 --windows many.jsonl; expect_ok "disorder, split"
late_split=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["late_events"])' out)
[[ $late_one -gt 20 && $late_split -eq $late_one ]] || fail "late rows: split $late_split, one table $late_one"
! grep -q '"table": "newcomer"' many.jsonl || fail "the newcomer's only row was late: no window"

# kill -9 at two points, resume: the same windows, each once
rm -f clean.jsonl
run stream-profile mixed.jsonl --split-by field:tbl "${win[@]}" --batch-size 64 --windows clean.jsonl --name misc
expect_ok "clean"
batches_at() { python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["counters"]["batches_processed"])
except Exception: print(0)' "$1"; }
points=""
rm -f killed.jsonl ck
for target in 10 30; do
    "$SHAPE_BIN" stream-profile mixed.jsonl --split-by field:tbl "${win[@]}" --batch-size 64 --windows killed.jsonl \
        --name misc --checkpoint ck --checkpoint-every 1 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 3000); do
        [ "$(batches_at ck)" -ge $target ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.005
    done
    kill -9 $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    points="$points $(batches_at ck)"
done
python3 -c 'import json; w = json.load(open("ck"))["profiler"]["windows"]; assert w["tables"] and w["tables"][0]["table"], w' ||
    fail "the checkpoint holds no split windows"
run stream-profile mixed.jsonl --split-by field:tbl "${win[@]}" --batch-size 64 --windows killed.jsonl --name misc \
    --checkpoint ck --checkpoint-every 1
expect_ok "resume"
diff <(sort clean.jsonl) <(sort killed.jsonl) >/dev/null ||
    fail "the resumed windows differ from a clean run's (killed at batches:$points)"
run stream-profile mixed.jsonl --split-by field:other "${win[@]}" --windows other.jsonl --checkpoint ck --name misc
expect_error 2 "different profiler" "--split-by"

# two workers (the first and the second half of the times), merged
head -n 1500 mixed.jsonl >w1.jsonl
tail -n +1501 mixed.jsonl >w2.jsonl
for w in 1 2; do
    run stream-profile "w$w.jsonl" --split-by field:tbl "${win[@]}" --batch-size 64 --windows "w$w.out.jsonl" \
        --state "w$w.state" --name misc
    expect_ok "worker $w"
done
run profile-merge --any-source w1.state w2.state -o merged.jsonl; expect_ok "merge"
python3 - <<'PY' || fail "merged windows differ from the single run's"
import json
key = lambda d: (d["table"], d["start_us"], d["end_us"])
one = {key(d): d for d in map(json.loads, open("clean.jsonl"))}
got = {key(d): d for d in map(json.loads, open("merged.jsonl"))}
assert sorted(one) == sorted(got), (sorted(set(one) ^ set(got))[:5])
for k, d in one.items():
    g = got[k]
    assert d["rows"] == g["rows"], k
    for c in d["profile"]["columns"]:
        m = next(x for x in g["profile"]["columns"] if x["name"] == c["name"])
        for f in ("count", "null_count", "min", "max"):
            assert c.get(f) == m.get(f), (k, c["name"], f, c.get(f), m.get(f))
PY
echo "ok: --split-by with windows: per (table, window) equal to the tables alone; killed at batches$points and resumed; merged"
