#!/usr/bin/env python3
"""event_time_check.py STREAM.jsonl [TABLE_ORDER.jsonl] — check a retail stream
emitted with `shape emit retail --order event-time` (flat JSON), independently
of the engine:

  * the head tables (product_category, product, promotion, store) come first,
    in dependency order; then only customer, address, order, order_line and
    return;
  * event times (signup_date, order_date, return_date) never decrease;
  * every foreign key's target came earlier in the stream; an address right
    after its customer's run, an order line right after its order's;
  * the retail rules of spec-core §4: cost < unit_price, order_date >=
    signup_date, return_date > order_date, refund_amount <= order_total,
    line_total > 0, order_total = the sum of its line totals;
  * each (table, seq) once; with TABLE_ORDER.jsonl (the --order table stream),
    the same row count per table.

Prints a summary line; exits 1 naming the first failure.
"""
import json
import sys
from collections import Counter

HEAD = ["product_category", "product", "promotion", "store"]
TIME = {"customer": "signup_date", "order": "order_date", "return": "return_date"}
ID = {"customer": "customer_id", "address": "address_id", "product_category": "category_id",
      "product": "product_id", "promotion": "promotion_id", "store": "store_id", "order": "order_id",
      "order_line": "order_line_id", "return": "return_id"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def cents(x):
    return int(round(x * 100))


seen = {t: {} for t in ID}
keys = set()
head_done = False
head_at = -1
last_time = ""
parent = {"address": None, "order_line": None}
lines_sum = Counter()
counts = Counter()
for n, line in enumerate(open(sys.argv[1])):
    e = json.loads(line)
    t = e["_shape_table"]
    key = (t, e["_shape_seq"])
    if key in keys:
        fail(f"line {n + 1}: {t}/{e['_shape_seq']} twice")
    keys.add(key)
    counts[t] += 1
    if t in HEAD:
        if head_done:
            fail(f"line {n + 1}: head table {t} after the timeline started")
        if HEAD.index(t) < head_at:
            fail(f"line {n + 1}: head table {t} out of dependency order")
        head_at = HEAD.index(t)
    else:
        head_done = True
    if t in TIME:
        if e[TIME[t]] < last_time:
            fail(f"line {n + 1}: {t} at {e[TIME[t]]} before {last_time}")
        last_time = e[TIME[t]]
        parent["address"] = e["customer_id"] if t == "customer" else parent["address"]
        parent["order_line"] = e["order_id"] if t == "order" else parent["order_line"]
        if t == "customer":
            parent["order_line"] = None
        elif t == "order":
            parent["address"] = None
        else:
            parent = {"address": None, "order_line": None}

    def need(table, value, what):
        if value is not None and value not in seen[table]:
            fail(f"line {n + 1}: {t} {what}={value} before its {table}")
        return seen[table].get(value)

    if t == "product_category":
        need("product_category", e["parent_category_id"], "parent_category_id")
    elif t == "product":
        need("product_category", e["category_id"], "category_id")
        if not e["cost"] < e["unit_price"]:
            fail(f"line {n + 1}: cost {e['cost']} >= unit_price {e['unit_price']}")
    elif t == "address":
        need("customer", e["customer_id"], "customer_id")
        if e["customer_id"] != parent["address"]:
            fail(f"line {n + 1}: address of customer {e['customer_id']} not right after it")
    elif t == "order":
        c = need("customer", e["customer_id"], "customer_id")
        need("store", e["store_id"], "store_id")
        need("address", e["shipping_address_id"], "shipping_address_id")
        need("promotion", e["promotion_id"], "promotion_id")
        if e["order_date"] < c["signup_date"]:
            fail(f"line {n + 1}: order_date {e['order_date']} before signup {c['signup_date']}")
    elif t == "order_line":
        need("order", e["order_id"], "order_id")
        need("product", e["product_id"], "product_id")
        need("promotion", e["promotion_id"], "promotion_id")
        if e["order_id"] != parent["order_line"]:
            fail(f"line {n + 1}: line of order {e['order_id']} not right after it")
        if not e["line_total"] > 0:
            fail(f"line {n + 1}: line_total {e['line_total']}")
        lines_sum[e["order_id"]] += cents(e["line_total"])
    elif t == "return":
        o = need("order", e["order_id"], "order_id")
        if not e["return_date"] > o["order_date"]:
            fail(f"line {n + 1}: return_date {e['return_date']} not after order_date {o['order_date']}")
        if cents(e["refund_amount"]) > cents(o["order_total"]):
            fail(f"line {n + 1}: refund {e['refund_amount']} > order_total {o['order_total']}")
    keep = {k: e[k] for k in ("signup_date", "order_date", "order_total") if k in e}
    seen[t][e[ID[t]]] = keep
for oid, o in seen["order"].items():
    if lines_sum[oid] != cents(o["order_total"]):
        fail(f"order {oid}: total {o['order_total']} but its lines sum to {lines_sum[oid] / 100}")
if len(sys.argv) > 2:
    ref = Counter(json.loads(l)["_shape_table"] for l in open(sys.argv[2]))
    if ref != counts:
        fail(f"row counts {dict(counts)} differ from --order table's {dict(ref)}")
print(f"ok: {sum(counts.values())} events, {len(seen['order'])} orders, times {min(x['signup_date'] for x in seen['customer'].values()) if seen['customer'] else '-'} .. {last_time}")
