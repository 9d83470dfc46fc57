#!/usr/bin/env bash
# test_emit_hardening.sh — `shape emit` keeps the files it writes safe
# (issue 24, items 2, 3, 4 and 6 on the emit side).
#
# Why: each case once lost or doubled events: --checkpoint into a missing
# folder failed only after the whole stream was sent (a rerun sent it
# again); -o and --checkpoint on one path left one of them; a checkpoint of
# one file resumed into another skipped what that one never got; a file
# sink shortened or deleted after its checkpoint ended with events missing;
# an edited offset was taken as written; two writers on one file tore its
# lines.
# How: small runs (--max-events <= 2000) into files under the scratch
# folder; every refusal is checked for exit 2, one stderr line naming the
# problem, and for what it must not have done (nothing written, the files
# left as they were). The lock case holds the file with a second process
# (a paced run) and checks that it ends complete with whole lines.
set -euo pipefail

: "${SHAPE_BIN:?}"
source "$(dirname "$0")/cli_lib.sh"
source "$SHAPE_SOURCE_DIR/tests/support/reliability_rows.sh"  # report_input: rows of docs/RELIABILITY.md

# --- outputs checked before any work (items 2 and 6) ---------------------------------------
run emit retail --sink file -o out.jsonl --checkpoint /nonexistent/x.ck --max-events 100
expect_error 2 "--checkpoint /nonexistent/x.ck" "does not exist"
[[ ! -e out.jsonl ]] || fail "a refused run created its output"
report_input '`emit --sink file -o out.jsonl --checkpoint /nonexistent/x.ck`' contract_emit_hardening \
  'exit 2 naming `--checkpoint` and the missing folder; `out.jsonl` not created'
run emit retail --sink null --answer-key /nonexistent/k.jsonl --duplicate-fraction 0.1 --max-events 100
expect_error 2 "--answer-key /nonexistent/k.jsonl" "does not exist"
report_input '`emit --answer-key /nonexistent/k.jsonl`' contract_emit_hardening 'exit 2 before any event'
run emit retail --sink file -o same.jsonl --checkpoint same.jsonl --max-events 100
expect_error 2 "-o and --checkpoint name the same file"
[[ ! -e same.jsonl ]] || fail "a refused run created its output"
report_input '`emit -o same.jsonl --checkpoint same.jsonl`' contract_emit_hardening 'exit 2 `-o and --checkpoint name the same file`; `same.jsonl` not created'
run emit retail --sink file -o same.jsonl --dead-letter file://same.jsonl --max-events 100
expect_error 2 "--dead-letter"
run emit retail --sink file -o a.jsonl --to file://./a.jsonl --max-events 100
expect_error 2 "-o and --to name the same file"
report_input '`emit -o a.jsonl --to file://./a.jsonl`' contract_emit_hardening 'exit 2 `-o and --to name the same file`'
echo '{"config": {}}' >opts.json
cp opts.json opts.keep
run emit retail --sink file -o opts.json --options-file opts.json --max-events 100
expect_error 2 "is also the input (--options-file)"
cmp -s opts.json opts.keep || fail "the options file was overwritten"
run emit retail --sink file -o - --max-events 100
expect_error 2 "-o -: the file sink writes a file" "--sink console"
[[ ! -e ./- && ! -e ./-.checkpoint ]] || fail "-o - wrote a file named -"
report_input '`emit --sink file -o -`' contract_emit_hardening 'exit 2 naming `--sink console` for standard output; no file named `-` (it wrote one)'
report_input '`emit -o opts.json --options-file opts.json`' contract_emit_hardening 'exit 2 `is also the input (--options-file)`; the options file byte-identical'

# --- a checkpoint is bound to its destinations (item 3) -------------------------------------
run emit retail --sink file -o one.jsonl --checkpoint bound.ck --max-events 1000
expect_ok "first run"
run emit retail --sink file -o two.jsonl --checkpoint bound.ck --max-events 2000
expect_error 2 "written for destinations file://one.jsonl, not file://two.jsonl" "--fresh"
[[ ! -s two.jsonl ]] || fail "the refused resume wrote into two.jsonl"
report_input 'emit checkpoint of `one.jsonl` resumed with `-o two.jsonl`' contract_emit_hardening 'exit 2 `written for destinations file://one.jsonl, not file://two.jsonl`; `two.jsonl` empty'

# --- a file sink shortened or deleted after its checkpoint (item 3) --------------------------
run emit retail --sink file -o cut.jsonl --max-events 1000
expect_ok "checkpointed run"
head -n 300 cut.jsonl >cut.tmp && mv cut.tmp cut.jsonl
run emit retail --sink file -o cut.jsonl --max-events 2000
expect_error 2 "cut.jsonl holds 300 events but its checkpoint counts 1000 delivered" "--fresh"
[[ $(wc -l <cut.jsonl) -eq 300 ]] || fail "the refused resume changed cut.jsonl"
report_input 'file sink cut from 1,000 to 300 lines after its checkpoint' contract_emit_hardening 'exit 2 `holds 300 events but its checkpoint counts 1000 delivered`; the file still 300 lines'
rm cut.jsonl
run emit retail --sink file -o cut.jsonl --max-events 2000
expect_error 2 "cut.jsonl holds 0 events but its checkpoint counts 1000 delivered"
run emit retail --sink file -o cut.jsonl --max-events 2000 --fresh
expect_ok "--fresh rewrites it"
[[ $(wc -l <cut.jsonl) -eq 2000 ]] || fail "--fresh wrote $(wc -l <cut.jsonl) lines"
report_input 'file sink deleted after its checkpoint' contract_emit_hardening 'exit 2 `holds 0 events but ... 1000`; `--fresh` then writes all 2,000'

# --- an edited checkpoint is refused by its checksum (item 3) --------------------------------
run emit retail --sink file -o ed.jsonl --max-events 1000
expect_ok "run to edit"
grep -q '"checksum":"xxh3-128:' ed.jsonl.checkpoint || fail "no checksum in the checkpoint"
sed -i 's/"offset":1000/"offset":900/' ed.jsonl.checkpoint
run emit retail --sink file -o ed.jsonl --max-events 2000
expect_error 2 "ed.jsonl.checkpoint does not match its checksum" "--fresh"
[[ $(wc -l <ed.jsonl) -eq 1000 ]] || fail "the refused resume changed ed.jsonl"
report_input 'emit checkpoint offset edited 1000 → 900' "contract_emit_hardening, test_emit" 'exit 2 `does not match its checksum`; the file sink still 1,000 lines'
# a checkpoint written before checksums and destinations existed still resumes
python3 - <<'PY'
import json
d = json.load(open("ed.jsonl.checkpoint"))
del d["checksum"], d["destinations"]
d["offset"] = 1000
open("ed.jsonl.checkpoint", "w").write(json.dumps(d, separators=(",", ":")) + "\n")
PY
run emit retail --sink file -o ed.jsonl --max-events 2000 --json
expect_ok "an old checkpoint resumes"
python3 -c "import json,sys; d=json.load(open('$work/out')); assert d['start_offset']==1000 and d['end_offset']==2000, d" \
    || fail "old checkpoint resumed at the wrong offset"
[[ $(wc -l <ed.jsonl) -eq 2000 ]] || fail "resumed file has $(wc -l <ed.jsonl) lines"
report_input 'emit checkpoint without `checksum` and `destinations` (an older shape'"'"'s)' "contract_emit_hardening, test_emit" 'resumes at offset 1,000 and ends at 2,000'

# --- --timestamp event_time on a table without an event time (item 13) ----------------------
# (it was accepted and those tables went with the producer's time; the reference refuses them)
run emit retail --sink file -o ts.jsonl --timestamp event_time
expect_error 2 "--timestamp event_time: tables address, product_category, product, store, order_line have no event time" \
    "select tables that have one with --table (customer, promotion, order, return)" "--timestamp broker"
[[ ! -e ts.jsonl ]] || fail "the refused run created its output"
run emit retail --sink file -o ts.jsonl --timestamp event_time --table product --dry-run
expect_error 2 "none of the selected tables has one (product)"
run emit retail --sink file -o ts.jsonl --timestamp event_time --max-events 900   # customer only
expect_ok "a run that reaches only tables with an event time"
run emit retail --sink file -o ts2.jsonl --timestamp event_time --table order --table return
expect_ok "tables with an event time"
[[ $(wc -l <ts2.jsonl) -eq 5850 ]] || fail "ts2.jsonl has $(wc -l <ts2.jsonl) lines, not 5850"
report_input '`emit --timestamp event_time` with tables that have no event time' contract_emit_hardening \
  'exit 2 naming the tables without one (`address, product_category, product, store, order_line`) and those with one, before anything is written (they went with the producer'"'"'s time); `--table order --table return` sends its 5,850'

# --- one writer per checkpoint and per file (item 4) -----------------------------------------
"$SHAPE_BIN" emit retail --realtime --rate 400 --max-events 600 --sink file -o held.jsonl --no-progress \
    >first.out 2>first.err &
first=$!
for _ in $(seq 1 100); do [[ -s held.jsonl ]] && break; sleep 0.05; done
[[ -s held.jsonl ]] || fail "the first writer wrote nothing in 5 s"
run emit retail --sink file -o held.jsonl --max-events 100
expect_error 2 "checkpoint held.jsonl.checkpoint is in use by another shape process"
run emit retail --sink file -o held.jsonl --checkpoint other.ck --max-events 100
expect_error 2 "held.jsonl is being written by another process"
[[ ! -e other.ck && ! -e other.ck.lock ]] || fail "the refused writer left its checkpoint or lock"
kill -0 $first 2>/dev/null || fail "the first writer ended before the second one tried (the test proves nothing)"
wait $first || fail "the first writer failed: $(cat first.err)"
[[ $(wc -l <held.jsonl) -eq 600 ]] || fail "held.jsonl has $(wc -l <held.jsonl) lines, not 600"
python3 -c "
import json
for l in open('held.jsonl'): json.loads(l)
" || fail "held.jsonl has a torn line"
[[ ! -e held.jsonl.checkpoint.lock ]] || fail "the lock file outlived the run"
report_input 'a second `emit --sink file -o held.jsonl` while the first (600 events at 400/s) runs' contract_emit_hardening \
  'exit 2 `checkpoint held.jsonl.checkpoint is in use by another shape process`; with its own `--checkpoint`: exit 2 `held.jsonl is being written by another process`, no checkpoint or lock left; the first ends with 600 whole JSON lines and removes its lock file'
echo "emit hardening: ok"
