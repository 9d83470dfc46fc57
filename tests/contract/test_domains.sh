#!/usr/bin/env bash
# test_domains.sh — generation-schema domains (issue 22, docs/DOMAINS.md)
# through the command line, no network.
#
# Why: a schema domain must keep the promises of the built-in retail one:
# every foreign key points at an existing parent, computed totals equal the
# sum of their children, the same seed gives the same bytes, a killed run
# resumes to exactly the clean stream, and a bad schema is refused whole,
# before anything is sent, in one line naming table, column and what to
# change (exit 2).
# How: each example of examples/domains/ is emitted at two scales into
# jsonl:// and checked row by row by domain_invariants.py (an independent
# reading of the schema); then determinism, --table/--shard, resume after
# kill -9, --domain-path / SHAPE_DOMAIN_PATH, `shape domain check|sample`,
# and one bad schema per validation error.
set -euo pipefail

: "${SHAPE_BIN:?}"
here=$(cd "$(dirname "$0")" && pwd)
examples=$(cd "$here/../../examples/domains" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- every example at two scales: FK integrity, totals, first-per-parent, lookups, null rates, enums ---
for d in payments iot clickstream crm orgchart; do
    for scale in tiny small; do
        "$SHAPE_BIN" emit "$examples/$d.json" --scale "$scale" --sink "jsonl://$work/$d-$scale" --no-progress >/dev/null \
            || fail "$d at $scale did not emit"
        python3 "$here/domain_invariants.py" "$examples/$d.json" "$work/$d-$scale" >inv.out || { cat inv.out; fail "$d at $scale"; }
        echo "$d $scale: $(tail -1 inv.out)"
    done
done

# --- many children per parent (the reference's worked example: 200 readings a device) ---
"$SHAPE_BIN" emit "$here/../data/domains/sensors.json" --sink "jsonl://$work/sensors" --no-progress >/dev/null
python3 "$here/domain_invariants.py" "$here/../data/domains/sensors.json" "$work/sensors" >inv.out || { cat inv.out; fail "sensors"; }
echo "sensors (200 children a parent): $(tail -1 inv.out)"

# --- hierarchy, address, bootstrap, copula, constraints over the test datasets (tree, places, people) ---
"$SHAPE_BIN" emit "$here/../data/domains/strat.json" --sink "jsonl://$work/strat" --no-progress >/dev/null
python3 "$here/domain_invariants.py" "$here/../data/domains/strat.json" "$work/strat" >inv.out || { cat inv.out; fail "strat"; }
echo "strat (schema_strat.c strategies): $(tail -1 inv.out)"

# --- retail as a schema: the built-in's row counts at every preset, its rules, equivalent statistics ---
rs="$examples/retail/retail.json"
for p in fabric_demo small medium large warehouse xlarge xxl; do
    a=$("$SHAPE_BIN" domain check retail --scale "$p" | head -1 | grep -o '[0-9]* rows')
    b=$("$SHAPE_BIN" domain check "$rs" --scale "$p" | head -1 | grep -o '[0-9]* rows')
    [[ "$a" == "$b" ]] || fail "retail schema at $p: $b, the built-in $a"
done
# xxxl (100 orders per customer on average) cannot keep "at most 50 orders per customer": refused
set +e
"$SHAPE_BIN" domain check "$rs" --scale xxxl >/dev/null 2>err.txt
rc=$?
set -e
[[ $rc == 2 ]] && grep -q "above the cap of 50" err.txt || fail "retail schema at xxxl should be refused by its cap"
for scale in fabric_demo small; do
    "$SHAPE_BIN" emit "$rs" --scale "$scale" --sink "jsonl://$work/rs-$scale" --no-progress >/dev/null
    python3 "$here/domain_invariants.py" "$rs" "$work/rs-$scale" >inv.out || { cat inv.out; fail "retail schema at $scale"; }
    echo "retail schema $scale: $(tail -1 inv.out)"
done
"$SHAPE_BIN" emit retail --sink "jsonl://$work/rb-small" --no-progress >/dev/null
python3 "$here/retail_equivalence.py" "$work/rb-small" "$work/rs-small" >eq.out || { cat eq.out; fail "retail schema not equivalent"; }
tail -1 eq.out

# --- determinism: same seed, same bytes; another seed, other bytes ---
"$SHAPE_BIN" emit "$examples/payments.json" --scale tiny --no-progress >a.jsonl 2>/dev/null
"$SHAPE_BIN" emit "$examples/payments.json" --scale tiny --no-progress >b.jsonl 2>/dev/null
"$SHAPE_BIN" emit "$examples/payments.json" --scale tiny --seed 43 --no-progress >c.jsonl 2>/dev/null
cmp -s a.jsonl b.jsonl || fail "same seed gave different bytes"
cmp -s a.jsonl c.jsonl && fail "another seed gave the same bytes"
[[ $(wc -l <a.jsonl) == $(wc -l <c.jsonl) ]] || fail "another seed changed the row counts"

# --- --table keeps the rows; --shard i/n splits the stream ---
"$SHAPE_BIN" emit "$examples/payments.json" --scale tiny --table chargeback --no-progress >t.jsonl 2>/dev/null
grep '"_shape_table":"chargeback"' a.jsonl | cmp -s - t.jsonl || fail "--table chargeback differs from its rows in the whole stream"
for i in 0 1 2; do
    "$SHAPE_BIN" emit "$examples/iot.json" --scale tiny --shard "$i/3" --no-progress >"s$i.jsonl" 2>/dev/null
done
"$SHAPE_BIN" emit "$examples/iot.json" --scale tiny --no-progress >iot.jsonl 2>/dev/null
cat s0.jsonl s1.jsonl s2.jsonl | sort | cmp -s - <(sort iot.jsonl) || fail "three shards are not the stream"

# --- any row on its own: sample --from equals the stream's rows ---
"$SHAPE_BIN" domain sample "$examples/clickstream.json" --table page_view --from 700 -n 3 >smp.jsonl
"$SHAPE_BIN" emit "$examples/clickstream.json" --table page_view --no-progress 2>/dev/null | sed -n '701,703p' >ref.jsonl
cmp -s smp.jsonl ref.jsonl || fail "domain sample --from 700 differs from rows 700..702 of the stream"
# the same for the strategies of schema_strat.c (hierarchy, bootstrap, copula, constraints, a self reference)
"$SHAPE_BIN" domain sample "$examples/orgchart.json" --table employee --from 1500 -n 3 >smp.jsonl
"$SHAPE_BIN" emit "$examples/orgchart.json" --table employee --no-progress 2>/dev/null | sed -n '1501,1503p' >ref.jsonl
cmp -s smp.jsonl ref.jsonl || fail "orgchart: domain sample --from 1500 differs from rows 1500..1502 of the stream"
"$SHAPE_BIN" emit "$examples/orgchart.json" --scale tiny --seed 5 --no-progress >o1.jsonl 2>/dev/null
"$SHAPE_BIN" emit "$examples/orgchart.json" --scale tiny --seed 5 --no-progress >o2.jsonl 2>/dev/null
cmp -s o1.jsonl o2.jsonl || fail "orgchart: same seed gave different bytes"

# --- resume after kill -9 equals a clean run ---
"$SHAPE_BIN" emit "$examples/clickstream.json" --scale tiny --no-progress >clean.jsonl 2>/dev/null
total=$(wc -l <clean.jsonl)
cmd=("$SHAPE_BIN" emit "$examples/clickstream.json" --scale tiny --realtime --rate 8000 --batch-events 100
     --checkpoint-every 100 --sink file -o out.jsonl --no-progress)
for pause in 0.3 0.4; do
    "${cmd[@]}" >/dev/null 2>&1 &
    pid=$!
    sleep "$pause"
    kill -KILL $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
done
"${cmd[@]}" >/dev/null 2>&1 || fail "the resumed run failed"
awk '!seen[$0]++' out.jsonl | cmp -s - clean.jsonl || fail "resumed stream differs from a clean run"
echo "resume: $(wc -l <out.jsonl) lines written for $total events"
# the checkpoint of one schema does not resume another
sed 's/"seed": 11/"seed": 12/' "$examples/clickstream.json" >other.json
cp "$examples/pages.json" .
set +e
"$SHAPE_BIN" emit other.json --scale tiny --sink file -o out.jsonl --checkpoint out.jsonl.checkpoint --no-progress >/dev/null 2>err.txt
rc=$?
set -e
[[ $rc == 2 ]] || fail "another schema resumed the checkpoint of clickstream (exit $rc)"

# --- named schemas: --domain-path and SHAPE_DOMAIN_PATH ---
"$SHAPE_BIN" emit payments --domain-path "$examples" --scale tiny --no-progress >n1.jsonl 2>/dev/null
SHAPE_DOMAIN_PATH="/nonexistent:$examples" "$SHAPE_BIN" emit payments --scale tiny --no-progress >n2.jsonl 2>/dev/null
cmp -s n1.jsonl a.jsonl && cmp -s n2.jsonl a.jsonl || fail "a named schema differs from its path"

# --- dry run and check: the tables in order with their row counts ---
"$SHAPE_BIN" emit "$examples/payments.json" --dry-run >dry.txt
grep -q "account  *offsets 0..1000" dry.txt && grep -q "chargeback  *offsets 21800..21876" dry.txt || { cat dry.txt; fail "dry run"; }
"$SHAPE_BIN" domain check "$examples/payments.json" >check.txt
grep -q "^payments: valid; scale small, seed 42, 4 tables, 21876 rows" check.txt || { cat check.txt; fail "domain check"; }

# --- bounded memory: peak RSS flat from 10^4 to 10^7 rows of one table ---
flat="$here/../data/domains/flat.json"
peak() { # peak RSS in KB of: shape emit ARGS... --sink null
    python3 - "$SHAPE_BIN" "$@" <<'EOF'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "emit"] + sys.argv[2:] + ["--sink", "null", "--no-progress"], check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF
}
small_kb=$(peak "$flat" --scale e4 --table event)
if [[ "${SHAPE_SANITIZED:-0}" != 1 ]]; then
    large_kb=$(peak "$flat" --scale e7 --table event)
    # the built-in retail through the same runtime, as many events of one table
    retail_kb=$(peak retail --scale large --table order_line --max-events 10000000)
    echo "peak RSS: 10^4 rows ${small_kb} KB, 10^7 rows ${large_kb} KB; built-in retail, 10^7 rows: ${retail_kb} KB"
    # 10^4 rows never fill the event queue (16 batches); 10^7 do, as the built-in's
    # do: what grows is the queue, not the rows
    (( large_kb < small_kb + 24576 )) || fail "peak RSS grows with the rows: ${small_kb} KB -> ${large_kb} KB"
    (( large_kb < retail_kb + 8192 )) || fail "peak RSS at 10^7 rows ${large_kb} KB, the built-in's ${retail_kb} KB"
else
    # under ASan the peak RSS is its shadow memory and quarantine, not ours, and
    # 2 x 10^7 rows cost ~30 s: the plain run measures; ASan watches the 10^4 run
    echo "peak RSS: not measured under the sanitizers (the plain run does)"
fi

# --- bad schemas: one line, table + column + what to change, exit 2, nothing sent ---
base="$examples/payments.json"
# bad EXPR MESSAGE: EXPR is a Python statement editing the schema `s`. The
# cases are listed first and written by one python3 run (bad-N.json), then
# each is emitted.
bad_exprs=() bad_msgs=()
bad() { bad_exprs+=("$1"); bad_msgs+=("$2"); }
bad 'gen("card","network")["strategy"]="wavelet"' "table 'card', column 'network': unknown strategy 'wavelet'"
bad 'gen("card","network")["colour"]=1' "table 'card', column 'network': unknown parameter of weighted_enum 'colour'"
bad 'gen("transaction","amount")["params"]["skew"]=1' "table 'transaction', column 'amount': unknown distribution parameter 'skew'"
bad 'gen("card","account_id")["ref"]="acct.account_id"' "table 'card', column 'account_id': foreign key to missing table 'acct'"
bad 'gen("card","account_id")["ref"]="account.id"' "table 'card', column 'account_id': foreign key to missing column 'account.id'"
bad 'T["account"]["columns"]["owner_card"]={"name":"owner_card","type":"integer","generator":{"strategy":"foreign_key","ref":"card.card_id"}}' \
    "foreign keys form a cycle"
bad 'gen("card","network")["values"]["visa"]=-1' "table 'card', column 'network': weight of 'visa' is negative"
bad 'gen("card","network")["values"]={"visa":0,"amex":0}' "table 'card', column 'network': weights sum to 0"
bad 'T["transaction"]["columns"]["risk_score"]["null_rate"]=1.5' "table 'transaction', column 'risk_score': null_rate 1.5 is outside [0, 1]"
bad 'gen("account","account_ref")["format"]="ACC-{account_id:8"' "table 'account', column 'account_ref': pattern 'ACC-{account_id:8' has a '{' that is never closed"
bad 'gen("account","account_ref")["format"]="ACC-{nosuch}"' "table 'account', column 'account_ref': pattern token '{nosuch}' names no earlier column"
bad 'T["card"]["columns"]["network"]["type"]="integer"' "table 'card', column 'network': strategy weighted_enum produces string values, not integer"
bad 'T["transaction"]["columns"]["transaction_id"]["type"]="timestamp"' "table 'transaction', column 'transaction_id': strategy uuid produces string values, not timestamp"
bad 'gen("transaction","fee")["expression"]="amount * nosuch"' "table 'transaction', column 'fee': formula 'amount * nosuch': names no earlier column"
bad 'gen("card","spend_total")["child_column"]="amt"' "table 'card', column 'spend_total': computed over missing column 'transaction.amt'"
bad 'gen("chargeback","disputed_amount")["source_column"]="amt"' "table 'chargeback', column 'disputed_amount': lookup of missing column 'transaction.amt'"
bad 's["schema_version"]=2' "\"schema_version\" must be 1"
bad 's["tabels"]={}' "unknown top-level key 'tabels'"
bad 'T["card"]["columns"]["network"]["type"]="colour"' "table 'card', column 'network': unknown type 'colour'"
bad 'gen("transaction","card_id")["params"]["max_per_parent"]=5' "table 'transaction', column 'card_id': 19200 rows over 1600 parents is 12.0 per parent, above the cap of 5"
bad 's["business_rules"]=[{"name":"after","type":"cross_table","rule":"chargeback.filed_at >= transaction.authorized_at","via":"reason"}]' \
    "business rule 'after': 'via' must be a foreign key of chargeback to transaction"
bad 's["business_rules"]=[{"name":"cheap","type":"cross_column","table":"transaction","rule":"fee < currency"}]' \
    "business rule 'cheap': compares float with string"
# the strategies of schema_strat.c (one unit test per refusal in tests/unit/test_schema_strat.c)
bad 'T["account"]["columns"]["unit"]={"name":"unit","type":"string","generator":{"strategy":"hierarchy","dataset":"org_units","field":"team"}}' \
    "table 'account', column 'unit': hierarchy needs 'levels'"
bad 'T["account"]["columns"]["city"]={"name":"city","type":"string","generator":{"strategy":"address","field":"town"}}' \
    "table 'account', column 'city': unknown address field 'town'"
bad 's["correlated_columns"]={"transaction":[["amount","fee",0.8]]}' \
    "table 'transaction', column 'fee': correlated_columns: the copula drives distribution (not zipf) and empirical columns"
bad 's["business_rules"]=[{"name":"cheap","type":"constraint","table":"transaction","rule":"fee < account.credit_limit"}]' \
    "business rule 'cheap': a constraint compares a column with a number or an earlier column of its table"
python3 - "$base" "${bad_exprs[@]}" <<'EOF'
import copy, json, sys
base = json.load(open(sys.argv[1]))
for i, edit in enumerate(sys.argv[2:]):
    s = copy.deepcopy(base)
    T = s["tables"]
    def gen(t, c): return T[t]["columns"][c]["generator"]
    exec(edit)
    with open("bad-%d.json" % i, "w") as f:
        f.write(json.dumps(s))
EOF
cp "$examples/device_models.json" "$examples/pages.json" "$examples/org_units.json" . 2>/dev/null || true
for i in "${!bad_exprs[@]}"; do
    rm -f sent.jsonl
    set +e
    "$SHAPE_BIN" emit "bad-$i.json" --sink file -o sent.jsonl --no-progress >/dev/null 2>err.txt
    rc=$?
    set -e
    [[ $rc == 2 ]] || fail "exit $rc (want 2) for: ${bad_exprs[i]}"
    [[ $(wc -l <err.txt) == 1 ]] || { cat err.txt; fail "not one line for: ${bad_exprs[i]}"; }
    grep -qF -- "${bad_msgs[i]}" err.txt || { cat err.txt; fail "message lacks '${bad_msgs[i]}' for: ${bad_exprs[i]}"; }
    [[ ! -s sent.jsonl ]] || fail "events were sent for: ${bad_exprs[i]}"
    echo "refused: $(cat err.txt)"
done
echo "test_domains: ok"
