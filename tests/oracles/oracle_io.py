"""oracle_io.py — the captured-messages file the Python oracles share.

Why: protobuf_compare.py and jsonschema_oracle.py read the same input
(README.md: messages.bin = each message value after a 4-byte big-endian
length); one reader keeps them from drifting apart.
How: read_messages(directory, fail) returns the values in order; `fail` is
the calling oracle's own error exit (it names the oracle)."""
import os


def read_messages(directory, fail):
    with open(os.path.join(directory, "messages.bin"), "rb") as f:
        data = f.read()
    messages, pos = [], 0
    while pos < len(data):
        if len(data) - pos < 4:
            fail(f"messages.bin: message {len(messages) + 1} has a truncated length prefix")
        size = int.from_bytes(data[pos:pos + 4], "big")
        pos += 4
        if len(data) - pos < size:
            fail(f"messages.bin: message {len(messages) + 1} claims {size} bytes, {len(data) - pos} remain")
        messages.append(data[pos:pos + size])
        pos += size
    return messages
