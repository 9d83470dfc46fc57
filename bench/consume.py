#!/usr/bin/env python3
"""bench/consume.py — the original's stack: confluent-kafka + json.loads
building column lists, the Python baseline of the consume/profile benchmarks.

Why: issue 5's target is >= 20x what the original Python tool's stack does
on the same topic; this is that stack's core loop without the profiling, so
the ratio it gives is if anything generous to Python.
How: assigns every partition of the topic at its beginning (no group commit),
configured like the floor and shape's bounded reads (fetch.wait.max.ms=10,
so the broker's 500 ms long-poll does not delay the end of each partition;
a 10 ms consume time-out, so the last, short batch is not waited for a
second: issue 19 made this peer fair), consumes in batches of up to 10,000
(Consumer.consume), json.loads every
value and appends each field to a per-column list (columns in order of first
appearance, None where a row lacks a field), dropping the lists every 65,536
rows as a micro-batch would be; stops when every partition reported EOF.
Prints one key=value line: messages, seconds, msgs_s, rss_kb.

bench/run gives it the shape command's glibc malloc thresholds (through
MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_), as every peer.

Usage: consume.py BOOTSTRAP TOPIC   (needs Debian python3-confluent-kafka)
"""
import json
import resource
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    t0 = time.monotonic()
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "shape-bench-python",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "fetch.wait.max.ms": 10,
    })
    md = c.list_topics(topic, timeout=10)
    parts = sorted(md.topics[topic].partitions)
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
    eofs, n, rows = 0, 0, 0
    columns = {}
    while eofs < len(parts):
        for m in c.consume(10000, timeout=0.01):
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    eofs += 1
                    continue
                raise SystemExit("consume.py: %s" % err)
            n += 1
            doc = json.loads(m.value())
            for k, v in doc.items():
                col = columns.get(k)
                if col is None:
                    col = columns[k] = [None] * rows
                col.append(v)
            rows += 1
            for col in columns.values():
                if len(col) < rows:
                    col.append(None)
            if rows == 65536:
                columns = {k: [] for k in columns}
                rows = 0
    c.close()
    secs = time.monotonic() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("messages=%d seconds=%.6f msgs_s=%.0f rss_kb=%d" % (n, secs, n / secs, rss))


if __name__ == "__main__":
    main()
