#!/usr/bin/env python3
"""bench/check.py — the key ratios of one `make bench-check` run against the
committed baseline.

Why: the regression guard must say plainly, ratio by ratio, what was
measured, what the baseline is and whether it holds, and fail only on a
drop noise cannot explain: below half of the baseline.
How: reads bench/check's raw results (JSON lines, as bench/run's), takes
each ratio within a round and the median over rounds, prints
`name  ratio  baseline  verdict` lines and exits 1 if any ratio is below
half its baseline or could not be measured (a peer failed in every round).
A ratio without a baseline is reported, never failed. With --write the
medians become the new baseline file instead.

Usage: check.py RESULTS BASELINE DEC_EVENTS CON_EVENTS EMIT_EVENTS [--write]
"""
import datetime
import json
import platform
import statistics
import subprocess
import sys

results, baseline_path = sys.argv[1], sys.argv[2]
con = float(sys.argv[4])
write = "--write" in sys.argv[6:]
recs = [json.loads(l) for l in open(results) if l.strip()]


def per_round(group, name, f):
    out = {}
    for r in recs:
        if r["group"] == group and r["name"] == name and r["status"] == 0:
            try:
                v = f(r)
            except (KeyError, TypeError, ZeroDivisionError):
                v = None
            if v:
                out[r["round"]] = v
    return out


def within(a, b):
    vals = [a[k] / b[k] for k in a if k in b]
    return statistics.median(vals) if vals else None


def out(r, key):
    return r.get("out", {}).get(key)


rate = {n: per_round("consume", n, lambda r: con / r["wall"]) for n in ("floor", "kcat", "stream_read", "stream_profile")}
emitted = {n: per_round("emit", n, lambda r: (out(r, "events") or r.get("events")) / r["wall"])
           for n in ("shape", "kcat", "avro")}
ratios = {
    "decode_vs_jansson": within(per_round("decode", "shape", lambda r: out(r, "mb_s")),
                                per_round("decode", "jansson", lambda r: out(r, "mb_s"))),
    "stream_read_vs_floor": within(rate["stream_read"], rate["floor"]),
    "stream_read_vs_kcat": within(rate["stream_read"], rate["kcat"]),
    "stream_profile_vs_floor": within(rate["stream_profile"], rate["floor"]),
    "emit_vs_kcat": within(emitted["shape"], emitted["kcat"]),
    "avro_vs_json": within(emitted["avro"], emitted["shape"]),
    "null_cpu_vs_jansson": within(per_round("emit", "null", lambda r: out(r, "events") / r["cpu"]),
                                  per_round("decode", "jansson", lambda r: out(r, "rows_s"))),
}
# avro needs `shape schema-registry`; without it the ratio is simply not measured
optional = {"avro_vs_json"} if not any(r["group"] == "emit" and r["name"] == "avro" for r in recs) else set()

if write:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    doc = {"written": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "commit": commit or "?",
           "machine": "%s, %s cores" % (platform.machine(), subprocess.run(["nproc"], capture_output=True,
                                                                            text=True).stdout.strip()),
           "note": "medians of bench/check's short run (make bench-baseline); make bench-check fails when a "
                   "ratio falls below half of its value here",
           "ratios": {k: round(v, 4) for k, v in ratios.items() if v is not None}}
    with open(baseline_path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    for k, v in ratios.items():
        print("%-24s %8s  (written to %s)" % (k, "%.3f" % v if v is not None else "—", baseline_path))
    sys.exit(0)

try:
    base = json.load(open(baseline_path)).get("ratios", {})
except (OSError, ValueError):
    base = {}
    print("bench-check: no baseline at %s (make bench-baseline writes one); nothing can fail" % baseline_path)
bad = 0
print("%-24s %8s %9s  %s" % ("ratio", "measured", "baseline", "verdict"))
for k, v in ratios.items():
    b = base.get(k)
    if v is None:
        verdict = "not measured (optional)" if k in optional else "FAILED: not measured (a peer failed)"
        bad += k not in optional
    elif b is None:
        verdict = "no baseline"
    elif v < b / 2:
        verdict = "REGRESSED: below half the baseline (%.3f)" % (b / 2)
        bad += 1
    else:
        verdict = "ok (%.0f %% of baseline)" % (100 * v / b)
    print("%-24s %8s %9s  %s" % (k, "%.3f" % v if v is not None else "—", "%.3f" % b if b else "—", verdict))
print("bench-check: %s" % ("FAILED (%d)" % bad if bad else "ok"))
sys.exit(1 if bad else 0)
