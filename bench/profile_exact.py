#!/usr/bin/env python3
"""bench/profile_exact.py — do two profile documents agree on every exact field?

Why: scaling out (`--partitions` + `profile-merge`) must give the profile of
the whole topic: the exact statistics identical to one run over all rows
(spec: counts, min/max, distinct from the same HyperLogLog registers, ...);
only the sketches' estimates (top values, quantiles) and floating sums
(mean, m2, variances) may differ within their error bounds or rounding.
How: walks both documents' tables and columns by name and compares every
field except those approximate ones; prints "equal=1|0 compared=N
differing=M [first=...]" as its last line and exits 0 either way (the report
shows the verdict).
Usage: profile_exact.py SINGLE.json MERGED.json
"""
import json
import sys

APPROX = {"mean", "m2", "variance_population", "variance_sample", "stddev_population", "stddev_sample",
          "top", "quantiles", "error_models", "std", "variance"}


def columns(doc):
    out = {}
    tables = doc.get("tables", {})
    items = tables.items() if isinstance(tables, dict) else ((t.get("name"), t) for t in tables)
    for tname, t in items:
        out[(tname, "#rows")] = t.get("rows")
        for c in t.get("columns", []):
            out[(tname, c.get("name"))] = c
    return out


def main():
    a, b = (columns(json.load(open(p))) for p in sys.argv[1:3])
    compared, diffs = 0, []
    for key in sorted(set(a) | set(b), key=str):
        x, y = a.get(key), b.get(key)
        if not isinstance(x, dict) or not isinstance(y, dict):
            compared += 1
            if x != y:
                diffs.append("%s/%s: %r != %r" % (key[0], key[1], x, y))
            continue
        for f in sorted(set(x) | set(y)):
            if f in APPROX or f.startswith("_"):
                continue
            compared += 1
            if x.get(f) != y.get(f):
                diffs.append("%s.%s.%s: %.60r != %.60r" % (key[0], key[1], f, x.get(f), y.get(f)))
    first = (" first=" + diffs[0].replace(" ", "_")) if diffs else ""
    print("equal=%d compared=%d differing=%d%s" % (0 if diffs else 1, compared, len(diffs), first))


main()
