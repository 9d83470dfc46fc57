#!/usr/bin/env bash
# test_stream_profile_progress.sh — the progress line of `shape stream-profile`.
#
# Why: issue 5 — on a terminal stderr shows messages, messages/s, partitions
# done of total and the elapsed time; anywhere else stderr stays free of it
# (logs and pipes must not fill with carriage returns).
# How: a 3-partition topic on `shape broker`, 900 rows (300 per partition).
# stream-profile runs under a pseudo-terminal (`script` from bsdutils, stdout
# to a file, stderr to the terminal); the last progress line must read
# `900 messages, ... partitions 3/3, ...`. Then: --partitions 0,2 shows 2/2;
# --max-events 10 stops inside partition 0 and shows 0/3 (done counts
# partitions read to their end, not partitions seen); --follow shows
# `3 partitions` (no end to reach); a file source shows
# no partition count; without a terminal stderr is empty and the profile is
# the same.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
command -v script >/dev/null || { echo "SKIP: script (bsdutils) is needed for a pseudo-terminal"; exit 77; }
topic=$(unique_topic progress)
[ -n "${SHAPE_TEST_KAFKA:-}" ] || topic=progress
kafka_up "$topic:3"
T=$TEST_TMP
for p in 0 1 2; do
  awk -v p=$p 'BEGIN { for (i = 0; i < 300; i++) printf "{\"id\":%d,\"p\":%d}\n", i, p }' |
    kcat -b "$BOOTSTRAP" -t "$topic" -P -p $p
done
uri="kafka://$BOOTSTRAP/$topic"

# on_tty NAME ARGS...: stream-profile with stderr on a pseudo-terminal; the
# terminal's output goes to $T/NAME.tty, the summary to $T/NAME.sum.
on_tty() {
  local name=$1; shift
  local cmd; cmd=$(printf '%q ' "$SHAPE_BIN" stream-profile "$uri" -o "$T/$name.json" "$@")
  script -qfec "$cmd >$T/$name.sum" /dev/null </dev/null >"$T/$name.tty" 2>&1 ||
    fail "$name under a terminal: $(cat "$T/$name.tty")"
}
# last_progress NAME: the last progress line the terminal showed.
last_progress() { tr '\r' '\n' <"$T/$1.tty" | sed 's/\x1b\[K//g' | grep '^shape stream-profile: ' | tail -1; }

on_tty all --batch-size 50
line=$(last_progress all)
echo "terminal: $line"
[[ $line =~ ^shape\ stream-profile:\ 900\ messages,\ [0-9]+\ messages/s,\ partitions\ 3/3,\ [0-9]+\.[0-9]\ s\ elapsed$ ]] ||
  fail "final progress line: '$line' (terminal: $(cat -v "$T/all.tty"))"
grep -q '"events": 900' "$T/all.sum" || fail "summary under a terminal: $(cat "$T/all.sum")"

on_tty some --partitions 0,2
line=$(last_progress some)
[[ $line == *" 600 messages, "*", partitions 2/2, "* ]] || fail "--partitions 0,2 progress: '$line'"

on_tty stopped --max-events 10 --batch-size 5
line=$(last_progress stopped)
[[ $line == *" 10 messages, "*", partitions 0/3, "* ]] || fail "--max-events 10 progress: '$line'"

# A following read never ends a partition: the total only.
on_tty follow --follow --idle-timeout 1
line=$(last_progress follow)
[[ $line == *" 900 messages, "*", 3 partitions, "* ]] || fail "--follow progress: '$line'"

# A file source tells no partitions: the line has none.
awk 'BEGIN { for (i = 0; i < 50; i++) printf "{\"id\":%d}\n", i }' >"$T/rows.jsonl"
cmd=$(printf '%q ' "$SHAPE_BIN" stream-profile "$T/rows.jsonl" -o "$T/file.json")
script -qfec "$cmd >$T/file.sum" /dev/null </dev/null >"$T/file.tty" 2>&1 || fail "file under a terminal: $(cat "$T/file.tty")"
line=$(last_progress file)
[[ $line == "shape stream-profile: 50 messages, "*" messages/s, "*" s elapsed" && $line != *partition* ]] ||
  fail "file source progress: '$line'"

# Not a terminal: nothing on stderr, the same profile.
"$SHAPE_BIN" stream-profile "$uri" -o "$T/plain.json" --batch-size 50 >"$T/plain.sum" 2>"$T/plain.err" ||
  fail "without a terminal: $(cat "$T/plain.err")"
[ ! -s "$T/plain.err" ] || fail "stderr is not a terminal but got: $(cat -v "$T/plain.err")"
cmp -s "$T/plain.json" "$T/all.json" || fail "the profile differs with and without a terminal"
echo "ok: progress shows partitions done of total on a terminal, nothing elsewhere"
