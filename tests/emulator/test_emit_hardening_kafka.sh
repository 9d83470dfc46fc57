#!/usr/bin/env bash
# test_emit_hardening_kafka.sh — `shape emit` into Kafka refuses before it
# sends (issue 24, items 3, 6 and 7).
#
# Why: each case once cost a user the whole stream: `--partition 5` on a
# topic of one partition dead-lettered every event and still reported
# complete (exit 0); `--checkpoint /nonexistent/x` sent all 21,750 events
# and then failed (a rerun sent them again); a checkpoint of topic ea
# resumed into topic eb skipped its first 5,000 events.
# How: topics of one partition on the broker; after each refusal the topic's
# high watermark (kcat -Q) shows that nothing was sent.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../support/reliability_rows.sh"  # report_input: rows of docs/RELIABILITY.md
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
cd "$TEST_TMP"

ea=$(unique_topic ea); eb=$(unique_topic eb)
kafka_up "$ea:1" "$eb:1"
export SHAPE_CONFIRM_REMOTE=0

# the number of messages in partition 0 of topic $1
high() { kcat -b "$BOOTSTRAP" -Q -t "$1:0:-1" 2>/dev/null | awk '{print $NF}'; }

expect_refusal() {  # expect_refusal TEXT: exit 2, one line naming TEXT
  [[ $rc -eq 2 ]] || fail "expected exit 2, got $rc: $(cat err.txt)"
  [[ $(wc -l <err.txt) -eq 1 ]] || fail "expected one stderr line: $(cat err.txt)"
  grep -qF -- "$1" err.txt || fail "stderr lacks '$1': $(cat err.txt)"
}

# --- item 7: a partition the topic does not have ---------------------------------------
rc=0
"$SHAPE_BIN" emit retail --max-events 200 --partition 5 --sink "kafka://$BOOTSTRAP/$ea" --no-progress \
    >out.txt 2>err.txt || rc=$?
expect_refusal "--partition 5: topic '$ea' has 1 partition (0..0)"
[[ $(high "$ea") -eq 0 ]] || fail "the refused run sent $(high "$ea") messages"
# the partition it has is taken
"$SHAPE_BIN" emit retail --max-events 200 --partition 0 --sink "kafka://$BOOTSTRAP/$ea" --no-progress \
    >/dev/null 2>err.txt || fail "--partition 0: $(cat err.txt)"
wait_stable "$ea" 0 200
report_input '`emit --partition 5` into a 1-partition topic' emulator_emit_hardening \
  'exit 2 `--partition 5: topic ... has 1 partition (0..0)`, 0 messages sent (it dead-lettered all and reported complete, exit 0); `--partition 0` sends its 200'

# --- item 6: the checkpoint's folder is checked before anything is sent -----------------
rc=0
"$SHAPE_BIN" emit retail --max-events 2000 --checkpoint /nonexistent/x --sink "kafka://$BOOTSTRAP/$ea" \
    --no-progress >out.txt 2>err.txt || rc=$?
expect_refusal "--checkpoint /nonexistent/x: the folder /nonexistent does not exist"
[[ $(high "$ea") -eq 200 ]] || fail "the refused run sent $(( $(high "$ea") - 200 )) messages"
report_input '`emit --checkpoint /nonexistent/x --sink kafka://...`' emulator_emit_hardening \
  'exit 2 before sending: the topic'"'"'s high watermark stays at 200 (it sent all 21,750 events, then failed)'

# --- item 3: a checkpoint of topic ea does not resume into topic eb ----------------------
"$SHAPE_BIN" emit retail --max-events 5000 --checkpoint ea.ck --sink "kafka://$BOOTSTRAP/$ea" --no-progress \
    >/dev/null 2>err.txt || fail "emit into $ea: $(cat err.txt)"
rc=0
"$SHAPE_BIN" emit retail --checkpoint ea.ck --sink "kafka://$BOOTSTRAP/$eb" --no-progress >out.txt 2>err.txt \
    || rc=$?
expect_refusal "was written for destinations kafka://$BOOTSTRAP/$ea, not kafka://$BOOTSTRAP/$eb"
[[ $(high "$eb") -eq 0 ]] || fail "the refused resume sent $(high "$eb") messages into $eb"
# the same command with its own topic resumes where it stopped
"$SHAPE_BIN" emit retail --max-events 6000 --checkpoint ea.ck --sink "kafka://$BOOTSTRAP/$ea" --json \
    --no-progress >report.json 2>err.txt || fail "resume into $ea: $(cat err.txt)"
python3 -c "import json; d=json.load(open('report.json')); assert d['start_offset']==5000 and d['events']==1000, d" \
    || fail "resume into $ea: $(cat report.json)"
report_input 'emit checkpoint of topic `ea` (5,000 events) resumed into topic `eb`' emulator_emit_hardening \
  'exit 2 `was written for destinations kafka://.../ea, not kafka://.../eb`, 0 messages in `eb`; the same command into `ea` resumes at 5,000 and sends 1,000'
echo "emit hardening on kafka: ok"
