#!/usr/bin/env bash
# test_stream_checkpoint_binding.sh — a stream-read / stream-profile
# checkpoint only resumes the file it counts into, unedited, one run at a
# time (issue 24, items 3 and 4 on the reading side).
#
# Why: a file-source checkpoint resumed over a replaced or truncated file
# read nothing and reported the old rows; an edited number in a checkpoint
# went unnoticed; two runs on one checkpoint overwrote each other's
# positions.
# How: a 3,000-line file read 1,000 lines with a checkpoint, then the file
# replaced (mv), truncated in place, rewritten in place with the same size,
# and grown (appended: the only change that resumes); an edited counter in
# a stream-profile checkpoint; a held checkpoint (a reader blocked on a
# slow stdin) refused to a second process.
set -euo pipefail

: "${SHAPE_BIN:?}"
source "$(dirname "$0")/cli_lib.sh"
source "$SHAPE_SOURCE_DIR/tests/support/reliability_rows.sh"  # report_input: rows of docs/RELIABILITY.md

"$SHAPE_BIN" emit retail --max-events 3000 --no-progress >in.jsonl 2>/dev/null
cp in.jsonl keep.jsonl
first() {  # a fresh checkpoint ck after 1,000 lines of in.jsonl
    rm -f ck
    run stream-read in.jsonl --checkpoint ck --max-events 1000 --batch-size 500 --format null
    expect_ok "first read"
    grep -q '"source_file":{"dev":' ck || fail "no file identity in the checkpoint: $(cat ck)"
}

first
"$SHAPE_BIN" emit retail --max-events 3000 --seed 7 --no-progress >other.jsonl 2>/dev/null
mv other.jsonl in.jsonl
run stream-read in.jsonl --checkpoint ck --format null
expect_error 2 "checkpoint ck counts into in.jsonl, which was replaced by another file"
report_input 'stream-read checkpoint (1,000 of 3,000 lines) resumed over a replaced file (`mv`)' contract_stream_checkpoint_binding \
  'exit 2 `which was replaced by another file (other device or inode)` (it read nothing and reported the old rows)'

cp keep.jsonl in.jsonl
first
truncate -s 1000 in.jsonl
run stream-read in.jsonl --checkpoint ck --format null
expect_error 2 "which was truncated"
report_input '... over the same file truncated to 1,000 bytes' contract_stream_checkpoint_binding 'exit 2 `which was truncated`'

cp keep.jsonl in.jsonl
first
python3 - <<'PY'
with open("in.jsonl", "r+b") as f:
    f.write(b"{\"x\"")  # same size, other first bytes
PY
run stream-read in.jsonl --checkpoint ck --format null
expect_error 2 "which was rewritten (its first bytes differ)"
report_input '... over the same file with other first bytes, same size' contract_stream_checkpoint_binding 'exit 2 `which was rewritten (its first bytes differ)`'

cp keep.jsonl in.jsonl
first
touch -d '2001-01-01' in.jsonl
run stream-read in.jsonl --checkpoint ck --format null
expect_error 2 "which was rewritten in place (same size, another modification time)"
report_input '... over the same file with another modification time, same size' contract_stream_checkpoint_binding 'exit 2 `which was rewritten in place`'

cp keep.jsonl in.jsonl
first
"$SHAPE_BIN" emit retail --max-events 3500 --no-progress 2>/dev/null | tail -n 500 >>in.jsonl
run stream-read in.jsonl --checkpoint ck
expect_ok "a grown file resumes"
[[ $(wc -l <"$work/out") -eq 2500 ]] || fail "the resumed read printed $(wc -l <"$work/out") rows, not 2500"
report_input '... over the same file grown by 500 lines' contract_stream_checkpoint_binding 'resumes: prints exactly 2,500 rows'

# an edited counter in a stream-profile checkpoint
rm -f pck
run stream-profile keep.jsonl -o p.json --checkpoint pck --max-events 1000 --batch-size 500
expect_ok "profile with a checkpoint"
sed -i 's/"batches_read":2/"batches_read":3/' pck
grep -q '"batches_read":3' pck || fail "could not edit the checkpoint"
run stream-profile keep.jsonl -o p2.json --checkpoint pck
expect_error 2 "checkpoint pck does not match its checksum" "use another file"
[[ ! -e p2.json ]] || fail "a refused resume wrote -o"
report_input 'stream-profile checkpoint counter edited (`batches_read` 2 → 3)' contract_stream_checkpoint_binding 'exit 2 `does not match its checksum`; `-o` not written'

# one run per checkpoint: the first holds it while it reads a slow stdin
(sleep 3; head -n 10 keep.jsonl) | "$SHAPE_BIN" stream-read - --checkpoint held.ck --format null 2>first.err &
holder=$!
for _ in $(seq 1 100); do [[ -e held.ck.lock ]] && break; sleep 0.02; done
[[ -e held.ck.lock ]] || fail "the first reader took no lock in 2 s"
run stream-read keep.jsonl --checkpoint held.ck --format null
expect_error 2 "checkpoint held.ck is in use by another shape process"
run stream-profile keep.jsonl -o held.json --checkpoint held.ck
expect_error 2 "checkpoint held.ck is in use by another shape process"
kill -0 $holder 2>/dev/null || fail "the first reader ended before the others tried (the test proves nothing)"
wait $holder || fail "the first reader failed: $(cat first.err)"
[[ ! -e held.ck.lock ]] || fail "the lock file outlived the run"
report_input 'a second stream-read / stream-profile on a checkpoint a running stream-read holds' contract_stream_checkpoint_binding \
  'exit 2 `checkpoint held.ck is in use by another shape process`; the lock file gone after the first ends'
echo "stream checkpoint binding: ok"
