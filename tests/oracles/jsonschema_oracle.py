#!/usr/bin/env python3
"""jsonschema_oracle.py DIR — validate captured JSON Schema messages with the
python-jsonschema draft-07 validator and compare them with the flat JSON events.

Why: shape writes both the JSON Schema document and the payloads; a third-party
validator is the independent judge that the one describes the other.
How: DIR holds schema.json (the registered text), messages.bin (message values,
each behind a 4-byte big-endian length) and expected.jsonl (see README.md). Each
message must carry the Confluent header (magic 0, the same schema id for all);
the rest must be UTF-8 JSON without duplicate keys, valid under schema.json with
jsonschema.Draft7Validator and format checking (the formats date, date-time and
uuid are checked here when the installed jsonschema lacks a checker for them, so
the result does not depend on optional packages), with every contentEncoding
base64 string being valid base64, and equal to the expected event: the same keys
and, per key, the same JSON value and JSON type (true is not 1, 2.0 is not 2).
Exit 0 with "jsonschema_oracle: N messages valid and equal", else 1 with one
line naming the first failure (2: usage).
"""
import base64
import binascii
import datetime
import json
import os
import re
import sys

import oracle_io

PROG = "jsonschema_oracle"


def fail(text):
    print(f"{PROG}: {text}", file=sys.stderr)
    sys.exit(1)


try:
    import jsonschema
except ImportError:
    fail("the python jsonschema package is missing (Debian package python3-jsonschema)")


# ---- format checks the installed jsonschema may lack ----------------------------

DATE = re.compile(r"^(\d{4})-(\d\d)-(\d\d)$")
DATE_TIME = re.compile(r"^(\d{4}-\d\d-\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-](\d\d):(\d\d))$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_date(value):
    if not isinstance(value, str):
        return True
    m = DATE.match(value)
    if not m:
        return False
    try:
        datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def is_date_time(value):
    if not isinstance(value, str):
        return True
    m = DATE_TIME.match(value)
    if not m or not is_date(m.group(1)):
        return False
    hour, minute, second = int(m.group(2)), int(m.group(3)), int(m.group(4))
    offset_ok = m.group(7) is None or (int(m.group(7)) < 24 and int(m.group(8)) < 60)
    return hour < 24 and minute < 60 and second <= 60 and offset_ok


def is_uuid(value):
    return not isinstance(value, str) or bool(UUID.match(value))


def format_checker():
    base = getattr(jsonschema.Draft7Validator, "FORMAT_CHECKER", None)
    if base is None:
        base = jsonschema.draft7_format_checker
    checker = jsonschema.FormatChecker(formats=list(base.checkers))
    for name, check in (("date", is_date), ("date-time", is_date_time), ("uuid", is_uuid)):
        if name not in checker.checkers:
            checker.checks(name)(check)
    return checker


# ---- inputs ---------------------------------------------------------------------

def read_messages(directory):
    return oracle_io.read_messages(directory, fail)


def no_duplicate_keys(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def read_expected(directory):
    events = []
    with open(os.path.join(directory, "expected.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                events.append(json.loads(line, object_pairs_hook=no_duplicate_keys))
            except ValueError as e:
                fail(f"expected.jsonl line {n} is not JSON: {e}")
    return events


# ---- checks ---------------------------------------------------------------------

def payload_document(k, message, first_id):
    if len(message) < 5 or message[0] != 0:
        fail(f"message {k}: no Confluent header ({len(message)} bytes, first byte {message[:1].hex() or 'none'})")
    schema_id = int.from_bytes(message[1:5], "big")
    if first_id is not None and schema_id != first_id:
        fail(f"message {k}: schema id {schema_id}, message 1 has {first_id}")
    try:
        document = json.loads(message[5:].decode("utf-8"), object_pairs_hook=no_duplicate_keys)
    except ValueError as e:  # UnicodeDecodeError is a ValueError
        fail(f"message {k}: the payload is not UTF-8 JSON: {e}")
    return schema_id, document


def check_content_encoding(k, schema, document):
    for name, spec in schema.get("properties", {}).items():
        value = document.get(name) if isinstance(document, dict) else None
        if isinstance(spec, dict) and spec.get("contentEncoding") == "base64" and isinstance(value, str):
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                fail(f"message {k} field {name}: {json.dumps(value)} is not base64")


def same_json(a, b):
    """Equal as JSON values of the same JSON types (Python's True == 1 is not)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and a == b and repr(a) == repr(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def check_equal(k, document, event):
    if not isinstance(document, dict):
        fail(f"message {k}: the payload is not a JSON object")
    for name, want in event.items():
        if name not in document:
            fail(f"message {k} field {name}: not in the payload, expected {json.dumps(want, ensure_ascii=False)}")
        if not same_json(document[name], want):
            fail(f"message {k} field {name}: the payload has {json.dumps(document[name], ensure_ascii=False)}, "
                 f"expected {json.dumps(want, ensure_ascii=False)}")
    for name in document:
        if name not in event:
            fail(f"message {k} field {name}: in the payload, not in expected.jsonl")


def first_error(validator, document):
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return errors[0] if errors else None


def main(argv):
    if len(argv) != 2:
        print("usage: jsonschema_oracle.py DIR   (DIR holds schema.json, messages.bin, expected.jsonl)",
              file=sys.stderr)
        return 2
    directory = argv[1]
    with open(os.path.join(directory, "schema.json"), encoding="utf-8") as f:
        try:
            schema = json.load(f)
        except ValueError as e:
            fail(f"schema.json is not JSON: {e}")
    try:
        jsonschema.Draft7Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        fail(f"schema.json is not a valid draft-07 schema: {e.message}")
    validator = jsonschema.Draft7Validator(schema, format_checker=format_checker())
    messages, events = read_messages(directory), read_expected(directory)
    if len(messages) != len(events):
        fail(f"messages.bin holds {len(messages)} messages, expected.jsonl {len(events)} events")
    if not messages:
        fail("messages.bin holds no message: nothing to check")
    first_id = None
    for k, (message, event) in enumerate(zip(messages, events), 1):
        schema_id, document = payload_document(k, message, first_id)
        first_id = schema_id if first_id is None else first_id
        error = first_error(validator, document)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(the event)"
            fail(f"message {k} field {where}: not valid under schema.json: {error.message}")
        check_content_encoding(k, schema, document)
        check_equal(k, document, event)
    print(f"{PROG}: {len(messages)} messages valid and equal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
