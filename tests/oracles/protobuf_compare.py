#!/usr/bin/env python3
"""protobuf_compare.py — the python half of protobuf_oracle.sh (standard library only).

Why: protoc decodes, but something must frame the captured payloads for it and
judge what it prints against the expected flat JSON events.
How, by subcommand:
  frame DIR WORK     check every Confluent header (magic 0, one schema id for all,
                     message-index byte 0), write WORK/oracle_batch.proto (a wrapper
                     `Batch { repeated <message> m = 1; }` importing schema.proto) and
                     WORK/batch.bin (each payload as field 1, length-delimited); print
                     the wrapper's full type name for protoc --decode.
  split DIR WORK     write each payload alone as WORK/payload_K.bin (K from 1); print
                     the message's full type name.
  compare DIR TEXT   read protoc's text output of the batch and compare every message,
                     field by field, with DIR/expected.jsonl.
The logical type of a field comes from its type and the comment the schema
document puts after it (§4.5): `date, ...` int32 days; `time of day, ...` int64 µs
of the day; `timestamp with[out] time zone, ...` int64 µs since the epoch; decimal
and uuid are strings compared as text. Absent fields are null when `optional`, the
proto3 default otherwise. Times and timestamps compare at microseconds (expected
fractions cut or zero-padded to 6 digits). Exit 1 with one line on the first
difference.
"""
import base64
import datetime
import json
import math
import os
import re
import struct
import sys

import oracle_io

PROG = "protobuf_oracle"
FIELD_LINE = re.compile(r"^\s*(optional\s+)?(\w+)\s+(\w+)\s*=\s*(\d+)\s*;\s*(?://\s*(.*))?$")
INTEGER_TYPES = {"int32", "int64", "uint32", "uint64", "sint32", "sint64",
                 "fixed32", "fixed64", "sfixed32", "sfixed64"}


class Mismatch(Exception):
    pass


def fail(text):
    print(f"{PROG}: {text}", file=sys.stderr)
    sys.exit(1)


# ---- inputs ---------------------------------------------------------------------

def read_messages(directory):
    messages = oracle_io.read_messages(directory, fail)
    if not messages:
        fail("messages.bin holds no message: nothing to check")
    return messages


def payloads_of(messages):
    """The payloads after the 6-byte header, checking each header."""
    payloads, first_id = [], None
    for k, m in enumerate(messages, 1):
        if len(m) < 6 or m[0] != 0:
            fail(f"message {k}: no Confluent header ({len(m)} bytes, first byte {m[:1].hex() or 'none'})")
        schema_id = int.from_bytes(m[1:5], "big")
        first_id = schema_id if first_id is None else first_id
        if schema_id != first_id:
            fail(f"message {k}: schema id {schema_id}, message 1 has {first_id}")
        if m[5] != 0:
            fail(f"message {k}: message-index byte is {m[5]}, not 0 (the first message of the schema)")
        payloads.append(m[6:])
    return payloads


def read_expected(directory):
    events = []
    with open(os.path.join(directory, "expected.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                event = json.loads(line)
            except ValueError as e:
                fail(f"expected.jsonl line {n} is not JSON: {e}")
            if not isinstance(event, dict):
                fail(f"expected.jsonl line {n} is not a JSON object")
            events.append(event)
    return events


class Field:
    def __init__(self, match):
        self.optional = bool(match.group(1))
        self.type = match.group(2)
        self.name = match.group(3)
        self.number = int(match.group(4))
        comment = (match.group(5) or "").strip()
        self.logical = logical_of(self.type, comment)


def logical_of(proto_type, comment):
    if proto_type in INTEGER_TYPES:
        if comment.startswith("date"):
            return "date"
        if comment.startswith("time of day"):
            return "time"
        if comment.startswith("timestamp without time zone"):
            return "local-timestamp"
        if comment.startswith("timestamp with time zone"):
            return "timestamp"
    return None


def read_schema(directory):
    """(package, message name, fields) of the first message of schema.proto."""
    with open(os.path.join(directory, "schema.proto"), encoding="utf-8") as f:
        text = f.read()
    package = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
    message = re.search(r"^\s*message\s+(\w+)\s*\{", text, re.M)
    if not message:
        fail("schema.proto has no message")
    fields = []
    for line in text[message.end():].splitlines():
        if line.strip().startswith("}"):
            break
        match = FIELD_LINE.match(line)
        if match:
            fields.append(Field(match))
        elif line.strip() and not line.strip().startswith("//"):
            fail(f"schema.proto: cannot read the field line {line.strip()!r}")
    return (package.group(1) if package else ""), message.group(1), fields


def full_name(package, message):
    return f"{package}.{message}" if package else message


def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


# ---- frame / split --------------------------------------------------------------

def frame(directory, work):
    package, message, _ = read_schema(directory)
    payloads = payloads_of(read_messages(directory))
    with open(os.path.join(work, "oracle_batch.proto"), "w", encoding="utf-8") as f:
        f.write('syntax = "proto3";\n\nimport "schema.proto";\n\npackage shape_oracle;\n\n'
                f"message Batch {{\n  repeated .{full_name(package, message)} m = 1;\n}}\n")
    with open(os.path.join(work, "batch.bin"), "wb") as f:
        for p in payloads:
            f.write(b"\x0a" + varint(len(p)) + p)
    print("shape_oracle.Batch")


def split(directory, work):
    package, message, _ = read_schema(directory)
    for k, p in enumerate(payloads_of(read_messages(directory)), 1):
        with open(os.path.join(work, f"payload_{k}.bin"), "wb") as f:
            f.write(p)
    print(full_name(package, message))


# ---- protoc's text format -------------------------------------------------------

SIMPLE_ESCAPES = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8,
                  "f": 12, "v": 11, "?": 63}


def unquote(text):
    """The bytes of a C-escaped, double-quoted protoc string."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise Mismatch(f"not a quoted string: {text}")
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[e])
            i += 2
        elif e in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:]).group(0)
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        elif e == "x":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:]).group(0)
            out.append(int(digits, 16))
            i += 2 + len(digits)
        else:
            raise Mismatch(f"unknown escape \\{e}")
    return bytes(out)


def parse_decoded(text):
    """protoc's text of a Batch → one dict per message: field name → printed value."""
    messages, current = [], None
    for line in text.splitlines():
        if line == "m {":
            current = {}
        elif line == "}":
            messages.append(current)
            current = None
        elif current is not None and line.startswith("  ") and ": " in line:
            name, value = line.strip().split(": ", 1)
            if name in current:
                raise Mismatch(f"field {name} printed twice")
            current[name] = value
        else:
            raise Mismatch(f"unexpected line in protoc's output: {line!r}")
    return messages


# ---- values ---------------------------------------------------------------------

EPOCH = datetime.datetime(1970, 1, 1)


def civil_date(days):
    try:
        return (datetime.date(1970, 1, 1) + datetime.timedelta(days=days)).isoformat()
    except OverflowError:
        return f"<{days} days: out of datetime's range>"


def clock(micros):
    if not 0 <= micros < 86_400_000_000:
        return f"<{micros} µs: not a time of day>"
    seconds, fraction = divmod(micros, 1_000_000)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{fraction:06d}"


def timestamp(micros, utc):
    try:
        t = EPOCH + datetime.timedelta(microseconds=micros)
    except OverflowError:
        return f"<{micros} µs: out of datetime's range>"
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
            f".{t.microsecond:06d}" + ("Z" if utc else ""))


def at_micros(text):
    """An expected time/timestamp text with the seconds' fraction cut or padded to 6 digits."""
    if not isinstance(text, str):
        return text
    m = re.match(r"^(.*\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$", text, re.S)
    if not m:
        return text
    return f"{m.group(1)}.{(m.group(2) or '')[:6].ljust(6, '0')}{m.group(3)}"


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_real(got, want, single):
    if not is_number(want) or math.isnan(got):
        return False
    if single:
        got = struct.unpack("<f", struct.pack("<f", got))[0]
        try:
            want = struct.unpack("<f", struct.pack("<f", float(want)))[0]
        except OverflowError:
            return False
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def default_of(field):
    if field.type in ("string", "bytes"):
        return '""'
    return {"bool": "false", "float": "0", "double": "0"}.get(field.type, "0")


def judge(field, printed, want):
    """(equal?, text of the decoded value) of one field."""
    if printed is None:
        return want is None, "null (unset)"
    t = field.type
    if t == "bool":
        got = printed == "true"
        return want is got, printed
    if t in ("float", "double"):
        return same_real(float(printed), want, t == "float"), printed
    if t == "string":
        try:
            got = unquote(printed).decode("utf-8")
        except UnicodeDecodeError:
            return False, f"{printed} (not UTF-8)"
        return want == got, json.dumps(got, ensure_ascii=False)
    if t == "bytes":
        got = base64.b64encode(unquote(printed)).decode("ascii")
        return want == got, f"{printed} (base64 {got})"
    if t in INTEGER_TYPES:
        n = int(printed)
        if field.logical == "date":
            text = civil_date(n)
        elif field.logical == "time":
            text = clock(n)
        elif field.logical in ("timestamp", "local-timestamp"):
            text = timestamp(n, field.logical == "timestamp")
        else:
            return is_int(want) and want == n, printed
        fitted = at_micros(want) if field.logical != "date" else want
        return fitted == text, f"{printed} (= {json.dumps(text)})"
    return False, f"{printed} (a field type the registry formats never use: {t})"


def compare(directory, decoded_path):
    _, _, fields = read_schema(directory)
    expected = read_expected(directory)
    with open(decoded_path, encoding="utf-8", errors="surrogateescape") as f:
        try:
            decoded = parse_decoded(f.read())
        except Mismatch as e:
            fail(str(e))
    if len(decoded) != len(expected):
        fail(f"protoc decoded {len(decoded)} messages, expected.jsonl has {len(expected)} events")
    names = {f.name for f in fields}
    for k, (message, event) in enumerate(zip(decoded, expected), 1):
        for name in message:
            if name not in names:
                fail(f"message {k}: field {name} is not in the schema (an unknown field number)")
        for field in fields:
            if field.name not in event:
                fail(f"message {k} field {field.name}: not in expected.jsonl")
            printed = message.get(field.name)
            if printed is None and not field.optional:
                printed = default_of(field)
            try:
                equal, got = judge(field, printed, event[field.name])
            except Mismatch as e:
                equal, got = False, f"{printed} ({e})"
            if not equal:
                fail(f"message {k} field {field.name}: protoc read {got}, "
                     f"expected {json.dumps(event[field.name], ensure_ascii=False)}")
        for name in event:
            if name not in names:
                fail(f"message {k} field {name}: in expected.jsonl, not in the schema")
    print(f"{PROG}: {len(decoded)} messages decoded and equal")


def main(argv):
    commands = {"frame": frame, "split": split, "compare": compare}
    if len(argv) != 4 or argv[1] not in commands:
        print("usage: protobuf_compare.py frame|split DIR WORK | compare DIR DECODED_TEXT", file=sys.stderr)
        return 2
    commands[argv[1]](argv[2], argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
