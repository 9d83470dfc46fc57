"""window_oracle.py — an independent model of shape's windowed stream
profile (reference/spec-core.md §1.7), for the tests: given JSON lines with
known event times, the batch size and the window options, which windows come
out, which rows each holds, and how many rows are late.

It follows the reference's words, not the C code: windows are kept as lists
of rows (no panes, no sketches); a sliding row goes into every open window
holding it. Partitions: `parts` maps each row to its partition, and `order`
gives the batches as (partition, [row indices]) in the order the source hands
them out; without it the rows form one partition cut every batch_size rows.

python3 window_oracle.py DATA.jsonl WINDOWS.jsonl SUMMARY BATCH_SIZE KIND ARGS...
    checks the files against the model and exits non-zero on a difference;
    ARGS are size= slide= gap= lateness= skew= in microseconds.
"""
import json
import math
import sys

SECOND = 1_000_000


def event_time_us(v, unit="ms"):
    if v is None:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return int(round(v * {"s": 1_000_000, "ms": 1000, "us": 1}[unit]))
    raise ValueError("the oracle takes numeric event times only")


class Model:
    def __init__(self, kind, size=0, slide=0, gap=0, lateness=0, skew=600 * SECOND):
        self.kind, self.size, self.slide, self.gap = kind, size, slide or size, gap
        self.lateness, self.skew = lateness, skew
        self.wm = None
        self.newest = None
        self.part_newest = {}
        self.open = {}  # (start, end) -> list of rows (tumbling/sliding)
        self.sessions = []  # [start, end, rows], disjoint
        self.closed = []  # (start, end, rows)
        self.late = 0
        self.max_lag = 0
        self.null_time = 0

    def windows_of(self, t):
        """Start of every window holding t (tumbling: one)."""
        last = (t // self.slide) * self.slide
        s = last
        out = []
        while s + self.size > t:
            out.append(s)
            s -= self.slide
        return out

    def batch(self, rows, times, partition, known):
        wm = self.wm
        accepted = []
        for row, t in zip(rows, times):
            if t is None:
                self.null_time += 1
                continue
            if self.kind == "session":
                in_open = any(t < e and t + self.gap > s for s, e, _ in self.sessions)
                is_late = wm is not None and t + self.gap <= wm and not in_open
            else:
                is_late = wm is not None and max(self.windows_of(t)) + self.size <= wm
            if is_late:
                self.late += 1
                self.max_lag = max(self.max_lag, wm - t)
                continue
            accepted.append((t, row))
        if self.kind == "session":
            self.route_sessions(accepted)
        else:
            for t, row in accepted:
                for s in self.windows_of(t):
                    e = s + self.size
                    if wm is not None and e <= wm:
                        continue  # that window is closed
                    self.open.setdefault((s, e), []).append(row)
        ts = [t for t in times if t is not None]
        if ts:
            top = max(ts)
            self.newest = top if self.newest is None else max(self.newest, top)
            for p in known:
                self.part_newest.setdefault(p, None)
            for p in ([partition] if partition is not None else list(known)):
                old = self.part_newest.get(p)
                self.part_newest[p] = top if old is None else max(old, top)
        if self.newest is not None:
            floor = self.newest - self.skew
            active = [max(v, floor) if v is not None else floor for v in self.part_newest.values()]
            w = (min(active) if active else self.newest) - self.lateness
            self.wm = w if self.wm is None else max(self.wm, w)
            self.close(self.wm)

    def route_sessions(self, accepted):
        accepted.sort(key=lambda x: x[0])
        i = 0
        while i < len(accepted):
            j = i + 1
            while j < len(accepted) and accepted[j][0] - accepted[j - 1][0] < self.gap:
                j += 1
            run = accepted[i:j]
            start, end = run[0][0], run[-1][0] + self.gap
            rows = [r for _, r in run]
            keep = []
            for s in self.sessions:
                if s[0] < end and start < s[1]:
                    start, end = min(start, s[0]), max(end, s[1])
                    rows = s[2] + rows
                else:
                    keep.append(s)
            keep.append([start, end, rows])
            self.sessions = sorted(keep, key=lambda s: s[0])
            i = j

    def close(self, upto):
        if self.kind == "session":
            done = [s for s in self.sessions if s[1] <= upto]
            self.sessions = [s for s in self.sessions if s[1] > upto]
            self.closed += [(s, e, r) for s, e, r in done]
        else:
            for key in sorted(k for k in self.open if k[1] <= upto):
                self.closed.append((key[0], key[1], self.open.pop(key)))

    def finish(self):
        self.close(math.inf)


def run(data_path, batch_size, kind, parts=None, order=None, unit="ms", **opts):
    rows = []
    for line in open(data_path, encoding="utf-8"):
        line = line.strip()
        if line:
            rows.append(json.loads(line))
    times = [event_time_us(r.get("_shape_event_time"), unit) for r in rows]
    m = Model(kind, **opts)
    if order is None:
        order = [(0, list(range(i, min(i + batch_size, len(rows))))) for i in range(0, len(rows), batch_size)]
    known = sorted(set(p for p, _ in order)) if parts is None else parts
    for p, idx in order:
        m.batch([rows[i] for i in idx], [times[i] for i in idx], p, known)
    m.finish()
    return m


def numeric_stats(rows, col):
    vals = [r.get(col) for r in rows]
    nn = [v for v in vals if v is not None]
    return {
        "null_count": len(vals) - len(nn),
        "min": min(nn) if nn else None,
        "max": max(nn) if nn else None,
        "mean": sum(nn) / len(nn) if nn else None,
    }


def compare(model, windows_path, summary_path, kind, col="v"):
    def check(cond, what):
        if not cond:
            sys.exit("FAIL: " + what)

    got = [json.loads(l) for l in open(windows_path, encoding="utf-8")]
    summary = json.loads(open(summary_path).read().strip().splitlines()[-1])
    keys = [(w["kind"], w["start_us"], w["end_us"]) for w in got]
    check(len(keys) == len(set(keys)), "a window is in the file twice")
    for w in got:
        check(list(w) == sorted(w), "keys not sorted: %s" % list(w))
        check(w["kind"] == kind and "partial" not in w, "kind/partial %s" % w["kind"])
    want = {(s, e): r for s, e, r in model.closed}
    have = {(w["start_us"], w["end_us"]): w for w in got}
    check(sorted(want) == sorted(have), "windows differ:\n  oracle %s\n  shape  %s" % (sorted(want), sorted(have)))
    for key, rows in want.items():
        w = have[key]
        check(w["rows"] == len(rows) and w["profile"]["rows"] == len(rows),
              "window %s rows %s != oracle %d" % (key, w["rows"], len(rows)))
        cols = {c["name"]: c for c in w["profile"]["columns"]}
        exp = numeric_stats(rows, col)
        c = cols.get(col)
        check(c is not None, "window %s has no column %s" % (key, col))
        check(c["null_count"] == exp["null_count"], "window %s null_count %s != %s" % (key, c["null_count"], exp["null_count"]))
        for f in ("min", "max", "mean"):
            a, b = c.get(f), exp[f]
            if b is None:
                check(a is None, "window %s %s %r != None" % (key, f, a))
            else:
                check(a is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b)), "window %s %s %r != %r" % (key, f, a, b))
    # windows come out oldest first within the file (by end for equal sizes)
    check(summary["late_events"] == model.late, "late_events %s != oracle %s" % (summary["late_events"], model.late))
    check(summary["null_event_time"] == model.null_time, "null_event_time %s != %s" % (summary["null_event_time"], model.null_time))
    check(summary["windows"] == len(model.closed), "summary windows %s != %s" % (summary["windows"], len(model.closed)))
    if model.late:
        check(abs(summary["late_lag_seconds"] - round(model.max_lag / 1e6, 3)) < 1e-9, "late_lag_seconds %s != %s" % (summary["late_lag_seconds"], model.max_lag / 1e6))
        check(abs(summary["late_share"] - round(model.late / summary["events"], 6)) < 1e-9, "late_share")
    else:
        check("late_share" not in summary, "late_share without late rows")


if __name__ == "__main__":
    data, windows, summary, batch, kind = sys.argv[1:6]
    opts = {}
    for a in sys.argv[6:]:
        k, v = a.split("=")
        opts[k] = int(v)
    m = run(data, int(batch), kind, **opts)
    compare(m, windows, summary, kind)
    print("oracle: %d windows, %d late" % (len(m.closed), m.late))
