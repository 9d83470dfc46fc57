#!/usr/bin/env python3
"""event_time_faults_check.py FAULTED.jsonl ANSWER.key CLEAN.jsonl OOO_WINDOW DUP_WINDOW REPORT.json

Check a faulted `shape emit retail --order event-time` stream (flat JSON: out
of order, duplicates, poison, anomalies) against its answer key and the clean
event-time stream of the same seed, independently of the engine:

  * originals (the first message of each key; a poisoned body, undecodable,
    takes the next poison key of the answer key, which lists them in stream
    order) are the clean stream's events, each once;
  * disorder: an original's rank r and its clean position p lie in the same
    window of OOO_WINDOW positions; a late one (answer key) has
    r - p <= moved_up_to <= OOO_WINDOW, any other r <= p and the others keep
    their clean order; most late ones do come later; so (the stream is within the declared disorder) every
    event time is at least every event time more than OOO_WINDOW positions
    before it;
  * duplicates: exactly the answer key's, each copy_after (1..DUP_WINDOW)
    originals after its original, with its original's bytes (an uncut body
    when the original was poisoned);
  * poison: exactly the answer key's bodies are undecodable, each a prefix of
    its event's body, of the answer key's byte count;
  * anomalies: an original differs from its clean event exactly in the
    answer key's column (a column of its own table), and only there;
    everything else is byte for byte the clean event;
  * the report's counts are the answer key's.

Prints a summary line; exits 1 naming the first failure.
"""
import json
import sys

TIME = {"customer": "signup_date", "order": "order_date", "return": "return_date"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


path, key_path, clean_path = sys.argv[1:4]
W, DW = int(sys.argv[4]), int(sys.argv[5])
report = json.load(open(sys.argv[6]))
lines = open(path, encoding="utf-8", errors="surrogateescape").read().split("\n")[:-1]
clean_lines = open(clean_path, encoding="utf-8").read().split("\n")[:-1]
answer = [json.loads(l) for l in open(key_path)]
kinds = {"late": {}, "duplicate": {}, "poison": {}, "anomaly": {}}
for a in answer:
    if a["key"] in kinds[a["kind"]]:
        fail(f"answer key: {a['kind']} {a['key']} twice")
    kinds[a["kind"]][a["key"]] = a
for kind, field in (("late", "late"), ("duplicate", "duplicates"), ("poison", "poisoned"),
                    ("anomaly", "anomalies_affected")):
    if report[field] != len(kinds[kind]):
        fail(f"report {field} {report[field]}, answer key {len(kinds[kind])} {kind} lines")

clean, pos = [], {}
for p, l in enumerate(clean_lines):
    e = json.loads(l)
    k = "%s/%d" % (e["_shape_table"], e["_shape_seq"])
    clean.append((k, e, l))
    pos[k] = p

poison_order = iter(a["key"] for a in answer if a["kind"] == "poison")
rank, body, copies = {}, {}, {}
for n, l in enumerate(lines):
    try:
        k = "%s/%d" % (json.loads(l)["_shape_table"], json.loads(l)["_shape_seq"])
    except ValueError:
        k = next(poison_order, None)
        if k is None or k in rank:
            fail(f"line {n + 1}: an undecodable body the answer key does not list")
        a = kinds["poison"][k]
        if len(l.encode("utf-8", "surrogateescape")) != a["bytes"]:
            fail(f"line {n + 1}: poison {k} of {len(l)} bytes, the answer key says {a['bytes']}")
        if k not in kinds["anomaly"] and not clean_lines[pos[k]].startswith(l):
            fail(f"line {n + 1}: poison {k} is not a prefix of its event")
        rank[k] = len(rank)
        body[k] = None
        continue
    if k in rank:  # a copy
        if k in copies:
            fail(f"line {n + 1}: {k} a third time")
        copies[k] = len(rank) - 1 - rank[k]
        if body[k] is not None and body[k] != l:
            fail(f"line {n + 1}: the copy of {k} differs from its original")
        if body[k] is None and k not in kinds["anomaly"] and l != clean_lines[pos[k]]:
            fail(f"line {n + 1}: the copy of poisoned {k} is not its clean event")
        continue
    if k in kinds["poison"]:
        fail(f"line {n + 1}: {k} decodes, the answer key says poison")
    rank[k] = len(rank)
    body[k] = l
    if k not in pos:
        fail(f"line {n + 1}: {k} is not in the clean stream")
    if k in kinds["anomaly"]:
        a, e, c = kinds["anomaly"][k], json.loads(l), clean[pos[k]][1]
        diff = sorted(col for col in c if e.get(col) != c[col])
        want = sorted({a["column"]} | ({"_shape_event_time"} if a["mutator"] == "time-skew" else set()))
        if a["column"] not in c or diff != want:
            fail(f"line {n + 1}: anomaly {k} changed {diff}, the answer key says {a['column']}")
    elif l != clean_lines[pos[k]]:
        fail(f"line {n + 1}: {k} is not its clean event byte for byte")

if set(rank) != set(pos):
    fail(f"originals: {len(set(pos) - set(rank))} events lost, {len(set(rank) - set(pos))} invented")
if set(copies) != set(kinds["duplicate"]):
    fail("the copies are not the answer key's duplicates")
for k, d in copies.items():
    if not 1 <= d <= DW or d != kinds["duplicate"][k]["copy_after"]:
        fail(f"copy of {k} {d} originals later, answer key {kinds['duplicate'][k]['copy_after']}, window {DW}")

order = sorted(rank, key=rank.get)
last = -1
later = 0
for r, k in enumerate(order):
    p = pos[k]
    if r // W != p // W:
        fail(f"{k}: rank {r} left the window of its position {p}")
    if k in kinds["late"]:
        m = kinds["late"][k]["moved_up_to"]
        if not (r - p <= m <= W):
            fail(f"{k}: late, moved from {p} to {r}, the answer key says up to {m}")
        later += r > p
    else:
        if r > p:
            fail(f"{k}: not late, but moved from {p} to {r}")
        if p < last:
            fail(f"{k}: not late, but before an event that came before it")
        last = p
if later * 2 < len(kinds["late"]):
    fail(f"of {len(kinds['late'])} late events only {later} came later than their place")
# within the declared disorder: each event time >= every one more than W positions before
times = [clean[pos[k]][1].get(TIME.get(clean[pos[k]][1]["_shape_table"], ""), None) for k in order]
watermark = ""
for r, t in enumerate(times):
    if r > W and times[r - W - 1] is not None and times[r - W - 1] > watermark:
        watermark = times[r - W - 1]
    if t is not None and t < watermark:
        fail(f"rank {r}: event time {t} before {watermark}, more than {W} positions earlier")
print(f"ok: {len(lines)} messages, {len(rank)} originals; late {len(kinds['late'])}, "
      f"duplicates {len(copies)}, poison {len(kinds['poison'])}, anomalies {len(kinds['anomaly'])}")
