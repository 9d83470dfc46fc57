#!/usr/bin/env python3
"""test_registry.py [--real-kafka] — the registry formats (Avro, Protobuf,
JSON Schema) of the original (sqllocks-shape-kafka 0.9.3 with its [avro]
and [protobuf] extras: fastavro, protobuf) and of ours, on the same broker
and the same registry (`shape schema-registry`: the original talks to any
Confluent-compatible registry over HTTP):

  * each tool emits retail (fabric_demo, every table) once per format into a
    one-partition topic of its own, subject strategy topic_record (with the
    default `topic` strategy every table's schema would go under one subject,
    which a registry refuses in both tools alike);
  * the schemas as the registry stores them (GET /schemas/ids/ID, the ids read
    from the messages), table by table and field by field: Avro record name,
    namespace, every field's name, position, type, logical type and default;
    the .proto text's syntax, package, message, and every field's type, name,
    number and comment; JSON Schema's keywords and every property's type,
    format and description, and `required`. The one difference (KNOWN,
    docs/COMPATIBILITY.md): the original declares every column nullable,
    ours only the columns that can be null; the test checks it is exactly
    that (every other attribute equal, ours' required columns never null in
    either tool's data);
  * the wire bytes, each way: the original's messages decoded by ours
    (tests/emulator/wire_decode_check, schema by the id in each message)
    and compared value by value with the original's own events; ours decoded
    by the original's libraries (tests/compat/orig_decode.py in the venv:
    fastavro with our schema as the writer's and the original's as the
    reader's, protobuf with the original's .proto compiled by protoc) and
    compared with our events; JSON Schema payloads validated against the
    other tool's schema (python3-jsonschema, draft 7).

The flat events each message must carry are the tool's own json-schema
payloads (the flat JSON event, §3.4, the same seed and order in every run).
With --real-kafka (CTest compat_registry_real, make emulator-kafka) the same
on the real Apache Kafka of SHAPE_TEST_KAFKA; it skips at once without it.
"""
import datetime
import json
import os
import re
import struct
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compat_lib as C  # noqa: E402

FORMATS = ("avro", "protobuf", "json-schema")
EVENT_FIELDS = ("_shape_table", "_shape_seq")  # never nullable, in both
TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?$")
PROTO_FIELD = re.compile(r"^  (optional )?(\w+) (\w+) = (\d+);(  // .*)?$")


def frames(path):
    data = open(path, "rb").read()
    out, at = [], 0
    while at + 4 <= len(data):
        n = struct.unpack(">I", data[at:at + 4])[0]
        out.append(data[at + 4:at + 4 + n])
        at += 4 + n
    return out


def write_frames(path, msgs):
    with open(path, "wb") as f:
        for m in msgs:
            f.write(struct.pack(">I", len(m)) + m)


def micros(text):
    """A flat event's timestamp text (any number of fraction digits) as
    microseconds since the epoch, the fraction cut (as the formats cut ns)."""
    m = TS.match(text)
    base = datetime.datetime.fromisoformat(m.group(1)).replace(tzinfo=datetime.timezone.utc)
    frac = (m.group(2) or "").ljust(9, "0")[:9]
    return int(base.timestamp()) * 1000000 + int(frac) // 1000


def same_value(a, b):
    """Two values of one field: equal, or the same number, or the same
    timestamp at microseconds (6 fraction digits in the original's events, 9
    in ours), or a timestamp text and its microseconds."""
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, str) and isinstance(b, str):
        if a == b:
            return True
        return bool(TS.match(a) and TS.match(b)) and micros(a) == micros(b)
    if isinstance(a, str) and TS.match(a) and isinstance(b, int):
        return micros(a) == b
    if isinstance(b, str) and TS.match(b) and isinstance(a, int):
        return micros(b) == a
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return False


def compare_events(where, decoded, expected):
    """Decoded records against flat events, field by field; one line."""
    bad = []
    if len(decoded) != len(expected):
        bad.append("%d decoded, %d expected" % (len(decoded), len(expected)))
    for i, (d, e) in enumerate(zip(decoded, expected)):
        if list(d) != list(e):
            bad.append("message %d: fields %s vs %s" % (i + 1, list(d), list(e)))
        for k in e:
            if k in d and not same_value(d[k], e[k]):
                bad.append("message %d %s: decoded %r, expected %r" % (i + 1, k, d[k], e[k]))
        if len(bad) > 3:
            break
    return C.check(not bad, "%s: %d messages decoded, every field equal%s" % (
        where, len(decoded), (": " + "; ".join(bad[:3])) if bad else ""))


class Registry:
    def __init__(self, work):
        url_file = os.path.join(work, "registry.url")
        self.proc = subprocess.Popen([C.OURS, "schema-registry", "--listen", "127.0.0.1:0", "--url-file", url_file],
                                     stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(url_file) and os.path.getsize(url_file):
                break
            if self.proc.poll() is not None:
                raise SystemExit("FAIL: shape schema-registry exited before listening")
            subprocess.run(["sleep", "0.05"])
        self.url = open(url_file).read().strip()

    def schema(self, sid):
        with urllib.request.urlopen("%s/schemas/ids/%d" % (self.url, sid), timeout=30) as r:
            return json.load(r)

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)


# ---- schemas, field by field ------------------------------------------------

def avro_fields(doc):
    """{name: (position, type without the null branch, nullable, default)}"""
    out = {}
    for i, f in enumerate(doc["fields"]):
        t = f["type"]
        nullable = isinstance(t, list) and t[0] == "null"
        out[f["name"]] = (i, t[1] if nullable else t, nullable, f.get("default", "(none)") if nullable else
                          f.get("default", "(none)"))
    return out


def proto_fields(text):
    """(header lines, {name: (number, type, comment, optional)})"""
    head, fields = [], {}
    for line in text.splitlines():
        m = PROTO_FIELD.match(line)
        if m:
            fields[m.group(3)] = (int(m.group(4)), m.group(2), m.group(5) or "", bool(m.group(1)))
        else:
            head.append(line)
    return head, fields


def json_fields(doc):
    out = {}
    for i, (name, p) in enumerate(doc["properties"].items()):
        t = p.get("type")
        nullable = isinstance(t, list) and "null" in t
        base = dict(p, type=[x for x in t if x != "null"][0] if nullable else t)
        out[name] = (i, json.dumps(base, sort_keys=True), nullable)
    return out


def compare_schema(fmt, table, so, su, nulls_seen):
    """One table's schema text of the original (so) and ours (su): every
    attribute equal but nullability; returns {field: (orig nullable, ours
    nullable)} of the fields whose nullability differs."""
    where = "%s %s" % (fmt, table)
    diff = {}
    if fmt == "avro":
        a, b = json.loads(so), json.loads(su)
        C.check({k: v for k, v in a.items() if k != "fields"} == {k: v for k, v in b.items() if k != "fields"},
                "%s: record %s.%s in both" % (where, a.get("namespace"), a.get("name")))
        fa, fb = avro_fields(a), avro_fields(b)
        C.check(list(fa) == list(fb), "%s: the same %d fields in the same order" % (where, len(fa)))
        for n in fa:
            if n in fb:
                pa, ta, na, da = fa[n]
                pb, tb, nb, db = fb[n]
                C.check(ta == tb, "%s.%s: type %s (logical type included) in both" % (where, n, json.dumps(ta)))
                C.check(na != nb or da == db, "%s.%s: the same default" % (where, n))
                if na != nb:
                    diff[n] = (na, nb)
    elif fmt == "protobuf":
        ha, fa = proto_fields(so)
        hb, fb = proto_fields(su)
        C.check(ha == hb, "%s: syntax, package and message lines equal (%s)" % (where, " | ".join(x for x in ha if x)))
        C.check(list(fa) == list(fb), "%s: the same %d fields in the same order" % (where, len(fa)))
        for n in fa:
            if n in fb:
                C.check(fa[n][:3] == fb[n][:3], "%s.%s: number, type and comment equal (%s)" % (where, n, fa[n][:3]))
                if fa[n][3] != fb[n][3]:
                    diff[n] = (fa[n][3], fb[n][3])
    else:
        a, b = json.loads(so), json.loads(su)
        keys = ("$schema", "title", "type", "additionalProperties")
        C.check([a.get(k) for k in keys] == [b.get(k) for k in keys] and set(a) == set(b),
                "%s: %s equal" % (where, ", ".join(keys)))
        fa, fb = json_fields(a), json_fields(b)
        C.check(list(fa) == list(fb), "%s: the same %d properties in the same order" % (where, len(fa)))
        for n in fa:
            if n in fb:
                C.check(fa[n][1] == fb[n][1], "%s.%s: %s in both" % (where, n, fa[n][1]))
                if fa[n][2] != fb[n][2]:
                    diff[n] = (fa[n][2], fb[n][2])
        for who, doc, f in (("original", a, fa), ("ours", b, fb)):
            C.check(doc["required"] == [n for n in f if not f[n][2]],
                    "%s %s: required is exactly its non-nullable properties, in order" % (where, who))
    # KNOWN: the original's columns are all nullable, ours only where a null can occur
    for n, (na, nb) in diff.items():
        C.check(na and not nb and n not in EVENT_FIELDS and not nulls_seen.get((table, n)),
                "known %s.%s: nullable in the original, required in ours, null in neither tool's events" % (where, n))
    return diff


# ---- the case ---------------------------------------------------------------

def emit(tool, fmt, broker, registry, topic):
    cfg = ["kafka.schema_registry_url=" + registry.url, "kafka.subject_strategy=topic_record"]
    args = ["emit", "retail", "--scale", "fabric_demo", "--event-format", fmt,
            "--sink", "kafka://%s/%s" % (broker.servers, topic)]
    for c in cfg:  # one --sink-config per setting: the original's argparse takes one value a flag
        args += ["--sink-config", c]
    rc, so, se = C.run(tool, args, timeout=180)
    C.check(rc == 0, "emit retail --event-format %s (%s): exit %d %s" % (fmt, tool, rc, se.strip()[-200:]))


def capture(broker, topic, path):
    with open(path, "wb") as f:
        subprocess.run(["kcat", "-b", broker.servers, "-t", topic, "-C", "-e", "-q", "-f", "%R%s"], stdout=f,
                       check=True, timeout=120)
    return frames(path)


def by_table(msgs, fmt):
    """{table: (schema id, [messages])} in order of first appearance, the
    header checked (magic 0; Protobuf's message-index byte 0)."""
    out = {}
    for m in msgs:
        sid = struct.unpack(">I", m[1:5])[0]
        if m[0] != 0 or (fmt == "protobuf" and m[5] != 0):
            C.check(False, "%s message with header %r" % (fmt, m[:6]))
            return {}
        out.setdefault(sid, []).append(m)
    return out


def table_of(fmt, text):
    if fmt == "avro":
        return json.loads(text)["name"]
    if fmt == "json-schema":
        return json.loads(text)["title"]
    return re.search(r"^message (\w+) \{$", text, re.M).group(1)


def main(work):
    try:
        import jsonschema
    except ImportError:
        print("SKIP: python3-jsonschema is not installed for %s (scripts/install-deps installs it)" % sys.executable)
        sys.exit(77)
    import shutil
    for tool, package in (("protoc", "protobuf-compiler"), ("kcat", "kcat")):
        if not shutil.which(tool):
            print("SKIP: no %s on PATH (Debian package %s; scripts/install-deps installs it)" % (tool, package))
            sys.exit(77)
    decode_check = os.environ.get("SHAPE_WIRE_DECODE_CHECK") or os.path.join(
        os.environ.get("SHAPE_BUILD_DIR", ""), "tests", "bin", "wire_decode_check")
    venv_python = os.path.join(C.compat_venv.path(), "bin", "python")
    topics = ["%s_%s:1" % (f.replace("-", "_"), t) for f in FORMATS for t in ("orig", "ours")]
    reg = Registry(work)
    try:
        with C.Broker(topics) as b:
            msgs = {}
            for fmt in FORMATS:
                for tool in ("orig", "ours"):
                    topic = b.topic("%s_%s" % (fmt.replace("-", "_"), tool))
                    emit(tool, fmt, b, reg, topic)
                    msgs[fmt, tool] = capture(b, topic, os.path.join(work, "%s-%s.bin" % (fmt, tool)))
                    C.check(len(msgs[fmt, tool]) == 4670, "%s %s: 4670 messages (%d)" % (fmt, tool, len(msgs[fmt, tool])))
            run_checks(work, reg, msgs, decode_check, venv_python, jsonschema)
    finally:
        reg.close()


def run_checks(work, reg, msgs, decode_check, venv_python, jsonschema):
    # The flat events: each tool's json-schema payloads, by table
    events = {}
    for tool in ("orig", "ours"):
        for m in msgs["json-schema", tool]:
            ev = json.loads(m[5:])
            events.setdefault((tool, ev["_shape_table"]), []).append(ev)
    tables = [t for (tool, t) in events if tool == "orig"]
    C.check(tables == [t for (tool, t) in events if tool == "ours"], "the same tables in the same order: %s" % tables)
    nulls_seen = {(t, k): True for (tool, t), evs in events.items() for ev in evs for k, v in ev.items() if v is None}
    schemas = {}  # (fmt, tool, table) -> (schema id, text)
    grouped = {}
    for fmt in FORMATS:
        for tool in ("orig", "ours"):
            g = by_table(msgs[fmt, tool], fmt)
            C.check(len(g) == len(tables), "%s %s: one schema id a table (%d)" % (fmt, tool, len(g)))
            for sid, ms in g.items():
                doc = reg.schema(sid)
                table = table_of(fmt, doc["schema"])
                C.check(doc.get("schemaType", "AVRO") == {"avro": "AVRO", "protobuf": "PROTOBUF",
                                                           "json-schema": "JSON"}[fmt],
                        "%s %s %s: schemaType %s" % (fmt, tool, table, doc.get("schemaType", "AVRO")))
                schemas[fmt, tool, table] = (sid, doc["schema"])
                grouped[fmt, tool, table] = ms
                C.check(len(ms) == len(events[tool, table]), "%s %s %s: %d messages, as many as events" % (
                    fmt, tool, table, len(ms)))
    # Schemas, field by field; the nullability difference the same in all three formats
    diffs = {}
    for fmt in FORMATS:
        for table in tables:
            so, su = schemas[fmt, "orig", table][1], schemas[fmt, "ours", table][1]
            d = compare_schema(fmt, table, so, su, nulls_seen)
            diffs[fmt] = diffs.get(fmt, {})
            diffs[fmt].update({(table, n): v for n, v in d.items()})
    C.check(set(diffs["avro"]) == set(diffs["protobuf"]) == set(diffs["json-schema"]),
            "the same %d fields are nullable in the original only, in all three formats" % len(diffs["avro"]))
    print("known: %d of the retail tables' fields are required in ours, nullable in the original" % len(diffs["avro"]))

    # The original's bytes, decoded by ours, against the original's events
    for fmt in ("avro", "protobuf", "json-schema"):
        for table in tables:
            d = os.path.join(work, "ours-reads-orig-%s-%s" % (fmt, table))
            os.makedirs(d, exist_ok=True)
            write_frames(os.path.join(d, "messages.bin"), grouped[fmt, "orig", table])
            r = subprocess.run([decode_check, reg.url, table, d], capture_output=True, text=True, timeout=120)
            if not C.check(r.returncode == 0, "ours decodes the original's %s %s%s" % (
                    fmt, table, r.returncode and ": " + r.stderr.strip()[-300:] or "")):
                continue
            decoded = [json.loads(l) for l in r.stdout.splitlines()]
            compare_events("ours reads the original's %s %s" % (fmt, table), decoded, events["orig", table])

    # Ours, decoded by the original's libraries with the original's schema
    # (one venv python for every job). KNOWN: proto3 leaves a non-optional
    # field at its default (0, false, "") off the wire, which the original's
    # schema, where the field is optional, reads as null.
    jobs = []
    for fmt in ("avro", "protobuf"):
        for table in tables:
            d = os.path.join(work, "orig-reads-ours-%s-%s" % (fmt, table))
            os.makedirs(d, exist_ok=True)
            write_frames(os.path.join(d, "messages.bin"), grouped[fmt, "ours", table])
            if fmt == "avro":
                writer, reader = os.path.join(d, "ours.avsc"), os.path.join(d, "orig.avsc")
                open(writer, "w").write(schemas[fmt, "ours", table][1])
                open(reader, "w").write(schemas[fmt, "orig", table][1])
            else:
                writer = "-"
                proto = os.path.join(d, "%s.proto" % table)
                open(proto, "w").write(schemas[fmt, "orig", table][1])
                reader = os.path.join(d, "orig.desc")
                r = subprocess.run(["protoc", "-I", d, "--descriptor_set_out=" + reader, proto],
                                   capture_output=True, text=True, timeout=60)
                if not C.check(r.returncode == 0, "protoc compiles the original's %s.proto%s" % (
                        table, r.returncode and ": " + r.stderr.strip() or "")):
                    continue
            jobs.append({"format": fmt, "table": table, "writer": writer, "reader": reader,
                         "messages": os.path.join(d, "messages.bin")})
    job_file = os.path.join(work, "orig_decode_jobs.json")
    json.dump(jobs, open(job_file, "w"))
    r = subprocess.run([venv_python, os.path.join(HERE, "orig_decode.py"), job_file], capture_output=True, text=True,
                       timeout=300)
    results = [json.loads(l) for l in r.stdout.splitlines()]
    C.check(r.returncode == 0 and len(results) == len(jobs), "orig_decode.py ran %d jobs%s" % (
        len(jobs), r.returncode and ": " + r.stderr.strip()[-300:] or ""))
    for job, res in zip(jobs, results):
        fmt, table = job["format"], job["table"]
        if not C.check("error" not in res, "the original's %s library decodes ours (%s)%s" % (
                fmt, table, ": " + res["error"] if "error" in res else "")):
            continue
        decoded = res["records"]
        if fmt == "protobuf":
            unset = 0
            for d, e in zip(decoded, events["ours", table]):
                for k in d:
                    if d[k] is None and e.get(k) in (0, False, "") and e.get(k) is not None \
                            and diffs["protobuf"].get((table, k)) == (True, False):
                        d[k] = e[k]
                        unset += 1
            if unset:
                print("known protobuf %s: %d default values (0, false, \"\") of fields required in ours read "
                      "as null with the original's schema" % (table, unset))
        compare_events("the original's %s library reads ours, %s, with the original's schema" % (fmt, table),
                       decoded, events["ours", table])

    # JSON Schema: each tool's payloads against the other's schema
    for table in tables:
        for payloads, schema, what in ((events["ours", table], schemas["json-schema", "orig", table][1], "ours against the original's"),
                                       (events["orig", table], schemas["json-schema", "ours", table][1], "the original's against ours")):
            v = jsonschema.Draft7Validator(json.loads(schema))
            errors = [e.message for ev in payloads for e in v.iter_errors(ev)]
            C.check(not errors, "json-schema %s: %d events %s schema valid%s" % (
                table, len(payloads), what, (": " + errors[0]) if errors else ""))


if __name__ == "__main__":
    if "--real-kafka" in sys.argv:
        C.skip_unless_real_kafka()
    C.skip_unless_ready()
    main(C.workdir())
    C.finish()
