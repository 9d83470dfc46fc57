#!/usr/bin/env bash
# test_stream_profile_merge.sh — scale-out on Kafka's partitions: four
# workers over disjoint partitions, merged, give the profile of one run.
#
# Why: issue 5 — "4 partition-disjoint runs merged equal the single run on
# exact fields"; docs/plugins/streaming.md sells --partitions, --state and
# `shape profile-merge` as the way to profile topics too big for one machine.
# How: 32,000 rows over an 8-partition topic (row i in partition i % 8, made
# here by a small generator: ints, quarter floats with nulls, a skewed int,
# unicode text with skew and nulls, e-mail / UUID / IPv4 text, bools with
# nulls, event times over two weeks). One run reads the whole topic; four
# workers, started together, read partitions 0-1, 2-3, 4-5 and 6-7 with
# --state; profile-merge combines the states. Checked:
#   - exact fields of the merged profile equal the single run's: rows, counts,
#     nulls, min/max, histograms, length statistics, pattern counts,
#     true/false counts, distinct (HyperLogLog registers merge by max, so it
#     is identical); mean/m2/variances within 1e-9 relative;
#   - both equal values computed here from the generator (rows, counts,
#     nulls, min/max, true/false, mean);
#   - sketches of the merged profile within their bounds, against the true
#     data: distinct within 3 standard errors (1.04/sqrt(16384)), each
#     quantile within 1% rank (KLL, k=200), every top entry's true count in
#     [count - error, count] and every value more frequent than n/64 listed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../support/reliability_rows.sh"  # report_input: rows of docs/RELIABILITY.md
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
topic=$(unique_topic merge8)
[ -n "${SHAPE_TEST_KAFKA:-}" ] || topic=merge8
kafka_up "$topic:8"
T=$TEST_TMP
N=32000

# The generator: `gen.py N` writes rows.jsonl (all rows, in id order) and
# p0.jsonl .. p7.jsonl (each partition's rows).
cat >"$T/gen.py" <<'PY'
import json, sys
n = int(sys.argv[1])
def row(i):
    r = (i * 2654435761) % 1000
    qty = 1 if r < 400 else 2 if r < 600 else 3 if r < 700 else 4 + r % 97
    kind = None if i % 17 == 0 else "café" if r < 300 else "naïve" if r < 450 else "日本" if r < 500 else "k%d" % (r % 200)
    contact = ("user%d@example.com" % (i % 5000) if i % 3 == 0 else
               "%08x-1234-4abc-8def-%012x" % (i, i * 7) if i % 3 == 1 else "10.0.%d.%d" % (i % 256, (i * 13) % 256))
    return {"id": i,
            "amount": None if i % 13 == 0 else ((i * 7919) % 1000 - 250) + 0.25 * (i % 4),
            "qty": qty, "kind": kind, "contact": contact,
            "flag": None if i % 11 == 0 else i % 3 != 0,
            "_shape_event_time": 1700000000000 + i * 37000}
parts = [open("p%d.jsonl" % p, "w") for p in range(8)]
with open("rows.jsonl", "w") as out:
    for i in range(n):
        line = json.dumps(row(i), ensure_ascii=False) + "\n"
        out.write(line)
        parts[i % 8].write(line)
for f in parts:
    f.close()
PY
(cd "$T" && python3 gen.py $N) || fail "generator"
for p in 0 1 2 3 4 5 6 7; do kcat -b "$BOOTSTRAP" -t "$topic" -P -p $p <"$T/p$p.jsonl"; done
uri="kafka://$BOOTSTRAP/$topic"

"$SHAPE_BIN" stream-profile "$uri" -o "$T/single.json" --batch-size 500 >"$T/single.sum" 2>"$T/err" ||
  fail "single run: $(cat "$T/err")"
pids=()
for w in 0-1 2-3 4-5 6-7; do
  "$SHAPE_BIN" stream-profile "$uri" -o "$T/w$w.json" --partitions $w --state "$T/w$w.state" --batch-size 500 \
    >"$T/w$w.sum" 2>"$T/w$w.err" &
  pids+=($!)
done
for i in 0 1 2 3; do wait ${pids[$i]} || fail "worker $i: $(cat "$T"/w*.err)"; done
"$SHAPE_BIN" profile-merge "$T"/w0-1.state "$T"/w2-3.state "$T"/w4-5.state "$T"/w6-7.state -o "$T/merged.json" \
  >"$T/merge.sum" 2>"$T/err" || fail "profile-merge: $(cat "$T/err")"

python3 - "$T" $N <<'PY' || fail "the merged profile of 4 workers differs from one run (see above)"
import bisect, collections, json, math, sys
T, n = sys.argv[1], int(sys.argv[2])
rows = [json.loads(l) for l in open(T + "/rows.jsonl", encoding="utf-8")]
single = json.load(open(T + "/single.json"))["tables"]["stream"]
merged = json.load(open(T + "/merged.json"))["tables"]["stream"]
workers = [json.load(open("%s/w%s.json" % (T, w)))["tables"]["stream"]["rows"] for w in ("0-1", "2-3", "4-5", "6-7")]
problems = []
def check(ok, what):
    if not ok:
        problems.append(what)

check(single["rows"] == merged["rows"] == n, "rows: single %s merged %s" % (single["rows"], merged["rows"]))
check(workers == [n // 4] * 4, "worker rows %s" % workers)
names = [c["name"] for c in single["columns"]]
check(names == [c["name"] for c in merged["columns"]], "columns %s vs %s" % (names, [c["name"] for c in merged["columns"]]))

# 1. exact fields: merged == single
ROUNDED = {"mean", "m2", "variance_population", "variance_sample"}
SKETCHED = {"top", "quantiles"}
def close(a, b):
    return a is None and b is None or (a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b)))
def same(path, a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        check(set(a) == set(b), "%s: keys %s vs %s" % (path, sorted(a), sorted(b)))
        for k in set(a) & set(b):
            same(path + "." + k, a[k], b[k])
    elif path.rsplit(".", 1)[-1] in ROUNDED:
        check(close(a, b), "%s: merged %r, single %r" % (path, a, b))
    else:
        check(a == b, "%s: merged %r, single %r" % (path, a, b))
for x, y in zip(merged["columns"], single["columns"]):
    same(x["name"], {k: v for k, v in x.items() if k not in SKETCHED}, {k: v for k, v in y.items() if k not in SKETCHED})
    check(set(x) & SKETCHED == set(y) & SKETCHED, "%s: sketch fields %s vs %s" % (x["name"], set(x) & SKETCHED, set(y) & SKETCHED))

# 2. exact fields against the generator
def truth(name):
    vals = [r[name] for r in rows]
    if name == "_shape_event_time":
        vals = [v * 1000 for v in vals]  # ms -> µs
    return vals
for c in merged["columns"]:
    vals = truth(c["name"])
    present = [v for v in vals if v is not None]
    check(c["count"] == n and c["null_count"] == n - len(present),
          "%s: count %s null_count %s, expected %d and %d" % (c["name"], c["count"], c["null_count"], n, n - len(present)))
    if c["kind"] == "bool":
        check(c["true_count"] == sum(present) and c["false_count"] == len(present) - sum(present), "%s: true/false" % c["name"])
        continue
    if c["kind"] in ("int", "float", "temporal"):
        check(c["min"] == min(present) and c["max"] == max(present), "%s: min/max %s %s" % (c["name"], c["min"], c["max"]))
    if c["kind"] == "text":
        check(c["min"] == min(present) and c["max"] == max(present), "%s: min/max %r %r" % (c["name"], c["min"], c["max"]))
    if c["kind"] in ("int", "float"):
        mean = math.fsum(present) / len(present)
        check(close(c["mean"], mean), "%s: mean %r, expected %r" % (c["name"], c["mean"], mean))

# 3. sketches of the merged profile within their bounds
se = 1.04 / math.sqrt(16384)
for c in merged["columns"]:
    if "distinct" not in c:
        continue
    vals = [v for v in truth(c["name"]) if v is not None]
    true_distinct = len(set(vals))
    check(abs(c["distinct"] - true_distinct) <= 3 * se * true_distinct,
          "%s: distinct %.1f, true %d" % (c["name"], c["distinct"], true_distinct))
    counts = collections.Counter(vals)
    listed = {}
    for value, count, error, *_ in c.get("top", []):
        listed[value] = count
        check(count - error <= counts.get(value, 0) <= count,
              "%s: top %r count %s error %s, true %s" % (c["name"], value, count, error, counts.get(value, 0)))
    for value, f in counts.items():
        if f > len(vals) / 64:
            check(value in listed, "%s: %r (%d of %d) missing from top" % (c["name"], value, f, len(vals)))
    if "quantiles" in c:
        s = sorted(vals)
        for q, v in c["quantiles"].items():
            lo, hi = bisect.bisect_left(s, v) / len(s), bisect.bisect_right(s, v) / len(s)
            q = float(q)
            err = 0.0 if lo <= q <= hi else min(abs(q - lo), abs(q - hi))
            check(err <= 0.01, "%s: quantile %s = %r has rank error %.4f" % (c["name"], q, v, err))
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY
echo "ok: 4 workers over 8 partitions, merged = one run on exact fields; sketches within bounds"

# Issue 24 (item 5): what would count rows twice is refused, before -o is written.
"$SHAPE_BIN" stream-profile "$uri" -o "$T/w1-2.json" --partitions 1-2 --state "$T/w1-2.state" --batch-size 500 \
  >/dev/null 2>"$T/err" || fail "worker 1-2: $(cat "$T/err")"
refused() {  # refused TEXT STATE...: profile-merge exits 2 naming TEXT, writes nothing
  local text=$1; shift
  rm -f "$T/bad.json"
  local rc=0
  "$SHAPE_BIN" profile-merge "$@" -o "$T/bad.json" >"$T/out" 2>"$T/err" || rc=$?
  [ $rc -eq 2 ] || fail "profile-merge $*: exit $rc, not 2: $(cat "$T/err")"
  grep -qF -- "$text" "$T/err" || fail "profile-merge $*: stderr lacks '$text': $(cat "$T/err")"
  [ ! -e "$T/bad.json" ] || fail "a refused merge wrote -o"
}
refused "both hold partition 1 of $uri" "$T"/w0-1.state "$T"/w1-2.state
report_input '`profile-merge` of states of partitions 0-1 and 1-2' emulator_stream_profile_merge 'exit 2 `both hold partition 1 of kafka://...`, `-o` not written (it doubled partition 1'"'"'s counts)'
cp "$T"/w2-3.state "$T"/copy.state
refused "both hold partition 2" "$T"/w0-1.state "$T"/w2-3.state "$T"/copy.state
report_input '`profile-merge` of a state and its copy' emulator_stream_profile_merge 'exit 2 `both hold partition 2`, `-o` not written'
refused "are the same state file" "$T"/w0-1.state "$T"/w2-3.state "$T"/w0-1.state
report_input '`profile-merge` naming one state file twice' emulator_stream_profile_merge 'exit 2 `are the same state file`, `-o` not written'
printf '{"id": 1}\n' >"$T/one.jsonl"
"$SHAPE_BIN" stream-profile "$T/one.jsonl" -o "$T/one.json" --state "$T/one.state" >/dev/null 2>&1 || fail "file state"
refused "profiles $T/one.jsonl but" "$T"/w0-1.state "$T"/one.state
report_input '`profile-merge` of a topic'"'"'s state and a file'"'"'s state' emulator_stream_profile_merge 'exit 2 `... profiles ... but ... profiles ...: another stream (pass --any-source ...)`, `-o` not written'
echo "ok: overlapping partitions, a state twice (copied or named twice) and another source refused"
