#!/usr/bin/env python3
"""retail_equivalence.py BUILTIN_DIR SCHEMA_DIR — the retail domain written as
a generation schema (examples/domains/retail/retail.json) against the built-in
retail domain, both emitted with --sink jsonl:// at the same scale: the same
row counts, and the rules of reference/spec-core.md 4 statistically
equivalent (shares and means within bounds). Exits 1 on the first miss."""
import json, math, os, sys
from collections import Counter

def load(d):
    return {f[:-6]: [json.loads(l) for l in open(os.path.join(d, f))] for f in os.listdir(d) if f.endswith(".jsonl")}

a, b = load(sys.argv[1]), load(sys.argv[2])
def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)

for t in a:
    if len(a[t]) != len(b[t]):
        fail(f"{t}: {len(b[t])} rows, the built-in has {len(a[t])}")
    if list(a[t][0].keys()) != list(b[t][0].keys()):
        fail(f"{t}: columns {list(b[t][0])} != {list(a[t][0])}")

def close(name, x, y, tol):
    print(f"  {name:45s} built-in {x:10.4f}  schema {y:10.4f}")
    if abs(x - y) > tol:
        fail(f"{name}: {y} vs {x} (tolerance {tol})")

def share(rows, col, val):
    return sum(r[col] == val for r in rows) / len(rows)

def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs)

for t, col, vals in [("order", "status", ["completed", "returned", "shipped"]), ("customer", "loyalty_tier", ["Basic", "Gold"]),
                     ("product", "product_status", ["active"]), ("return", "reason", ["wrong_size"]),
                     ("promotion", "promo_type", ["percent_off"])]:
    for v in vals:
        close(f"{t}.{col} = {v}", share(a[t], col, v), share(b[t], col, v), 0.04)
close("order.promotion_id null share", share(a["order"], "promotion_id", None), share(b["order"], "promotion_id", None), 0.03)
close("customer.email null share", share(a["customer"], "email", None), share(b["customer"], "email", None), 0.02)
n = len(a["customer"])
no_addr = lambda d: 1 - len({r["customer_id"] for r in d["address"]}) / n
close("customers without an address (e^-1.5)", no_addr(a), no_addr(b), 0.04)
close("log mean product.unit_price", mean([math.log(r["unit_price"]) for r in a["product"]]),
      mean([math.log(r["unit_price"]) for r in b["product"]]), 0.15)
close("cost / unit_price", mean([r["cost"] / r["unit_price"] for r in a["product"]]),
      mean([r["cost"] / r["unit_price"] for r in b["product"]]), 0.03)
close("log mean order.order_total (orders with lines)", mean([math.log(r["order_total"]) for r in a["order"] if r["order_total"] > 0]),
      mean([math.log(r["order_total"]) for r in b["order"] if r["order_total"] > 0]), 0.25)
close("orders without lines (Poisson 2.5: e^-2.5)", share(a["order"], "order_total", 0.0), share(b["order"], "order_total", 0.0), 0.03)
close("order_line.quantity mean", mean([r["quantity"] for r in a["order_line"]]), mean([r["quantity"] for r in b["order_line"]]), 0.1)
for name, d in [("built-in", a), ("schema", b)]:
    per = Counter(r["customer_id"] for r in d["order"])
    if max(per.values()) > 50:
        fail(f"{name}: a customer has {max(per.values())} orders, above 50")
top = lambda d: Counter(r["customer_id"] for r in d["order"]).most_common(int(n * 0.2))
close("orders of the top 20% of customers (pareto)", sum(c for _, c in top(a)) / len(a["order"]),
      sum(c for _, c in top(b)) / len(b["order"]), 0.12)
ship = lambda d: {r["address_id"]: r["customer_id"] for r in d["address"]}
for name, d in [("built-in", a), ("schema", b)]:
    s = ship(d)
    wrong = [r for r in d["order"] if r["shipping_address_id"] is not None and s[r["shipping_address_id"]] != r["customer_id"]]
    if wrong:
        fail(f"{name}: {len(wrong)} orders ship to another customer's address")
wd = lambda d: Counter((int(r["order_date"][8:10]) + 0) for r in d["order"])
hour = lambda d: mean([1.0 if 10 <= int(r["order_date"][11:13]) <= 14 or 18 <= int(r["order_date"][11:13]) <= 22 else 0.0 for r in d["order"]])
close("orders in the peak hours 10-14, 18-22", hour(a), hour(b), 0.05)
dec = lambda d: share([{"m": r["order_date"][5:7]} for r in d["order"]], "m", "12")
# both keep order_date >= the customer's signup_date, which moves orders later.
# The built-in also ties a customer's signup to its number of orders (the
# customers with many orders signed up early, spec-core 4.5 "tenure"); a
# schema cannot say that, so its orders crowd later still. Known difference
# (docs/DOMAINS.md), bounded here so that it does not grow unnoticed.
close("orders in December", dec(a), dec(b), 0.05)
late = lambda d: share([{"y": r["order_date"][:4]} for r in d["order"]], "y", "2025")
close("orders in 2025 (after the signup rule)", late(a), late(b), 0.16)
print("ok: retail schema equivalent to the built-in")
