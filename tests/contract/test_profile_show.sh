#!/usr/bin/env bash
# test_profile_show.sh — `shape profile-show PROFILE.json`: the key figures
# of a known profile, piped (plain ASCII, no escapes, nothing cut), on a
# terminal (script(1) from util-linux: bold headings, block bars, every line
# within the terminal's width) and as --json; the --state file of the same
# run shows the same, so do a --split-by state and its document, and a
# windows file and its window states file; refusals are one line, exit 2.
#
# How: 200 generated rows whose exact figures are known (ids 1..200, qty
# 1..4 in turn, a status of three values with counts 67/67/66, every 4th
# note null, every 5th row gifted, event times one second apart) are
# profiled with stream-profile, then shown.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

for i in $(seq 1 200); do
    st=$([ $((i % 3)) -eq 0 ] && echo shipped || { [ $((i % 3)) -eq 1 ] && echo new || echo paid; })
    note=$([ $((i % 4)) -eq 0 ] && echo null || echo "\"n$((i % 7))\"")
    gift=$([ $((i % 5)) -eq 0 ] && echo true || echo false)
    printf '{"id": %d, "qty": %d, "price": %d.25, "status": "%s", "note": %s, "gift": %s, "_shape_event_time": %d}\n' \
        "$i" $((i % 4 + 1)) "$i" "$st" "$note" "$gift" $((1700000000000 + i * 1000))
done >rows.jsonl
run stream-profile rows.jsonl -o p.json --state p.state --name orders; expect_ok "profile"

run profile-show p.json; expect_ok "piped"
cp out piped.txt
has() { grep -qF -- "$1" piped.txt || fail "piped output lacks '$1'"; }
has "table orders: 200 rows, 7 columns"
grep -Eq '^  id +int +0 \(0\.0%\) +~?[0-9]+  min 1  max 200  mean 100\.5$' piped.txt || fail "the id line"
grep -Eq '^  qty +int .* min 1  max 4  mean 2\.5$' piped.txt || fail "the qty line"
grep -Eq "^  status +text .*top 'new' 34%, 'paid' 34%, 'shipped' 33%" piped.txt || fail "the status top values"
grep -Eq '^  note +text +50 \(25\.0%\)' piped.txt || fail "the note nulls"
grep -Eq '^  gift +bool .*true 40  false 160$' piped.txt || fail "the gift counts"
has "2023-11-14T22:13:21Z .. 2023-11-14T22:16:40Z"
grep -Eq '^ +[ .:=+*#@-]{40}  1 \.\. 200$' piped.txt || fail "an ASCII histogram under id"
grep -Eq '^ +@@@@  1 \.\. 4$' piped.txt || fail "qty: one even bar per value"
! grep -q $'\x1b' piped.txt || fail "escape sequences in piped output"
! LC_ALL=C grep -q $'[\x80-\xff]' piped.txt || fail "non-ASCII bytes in piped output (the values are ASCII)"

run profile-show p.json --json; expect_ok "--json"
[[ $(wc -l <out) -eq 1 ]] || fail "--json is one line"
python3 - out <<'PY' || fail "--json figures"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["tables"][0]
assert t["name"] == "orders" and t["rows"] == 200, t
c = {x["name"]: x for x in t["columns"]}
assert (c["id"]["min"], c["id"]["max"], c["id"]["null_count"]) == (1, 200, 0), c["id"]
assert c["note"]["null_count"] == 50 and c["gift"]["true_count"] == 40, (c["note"], c["gift"])
assert c["status"]["top"][0] == ["new", 67], c["status"]
PY

if command -v script >/dev/null; then
    script -qc "stty cols 72 rows 50; $SHAPE_BIN profile-show $work/p.json" /dev/null </dev/null >tty.raw
    tr -d '\r' <tty.raw >tty.txt
    grep -qF $'\x1b[1mtable orders: 200 rows, 7 columns' tty.txt || fail "no bold heading on a terminal: $(head -3 tty.txt)"
    grep -q $'\xe2\x96\x88' tty.txt || fail "no block bars on a terminal"
    sed 's/\x1b\[[0-9;]*m//g' tty.txt | while IFS= read -r line; do
        [[ ${#line} -le 72 ]] || fail "a line wider than the terminal (${#line}): $line"
    done
    grep -Eq '^  id +int ' tty.txt || fail "the id line on a terminal"
else
    echo "SKIP (part): script(1) is not installed: no terminal check"
fi

# A profiler state shows as the document made from it.
run profile-show p.state; expect_ok "a state file"
cmp -s out piped.txt || fail "the state shows otherwise than its document: $(diff out piped.txt | head -5)"
run profile-show p.state --top-n 7; expect_error 2 "p.state" "different profiler configuration"

# A --split-by state shows as the split document; the same table in two lines is merged.
run stream-profile rows.jsonl --split-by field:status -o split.json --state split.state; expect_ok "split"
run profile-show split.json; expect_ok "split document"; cp out split.txt
run profile-show split.state; expect_ok "split state"
cmp -s out split.txt || fail "the split state shows otherwise than its document: $(diff out split.txt | head -5)"
grep -qF "table new: 67 rows" split.txt || fail "the split table 'new'"
cat split.state split.state >twice.state
run profile-show twice.state --json; expect_ok "a split state twice"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [t["rows"] for t in d["tables"]] == [134, 134, 132], d["tables"]' out ||
    fail "the same table in two lines is not merged"

# A windows file and a window states file: one line per window, the columns over the windows.
run stream-profile rows.jsonl --window tumbling --size 1m --windows w.jsonl --state ws.jsonl --name orders; expect_ok "windows"
run profile-show w.jsonl; expect_ok "a windows file"; cp out windows.txt
grep -qF "windows: 4 tumbling, 2023-11-14T22:13:00Z .. 2023-11-14T22:17:00Z, 200 rows" windows.txt || fail "the windows heading"
grep -Eq '^  2023-11-14T22:14:00Z  2023-11-14T22:15:00Z +60$' windows.txt || fail "the second window's line"
grep -Eq '^  note +nulls [_.:=+*#-]{4}  2[0-9.]+% \.\. 2[0-9.]+%$' windows.txt || fail "the note column's null share over the windows"
grep -Eq '^ +mean  _[_.:=+*#-]{2}#  [0-9.]+ \.\. [0-9.]+$' windows.txt || fail "the id mean rises over the windows"
run profile-show ws.jsonl; expect_ok "a window states file"
cmp -s out windows.txt || fail "the window states show otherwise than the windows file: $(diff out windows.txt | head -5)"
run profile-show w.jsonl --json; expect_ok "windows --json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["windows"]
assert [w["rows"] for w in d] == [39, 60, 60, 41], d
assert d[1]["tables"][0]["columns"][0]["min"] == 40, d[1]
' out || fail "windows --json figures"
head -c -20 w.jsonl >torn.jsonl
run profile-show torn.jsonl; expect_ok "a torn windows file"
grep -qF "line 4 is torn" err || fail "no note on the torn line"
grep -qF "windows: 3 tumbling" out || fail "the torn line is not skipped"
printf '{"kind": "tumbling", "start_us": 1, "end_us": 2}\n' >bad.jsonl
run profile-show bad.jsonl; expect_error 2 "bad.jsonl line 1" "not a profile document"

run profile-show missing.json; expect_error 2 "cannot read the profile" "missing.json"
echo '{"a": 1}' >not.json
run profile-show not.json; expect_error 2 "not a profile document"
echo "ok: profile-show prints the key figures piped, on a terminal and as --json, of documents, states and windows files"
