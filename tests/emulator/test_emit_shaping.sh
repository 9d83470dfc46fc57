#!/usr/bin/env bash
# test_emit_shaping.sh — shaped traffic measured from outside the process:
# the message timestamps `shape broker` holds (kcat -f '%T'), against the
# schedule the options describe.
#
# Why: issue 21's acceptance for --burst, --ramp, --daily-curve (a
# shape-rate-curve file and business-hours) and --arrivals poisson: a ×3
# burst triples the rate inside its window, a ramp is linear, a curve
# follows its points, Poisson arrivals have per-100 ms counts whose index of
# dispersion is 0.8–1.2 where constant arrivals have ≈ 0. These are
# properties of a paced stream (the behaviour itself), never the speed of
# the machine, and the test must hold on a loaded 2-core CI box (load 15–30),
# where a send can be held up by hundreds of milliseconds.
# How: one partition per topic (one CreateTime order). The sender keeps
# absolute deadlines and reports how late it woke (--json: max_lag), so
# every message k is sent in [due(k), due(k) + max_lag] (plus the hand-over
# to librdkafka, allowed 100 ms): the count of messages before run time t
# must lie between N(t - L) and N(t + L), N the schedule's integral, L the
# lag bound; checked every 100 ms. When the machine is idle L is ~0.1 s (at
# 1200/s, ±10 % of a second's count); when it is loaded L widens with the lag
# the command itself measured, instead of the test failing. A --duration
# run sends the events due before its end, never more (when its sends lag,
# those of the last L seconds may miss the end). Poisson against constant: a
# pair whose runs lagged past 50 ms is not judged (the clumps would be the
# machine's) and is measured again, up to 3 times.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
cd "$TEST_TMP"

tb=$(unique_topic burst); tr=$(unique_topic ramp); tc=$(unique_topic curve); tp=$(unique_topic poisson)
th=$(unique_topic hours)
tp=(); tk=(); for i in 1 2 3; do tp+=("$(unique_topic poisson)"); tk+=("$(unique_topic constant)"); done
kafka_up "$tb:1" "$tr:1" "$tc:1" "$th:1" "${tp[0]}:1" "${tp[1]}:1" "${tp[2]}:1" "${tk[0]}:1" "${tk[1]}:1" "${tk[2]}:1"
echo '{"config": {"linger.ms": "0"}}' >nolinger.json

emit() { # TOPIC ARGS...
    local topic=$1
    shift
    "$SHAPE_BIN" emit retail --realtime --sink "kafka://$BOOTSTRAP/$topic" --no-progress --json "$@" \
        >"$topic.report" 2>"$topic.err" || fail "emit $*: $(cat "$topic.err")"
    kcat -b "$BOOTSTRAP" -t "$topic" -C -e -q -f '%T\n' >"$topic.ts"
}

# The messages of FILE (ms timestamps, one a line) against the schedule of
# RATE_EXPR (events/s at run time t, a Python expression in t) over DURATION
# seconds, with the lag bound of REPORT (emit's --json report).
check_schedule() { # FILE REPORT DURATION RATE_EXPR
    python3 - "$@" <<'PY'
import bisect, json, sys
path, report, duration, expr = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
rate = eval("lambda t: " + expr)
rep = json.loads(open(report).read().strip().splitlines()[-1])
ts = [int(l) for l in open(path) if l.strip()]
t0 = ts[0]
rel = [(t - t0) / 1000.0 for t in ts]
# N(t) = integral of the rate, by the midpoint rule on 1 ms steps (exact for
# piecewise-linear rates between steps), N[i] = N(i ms)
step = 0.001
N = [0.0]
for i in range(int(duration / step) + 1):
    N.append(N[-1] + rate((i + 0.5) * step) * step)
def due_by(t):
    return N[min(max(int(round(t / step)), 0), len(N) - 1)]
L = rep["max_lag"] + 0.1
bad = []
want = due_by(duration)
if not due_by(duration - L) - 1 <= len(ts) <= want + 2:
    bad.append("%d events sent, the schedule has %.0f due in %g s" % (len(ts), want, duration))
t = 0.1
while t < duration:
    c = bisect.bisect_left(rel, t)  # messages before run time t
    lo, hi = due_by(t - L) - 1, due_by(t + L) + 1
    if not lo <= c <= hi:
        bad.append("%d before %.1f s, want %.0f..%.0f" % (c, t, lo, hi))
    t = round(t + 0.1, 1)
print("%d events, lag bound %.3f s" % (len(ts), L))
if bad:
    sys.exit("; ".join(bad[:6]) + " (lag bound %.3f s, report %s)" % (L, json.dumps(rep)))
PY
}

# --- a x3 burst: 400/s, 1200/s from 3 s to 6 s ------------------------------------------
emit "$tb" --rate 400 --burst 3:3:3 --duration 8
check_schedule "$tb.ts" "$tb.report" 8 "400 * (3 if 3 <= t < 6 else 1)" || fail "burst schedule"

# --- a ramp 1 -> 4 over 6 s at 200/s: the rate 200 (1 + t / 2) until 6 s, 800 after -------
emit "$tr" --rate 200 --ramp 0:6:1:4 --duration 7
check_schedule "$tr.ts" "$tr.report" 7 "200 * (1 + 3 * min(t / 6, 1))" || fail "ramp schedule"

# --- a curve file: 1 at 00:00, 3 at 00:00:04, 1 at 00:00:08, run from midnight -------------
cat >curve.json <<'JSON'
{"format": "shape-rate-curve", "version": 1, "name": "spike",
 "points": [["00:00:08", 1], ["00:00", 1], ["00:00:04", 3]]}
JSON
emit "$tc" --rate 200 --daily-curve curve.json --curve-start 00:00:00 --duration 9.5
check_schedule "$tc.ts" "$tc.report" 9.5 "200 * (1 + t / 2 if t < 4 else 3 - (t - 4) / 2 if t < 8 else 1)" \
    || fail "curve schedule"

# --- business-hours: noon is busier than 03:00 by the curve's ratio -----------------------
emit "$th" --rate 100 --daily-curve business-hours --curve-start 12:00 --duration 3
noon=$(wc -l <"$th.ts")
[[ $noon -ge 540 && $noon -le 600 ]] || fail "business-hours at noon: $noon events in 3 s, want ~570 (1.9 x 100/s)"

# --- Poisson against constant arrivals: index of dispersion of 100 ms counts ---------------
# The schedule's gaps are fixed by the seed; what varies is the machine: a
# run whose sends were held up (a loaded CI box) clumps events. A pair whose
# reports show a lag past 50 ms is measured again (up to 3 times); a pair
# that ran on time and misses the bounds fails at once.
# Under memcheck (SHAPE_UNDER_MEMCHECK, tests/valgrind/run-emulator) one pair:
# its sends lag there anyway, and what memcheck watches is the same.
judged=0 attempts="1 2 3"
[ -z "${SHAPE_UNDER_MEMCHECK:-}" ] || attempts=1
for attempt in $attempts; do
    kcat_topic_p=${tp[attempt - 1]}; kcat_topic_k=${tk[attempt - 1]}
    emit "$kcat_topic_p" --rate 200 --arrivals poisson --duration 15 --options-file nolinger.json
    emit "$kcat_topic_k" --rate 200 --duration 5 --options-file nolinger.json
    rc=0
    python3 - "$kcat_topic_p.ts" "$kcat_topic_k.ts" "$kcat_topic_p.report" "$kcat_topic_k.report" <<'PY' || rc=$?
import json, sys
def dispersion(path):
    ts = [int(l) for l in open(path) if l.strip()]
    t0 = ts[0]
    n = (ts[-1] - t0) // 100
    bins = [0] * n
    for t in ts:
        if (t - t0) // 100 < n:
            bins[(t - t0) // 100] += 1
    bins = bins[1:]
    m = sum(bins) / len(bins)
    v = sum((b - m) ** 2 for b in bins) / (len(bins) - 1)
    return m, v / m
lag = max(json.loads(open(p).read().strip().splitlines()[-1])["max_lag"] for p in sys.argv[3:5])
mp, dp = dispersion(sys.argv[1])
mc, dc = dispersion(sys.argv[2])
print("poisson mean %.1f dispersion %.2f; constant mean %.1f dispersion %.2f; max lag %.3f s" % (mp, dp, mc, dc, lag))
ok = 17 < mp < 23 and 0.8 <= dp <= 1.2 and 19 < mc < 21 and dc < 0.2
sys.exit(0 if ok else 3 if lag > 0.05 else 1)
PY
    [[ $rc -eq 0 ]] && { judged=1; break; }
    [[ $rc -eq 3 ]] || fail "arrivals dispersion (attempt $attempt, the sends on time)"
done
[[ $judged -eq 1 ]] || echo "note: arrivals dispersion not judged: every attempt's sends lagged past 50 ms (a loaded machine)"

# --- bad input: one line, exit 2, nothing sent ---------------------------------------------
bad() { # EXPECTED-TEXT ARGS...
    local want=$1
    shift
    set +e
    "$SHAPE_BIN" emit retail --sink "kafka://$BOOTSTRAP/$tb" --no-progress "$@" >out.txt 2>err.txt
    local rc=$?
    set -e
    [[ $rc -eq 2 ]] || fail "emit $* exited $rc, want 2"
    [[ $(wc -l <err.txt) -eq 1 ]] && grep -q "^shape: error: .*$want" err.txt || fail "emit $*: $(cat err.txt)"
}
before=$(kcat -b "$BOOTSTRAP" -t "$tb" -C -e -q -f '%o\n' | wc -l)
bad "overlaps" --realtime --burst 0:10:2 --burst 5:10:2
bad "ends at 0" --realtime --ramp 0:10:1:0
bad "two points" --realtime --daily-curve <(echo '{"format":"shape-rate-curve","version":1,"points":[["01:00",1],["01:00",2]]}')
bad "every multiplier is 0" --realtime --daily-curve <(echo '{"format":"shape-rate-curve","version":1,"points":[["01:00",0]]}')
bad "mutually exclusive" --realtime --speed 60x
bad "needs --realtime" --burst 0:1:2
bad "needs --realtime" --arrivals poisson
bad "--speed must be" --speed 0x
bad "unknown arrivals" --realtime --arrivals bursty
after=$(kcat -b "$BOOTSTRAP" -t "$tb" -C -e -q -f '%o\n' | wc -l)
[[ $before -eq $after ]] || fail "a refused run sent events ($before -> $after)"
echo "ok: burst, ramp, curve file, business-hours and Poisson arrivals follow their schedules"
