#!/usr/bin/env bash
# test_faults_checkpoint.sh — torn and corrupt checkpoint files are refused,
# never silently restarted from the beginning.
#
# Why: issue 9 — a checkpoint cut short by a crash or a bad disk, or edited
# by hand, must stop the run with a clear message: restarting from offset 0
# would re-send (emit) or re-read (stream-read) everything without a word.
# How: a valid checkpoint is made by a short run of each command
# (stream-read against `shape broker`, emit into a file sink), then damaged
# in several ways; each rerun must exit 2 with one `shape: error:` line
# naming the checkpoint file, write no row or event, and leave the file
# byte-identical.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"
export SHAPE_CONFIRM_REMOTE=0
faults_broker_up --topic rows:2
for p in 0 1; do seq $p 2 999 | sed 's/.*/{"id":&}/' | kcat -b "$BOOTSTRAP" -t rows -P -p $p; done

"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --max-events 300 --checkpoint read.ck >/dev/null 2>&1 ||
  fail "making a stream-read checkpoint"
"$SHAPE_BIN" emit retail --table order_line --max-events 300 --sink file -o emit.jsonl --checkpoint emit.ck \
  --no-progress >/dev/null 2>&1 || fail "making an emit checkpoint"
grep -q '"offset":300' emit.ck || fail "emit checkpoint: $(cat emit.ck)"

# damage KIND GOOD OUT: write a damaged copy of GOOD to OUT.
damage() {
  local kind=$1 good=$2 out=$3 len
  len=$(wc -c <"$good")
  case $kind in
    torn-half) head -c $((len / 2)) "$good" >"$out" ;;
    torn-last-byte) head -c $((len - 2)) "$good" >"$out" ;;  # the closing brace gone
    empty) : >"$out" ;;
    garbage) printf '\x00\x9f\xffPK\x03\x04garbage' >"$out" ;;
    not-object) echo '[1,2,3]' >"$out" ;;
    bad-offset-type) sed 's/"offset":300/"offset":"three hundred"/; s/"offset":{"\([0-9]*\)":[0-9]*/"offset":{"\1":"x"/' "$good" >"$out" ;;
    negative-offset) sed 's/"offset":300/"offset":-7/; s/"offset":{"\([0-9]*\)":[0-9]*/"offset":{"\1":-7/' "$good" >"$out" ;;
    wrong-format) sed 's/"format":"[^"]*"/"format":"something-else-v9"/' "$good" >"$out" ;;
  esac
  cmp -s "$good" "$out" && fail "damage $kind left $good unchanged"
  return 0
}

refused=0
for kind in torn-half torn-last-byte empty garbage not-object bad-offset-type negative-offset wrong-format; do
  # stream-read
  damage $kind read.ck r.$kind.ck
  cp r.$kind.ck r.$kind.orig
  rc=0; "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/rows" --checkpoint r.$kind.ck >r.$kind.out 2>r.$kind.err || rc=$?
  line=$(grep '^shape: error: ' r.$kind.err | head -1)
  echo "stream-read, $kind checkpoint: exit $rc: $line"
  report "stream-read: $kind checkpoint" "damaged copy of a valid --checkpoint file" 0 0 "$rc" "${line#shape: error: }"
  [ $rc -eq 2 ] || fail "stream-read with a $kind checkpoint: exit $rc (rows: $(wc -l <r.$kind.out))"
  [ ! -s r.$kind.out ] || fail "stream-read with a $kind checkpoint printed $(wc -l <r.$kind.out) rows (restarted?)"
  grep -q "r\.$kind\.ck" <<<"$line" || fail "stream-read $kind: the message does not name the file: $line"
  cmp -s r.$kind.ck r.$kind.orig || fail "stream-read $kind: the checkpoint was changed"
  # emit
  damage $kind emit.ck e.$kind.ck
  cp e.$kind.ck e.$kind.orig
  cp emit.jsonl e.$kind.jsonl
  rc=0; "$SHAPE_BIN" emit retail --table order_line --max-events 600 --sink file -o e.$kind.jsonl --checkpoint e.$kind.ck \
    --no-progress >e.$kind.out 2>e.$kind.err || rc=$?
  line=$(grep '^shape: error: ' e.$kind.err | head -1)
  echo "emit, $kind checkpoint: exit $rc: $line"
  report "emit: $kind checkpoint" "damaged copy of a valid --checkpoint file" 0 0 "$rc" "${line#shape: error: }"
  [ $rc -eq 2 ] || fail "emit with a $kind checkpoint: exit $rc"
  cmp -s e.$kind.jsonl emit.jsonl || fail "emit with a $kind checkpoint wrote events (restarted?)"
  grep -q "e\.$kind\.ck" <<<"$line" || fail "emit $kind: the message does not name the file: $line"
  cmp -s e.$kind.ck e.$kind.orig || fail "emit $kind: the checkpoint was changed"
  refused=$((refused + 2))
done
faults_broker_down
echo "ok: $refused damaged checkpoints refused (exit 2, file named, nothing written, file kept)"
