#!/usr/bin/env python3
"""bench/check.py — the key ratios of one `make bench-check` run, each held
to its guard, beside its issue's target and the committed baseline.

Why: the regression guard must say plainly, ratio by ratio, what was
measured, what it is held to and why, and fail on a drop (issue 19: "a guard
that can fail"). Each guarded ratio fails below its guard; the guard is the
issue's target where the code meets it on an idle machine of this kind, and
otherwise the level the code reaches there minus a noise margin — the
target is then printed beside it as "not met yet" (bench/analysis.md, "The
guard"). Every ratio also fails below half its baseline (a drop no noise
explains), and when it could not be measured (a peer failed every round).
How: reads bench/check's raw results (JSON lines, as bench/run's), takes each
ratio within a round and the median over rounds; the fair floor of a round
is the faster of bench/consume -w 4 and bench/consume (all partitions), and
kcat -C's the faster of its defaults and fetch.wait.max.ms=10. Prints the
commit, machine and load, then `ratio measured guard target baseline
verdict` lines; exits 1 on any failure. With --write the medians (and every
round's value, to show the noise) become the new baseline file, keeping its
guards, and each guard's suggested value from this run is printed (its lowest
round less 15 %, at most the target) for a person to set, with its reason.

Usage: check.py RESULTS BASELINE DEC_EVENTS CON_EVENTS EMIT_EVENTS [--load=TEXT] [--runs=N] [--write]
"""
import datetime
import json
import platform
import statistics
import subprocess
import sys

results, baseline_path = sys.argv[1], sys.argv[2]
con = float(sys.argv[4])
opts = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in sys.argv[6:] if a.startswith("--"))
write = "write" in opts
recs = [json.loads(l) for l in open(results) if l.strip()]


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def machine():
    cpu = "?"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return "%s, %s cores, %s" % (platform.machine(), sh("nproc") or "?", cpu)


commit = sh("git", "rev-parse", "--short", "HEAD") or "?"
if sh("git", "status", "--porcelain", "--untracked-files=no"):
    commit += " (with uncommitted changes)"


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


def faster(a, b):
    """Per round, the larger rate of two peers (and which one it was)."""
    out, who = {}, {}
    for k in set(a) | set(b):
        x, y = a.get(k), b.get(k)
        if x is None and y is None:
            continue
        out[k] = max(v for v in (x, y) if v is not None)
        who[k] = 0 if y is None or (x is not None and x >= y) else 1
    return out, who


def within(a, b):
    return {k: a[k] / b[k] for k in a if k in b}


def out(r, key):
    return r.get("out", {}).get(key)


rate = {n: per_round("consume", n, lambda r: con / r["wall"])
        for n in ("floor_w4", "floor_all", "kcat", "kcat_fw10", "stream_read", "stream_profile",
                  "stream_profile_tumbling")}
floor, floor_who = faster(rate["floor_w4"], rate["floor_all"])
kcat, kcat_who = faster(rate["kcat"], rate["kcat_fw10"])
emitted = {n: per_round("emit", n, lambda r: (out(r, "events") or r.get("events")) / r["wall"])
           for n in ("shape", "kcat", "avro")}
rounds = {
    "decode_vs_jansson": within(per_round("decode", "shape", lambda r: out(r, "mb_s")),
                                per_round("decode", "jansson", lambda r: out(r, "mb_s"))),
    "stream_read_vs_floor": within(rate["stream_read"], floor),
    "stream_read_vs_kcat": within(rate["stream_read"], kcat),
    "stream_profile_vs_floor": within(rate["stream_profile"], floor),
    "tumbling_vs_profile": within(rate["stream_profile_tumbling"], rate["stream_profile"]),
    "emit_vs_kcat": within(emitted["shape"], emitted["kcat"]),
    "avro_vs_json": within(emitted["avro"], emitted["shape"]),
    "null_cpu_vs_jansson": within(per_round("emit", "null", lambda r: out(r, "events") / r["cpu"]),
                                  per_round("decode", "jansson", lambda r: out(r, "rows_s"))),
}
ratios = {k: statistics.median(v.values()) if v else None for k, v in rounds.items()}
# avro needs `shape schema-registry`; without it the ratio is simply not measured
optional = {"avro_vs_json"} if not any(r["group"] == "emit" and r["name"] == "avro" for r in recs) else set()

try:
    doc = json.load(open(baseline_path))
except (OSError, ValueError):
    doc = {}
base = doc.get("ratios", {})
guards = doc.get("guards", {})

print("bench-check: commit %s; machine %s; load (1, 5, 15 min) at start / end %s; %s rounds" % (
    commit, machine(), opts.get("load", "?"), opts.get("runs", "?")))
n_w4 = sum(1 for w in floor_who.values() if w == 0)
print("bench-check: the fair floor was bench/consume -w 4 in %d of %d rounds, all partitions in the others; "
      "kcat -C with fetch.wait.max.ms=10 was the faster kcat in %d of %d" % (
          n_w4, len(floor_who), sum(kcat_who.values()), len(kcat_who)))

if write:
    new = {"written": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
           "machine": machine(), "load": opts.get("load", "?"), "rounds": int(opts.get("runs", "0") or 0),
           "note": "medians of bench/check's run (make bench-baseline, on an idle machine of CI's kind); "
                   "make bench-check fails when a ratio falls below its guard or below half of its value "
                   "here; per_round shows the noise",
           "guards": guards,
           "ratios": {k: round(v, 4) for k, v in ratios.items() if v is not None},
           "per_round": {k: [round(v[r], 4) for r in sorted(v)] for k, v in rounds.items() if v}}
    with open(baseline_path, "w") as f:
        json.dump(new, f, indent=2)
        f.write("\n")
    for k, v in ratios.items():
        line = "%-24s %8s  (written to %s)" % (k, "%.3f" % v if v is not None else "—", baseline_path)
        if v is not None and k in guards and rounds[k]:
            # what the guard could be from this run: its lowest round less 15 % for noise, never above
            # the target (the guards themselves are edited by hand, with their reason)
            g = guards[k]
            sug = min(0.85 * min(rounds[k].values()), g.get("target", float("inf")))
            line += "; guard %.2f now, this run suggests %.2f" % (g.get("guard", 0), sug)
        print(line)
    sys.exit(0)

if not doc:
    print("bench-check: no baseline at %s (make bench-baseline writes one); only the guards apply" % baseline_path)
bad = 0
print("%-24s %8s %7s %7s %9s  %s" % ("ratio", "measured", "guard", "target", "baseline", "verdict"))
for k, v in ratios.items():
    b = base.get(k)
    g = guards.get(k, {})
    guard, target = g.get("guard"), g.get("target")
    spread = ""
    if rounds[k]:
        spread = " [rounds %.3f–%.3f]" % (min(rounds[k].values()), max(rounds[k].values()))
    if v is None:
        verdict = "not measured (optional)" if k in optional else "FAILED: not measured (a peer failed)"
        bad += k not in optional
    elif guard is not None and v < guard:
        verdict = "FAILED: below its guard %.2f (%s)" % (guard, g.get("issue", ""))
        bad += 1
    elif b is not None and v < b / 2:
        verdict = "REGRESSED: below half the baseline (%.3f)" % (b / 2)
        bad += 1
    elif target is not None and v < target:
        verdict = "ok (guard %.2f); %s target %.2f NOT MET YET" % (guard, g.get("issue", ""), target)
    elif target is not None:
        verdict = "ok; %s target %.2f met" % (g.get("issue", ""), target)
    elif b is not None:
        verdict = "ok (%.0f %% of baseline)" % (100 * v / b)
    else:
        verdict = "ok (no guard, no baseline)"
    fmt = lambda x: "%.3f" % x if isinstance(x, (int, float)) else "—"
    print("%-24s %8s %7s %7s %9s  %s%s" % (k, fmt(v), fmt(guard), fmt(target), fmt(b), verdict, spread))
print("bench-check: %s" % ("FAILED (%d)" % bad if bad else "ok"))
sys.exit(1 if bad else 0)
