#!/usr/bin/env bash
# test_profile_report.sh — `shape profile-report PROFILE -o report.html`:
# one self-contained page, checked in a real browser.
#
# How: a two-table profile (--split-by) whose names and values carry HTML
# ('<i>', '&', quotes, a '<script>' value, unicode) is written as a report;
# the page is parsed (Python's html.parser) for the structure, then, when
# Debian's chromium is installed (scripts/install-deps installs it), opened
# headless three times: a copy of the page without its Content-Security-
# Policy, alone in an empty folder, with the network log on (the DOM after
# the script ran: every table and column name, one histogram per numeric
# column, the hour/weekday/month charts of a time column, exactly one
# script element; the network log: no request made by the page — so the
# page itself fetches nothing, not merely the policy blocking it); the page
# itself for a screenshot; and a 2,000-column page opened filtered
# (#filter=): one column section left visible, the rest hidden. A windows
# file's page has the rows per window and each column's trends. Without
# chromium the browser part says SKIP (exit 77) after the static checks.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

python3 - <<'PY'
import json
rows = []
for i in range(1, 161):
    kind = "refund" if i % 4 == 0 else "order"
    if kind == "order":
        rows.append({"kind": "order", "id": i, "price": i * 1.5, "cnst": 7,
                     "status": ["new", "paid", "<script>alert(1)</script>", "caf\u00e9 \u2615"][i % 4 if i % 4 != 0 else 1],
                     'we<i>rd & "name\'': "x" * (i % 9), "gift": i % 5 == 0,
                     "_shape_event_time": 1700000000000 + i * 997000})
    else:
        rows.append({"kind": "refund", "amount": -i, "reason": "r%d" % (i % 3),
                     "_shape_event_time": 1700000000000 + i * 1000})
with open("rows.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
PY
run stream-profile rows.jsonl --split-by field:kind -o p.json; expect_ok "profile"
run profile-report p.json -o r.html; expect_ok "report"
grep -qF '"written":"r.html"' out || fail "no summary line"

python3 - p.json r.html <<'PY' || fail "the page's structure"
import json, sys, html.parser
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8").read()
assert "Content-Security-Policy" in text and "default-src 'none'" in text, "no CSP"
assert "prefers-color-scheme:dark" in text, "no dark theme"
for bad in ("http://", "https://", "<link", "@import", "url("):
    assert bad not in text, "the page names an outside resource: " + bad
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.stack = []; s.scripts = 0; s.text = {}
    def handle_starttag(s, tag, attrs):
        a = dict(attrs)
        s.scripts += tag == "script"
        cls = a.get("class", "")
        s.stack.append(cls)
        if tag in ("img", "iframe", "object", "embed", "link", "audio", "video", "source"):
            raise AssertionError("a fetching element: " + tag)
        for k in ("src", "href", "srcset", "action", "poster", "xlink:href"):
            if k in a and not a[k].startswith("#"):
                raise AssertionError("an attribute that fetches: %s=%s" % (k, a[k]))
    def handle_endtag(s, tag):
        if s.stack: s.stack.pop()
    def handle_data(s, d):
        if s.stack and s.stack[-1] in ("cname", "tname"):
            s.text.setdefault(s.stack[-1], []).append(d)
p = P(); p.feed(text)
assert p.scripts == 1, "%d script elements (a value was not escaped?)" % p.scripts
for t, v in doc["tables"].items():
    assert t in p.text["tname"], (t, p.text["tname"])
    for c in v["columns"]:
        assert c["name"] in p.text["cname"], (c["name"], "not a column heading")
assert 'we<i>rd & "name\'' in p.text["cname"]
PY

# A windows file: rows per window, each column's null share and mean over time, the newest window whole.
run stream-profile rows.jsonl --window tumbling --size 1m --windows w.jsonl; expect_ok "windows"
run profile-report w.jsonl -o w.html; expect_ok "windows report"
python3 - w.jsonl w.html <<'PY' || fail "the windows page"
import json, sys, re
wins = [json.loads(l) for l in open(sys.argv[1])]
text = open(sys.argv[2], encoding="utf-8").read()
assert text.count('class="chart rows"') == 1
names = {c["name"] for w in wins for c in w["profile"]["columns"]}
numeric = {c["name"] for w in wins for c in w["profile"]["columns"] if c["kind"] in ("int", "float")}
assert text.count('class="chart null-trend"') == len(names), (text.count('class="chart null-trend"'), len(names))
assert text.count('class="chart mean-trend"') == len(numeric)
for w in wins:
    assert ">%d</td>" % w["rows"] in text, w["rows"]
PY

# 2,000 columns: a page that opens filtered.
python3 -c '
import json
for i in range(2):
    print(json.dumps({"c%04d" % j: (i * j if j % 2 else "t%d" % (j % 5)) for j in range(2000)}))' >wide.jsonl
run stream-profile wide.jsonl -o wide.json; expect_ok "2000 columns"
run profile-report wide.json -o wide.html; expect_ok "2000 columns report"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
    echo "SKIP: chromium is not installed (scripts/install-deps installs it): the page was not opened in a browser"
    exit 77
fi
browse() {
    timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --disable-background-networking --disable-component-update --disable-extensions --disable-sync \
        --user-data-dir="$work/chrome" "$@" 2>>"$work/chrome.log"
}
mkdir alone
sed 's/<meta http-equiv="Content-Security-Policy"[^>]*>//' r.html >alone/r.html
! grep -q "Content-Security-Policy" alone/r.html || fail "the policy was not stripped"
browse --log-net-log="$work/net.json" --dump-dom "file://$work/alone/r.html" >dom.html || fail "chromium --dump-dom failed: $(tail -3 chrome.log)"
python3 - p.json dom.html net.json <<'PY' || fail "the page in the browser"
import json, sys, html.parser
doc = json.load(open(sys.argv[1]))
dom = open(sys.argv[2], encoding="utf-8").read()
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.stack = []; s.names = {"cname": [], "tname": []}; s.hist = {}; s.charts = []; s.scripts = 0
        s.section = None; s.shown = ""
    def handle_starttag(s, tag, attrs):
        a = dict(attrs); cls = a.get("class", "")
        s.stack.append((tag, cls, a.get("id")))
        s.scripts += tag == "script"
        if tag == "section" and "data-table" in a: s.section = a["data-table"]
        if tag == "svg" and cls.startswith("chart "):
            kind = cls.split()[1]
            s.charts.append((s.section, a.get("data-col"), kind))
    def handle_endtag(s, tag):
        while s.stack:
            if s.stack.pop()[0] == tag: break
    def handle_data(s, d):
        if s.stack and s.stack[-1][1] in s.names: s.names[s.stack[-1][1]].append(d)
        if s.stack and s.stack[-1][2] == "shown": s.shown += d
p = P(); p.feed(dom)
assert p.scripts == 1, p.scripts
assert "column sections" in p.shown, "the script did not run: %r" % p.shown
for t, v in doc["tables"].items():
    assert t in p.names["tname"], t
    for c in v["columns"]:
        assert c["name"] in p.names["cname"], c["name"]
        mine = [k for (sec, col, k) in p.charts if sec == t and col == c["name"]]
        if c["kind"] in ("int", "float"):
            assert mine.count("hist") == 1, (t, c["name"], mine)
        if c["kind"] == "temporal":
            assert {"hour", "weekday", "month"} <= set(mine), (t, c["name"], mine)
n_numeric = sum(c["kind"] in ("int", "float") for v in doc["tables"].values() for c in v["columns"])
assert sum(k == "hist" for (_, _, k) in p.charts) == n_numeric
net = json.load(open(sys.argv[3]))
for e in net["events"]:
    q = e.get("params", {})
    if "url" in q and "file://" in str(q.get("network_isolation_key", "")):
        raise AssertionError("the page made a request: " + q["url"])
PY
browse --window-size=1200,1600 --screenshot="$work/r.png" "file://$work/r.html" >/dev/null || fail "no screenshot: $(tail -3 chrome.log)"
[[ $(head -c 8 r.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "the screenshot is not a PNG"
[[ $(stat -c %s r.png) -gt 20000 ]] || fail "the screenshot is blank ($(stat -c %s r.png) bytes)"
browse --dump-dom "file://$work/wide.html#filter=c1999" >wide.dom || fail "chromium on 2000 columns"
python3 - wide.dom wide.json <<'PY' || fail "the 2000-column page, filtered"
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
n = len(json.load(open(sys.argv[2]))["tables"]["stream"]["columns"])
sections = re.findall(r'<details class="col"[^>]*>', dom)
shown = [s for s in sections if "hidden" not in s]
assert n >= 2000 and len(sections) == n, (len(sections), n)
assert len(shown) == 1 and 'data-name="c1999"' in shown[0], shown
assert "1 of %d column sections match" % n in dom
PY
echo "ok: profile-report writes one self-contained page: every name, a histogram per number, no request, filtered at 2000 columns"
