#!/usr/bin/env python3
"""bench/pacing.py — how well a paced `shape emit --realtime --rate R` kept
its schedule, judged from the messages' timestamps as the broker holds them.

Why: issue 19, part 4: the ±1 % and p99-lateness targets of pacing must be
measured from outside the command, not from its own report with --sink null.
How: reads one timestamp (ms, the CreateTime librdkafka stamps on a message
when shape hands it over) per line — what `kcat -C -f '%T\\n'` reads back from
the topic the run wrote — sorts them, and from the first one t0 counts the
messages of every whole second and every whole 100 ms window against the
schedule (R per second, R/10 per 100 ms), and each message's lateness
against its scheduled time t0 + i/R. Prints one key=value line: messages,
seconds (first to last), rate (messages after the first ÷ first-to-last),
sec_dev_median / sec_dev_worst (per-second deviation from R, %), w100_dev_worst
(per-100 ms deviation, %), windows (whole seconds counted), late_p99_ms,
late_max_ms (lateness ≥ 0; early counts as 0).
With BURST (START:DURATION:MULT, as `shape emit --burst`, seconds from the
first message), the schedule is R × MULT inside the burst and R outside: each
second (or 100 ms window) is judged against what the schedule puts in it, and
each message against the instant the schedule reaches its position.

Usage: pacing.py TIMESTAMPS_FILE RATE [BURST]
"""
import statistics
import sys

path, rate = sys.argv[1], float(sys.argv[2])
b_start, b_len, b_mult = (float(x) for x in sys.argv[3].split(":")) if len(sys.argv) > 3 else (0.0, 0.0, 1.0)


def scheduled(t):
    """Messages the schedule has sent by t seconds after the first one."""
    inside = min(max(t - b_start, 0.0), b_len)
    return rate * (t + inside * (b_mult - 1))


def due(i):
    """The instant (s after the first message) the schedule reaches message i."""
    before = rate * b_start
    if i <= before:
        return i / rate
    if i <= before + rate * b_mult * b_len:
        return b_start + (i - before) / (rate * b_mult)
    return b_start + b_len + (i - before - rate * b_mult * b_len) / rate


ts = sorted(int(l) for l in open(path) if l.strip().lstrip("-").isdigit())
n = len(ts)
if n < 2:
    print("messages=%d" % n)
    sys.exit(0)
t0 = ts[0]
span = (ts[-1] - t0) / 1000.0


def window_devs(width_ms):
    bins = [0] * int((ts[-1] - t0) // width_ms)  # whole windows only
    for t in ts:
        k = (t - t0) // width_ms
        if k < len(bins):
            bins[k] += 1
    w = width_ms / 1000.0
    return [100.0 * (c / (scheduled((k + 1) * w) - scheduled(k * w)) - 1) for k, c in enumerate(bins)]


sec = window_devs(1000)
w100 = window_devs(100)
late = sorted(max(0.0, t - (t0 + 1000.0 * due(i))) for i, t in enumerate(ts))
p99 = late[min(len(late) - 1, int(0.99 * len(late)))]
print("messages=%d seconds=%.3f rate=%.1f sec_dev_median=%.3f sec_dev_worst=%.3f w100_dev_worst=%.2f windows=%d "
      "late_p99_ms=%.1f late_max_ms=%.1f" % (
          n, span, (n - 1) / span if span else 0, statistics.median(sec) if sec else 0,
          max(sec, key=abs) if sec else 0, max(w100, key=abs) if w100 else 0, len(sec), p99, late[-1]))
