# `shape stream-profile` over the file source: the profile document against
# values computed here by python3, the summary, empty and unusable streams,
# refused options, checkpoints (finished, another URI, another profiler),
# replay dedup, SIGTERM, and kill -9 at several points then resume giving a
# profile byte-identical to a clean run; --state and profile-merge.
set -euo pipefail
: "${SHAPE_BIN:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
shape() { "$SHAPE_BIN" "$@"; }
command -v python3 >/dev/null || { echo "python3 is needed"; exit 77; }

# ---- known data: nulls, ints mixed with floats, unicode, bools, skew, times
python3 - "$tmp/data.jsonl" <<'PY'
import json, random, sys, datetime
rnd = random.Random(7)
words = ["alpha", "béta", "γάμμα", "delta", "日本語", "x", "a@b.io", "bob@example.com"]
with open(sys.argv[1], "w") as f:
    for i in range(5000):
        row = {"id": i,
               "amount": None if i % 17 == 0 else (rnd.randint(-50, 50) if i % 5 == 0 else round(rnd.uniform(-1e3, 1e6), 3)),
               "word": None if i % 11 == 0 else (words[0] if rnd.random() < 0.4 else rnd.choice(words)),
               "flag": None if i % 13 == 0 else (i % 3 == 0),
               "_shape_event_time": None if i % 19 == 0 else
                   (datetime.datetime(2021, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=rnd.randint(0, 4 * 365 * 86400))).isoformat()}
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
    f.write("this line is not JSON\n")
PY
shape stream-profile "$tmp/data.jsonl" -o "$tmp/p.json" --batch-size 700 >"$tmp/summary" 2>"$tmp/err" || fail "run: $(cat "$tmp/err")"

python3 - "$tmp/data.jsonl" "$tmp/p.json" "$tmp/summary" <<'PY'
import json, sys, math, datetime, collections, re, bisect
rows = []
for line in open(sys.argv[1], encoding="utf-8"):
    try: rows.append(json.loads(line))
    except ValueError: pass
doc = json.load(open(sys.argv[2]))
summary = json.loads(open(sys.argv[3]).read().strip().splitlines()[-1])
def check(cond, what):
    if not cond: sys.exit("FAIL: " + what)
def close(a, b, what, rel=1e-9):
    check(a is not None and abs(a - b) <= rel * max(1.0, abs(b)), "%s: %r != %r" % (what, a, b))
check(list(summary) == ["uri", "window", "events", "batches", "windows", "late_events", "null_event_time",
      "duplicate_rows", "reconnects", "checkpoints", "written", "undecodable", "rejected", "dropped_fields",
      "values_overflowed"], "summary keys %s" % list(summary))
check(summary["events"] == 5000 and summary["batches"] == 8 and summary["undecodable"] == 1 and summary["rejected"] == 0, "summary %s" % summary)
check(summary["window"] == "global" and len(summary["written"]) == 1 and summary["written"][0].endswith("p.json") and summary["windows"] == 1 and summary["duplicate_rows"] == 0, "summary %s" % summary)
check(summary["null_event_time"] == sum(1 for r in rows if r["_shape_event_time"] is None), "null_event_time")
check(doc["schema_version"] == 1 and doc["engine"] == "shape-profile-engine" and doc["mode"] == "bounded", "header")
t = doc["tables"]["stream"]
check(t["rows"] == 5000, "rows")
cols = {c["name"]: c for c in t["columns"]}
check([c["name"] for c in t["columns"]] == ["id", "amount", "word", "flag", "_shape_event_time"], "column order")
for name, kind, atype in [("id", "int", "int64"), ("amount", "float", "double"), ("word", "text", "string"),
                          ("flag", "bool", "bool"), ("_shape_event_time", "temporal", "timestamp[us, tz=UTC]")]:
    c = cols[name]
    vals = [r[name] for r in rows]
    nn = [v for v in vals if v is not None]
    check(c["kind"] == kind and c["arrow_type"] == atype, "%s kind/type %s %s" % (name, c["kind"], c["arrow_type"]))
    check(c["count"] == 5000 and c["null_count"] == 5000 - len(nn), "%s counts" % name)
    if kind in ("int", "float"):
        xs = [float(v) for v in nn]
        n = len(xs); mean = sum(xs) / n; m2 = sum((x - mean) ** 2 for x in xs)
        check(c["finite_count"] == n and c["nan_count"] == 0, name + " finite")
        check(c["min"] == min(nn) and c["max"] == max(nn), "%s min/max %s %s" % (name, c["min"], c["max"]))
        close(c["mean"], mean, name + " mean"); close(c["m2"], m2, name + " m2")
        close(c["variance_population"], m2 / n, name + " var pop"); close(c["variance_sample"], m2 / (n - 1), name + " var sample")
        sx = sorted(xs)
        for q, v in c["quantiles"].items():
            lo, hi = bisect.bisect_left(sx, v) / n, bisect.bisect_right(sx, v) / n
            check(lo - 0.01 <= float(q) <= hi + 0.01, "%s quantile %s = %s: rank %.4f..%.4f" % (name, q, v, lo, hi))
        d = len(set(xs))
        check(abs(c["distinct"] - d) <= 3 * 0.008125 * d + 1, "%s distinct %s vs %d" % (name, c["distinct"], d))
    if kind == "text":
        check(c["min"] == min(nn) and c["max"] == max(nn), name + " min/max")
        hist = collections.Counter(len(v) for v in nn)
        check(c["length"]["hist"] == {str(k): v for k, v in hist.items()}, name + " length hist")
        check(c["length"]["count"] == len(nn) and c["length"]["min"] == min(hist) and c["length"]["max"] == max(hist), name + " length")
        close(c["length"]["mean"], sum(len(v) for v in nn) / len(nn), name + " length mean")
        email = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
        check(c["patterns"]["email"] == sum(1 for v in nn if email.match(v)), name + " email pattern")
        check(len(c["patterns"]) == 12, name + " pattern keys")
        top = collections.Counter(nn).most_common()
        check([e[0] for e in c["top"]] == [v for v, _ in top] and [e[1] for e in c["top"]] == [k for _, k in top],
              "%s top %s vs %s" % (name, c["top"], top))
        check(c["distinct"] >= len(top) - 0.5 and c["distinct"] <= len(top) + 0.5, name + " distinct")
    if kind == "bool":
        check(c["true_count"] == sum(1 for v in nn if v) and c["false_count"] == sum(1 for v in nn if not v), "bool counts")
    if kind == "temporal":
        ts = [datetime.datetime.fromisoformat(v) for v in nn]
        us = [int(x.timestamp()) * 1000000 for x in ts]
        check(c["min"] == min(us) and c["max"] == max(us), "temporal min/max")
        check(c["hour_hist"] == [sum(1 for x in ts if x.hour == h) for h in range(24)], "hour_hist")
        check(c["dow_hist"] == [sum(1 for x in ts if x.weekday() == d) for d in range(7)], "dow_hist")
        check(c["month_hist"] == [sum(1 for x in ts if x.month == m) for m in range(1, 13)], "month_hist")
        check(c["year_hist"] == {str(y): k for y, k in collections.Counter(x.year for x in ts).items()}, "year_hist")
        check(abs(c["distinct"] - len(set(us))) <= 3 * 0.008125 * len(set(us)) + 1, "temporal distinct")
print("ok: document matches values computed independently")
PY

# ---- empty stream; a stream with nothing usable
: >"$tmp/empty.jsonl"
out=$(shape stream-profile "$tmp/empty.jsonl" -o "$tmp/e.json" 2>"$tmp/err") || fail "empty stream exited $?"
[ ! -e "$tmp/e.json" ] || fail "an empty stream wrote a profile"
grep -q "no events" "$tmp/err" || fail "empty stream note: $(cat "$tmp/err")"
echo "$out" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert d["events"] == 0 and d["written"] == [] and d["windows"] == 0, d' \
  || fail "empty summary: $out"
printf 'nope\n[1,2]\n"text"\n' >"$tmp/junk.jsonl"
rc=0; shape stream-profile "$tmp/junk.jsonl" -o "$tmp/j.json" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || fail "only-undecodable stream exited $rc"
grep -q '^shape: error: .*3 undecodable and 0 rejected' "$tmp/err" || fail "only-undecodable message: $(cat "$tmp/err")"
[ ! -e "$tmp/j.json" ] && [ ! -s "$tmp/out" ] || fail "only-undecodable stream wrote something"

# ---- refused options: one error line, exit 2, nothing written
expect_refusal() { # expect_refusal NEEDLE ARGS...
  local needle=$1 rc=0; shift
  shape stream-profile "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc"
  [ ! -s "$tmp/out" ] || fail "'$*' printed a summary"
  [ "$(grep -c '^shape: error: ' "$tmp/err")" -eq 1 ] || fail "'$*': not one error line: $(cat "$tmp/err")"
  grep -q "^shape: error: .*$needle" "$tmp/err" || fail "'$*': expected '$needle' in: $(cat "$tmp/err")"
}
d="$tmp/data.jsonl"
expect_refusal "output" "$d"
expect_refusal "output goes with --window global" "$d" -o "$tmp/x.json" --window tumbling --size 1m
expect_refusal "window must be one of" "$d" -o "$tmp/x.json" --window weekly
expect_refusal "top-n" "$d" -o "$tmp/x.json" --top-n 0
expect_refusal "top-n" "$d" -o "$tmp/x.json" --top-n many
expect_refusal "checkpoint-every" "$d" -o "$tmp/x.json" --checkpoint-every 0
expect_refusal "max-reconnects" "$d" -o "$tmp/x.json" --max-reconnects -1
expect_refusal "idle-timeout must be a number of seconds >= 0" "$d" -o "$tmp/x.json" --idle-timeout -1
expect_refusal "idle-timeout must be a number of seconds >= 0" "$d" -o "$tmp/x.json" --idle-timeout soon
expect_refusal "start must be 'earliest' or 'latest'" "$d" -o "$tmp/x.json" --start middle
expect_refusal "batch-size" "$d" -o "$tmp/x.json" --batch-size 0
expect_refusal "max-events" "$d" -o "$tmp/x.json" --max-events 0
expect_refusal "--event-time-unit must be one of s, ms, us, not 'h'" "$d" -o "$tmp/x.json" --event-time-unit h
expect_refusal "unknown file source options: \['bogus'\]" "$d" -o "$tmp/x.json" --option bogus=1
expect_refusal "following is not supported for files" "$d" -o "$tmp/x.json" --follow --idle-timeout 1
expect_refusal "not supported for files" "$d" -o "$tmp/x.json" --start latest
expect_refusal "unknown option" "$d" -o "$tmp/x.json" --bogus
expect_refusal "no such file" "$tmp/missing.jsonl" -o "$tmp/x.json"
[ ! -e "$tmp/x.json" ] || fail "a refused run wrote a profile"
shape stream-profile "$d" -o "$tmp/x.json" --follow >/dev/null 2>"$tmp/err" || true
grep -q "following until interrupted" "$tmp/err" || fail "--follow alone gave no notice: $(cat "$tmp/err")"

# ---- checkpoints: finished run, another URI, another profiler
shape stream-profile "$d" -o "$tmp/c.json" --checkpoint "$tmp/ck" --batch-size 700 >/dev/null 2>&1 || fail "checkpointed run"
cmp -s "$tmp/c.json" "$tmp/p.json" || fail "a checkpointed run differs from a plain one"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format"] == "shape-stream-checkpoint-v1" and d["finished"] is True and d["offset"] == {"0": 5001} and d["counters"]["batches_processed"] == 8, d["counters"]' "$tmp/ck" \
  || fail "checkpoint content"
cp "$tmp/c.json" "$tmp/c.before"; echo '{"changed":1}' >"$tmp/c.json"; cp "$tmp/c.json" "$tmp/c.marker"
out=$(shape stream-profile "$d" -o "$tmp/c.json" --checkpoint "$tmp/ck" 2>"$tmp/err") || fail "finished checkpoint exited $?"
grep -q "finished run" "$tmp/err" && echo "$out" | grep -q "finished run" || fail "finished checkpoint: $out $(cat "$tmp/err")"
cmp -s "$tmp/c.json" "$tmp/c.marker" || fail "a finished checkpoint changed -o"
expect_refusal "belongs to another stream.*use another file" "$tmp/empty.jsonl" -o "$tmp/x.json" --checkpoint "$tmp/ck"
rm -f "$tmp/ck"
shape stream-profile "$d" -o "$tmp/x.json" --checkpoint "$tmp/ck" --max-events 1000 --batch-size 100 >/dev/null 2>&1 || fail "partial run"
expect_refusal "different profiler.*use another file" "$d" -o "$tmp/x.json" --checkpoint "$tmp/ck" --top-n 10
expect_refusal "different profiler.*use another file" "$d" -o "$tmp/x.json" --checkpoint "$tmp/ck" --name other
echo '{"format":"shape-stream-read-checkpoint-v1","version":1,"uri":"x","offset":{"0":1}}' >"$tmp/ck-read"
expect_refusal "not a stream-profile checkpoint.*use another file" "$d" -o "$tmp/x.json" --checkpoint "$tmp/ck-read"
# A run stopped by --max-events is not final: resuming reads the rest.
shape stream-profile "$d" -o "$tmp/x.json" --checkpoint "$tmp/ck" --batch-size 100 >"$tmp/out" 2>/dev/null || fail "resume after --max-events"
grep -q '"events": 5000' "$tmp/out" || fail "resumed run after --max-events: $(cat "$tmp/out")"

# ---- kill -9 at several points, resume: byte-identical to a clean run
rows=120000 batch=200
python3 - "$tmp/big.jsonl" $rows <<'PY'
import json, random, sys
rnd = random.Random(3)
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        r = {"id": i, "v": rnd.gauss(100, 15), "k": "k%d" % int(rnd.paretovariate(1.2)), "opt": None if rnd.random() < 0.5 or 40000 <= i < 41000 else rnd.randint(0, 9)}
        if i % 1000 == 999: r["late_field"] = "only in some rows"
        f.write(json.dumps(r) + "\n")
PY
shape stream-profile "$tmp/big.jsonl" -o "$tmp/clean.json" --batch-size $batch >/dev/null 2>&1 || fail "clean big run"
batches_at() { python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["counters"]["batches_processed"])
except Exception: print(0)' "$1"; }
points=""
for target in 60 250 420; do
  "$SHAPE_BIN" stream-profile "$tmp/big.jsonl" -o "$tmp/killed.json" --batch-size $batch --checkpoint "$tmp/ck9" \
    --checkpoint-every 1 >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    [ "$(batches_at "$tmp/ck9")" -ge $target ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.005
  done
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  points="$points $(batches_at "$tmp/ck9")"
done
shape stream-profile "$tmp/big.jsonl" -o "$tmp/resumed.json" --batch-size $batch --checkpoint "$tmp/ck9" \
  --checkpoint-every 1 >"$tmp/out" 2>/dev/null || fail "final resume"
cmp -s "$tmp/clean.json" "$tmp/resumed.json" || fail "resumed profile differs from the clean run (killed at batches:$points)"
grep -q "\"events\": $rows" "$tmp/out" || fail "resumed summary: $(cat "$tmp/out")"
echo "ok: killed at batches$points of $((rows / batch)), resumed, byte-identical"

# A resumed read whose first batch has only nulls in "opt" (rows 40000..40999)
# and rows with a field the first batch did not have: still the same profile.
rm -f "$tmp/ckm"
"$SHAPE_BIN" stream-profile "$tmp/big.jsonl" -o "$tmp/m.json" --batch-size $batch --checkpoint "$tmp/ckm" --max-events 40000 >/dev/null 2>&1 \
  || fail "partial run to 40000"
shape stream-profile "$tmp/big.jsonl" -o "$tmp/m.json" --batch-size $batch --checkpoint "$tmp/ckm" >/dev/null 2>&1 || fail "resume at 40000"
cmp -s "$tmp/clean.json" "$tmp/m.json" || fail "resuming into an all-null stretch changed the profile"

# ---- replays are dropped: a checkpoint whose offset is behind its positions
"$SHAPE_BIN" stream-profile "$tmp/big.jsonl" -o "$tmp/r.json" --batch-size $batch --checkpoint "$tmp/ckr" --max-events 30000 >/dev/null 2>&1 \
  || fail "partial run for replay"
# (the edit drops the checksum, which would refuse it: a checkpoint without
# one is read as an older shape wrote it)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["offset"]={"0":0}; del d["checksum"]; json.dump(d, open(sys.argv[1],"w"))' "$tmp/ckr"
shape stream-profile "$tmp/big.jsonl" -o "$tmp/r.json" --batch-size $batch --checkpoint "$tmp/ckr" >"$tmp/out" 2>/dev/null || fail "replayed run"
grep -q '"duplicate_rows": 30000' "$tmp/out" || fail "replayed rows not counted: $(cat "$tmp/out")"
cmp -s "$tmp/clean.json" "$tmp/r.json" || fail "a replay changed the profile"

# ---- SIGTERM: checkpoint, write what was read, interrupted: true, exit 0; then resume
rm -f "$tmp/ckt"
"$SHAPE_BIN" stream-profile "$tmp/big.jsonl" -o "$tmp/t.json" --batch-size 100 --checkpoint "$tmp/ckt" --checkpoint-every 1 \
  >"$tmp/out" 2>/dev/null &
pid=$!
for _ in $(seq 1 3000); do [ "$(batches_at "$tmp/ckt")" -ge 50 ] && break; sleep 0.005; done
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM exit $rc"
grep -q '"interrupted": true' "$tmp/out" || fail "no interrupted in: $(cat "$tmp/out")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert 0 < d["tables"]["stream"]["rows"] < int(sys.argv[2])' "$tmp/t.json" $rows \
  || fail "interrupted profile"
shape stream-profile "$tmp/big.jsonl" -o "$tmp/t.json" --batch-size 100 --checkpoint "$tmp/ckt" >/dev/null 2>&1 || fail "resume after SIGTERM"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
ta, tb = a["tables"]["stream"], b["tables"]["stream"]
assert ta["rows"] == tb["rows"]
for x, y in zip(ta["columns"], tb["columns"]):
    for k in ("name", "count", "null_count", "min", "max", "distinct", "true_count", "length"):
        assert x.get(k) == y.get(k), (x["name"], k)' "$tmp/t.json" "$tmp/clean.json" || fail "resumed after SIGTERM differs"
# ---- the schema source option (what a resumed read gets); a checkpoint that cannot be written
printf '{"id":1,"x":"a"}\n{"id":2,"x":"b"}\n' >"$tmp/s.jsonl"
[ "$(shape stream-read "$tmp/s.jsonl" --option 'schema=[["id","g"]]' 2>/dev/null | head -n 1)" = '{"id":1.0,"_shape_event_time":null}' ] \
  || fail "schema option: $(shape stream-read "$tmp/s.jsonl" --option 'schema=[["id","g"]]' 2>&1)"
expect_refusal "option 'schema' must be a list" "$tmp/s.jsonl" -o "$tmp/x.json" --option schema=5
expect_refusal "unsupported type 'zz'" "$tmp/s.jsonl" -o "$tmp/x.json" --option 'schema=[["id","zz"]]'
rm -f "$tmp/x.json"
rc=0; shape stream-profile "$tmp/s.jsonl" -o "$tmp/x.json" --checkpoint "$tmp/no-such-dir/ck" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "^shape: error: --checkpoint .*no-such-dir/ck: the folder .*no-such-dir does not exist" "$tmp/err" \
  || fail "unwritable checkpoint: rc $rc $(cat "$tmp/err")"
[ ! -e "$tmp/x.json" ] || fail "unwritable checkpoint: refused only after the work (-o was written)"
rm -f "$tmp/x.json"

# ---- --state and profile-merge: two halves merged equal one run on exact fields
head -n 60000 "$tmp/big.jsonl" >"$tmp/h1.jsonl"; tail -n +60001 "$tmp/big.jsonl" >"$tmp/h2.jsonl"
shape stream-profile "$tmp/h1.jsonl" -o "$tmp/h1.json" --state "$tmp/h1.state" --batch-size $batch >/dev/null 2>&1 || fail "half 1"
shape stream-profile "$tmp/h2.jsonl" -o "$tmp/h2.json" --state "$tmp/h2.state" --batch-size $batch >/dev/null 2>&1 || fail "half 2"
# (two files are two streams: without --any-source the merge is refused by name)
rc=0; shape profile-merge "$tmp/h1.state" "$tmp/h2.state" -o "$tmp/merged.json" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'h2.state profiles .*h2.jsonl but .*h1.state profiles .*h1.jsonl.*--any-source' "$tmp/err" \
  || fail "two files merged without --any-source: rc $rc $(cat "$tmp/err")"
[ ! -e "$tmp/merged.json" ] || fail "a refused merge wrote -o"
shape profile-merge --any-source "$tmp/h1.state" "$tmp/h2.state" -o "$tmp/merged.json" >"$tmp/out" 2>"$tmp/err" || fail "merge: $(cat "$tmp/err")"
grep -q '"events": 120000' "$tmp/out" || fail "merge summary: $(cat "$tmp/out")"
python3 - "$tmp/merged.json" "$tmp/clean.json" <<'PY' || fail "merged profile differs from one run on exact fields"
import json, sys
a, b = (json.load(open(p))["tables"]["stream"] for p in sys.argv[1:3])
assert a["rows"] == b["rows"]
ca = {c["name"]: c for c in a["columns"]}
for y in b["columns"]:
    x = ca[y["name"]]
    for k in ("kind", "arrow_type", "count", "null_count", "nan_count", "finite_count", "min", "max", "distinct",
              "true_count", "false_count", "length", "patterns", "hour_hist", "year_hist"):
        assert x.get(k) == y.get(k), (y["name"], k, x.get(k), y.get(k))
    for k in ("mean", "m2"):
        if y.get(k) is not None:
            assert abs(x[k] - y[k]) <= 1e-9 * max(1.0, abs(y[k])), (y["name"], k)
PY
shape stream-profile "$tmp/h2.jsonl" -o "$tmp/h3.json" --state "$tmp/h3.state" --top-n 7 >/dev/null 2>&1 || fail "top-n 7 state"
rc=0; shape profile-merge --any-source "$tmp/h1.state" "$tmp/h3.state" -o "$tmp/bad.json" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q '^shape: error: .*h3.state' "$tmp/err" || fail "merging another configuration: rc $rc $(cat "$tmp/err")"
rc=0; shape profile-merge "$tmp/h1.state" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || fail "profile-merge without -o exited $rc"
rc=0; shape profile-merge "$tmp/h1.json" -o "$tmp/bad.json" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && [ ! -e "$tmp/bad.json" ] || fail "a document is not a state: rc $rc"

# ---- files checked before any work (issue 24): no output over the input or
# another output, no output into a folder that is not there
cp "$tmp/data.jsonl" "$tmp/in.jsonl"
sum_before=$(sha256sum <"$tmp/in.jsonl")
expect_refusal "-o $tmp/in.jsonl is also the input" "$tmp/in.jsonl" -o "$tmp/in.jsonl"
expect_refusal "--state .*/./in.jsonl is also the input" "$tmp/in.jsonl" -o "$tmp/x.json" --state "$tmp/./in.jsonl"
expect_refusal "-o and --checkpoint name the same file" "$tmp/in.jsonl" -o "$tmp/x.json" --checkpoint "$tmp/x.json"
expect_refusal "-o and --state name the same file" "$tmp/in.jsonl" -o "$tmp/x.json" --state "$tmp/./x.json"
expect_refusal "--state /nonexistent/x: the folder /nonexistent does not exist" "$tmp/in.jsonl" -o "$tmp/x.json" --state /nonexistent/x
[ "$(sha256sum <"$tmp/in.jsonl")" = "$sum_before" ] && [ ! -e "$tmp/x.json" ] || fail "a refused run changed the input or wrote -o"
rc=0; shape profile-merge "$tmp/h1.state" "$tmp/h2.state" -o "$tmp/h1.state" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'is also the input' "$tmp/err" || fail "profile-merge -o over a state: rc $rc $(cat "$tmp/err")"
# an input of neither kind is refused from its first bytes, not read whole (issue 24, item 8)
rc=0; timeout 20 "$SHAPE_BIN" profile-merge /dev/zero -o "$tmp/zero.json" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q '/dev/zero is neither a profile state nor a window states file' "$tmp/err" && [ ! -e "$tmp/zero.json" ] \
  || fail "profile-merge /dev/zero: rc $rc $(cat "$tmp/err")"
rc=0; shape profile-merge "$tmp/h1.state" "$tmp/data.jsonl" -o "$tmp/mixed.json" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'merge them apart' "$tmp/err" || fail "profile-merge of two kinds: rc $rc $(cat "$tmp/err")"
rc=0; shape stream-read "$tmp/in.jsonl" --checkpoint "$tmp/in.jsonl" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'is also the input' "$tmp/err" || fail "stream-read --checkpoint over its input: rc $rc $(cat "$tmp/err")"
[ "$(sha256sum <"$tmp/in.jsonl")" = "$sum_before" ] || fail "a refused run changed the input"

# ---- outputs on special files are written through, never replaced (issue 24)
shape stream-profile "$tmp/data.jsonl" -o - --batch-size 700 >"$tmp/both" 2>/dev/null || fail "-o -: exit $?"
python3 - "$tmp/both" "$tmp/p.json" <<'PY' || fail "-o - did not put the profile document on stdout before the summary"
import json, sys
text = open(sys.argv[1]).read()
doc, end = json.JSONDecoder().raw_decode(text)
assert doc == json.load(open(sys.argv[2]))
assert json.loads(text[end:].strip())["written"] == ["-"]
PY
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
shape stream-profile "$tmp/data.jsonl" -o "$tmp/fifo" --batch-size 700 >/dev/null 2>"$tmp/err" || fail "-o FIFO: $(cat "$tmp/err")"
wait $reader
[ -p "$tmp/fifo" ] || fail "-o FIFO replaced the FIFO with a file"
cmp -s "$tmp/from-fifo" "$tmp/p.json" || fail "-o FIFO: the reader did not get the profile document"
if mknod "$tmp/null" c 1 3 2>/dev/null; then
  shape stream-profile "$tmp/data.jsonl" -o "$tmp/null" --state "$tmp/null" >/dev/null 2>"$tmp/err" || fail "-o device: $(cat "$tmp/err")"
  [ -c "$tmp/null" ] || fail "-o and --state on a character device replaced it with a regular file"
else
  echo "note: mknod not allowed here; the device case is covered by test_profile_atomic's skip notice"
fi
ln -s p.json "$tmp/link.json"
shape stream-profile "$tmp/data.jsonl" -o "$tmp/link.json" --batch-size 700 >/dev/null 2>&1 || fail "-o LINK"
[ -L "$tmp/link.json" ] && cmp -s "$tmp/link.json" "$tmp/p.json" || fail "-o through a symbolic link did not keep the link"

echo "ok: stream-profile contract"
