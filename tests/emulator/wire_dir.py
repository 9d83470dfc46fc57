"""wire_dir.py — lay captured registry-format messages out for wire_decode_check.

Why: the emulator tests that read registry formats back (test_emit_domains.sh,
test_emit_registry_faults.sh) hand wire_decode_check one folder per table;
its layout is written here once.
How: write(d, items, expected) makes folder d with messages.bin (each value
after its 4-byte big-endian length) and expected.jsonl (the flat JSON event
of each message's key, from `expected`, a dict key -> JSON line), in the
order of items, a list of (key, value bytes).
"""
import os
import struct


def write(d, items, expected):
    os.makedirs(d)
    with open(os.path.join(d, "messages.bin"), "wb") as f:
        for _, v in items:
            f.write(struct.pack(">I", len(v)) + v)
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        for k, _ in items:
            f.write(expected[k])
