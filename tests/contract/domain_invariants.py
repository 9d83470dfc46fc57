#!/usr/bin/env python3
"""domain_invariants.py SCHEMA.json DIR — check every row of a schema domain
emitted as DIR/TABLE.jsonl (shape emit SCHEMA --sink jsonl:///DIR) against the
schema's rules, independently of the engine:

  * every foreign key value is a key of an existing parent row;
  * computed columns equal the aggregate over their children (sum, count,
    avg, min, max; floats to the cent);
  * first_per_parent is true on exactly the first row of each parent;
  * lookups and derived copies equal the parent's value;
  * null rates are within 3 sigma of the schema's null_rate;
  * weighted_enum/lifecycle/choice frequencies pass a chi-square test;
  * hierarchy/hierarchy_field and unjittered bootstrap columns of one dataset
    are, in every row, the fields of one record of it (read from the
    schema's folder); jittered ones stay near the field's range;
  * an address group's postal code always has one city/state/county and one
    point (within 0.004 degrees), its states those of the scope;
  * a self reference points at an earlier row (the first has none);
  * each correlated_columns pair has Spearman's rho near 6/pi asin(r/2);
  * business rules the engine keeps, `constraint` rules included, hold on
    every row.

Prints one line per table and exits 1 on the first failure.
"""
import json
import math
import os
import sys
from collections import Counter, defaultdict
from datetime import datetime

schema = json.load(open(sys.argv[1]))
folder = sys.argv[2]
rows = {}
for t in schema["tables"]:
    path = os.path.join(folder, t + ".jsonl")
    if not os.path.exists(path):
        print(f"FAIL: {path} missing")
        sys.exit(1)
    rows[t] = [json.loads(l) for l in open(path)]

def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)

# chi-square critical values at p = 0.001 by degrees of freedom (1..63), from the
# Wilson-Hilferty approximation
def chi2_crit(df):
    z = 3.09
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3

datasets = {}
def load_dataset(name):
    if name not in datasets:
        datasets[name] = json.load(open(os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), name + ".json")))
    return datasets[name]

def same(v):  # a dataset value and an emitted one compare alike (numbers as floats)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

def spearman(pairs):
    def rank(xs):
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        rk = [0.0] * len(xs)
        i = 0
        while i < len(order):  # ties share their mean rank
            j = i
            while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
                j += 1
            for k in range(i, j + 1):
                rk[order[k]] = (i + j) / 2
            i = j + 1
        return rk
    ra, rb = rank([p[0] for p in pairs]), rank([p[1] for p in pairs])
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    sab = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    return sab / math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))

def parent_key(ref):
    t, c = ref.split(".", 1)
    return t, c

checks = 0
for tname, table in schema["tables"].items():
    data = rows[tname]
    n = len(data)
    for cname, col in table["columns"].items():
        g = col.get("generator", {})
        st = g.get("strategy")
        vals = [r.get(cname) for r in data]
        rate = col.get("null_rate", 0)
        if rate > 0 and n > 0:
            nulls = sum(v is None for v in vals)
            sd = math.sqrt(n * rate * (1 - rate))
            if abs(nulls - n * rate) > 3 * sd + 1:
                fail(f"{tname}.{cname}: {nulls} nulls in {n} rows, expected {n * rate:.0f} +- {3 * sd:.0f}")
            checks += 1
        if st in ("foreign_key", "composite_foreign_key"):
            pt, pc = parent_key(g["ref"])
            keys = {r[pc] for r in rows[pt]}
            bad = [v for v in vals if v is not None and v not in keys]
            if bad:
                fail(f"{tname}.{cname}: {len(bad)} values point at no {pt}.{pc}, e.g. {bad[0]!r}")
            checks += 1
            cb = g.get("constrained_by")
            if cb:
                index = {r[pc]: r[cb] for r in rows[pt]}
                wrong = [r for r in data if r[cname] is not None and index[r[cname]] != r[cb]]
                if wrong:
                    fail(f"{tname}.{cname}: {len(wrong)} rows pick a {pt} whose {cb} is not theirs")
                has = {r[cb] for r in rows[pt]}
                if col.get("nullable"):
                    missed = [r for r in data if r[cname] is None and r[cb] in has]
                    if missed:
                        fail(f"{tname}.{cname}: {len(missed)} rows are null though a matching {pt} exists")
                checks += 1
        if st in ("foreign_key", "composite_foreign_key") and g.get("sample_rate"):
            pt, pc = parent_key(g["ref"])
            cap = max(1, math.floor(len(rows[pt]) * g["sample_rate"]))
            used = {v for v in vals if v is not None}
            if len(used) > cap:
                fail(f"{tname}.{cname}: {len(used)} distinct parents, more than the sample of {cap}")
            checks += 1
        if st in ("foreign_key", "composite_foreign_key") and g.get("fan_out") and n >= 1000:
            fo = g["fan_out"] if isinstance(g["fan_out"], dict) else {}
            frac, share = fo.get("top_fraction", 0.2), fo.get("top_share", 0.8)
            pt, pc = parent_key(g["ref"])
            counts = sorted(Counter(v for v in vals if v is not None).values(), reverse=True)
            top = sum(counts[:max(1, round(len(rows[pt]) * frac))])
            if not (share - 0.08 <= top / n <= share + 0.08):
                fail(f"{tname}.{cname}: the top {frac:.0%} of parents hold {top / n:.1%} of rows, not about {share:.0%}")
            checks += 1
        if st == "composite_fk_field":
            src = g["source"]
            pt, pc = parent_key(table["columns"][src]["generator"]["ref"])
            index = {r[pc]: r[g["field"]] for r in rows[pt]}
            wrong = [r for r in data if r[src] is not None and r[cname] != index.get(r[src])]
            if wrong:
                fail(f"{tname}.{cname}: {len(wrong)} rows differ from {pt}.{g['field']} of their {src}")
            checks += 1
        if st == "conditional_table":
            cases = g["table"]
            for r in data:
                want = cases.get(str(r[g["source_column"]]), g.get("default"))
                if r[cname] is None if want else r[cname] is not None:
                    fail(f"{tname}.{cname} at {r['_shape_seq']}: {r[cname]!r} for {r[g['source_column']]!r}")
                if want and str(r[cname]) not in {k for k, w in want.items() if w > 0}:
                    fail(f"{tname}.{cname} at {r['_shape_seq']}: {r[cname]!r} is no label of the case {r[g['source_column']]!r}")
            checks += 1
        if st == "empirical":
            lo, hi = g.get("min", min(g["quantiles"].values())), g.get("max", max(g["quantiles"].values()))
            out = [v for v in vals if v is not None and not lo - 0.5 <= v <= hi + 0.5]
            if out:
                fail(f"{tname}.{cname}: {len(out)} values outside [{lo}, {hi}], e.g. {out[0]}")
            checks += 1
        if st == "scd2" and g["role"] in ("valid_from", "effective_from", "effective_date", "start_date"):
            # every entity's versions: numbered 1..k, each ending where the next starts, min_gap_days apart, the last current
            bk, gap = g["business_key"], g.get("min_gap_days", 1)
            roles = {c["generator"].get("role"): k for k, c in table["columns"].items() if c["generator"].get("strategy") == "scd2"}
            to = next((roles[x] for x in ("valid_to", "effective_to", "end_date", "expiry_date") if x in roles), None)
            ver, cur = roles.get("version") or roles.get("version_number"), roles.get("is_current") or roles.get("current")
            ents = defaultdict(list)
            for r in data:
                ents[r[bk]].append(r)
            for key, vs in ents.items():
                vs.sort(key=lambda r: r[cname])
                for i, r in enumerate(vs):
                    last = i + 1 == len(vs)
                    if ver and r[ver] != i + 1:
                        fail(f"{tname}: {bk}={key} version {r[ver]} at position {i + 1}")
                    if cur and r[cur] != last:
                        fail(f"{tname}: {bk}={key} version {i + 1} of {len(vs)}: is_current {r[cur]}")
                    if to and (r[to] is None) != last:
                        fail(f"{tname}: {bk}={key} version {i + 1} of {len(vs)}: valid_to {r[to]!r}")
                    if to and not last:
                        if r[to] != vs[i + 1][cname]:
                            fail(f"{tname}: {bk}={key} version {i + 1} ends {r[to]}, the next starts {vs[i + 1][cname]}")
                        d0 = datetime.fromisoformat(r[cname][:19]); d1 = datetime.fromisoformat(r[to][:19])
                        if (d1 - d0).days < gap:
                            fail(f"{tname}: {bk}={key} version {i + 1} lasts {(d1 - d0).days} days, under min_gap_days {gap}")
            checks += 1
        if st in ("weighted_enum", "lifecycle") and n >= 1000:
            w = g.get("values") or g.get("phases")
            total = sum(w.values())
            seen = Counter(str(v) if not isinstance(v, float) else None for v in vals if v is not None)
            m = sum(seen.values())
            if all(isinstance(v, str) for v in vals if v is not None):
                chi = sum((seen.get(k, 0) - m * x / total) ** 2 / (m * x / total) for k, x in w.items() if x > 0)
                df = max(1, sum(1 for x in w.values() if x > 0) - 1)
                if chi > chi2_crit(df):
                    fail(f"{tname}.{cname}: chi-square {chi:.1f} > {chi2_crit(df):.1f} (df {df})")
                checks += 1
        if st == "computed":
            ct, cc = g["child_table"], g["child_column"]
            rule = g.get("rule", "sum_children")
            fk = next(k for k, c in schema["tables"][ct]["columns"].items()
                      if c["generator"].get("strategy") == "foreign_key" and c["generator"]["ref"].startswith(tname + "."))
            pk = schema["tables"][ct]["columns"][fk]["generator"]["ref"].split(".", 1)[1]
            kids = defaultdict(list)
            for r in rows[ct]:
                kids[r[fk]].append(r[cc])
            if len(rows[ct]) == 0:
                continue
            for r in data:
                xs = [x for x in kids.get(r[pk], []) if x is not None]
                if rule == "count_children":
                    want = len(kids.get(r[pk], []))
                elif rule == "sum_children":
                    want = sum(xs)
                elif rule == "avg_children":
                    want = sum(xs) / len(xs) if xs else 0
                elif rule == "min_children":
                    want = min(xs) if xs else 0
                else:
                    want = max(xs) if xs else 0
                got = r[cname]
                if got is None or abs(got - want) > 0.011 + 1e-9 * abs(want):
                    fail(f"{tname}.{cname} of {pk}={r[pk]}: {got} != {rule} {want}")
            checks += 1
        if st == "self_referencing":
            pkc = g["pk_column"]
            keys = {r[pkc] for r in data}
            lvl = next((k for k, c in table["columns"].items() if c["generator"].get("strategy") == "self_ref_field"), None)
            level = {r[pkc]: r[lvl] for r in data} if lvl else {}
            for r in data:
                v = r[cname]
                if v is not None and v not in keys:
                    fail(f"{tname}.{cname} at {r['_shape_seq']}: parent {v!r} is no {pkc}")
                if lvl and (v is None) != (r[lvl] == 1):
                    fail(f"{tname}.{cname} at {r['_shape_seq']}: level {r[lvl]} but parent {v!r}")
                if lvl and v is not None and level[v] != r[lvl] - 1:
                    fail(f"{tname}.{cname} at {r['_shape_seq']}: level {r[lvl]} under a level {level[v]} parent")
            checks += 1
        if st == "first_per_parent":
            pcol = g["parent_column"]
            seen = set()
            for r in data:
                first = r[pcol] not in seen
                seen.add(r[pcol])
                want = first if g.get("default", True) else not first
                if r[cname] != want:
                    fail(f"{tname}.{cname} at {r['_shape_seq']}: {r[cname]} but first={first}")
            checks += 1
        if st == "lookup" or (st == "derived" and "." in g.get("source", "") and g.get("rule", g.get("operation", "copy")) == "copy"):
            if st == "lookup":
                src_t, src_c, via = g["source_table"], g["source_column"], g["via"]
            else:
                (src_t, src_c), via = g["source"].split(".", 1), g["via"]
            viacol = table["columns"][via]["generator"]
            key = g.get("key") or (viacol["ref"].split(".", 1)[1] if viacol.get("strategy") == "foreign_key" else via)
            if rows[src_t]:
                index = {r[key]: r[src_c] for r in rows[src_t]}
                for r in data:
                    if r[via] is not None and r[cname] != index.get(r[via]):
                        fail(f"{tname}.{cname} at {r['_shape_seq']}: {r[cname]!r} != {src_t}.{src_c} {index.get(r[via])!r}")
                checks += 1
    # hierarchy / bootstrap: the columns of one dataset in a row are one record of it
    for strat, fields in (("hierarchy", ("hierarchy", "hierarchy_field")), ("bootstrap", ("bootstrap",))):
        groups = defaultdict(list)
        for cname, col in table["columns"].items():
            g = col.get("generator", {})
            if g.get("strategy") in fields and not (strat == "bootstrap" and g.get("jitter", 0.01) > 0
                                                    and isinstance(load_dataset(g["dataset"])[0].get(g["field"]), (int, float))):
                groups[g["dataset"]].append((cname, g["field"]))
        for ds, cols in groups.items():
            recs = {tuple(same(r.get(f)) for _, f in cols) for r in load_dataset(ds)}
            for r in data:
                got = tuple(same(r[c]) for c, _ in cols)
                if got not in recs:
                    fail(f"{tname} at {r['_shape_seq']}: {dict(zip([c for c, _ in cols], got))} is no record of {ds}")
            checks += 1
    for cname, col in table["columns"].items():
        g = col.get("generator", {})
        if g.get("strategy") == "bootstrap" and g.get("jitter", 0.01) > 0:
            xs = [x[g["field"]] for x in load_dataset(g["dataset"]) if isinstance(x.get(g["field"]), (int, float))]
            if xs:
                m = sum(xs) / len(xs)
                sd = math.sqrt(sum((x - m) ** 2 for x in xs) / max(1, len(xs) - 1))
                lo, hi = min(xs) - 6 * g["jitter"] * sd - 1, max(xs) + 6 * g["jitter"] * sd + 1
                out = [v for v in (r[cname] for r in data) if v is not None and not lo <= v <= hi]
                if out:
                    fail(f"{tname}.{cname}: {len(out)} jittered values outside [{lo:.2f}, {hi:.2f}]")
                checks += 1
    # address: per group, a postal code always has the same city and state, coordinates near each other, the state in scope
    groups = defaultdict(dict)
    for cname, col in table["columns"].items():
        g = col.get("generator", {})
        if g.get("strategy") == "address":
            groups[g.get("group", "address")][g["field"]] = cname
            groups[g.get("group", "address")]["_spec"] = g
    for grp, f in groups.items():
        g = f.pop("_spec")
        zc = f.get("postal_code") or f.get("zip")
        if zc:
            seen = {}
            for r in data:
                place = tuple(r[f[k]] for k in ("city", "state", "county") if k in f)
                pt = tuple(r[f[k]] for k in ("latitude", "longitude", "lat", "lng") if k in f)
                if r[zc] in seen:
                    p0, pt0 = seen[r[zc]]
                    if p0 != place:
                        fail(f"{tname} group {grp}: postal code {r[zc]} is in {p0} and in {place}")
                    if any(abs(a - b) > 0.0041 for a, b in zip(pt, pt0)):
                        fail(f"{tname} group {grp}: postal code {r[zc]} at {pt} and at {pt0}")
                else:
                    seen[r[zc]] = (place, pt)
            checks += 1
        scope = g.get("scope")
        if scope is not None and "state" in f:
            scope = scope if isinstance(scope, list) else [scope]
            states = set()
            for e in scope:
                if isinstance(e, str) and "," in e:
                    states.add(e.split(",")[1].strip())
                elif isinstance(e, str) and len(e) == 2:
                    states.add(e)
                elif isinstance(e, dict) and "state" in e:
                    states.add(e["state"])
                else:
                    states = None
                    break
            if states:
                out = [r[f["state"]] for r in data if r[f["state"]] not in states]
                if out:
                    fail(f"{tname} group {grp}: states {set(out)} outside the scope {states}")
                checks += 1
    # a self reference points at an earlier row (so no cycle)
    for cname, col in table["columns"].items():
        g = col.get("generator", {})
        if g.get("strategy") == "foreign_key" and g["ref"].split(".", 1)[0] == tname:
            pc = g["ref"].split(".", 1)[1]
            pos = {r[pc]: i for i, r in enumerate(data)}
            for i, r in enumerate(data):
                if r[cname] is not None and not pos.get(r[cname], i) < i:
                    fail(f"{tname}.{cname} at {r['_shape_seq']}: parent {r[cname]!r} is not an earlier row")
            if data and data[0][cname] is not None:
                fail(f"{tname}.{cname}: the first row has a parent")
            checks += 1
    # the copula: Spearman's rho of each pair near 6/pi asin(r/2)
    cc = schema.get("correlated_columns", {}).get(tname, [])
    thr = schema.get("generation", {}).get("output", {}).get("copula_threshold", 0.5)
    for a, b, rr in cc:
        if abs(rr) < thr or n < 200:
            continue
        pairs = [(x[a], x[b]) for x in data if x[a] is not None and x[b] is not None]
        rho, want = spearman(pairs), 6 / math.pi * math.asin(rr / 2)
        if abs(rho - want) > 4 / math.sqrt(len(pairs)) + 0.03:
            fail(f"{tname}: Spearman [{a}, {b}] {rho:.3f}, want {want:.3f}")
        checks += 1
    print(f"ok {tname}: {n} rows")

# business rules that the engine keeps row by row (cross_table >=, >, <=; cross_column <, >; constraint)
import re
for rule in schema.get("business_rules", []):
    m = re.match(r"\s*(\S+)\s*(>=|<=|==|>|<)\s*(\S+)\s*$", rule["rule"])
    left, op, right = m.groups()
    kind = rule["type"]
    if not ((kind == "cross_table" and op in (">=", ">", "<=")) or (kind == "cross_column" and op in ("<", ">"))
            or kind == "constraint"):
        continue
    lt, lc = left.split(".", 1) if "." in left else (rule["table"], left)
    data = rows[lt]
    if kind == "cross_table":
        rt, rc = right.split(".", 1)
        via = rule["via"]
        pk = schema["tables"][lt]["columns"][via]["generator"]["ref"].split(".", 1)[1]
        index = {r[pk]: r[rc] for r in rows[rt]}
        pairs = [(r[lc], index.get(r[via])) for r in data]
    else:
        rc = right.split(".", 1)[-1]
        try:
            num = float(rc)
            pairs = [(r[lc], num) for r in data]
        except ValueError:
            pairs = [(r[lc], r[rc]) for r in data]
    cmp = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b + 1e-9, "<": lambda a, b: a < b,
           "==": lambda a, b: a == b}[op]
    bad = [p for p in pairs if p[0] is not None and p[1] is not None and not cmp(p[0], p[1])]
    if bad:
        fail(f"rule {rule['name']}: {len(bad)} rows break '{rule['rule']}', e.g. {bad[0]}")
    checks += 1
    print(f"ok rule {rule['name']}")
print(f"ok: {checks} checks")
