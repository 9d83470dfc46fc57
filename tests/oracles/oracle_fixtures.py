#!/usr/bin/env python3
"""oracle_fixtures.py OUT — hand-made fixtures for the oracles' self-test (standard library only).

Why: an oracle is only worth running if it refuses wrong data. These fixtures are
written by hand, not by shape: every column pairs the value carried on the wire
(days, ticks, unscaled decimals, raw bytes) with the flat-JSON text worked out by
hand, so neither side is derived from the other or from shape's code. Two tiny
anchor fixtures are literal bytes (the classic 150/"hi" examples), checking the
little encoders below against hand-encoded bytes.
How: for each format a good fixture (must pass) and many bad ones, each with ONE
wrong thing: one expected value per logical type (a day, a tick at the carried
precision, a decimal digit or scale, a missing zone, the sign of a zero, null for
a value, ...) or one broken message (magic byte, schema id, message index,
truncated payload, trailing or unknown bytes, a message too many). OUT/cases.tsv
lists `tool<TAB>dir<TAB>pass|fail<TAB>text the oracle's output must contain`.
"""
import json
import os
import struct
import sys

# ---- wire encoders (Avro binary, Protobuf binary) ----------------------------------


def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def zigzag(n):
    return varint((n << 1) ^ (n >> 63))


def unscaled_bytes(n):
    """Minimal big-endian two's complement bytes of an integer."""
    return n.to_bytes(max(1, (n + (n < 0)).bit_length() // 8 + 1), "big", signed=True)


def avro_base(avro_type):
    """(base type name, logical type or None) of a field type: the non-null branch of a union."""
    if isinstance(avro_type, list):
        return avro_base([t for t in avro_type if t != "null"][0])
    if isinstance(avro_type, dict):
        return avro_type["type"], avro_type.get("logicalType")
    return avro_type, None


def avro_value(avro_type, wire):
    base, logical = avro_base(avro_type)
    if base == "null":
        return b""
    if base in ("int", "long"):
        return zigzag(wire)
    if base == "boolean":
        return b"\x01" if wire else b"\x00"
    if base == "float":
        return struct.pack("<f", wire)
    if base == "double":
        return struct.pack("<d", wire)
    if base == "string":
        data = wire.encode("utf-8")
        return zigzag(len(data)) + data
    if base == "bytes":
        data = unscaled_bytes(wire) if logical == "decimal" else wire
        return zigzag(len(data)) + data
    raise ValueError(base)


def avro_field(avro_type, wire):
    if isinstance(avro_type, list):
        if wire is None:
            return zigzag(avro_type.index("null"))
        branch = [i for i, t in enumerate(avro_type) if t != "null"][0]
        return zigzag(branch) + avro_value(avro_type[branch], wire)
    return avro_value(avro_type, wire)


def proto_field(number, proto_type, wire):
    if wire is None:
        return b""
    if proto_type in ("int32", "int64", "uint32", "uint64"):
        return varint(number << 3) + varint(wire & ((1 << 64) - 1))
    if proto_type == "bool":
        return varint(number << 3) + (b"\x01" if wire else b"\x00")
    if proto_type == "float":
        return varint(number << 3 | 5) + struct.pack("<f", wire)
    if proto_type == "double":
        return varint(number << 3 | 1) + struct.pack("<d", wire)
    data = wire.encode("utf-8") if proto_type == "string" else wire
    return varint(number << 3 | 2) + varint(len(data)) + data


# ---- the columns: (name, type, five (wire, expected) rows, wrong expecteds) -------------

def nullable(t):
    return ["null", t]


def logical(base, name, **extra):
    return dict({"type": base, "logicalType": name}, **extra)


NAN = float("nan")
F32_1_1 = struct.unpack("<f", struct.pack("<f", 1.1))[0]   # 1.100000023841858

AVRO_COLUMNS = [
    ("born", nullable(logical("int", "date")),
     [(19675, "2023-11-14"), (-719162, "0001-01-01"), (19782, "2024-02-29"), (None, None), (11016, "2000-02-29")],
     [(0, "2023-11-15"), (2, "2024-03-01"), (3, "1970-01-01"), (4, "2000-03-01")]),
    ("old_day", logical("int", "date"),
     [(-1, "1969-12-31"), (0, "1970-01-01"), (2932896, "9999-12-31"), (-25567, "1900-01-01"), (59, "1970-03-01")],
     [(3, "1900-01-02"), (0, "1970-01-01"), (4, "1970-02-29")]),
    ("id", nullable("long"),
     [(0, 0), (-1, -1), (1 << 62, 4611686018427387904), (-(1 << 63), -9223372036854775808), (None, None)],
     [(2, 4611686018427387905), (0, None), (4, 0), (1, "-1")]),
    ("mid", nullable("int"),
     [(-2147483648, -2147483648), (2147483647, 2147483647), (0, 0), (None, None), (7, 7)],
     [(0, -2147483647), (2, None), (4, 7.5)]),
    ("u32", "long",
     [(4000000000, 4000000000), (0, 0), (4294967295, 4294967295), (1, 1), (65535, 65535)],
     [(0, 4000000001)]),
    ("flag", nullable("boolean"),
     [(True, True), (False, False), (None, None), (True, True), (False, False)],
     [(1, True), (0, 1), (2, False)]),
    ("f32", nullable("float"),
     [(1.1, F32_1_1), (1.5, 1.5), (-0.0, -0.0), (None, None), (0.1, 0.1)],
     [(0, 1.2), (2, 0.0), (3, 0.0), (4, 0.10001)]),
    ("f64", nullable("double"),
     [(3.14159, 3.14159), (-0.0, -0.0), (1.5e300, 1.5e300), (None, None), (2.0, 2.0)],
     [(0, 3.1415900000000003), (1, 0.0), (2, 1.5e301), (3, 0.0)]),
    ("name", nullable("string"),
     [('é "quoted"\nline', 'é "quoted"\nline'), ("", ""), (None, None), ("plain", "plain"),
      ("nul\x00inside", "nul\x00inside")],
     [(0, 'e "quoted"\nline'), (1, None), (4, "nul"), (3, "plain ")]),
    ("uid", nullable(logical("string", "uuid")),
     [("123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"), (None, None),
      ("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"),
      ("ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff"), (None, None)],
     [(0, "123E4567-E89B-12D3-A456-426614174000"), (3, "ffffffff-ffff-ffff-ffff-fffffffffffe")]),
    ("blob", nullable("bytes"),
     [(b"\x00\xff\x10", "AP8Q"), (b"", ""), (None, None), (b"hello", "aGVsbG8="), (b"\xfb\xff", "+/8=")],
     [(0, "AP8R"), (3, "aGVsbG8"), (4, "-_8="), (1, None)]),
    ("amount", nullable(logical("bytes", "decimal", precision=12, scale=2)),
     [(100025, "1000.25"), (-100025, "-1000.25"), (5, "0.05"), (-5, "-0.05"), (None, None)],
     [(0, "1000.26"), (0, "1000.250"), (2, "0.5"), (3, "0.05"), (1, "-1000.2")]),
    ("tiny_dec", logical("bytes", "decimal", precision=18, scale=8),
     [(1, "0.00000001"), (0, "0.00000000"), (-123456789012345678, "-1234567890.12345678"),
      (99999999, "0.99999999"), (100000000, "1.00000000")],
     [(1, "0"), (2, "-1234567890.12345679"), (4, "1.0000000")]),
    ("wide_dec", nullable(logical("bytes", "decimal", precision=38, scale=10)),
     [(12345678901234567890123456789012345678, "1234567890123456789012345678.9012345678"),
      (-(10 ** 37), "-1000000000000000000000000000.0000000000"),
      (1 << 63, "922337203.6854775808"), (-(1 << 64), "-1844674407.3709551616"), (None, None)],
     [(0, "1234567890123456789012345678.9012345679"), (3, "-1844674407.3709551615"),
      (1, "1000000000000000000000000000.0000000000")]),
    ("at_s", logical("int", "time-millis"),   # a time32[s] column: whole seconds
     [(3723000, "01:02:03"), (0, "00:00:00"), (86399000, "23:59:59"), (45296000, "12:34:56"),
      (60000, "00:01:00")],
     [(0, "01:02:04"), (2, "23:59:58"), (4, "00:00:59")]),
    ("at_ms", nullable(logical("int", "time-millis")),
     [(1, "00:00:00.001"), (45296789, "12:34:56.789"), (None, None), (86399999, "23:59:59.999"),
      (0, "00:00:00.000")],
     [(1, "12:34:56.788"), (0, "00:00:00.002"), (3, "23:59:59.998")]),
    ("at", nullable(logical("long", "time-micros")),
     [(45296789012, "12:34:56.789012"), (1, "00:00:00.000001"), (86399999999, "23:59:59.999999"),
      (None, None), (0, "00:00:00.000000")],
     [(0, "12:34:56.789013"), (2, "23:59:59.999998"), (1, "00:00:00.000002")]),
    ("at_ns", logical("long", "time-micros"),   # a time64[ns] column, truncated to µs
     [(45296789012, "12:34:56.789012000"), (1, "00:00:00.000001000"), (0, "00:00:00.000000000"),
      (3600000000, "01:00:00.000000000"), (7, "00:00:00.000007000")],
     [(0, "12:34:56.789013000"), (4, "00:00:00.000008000")]),
    ("ts_naive", nullable(logical("long", "local-timestamp-micros")),
     [(1700000000123456, "2023-11-14T22:13:20.123456"), (-1, "1969-12-31T23:59:59.999999"),
      (0, "1970-01-01T00:00:00.000000"), (None, None), (951782400000000, "2000-02-29T00:00:00.000000")],
     [(0, "2023-11-14T22:13:20.123456Z"), (1, "1969-12-31T23:59:59.999998"),
      (4, "2000-03-01T00:00:00.000000"), (2, "1970-01-01T00:00:00.000001")]),
    ("ts_ns", logical("long", "local-timestamp-micros"),   # a timestamp[ns] column
     [(1700000000123456, "2023-11-14T22:13:20.123456000"), (-1, "1969-12-31T23:59:59.999999000"),
      (0, "1970-01-01T00:00:00.000000000"), (1, "1970-01-01T00:00:00.000001000"),
      (-86400000000, "1969-12-31T00:00:00.000000000")],
     [(0, "2023-11-14T22:13:20.123457000"), (4, "1969-12-30T00:00:00.000000000")]),
    ("ts_ms", nullable(logical("long", "local-timestamp-millis")),
     [(1700000000123, "2023-11-14T22:13:20.123"), (-1, "1969-12-31T23:59:59.999"), (None, None),
      (0, "1970-01-01T00:00:00.000"), (86400000, "1970-01-02T00:00:00.000")],
     [(0, "2023-11-14T22:13:20.124"), (1, "1969-12-31T23:59:59.998"), (4, "1970-01-02T00:00:00.000Z")]),
    ("ts_s", logical("long", "local-timestamp-millis"),   # a timestamp[s] column
     [(1700000000000, "2023-11-14T22:13:20"), (-86400000, "1969-12-31T00:00:00"), (0, "1970-01-01T00:00:00"),
      (1000, "1970-01-01T00:00:01"), (253402300799000, "9999-12-31T23:59:59")],
     [(0, "2023-11-14T22:13:21"), (4, "9999-12-31T23:59:58")]),
    ("ts_utc", nullable(logical("long", "timestamp-micros")),
     [(1700000000123456, "2023-11-14T22:13:20.123456Z"), (None, None), (-1, "1969-12-31T23:59:59.999999Z"),
      (0, "1970-01-01T00:00:00.000000Z"), (1, "1970-01-01T00:00:00.000001Z")],
     [(0, "2023-11-14T22:13:20.123456"), (2, "1969-12-31T23:59:59.999998Z"), (1, "1970-01-01T00:00:00.000000Z")]),
    ("ts_zone", nullable(logical("long", "timestamp-millis")),
     [(1700000000123, "2023-11-14T22:13:20.123Z"), (-1, "1969-12-31T23:59:59.999Z"), (None, None),
      (0, "1970-01-01T00:00:00.000Z"), (1700000000000, "2023-11-14T22:13:20.000Z")],
     [(1, "1969-12-31T23:59:59.999"), (0, "2023-11-14T22:13:20.122Z"), (4, "2023-11-14T22:13:20.001Z")]),
    ("nothing", "null",
     [(None, None)] * 5,
     [(0, ""), (1, 0)]),
    ("_shape_table", "string",
     [("typed", "typed")] * 5,
     [(0, "typd")]),
    ("_shape_seq", "long",
     [(1000, 1000), (1001, 1001), (1002, 1002), (1003, 1003), (1004, 1004)],
     [(3, 1004)]),
    ("_shape_event_time", nullable(logical("long", "timestamp-micros")),
     [(1700000000000000, "2023-11-14T22:13:20.000000Z"), (None, None), (1700000000010000, "2023-11-14T22:13:20.010000Z"),
      (1700000000020000, "2023-11-14T22:13:20.020000Z"), (1700000000030000, "2023-11-14T22:13:20.030000Z")],
     [(2, "2023-11-14T22:13:20.100000Z")]),
]

DATE_COMMENT = "date, days since 1970-01-01"
TIME_COMMENT = "time of day, microseconds"
NAIVE_COMMENT = "timestamp without time zone, wall-clock microseconds since the epoch"
UTC_COMMENT = "timestamp with time zone, microseconds since the epoch (UTC)"

# (name, optional?, proto type, comment, rows, wrong expecteds). _shape_seq starts at 0
# so its first message leaves the field unset (proto3 default) yet decodes to 0.
PROTO_COLUMNS = [
    ("born", True, "int32", DATE_COMMENT,
     [(19675, "2023-11-14"), (-719162, "0001-01-01"), (19782, "2024-02-29"), (None, None), (0, "1970-01-01")],
     [(0, "2023-11-15"), (2, "2024-03-01"), (3, "1970-01-01"), (4, None)]),
    ("old_day", False, "int32", DATE_COMMENT,
     [(-1, "1969-12-31"), (0, "1970-01-01"), (2932896, "9999-12-31"), (-25567, "1900-01-01"), (59, "1970-03-01")],
     [(1, "1970-01-02"), (3, "1900-01-02")]),
    ("id", True, "int64", None,
     [(0, 0), (-1, -1), (1 << 62, 4611686018427387904), (-(1 << 63), -9223372036854775808), (None, None)],
     [(0, None), (3, -9223372036854775807), (4, 0), (1, "-1")]),
    ("mid", True, "int32", None,
     [(-2147483648, -2147483648), (2147483647, 2147483647), (0, 0), (None, None), (7, 7)],
     [(0, 2147483648), (4, 7.0)]),
    ("u32", True, "uint32", None,
     [(4000000000, 4000000000), (0, 0), (4294967295, 4294967295), (None, None), (1, 1)],
     [(0, -294967296)]),
    ("u64", True, "uint64", None,
     [((1 << 64) - 1, 18446744073709551615), ((1 << 63) + 5, 9223372036854775813), (0, 0), (None, None),
      (1 << 62, 4611686018427387904)],
     [(0, -1), (1, 9223372036854775812)]),
    ("flag", True, "bool", None,
     [(True, True), (False, False), (None, None), (True, True), (False, False)],
     [(1, True), (0, 1), (2, False)]),
    ("f32", True, "float", None,
     [(1.1, F32_1_1), (1.5, 1.5), (-0.0, -0.0), (None, None), (0.1, 0.1)],
     [(0, 1.2), (2, 0.0), (3, 0.0), (4, 0.1000001)]),
    ("f64", True, "double", None,
     [(3.14159, 3.14159), (-0.0, -0.0), (1.5e300, 1.5e300), (None, None), (2.0, 2.0)],
     [(0, 3.1415900000000003), (1, 0.0), (4, "2.0")]),
    ("name", True, "string", None,
     [('é "quoted"\nline\t\\', 'é "quoted"\nline\t\\'), ("", ""), (None, None), ("plain", "plain"),
      ("nul\x00inside", "nul\x00inside")],
     [(0, 'é "quoted"\nline\t/'), (1, None), (4, "nul")]),
    ("uid", True, "string", "uuid",
     [("123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"), (None, None),
      ("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"), (None, None),
      ("ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff")],
     [(0, "123E4567-E89B-12D3-A456-426614174000")]),
    ("blob", True, "bytes", None,
     [(b"\x00\xff\x10", "AP8Q"), (b"", ""), (None, None), (b"hello", "aGVsbG8="), (b"\xfb\xff", "+/8=")],
     [(0, "AP8R"), (3, "aGVsbG8"), (1, None)]),
    ("amount", True, "string", "decimal(12, 2), canonical text",
     [("1000.25", "1000.25"), ("-1000.25", "-1000.25"), ("0.05", "0.05"), (None, None), ("0.00", "0.00")],
     [(0, "1000.26"), (2, "0.050"), (4, "0")]),
    ("at", True, "int64", TIME_COMMENT,   # time32[s], time32[ms], time64[us] values in µs
     [(3723000000, "01:02:03"), (45296789000, "12:34:56.789"), (45296789012, "12:34:56.789012"), (None, None),
      (86399999999, "23:59:59.999999")],
     [(0, "01:02:04"), (1, "12:34:56.788"), (2, "12:34:56.789013"), (3, "00:00:00")]),
    ("at_ns", False, "int64", TIME_COMMENT,
     [(45296789012, "12:34:56.789012000"), (0, "00:00:00.000000000"), (1, "00:00:00.000001000"),
      (3600000000, "01:00:00.000000000"), (7, "00:00:00.000007000")],
     [(0, "12:34:56.789013000"), (1, "00:00:00.000001000")]),
    ("ts_naive", True, "int64", NAIVE_COMMENT,
     [(1700000000123456, "2023-11-14T22:13:20.123456"), (-1, "1969-12-31T23:59:59.999999"), (None, None),
      (1700000000123000, "2023-11-14T22:13:20.123"), (1700000000000000, "2023-11-14T22:13:20")],
     [(0, "2023-11-14T22:13:20.123456Z"), (1, "1969-12-31T23:59:59.999998"), (3, "2023-11-14T22:13:20.124"),
      (4, "2023-11-14T22:13:21")]),
    ("ts_ns", True, "int64", NAIVE_COMMENT,
     [(1700000000123456, "2023-11-14T22:13:20.123456000"), (-1, "1969-12-31T23:59:59.999999000"),
      (0, "1970-01-01T00:00:00.000000000"), (None, None), (951782400000000, "2000-02-29T00:00:00.000000000")],
     [(0, "2023-11-14T22:13:20.123457000"), (4, "2000-03-01T00:00:00.000000000")]),
    ("ts_utc", True, "int64", UTC_COMMENT,
     [(1700000000123456, "2023-11-14T22:13:20.123456Z"), (None, None), (-1, "1969-12-31T23:59:59.999999Z"),
      (1700000000123000, "2023-11-14T22:13:20.123Z"), (0, "1970-01-01T00:00:00Z")],
     [(0, "2023-11-14T22:13:20.123456"), (2, "1969-12-31T23:59:59.999998Z"), (3, "2023-11-14T22:13:20.122Z")]),
    ("nothing", True, "string", None,
     [(None, None)] * 5,
     [(0, "")]),
    ("_shape_table", False, "string", None,
     [("typed", "typed")] * 5,
     [(0, "typd")]),
    ("_shape_seq", False, "int64", None,
     [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)],
     [(0, None), (0, 1), (2, 3)]),
    ("_shape_event_time", True, "int64", UTC_COMMENT,
     [(1700000000000000, "2023-11-14T22:13:20.000000Z"), (None, None), (1700000000010000, "2023-11-14T22:13:20.010000Z"),
      (1700000000020000, "2023-11-14T22:13:20.020000Z"), (1700000000030000, "2023-11-14T22:13:20.030000Z")],
     [(2, "2023-11-14T22:13:20.100000Z")]),
]

JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "typed",
    "type": "object",
    "properties": {
        "born": {"type": ["string", "null"], "format": "date"},
        "id": {"type": ["integer", "null"]},
        "flag": {"type": ["boolean", "null"]},
        "f64": {"type": ["number", "null"]},
        "name": {"type": ["string", "null"]},
        "uid": {"type": ["string", "null"], "format": "uuid"},
        "blob": {"type": ["string", "null"], "contentEncoding": "base64"},
        "amount": {"type": ["string", "null"], "pattern": "^-?[0-9]+(\\.[0-9]+)?$",
                   "description": "decimal(12, 2), canonical text"},
        "at": {"type": ["string", "null"], "description": "time of day"},
        "ts_naive": {"type": ["string", "null"], "description": "timestamp without time zone"},
        "ts_utc": {"type": ["string", "null"], "format": "date-time"},
        "nothing": {"type": "null"},
        "_shape_table": {"type": "string"},
        "_shape_seq": {"type": "integer"},
        "_shape_event_time": {"type": ["string", "null"], "format": "date-time"},
    },
    "required": ["_shape_table", "_shape_seq"],
    "additionalProperties": False,
}

JSON_EVENTS = [
    {"born": "2023-11-14", "id": 4611686018427387904, "flag": True, "f64": 3.14159, "name": 'é "q"\n',
     "uid": "123e4567-e89b-12d3-a456-426614174000", "blob": "AP8Q", "amount": "-1000.25", "at": "12:34:56.789012",
     "ts_naive": "2023-11-14T22:13:20.123456", "ts_utc": "2023-11-14T22:13:20.123456Z", "nothing": None,
     "_shape_table": "typed", "_shape_seq": 1000, "_shape_event_time": "2023-11-14T22:13:20.000000Z"},
    {"born": None, "id": None, "flag": None, "f64": None, "name": None, "uid": None, "blob": None, "amount": None,
     "at": None, "ts_naive": None, "ts_utc": None, "nothing": None, "_shape_table": "typed", "_shape_seq": 1001,
     "_shape_event_time": None},
    {"born": "2024-02-29", "id": -1, "flag": False, "f64": -0.0, "name": "", "uid": "00000000-0000-0000-0000-000000000000",
     "blob": "", "amount": "0.05", "at": "00:00:00", "ts_naive": "1969-12-31T23:59:59.999999000",
     "ts_utc": "1969-12-31T23:59:59.999Z", "nothing": None, "_shape_table": "typed", "_shape_seq": 1002,
     "_shape_event_time": "2023-11-14T22:13:20.020000Z"},
]

# ---- writing fixtures ------------------------------------------------------------


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []

    def fixture(self, tool, name, schema_file, schema_text, messages, events, outcome, needle, raw_expected=None):
        directory = os.path.join(self.out, tool, name)
        os.makedirs(directory)
        with open(os.path.join(directory, schema_file), "w", encoding="utf-8") as f:
            f.write(schema_text)
        with open(os.path.join(directory, "messages.bin"), "wb") as f:
            for m in messages:
                f.write(len(m).to_bytes(4, "big") + m)
        with open(os.path.join(directory, "expected.jsonl"), "w", encoding="utf-8") as f:
            if raw_expected is not None:
                f.write(raw_expected)
            for event in events:
                f.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.cases.append((tool, directory, outcome, needle))

    def finish(self):
        with open(os.path.join(self.out, "cases.tsv"), "w", encoding="utf-8") as f:
            for case in self.cases:
                f.write("\t".join(case) + "\n")


def header(schema_id, protobuf):
    return b"\x00" + schema_id.to_bytes(4, "big") + (b"\x00" if protobuf else b"")


def events_of(columns, name_at=0, rows_at=-2):
    count = len(columns[0][rows_at])
    return [{c[name_at]: c[rows_at][r][1] for c in columns} for r in range(count)]


def with_wrong(events, row, name, value):
    changed = [dict(e) for e in events]
    changed[row][name] = value
    return changed


def message_variants(messages, protobuf):
    """(case name, messages, text the refusal must contain) of broken messages."""
    magic = [bytearray(m) for m in messages]
    magic[1][0] = 1
    other_id = list(messages)
    other_id[2] = b"\x00" + (101).to_bytes(4, "big") + messages[2][5:]
    trailing = list(messages)
    trailing[3] = messages[3] + b"\x00"
    truncated = list(messages)
    truncated[0] = messages[0][:-1]
    variants = [
        ("bad_magic", [bytes(m) for m in magic], "message 2"),
        ("bad_schema_id", other_id, "message 3: schema id 101"),
        ("bad_truncated", truncated, "message 1"),
        ("bad_short_header", [messages[0][:3]] + list(messages[1:]), "message 1"),
    ]
    if protobuf:
        index = [bytearray(m) for m in messages]
        index[4][5] = 1
        variants.append(("bad_message_index", [bytes(m) for m in index], "message 5"))
        unknown = list(messages)
        unknown[1] = messages[1] + varint(99 << 3) + varint(1)
        variants.append(("bad_unknown_field", unknown, "message 2: field 99"))
    variants.append(("bad_trailing_byte", trailing, "message 4"))
    return variants


def write_format(w, tool, schema_file, schema_text, messages, columns, name_at, rows_at, protobuf):
    events = events_of(columns, name_at, rows_at)
    w.fixture(tool, "good", schema_file, schema_text, messages, events, "pass", f"{len(messages)} messages")
    for column in columns:
        name = column[name_at]
        for n, (row, wrong) in enumerate(column[-1]):
            w.fixture(tool, f"bad_{name}_{n}", schema_file, schema_text, messages,
                      with_wrong(events, row, name, wrong), "fail", f"message {row + 1} field {name}:")
    for case, broken, needle in message_variants(messages, protobuf):
        w.fixture(tool, case, schema_file, schema_text, broken, events, "fail", needle)
    w.fixture(tool, "bad_count", schema_file, schema_text, messages[:-1], events, "fail", "4 messages")
    w.fixture(tool, "bad_empty", schema_file, schema_text, [], [], "fail", "no message")
    missing = [dict(e) for e in events]
    del missing[2][columns[0][name_at]]
    w.fixture(tool, "bad_missing_key", schema_file, schema_text, messages, missing, "fail",
              f"message 3 field {columns[0][name_at]}")
    extra = [dict(e) for e in events]
    extra[4]["surplus"] = 1
    w.fixture(tool, "bad_extra_key", schema_file, schema_text, messages, extra, "fail", "message 5 field surplus")


def write_avro(w):
    fields = []
    for name, avro_type, _, _ in AVRO_COLUMNS:
        field = {"name": name, "type": avro_type}
        if isinstance(avro_type, list):
            field["default"] = None
        fields.append(field)
    schema = json.dumps({"type": "record", "name": "typed", "namespace": "shape.events", "fields": fields},
                        separators=(",", ":"))
    messages = [header(100, False) + b"".join(avro_field(c[1], c[2][r][0]) for c in AVRO_COLUMNS)
                for r in range(5)]
    write_format(w, "avro", "schema.avsc", schema, messages, AVRO_COLUMNS, 0, 2, False)
    # amount is decimal(12, 2): an unscaled value of 13 digits breaks the schema's promise.
    too_wide = [c if c[0] != "amount" else (c[0], c[1], [(10 ** 12, "10000000000.00")] + c[2][1:], c[3])
                for c in AVRO_COLUMNS]
    wide_messages = [header(100, False) + b"".join(avro_field(c[1], c[2][r][0]) for c in too_wide) for r in range(5)]
    w.fixture("avro", "bad_precision", "schema.avsc", schema, wide_messages, events_of(too_wide, 0, 2), "fail",
              "message 1 field amount: avro-c read 10000000000.00 (13 digits, precision 12)")
    # The anchor: record {a: long, s: string} = {150, "hi"} is ac 02 | 04 68 69, by hand.
    anchor_schema = ('{"type":"record","name":"t","namespace":"shape.events","fields":'
                     '[{"name":"a","type":"long"},{"name":"s","type":"string"}]}')
    anchor = bytes.fromhex("00 00 00 00 07 ac 02 04 68 69")
    assert anchor[5:] == zigzag(150) + avro_value("string", "hi")
    w.fixture("avro", "anchor", "schema.avsc", anchor_schema, [anchor], [{"a": 150, "s": "hi"}], "pass", "1 messages")
    w.fixture("avro", "bad_anchor", "schema.avsc", anchor_schema, [anchor], [{"a": 151, "s": "hi"}], "fail",
              "message 1 field a: avro-c read 150, expected 151")


def write_protobuf(w):
    lines = ['syntax = "proto3";', "", "package shape.events;", "", "message typed {"]
    for number, (name, optional, proto_type, comment, _, _) in enumerate(PROTO_COLUMNS, 1):
        line = f"  {'optional ' if optional else ''}{proto_type} {name} = {number};"
        lines.append(line + (f"  // {comment}" if comment else ""))
    schema = "\n".join(lines + ["}"]) + "\n"
    messages = [header(100, True) + b"".join(proto_field(n, c[2], c[4][r][0]) for n, c in enumerate(PROTO_COLUMNS, 1))
                for r in range(5)]
    write_format(w, "protobuf", "schema.proto", schema, messages, PROTO_COLUMNS, 0, 4, True)
    # The anchor: {a: 150, s: "hi"} is 08 96 01 | 12 02 68 69, by hand.
    anchor_schema = ('syntax = "proto3";\n\npackage shape.events;\n\nmessage t {\n  int64 a = 1;\n'
                     "  optional string s = 2;\n}\n")
    anchor = bytes.fromhex("00 00 00 00 07 00 08 96 01 12 02 68 69")
    assert anchor[6:] == proto_field(1, "int64", 150) + proto_field(2, "string", "hi")
    w.fixture("protobuf", "anchor", "schema.proto", anchor_schema, [anchor], [{"a": 150, "s": "hi"}], "pass",
              "1 messages")
    w.fixture("protobuf", "bad_anchor", "schema.proto", anchor_schema, [anchor], [{"a": 150, "s": "ho"}], "fail",
              'message 1 field s: protoc read "hi", expected "ho"')


def json_payload(event):
    return header(100, False) + json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def write_json_schema(w):
    schema = json.dumps(JSON_SCHEMA, separators=(",", ":"))
    events = JSON_EVENTS
    messages = [json_payload(e) for e in events]
    w.fixture("jsonschema", "good", "schema.json", schema, messages, events, "pass", "3 messages valid and equal")

    def both(name, row, field, value, needle):
        """Payload and expected agree on a value the schema refuses."""
        changed = with_wrong(events, row, field, value)
        w.fixture("jsonschema", name, "schema.json", schema, [json_payload(e) for e in changed], changed, "fail",
                  needle)

    both("bad_date_format", 0, "born", "2023-02-30", "field born: not valid")
    both("bad_date_time_zone", 0, "ts_utc", "2023-11-14T22:13:20.123456", "field ts_utc: not valid")
    both("bad_uuid_format", 2, "uid", "123e4567e89b12d3a456426614174000", "field uid: not valid")
    both("bad_integer_type", 0, "id", "4611686018427387904", "field id: not valid")
    both("bad_decimal_pattern", 2, "amount", "5e-2", "field amount: not valid")
    both("bad_null_type", 1, "nothing", 0, "field nothing: not valid")
    both("bad_additional", 1, "extra", 1, "not valid")
    both("bad_base64", 0, "blob", "AP8?", "field blob: \"AP8?\" is not base64")
    missing = [dict(e) for e in events]
    del missing[1]["_shape_seq"]
    w.fixture("jsonschema", "bad_required", "schema.json", schema, [json_payload(e) for e in missing], missing,
              "fail", "message 2 field (the event): not valid")

    def differs(name, row, field, expected_value, needle):
        """The payload is valid; the expected event says otherwise."""
        w.fixture("jsonschema", name, "schema.json", schema, messages, with_wrong(events, row, field, expected_value),
                  "fail", needle)

    differs("bad_value", 0, "amount", "-1000.26", "message 1 field amount: the payload has \"-1000.25\"")
    differs("bad_negative_zero", 2, "f64", 0.0, "message 3 field f64")
    differs("bad_float_vs_int", 0, "_shape_seq", 1000.0, "message 1 field _shape_seq")
    differs("bad_bool_vs_int", 2, "flag", 0, "message 3 field flag")
    differs("bad_null_value", 1, "name", "", "message 2 field name")
    magic = list(messages)
    magic[1] = b"\x01" + messages[1][1:]
    w.fixture("jsonschema", "bad_magic", "schema.json", schema, magic, events, "fail", "message 2: no Confluent header")
    other_id = list(messages)
    other_id[2] = b"\x00" + (7).to_bytes(4, "big") + messages[2][5:]
    w.fixture("jsonschema", "bad_schema_id", "schema.json", schema, other_id, events, "fail", "message 3: schema id 7")
    not_utf8 = list(messages)
    not_utf8[0] = messages[0].replace("é".encode("utf-8"), b"\xe9")
    w.fixture("jsonschema", "bad_utf8", "schema.json", schema, not_utf8, events, "fail", "message 1: the payload is not")
    duplicate = list(messages)
    duplicate[1] = messages[1][:-1] + b',"_shape_seq":1001}'
    w.fixture("jsonschema", "bad_duplicate_key", "schema.json", schema, duplicate, events, "fail", "duplicate key")
    w.fixture("jsonschema", "bad_count", "schema.json", schema, messages[:2], events, "fail", "2 messages")


def main(argv):
    if len(argv) != 2:
        print("usage: oracle_fixtures.py OUT", file=sys.stderr)
        return 2
    w = Writer(argv[1])
    write_avro(w)
    write_protobuf(w)
    write_json_schema(w)
    w.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
