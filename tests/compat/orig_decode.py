"""orig_decode.py JOBS.json — decode Confluent wire-format
messages with the libraries the original's registry formats use (fastavro,
the [avro] extra; google.protobuf, the [protobuf] extra), run by the venv's
python (tests/compat/venv.py) for tests/compat/test_registry.py.

Why: "can a consumer built on the original's schema read our messages" is a
question for the original's own decoding libraries, not for ours.
How: JOBS.json is a list of jobs {"format", "writer", "reader", "messages"},
all done by one python (fastavro and protobuf take a while to import).
MESSAGES holds message values, each after its 4-byte big-endian length
(kcat -f '%R%s'). avro: WRITER and READER are Avro schema files (the schema
ours registered and the original's); every payload (after the 5-byte header)
is read by fastavro.schemaless_reader with WRITER as the writer's schema and
READER as the reader's (Avro schema resolution: what a consumer holding the
original's schema does), logical types left as their numbers (the schemas
are parsed with logicalType removed: a timestamp stays microseconds, so the
comparison is exact). protobuf: WRITER is unused, READER a descriptor set
(protoc --descriptor_set_out of the original's .proto); each payload (after
the header and the message-index byte) is parsed as its one message type; an
optional field that is not set is null, any other field its value (proto3
defaults included). Prints one line a job, in order: {"records": [one
object a message, in order]} or {"error": "<the first message that does not
decode, and why>"}.
"""
import io
import json
import struct
import sys


def frames(path):
    data = open(path, "rb").read()
    at = 0
    while at + 4 <= len(data):
        n = struct.unpack(">I", data[at:at + 4])[0]
        yield data[at + 4:at + 4 + n]
        at += 4 + n


def strip_logical(node):
    if isinstance(node, dict):
        return {k: strip_logical(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [strip_logical(v) for v in node]
    return node


class Undecodable(Exception):
    pass


def avro(writer_path, reader_path, messages):
    import fastavro
    writer = fastavro.parse_schema(strip_logical(json.load(open(writer_path))))
    reader = fastavro.parse_schema(strip_logical(json.load(open(reader_path))))
    out = []
    for i, m in enumerate(frames(messages), 1):
        try:
            if m[0] != 0:
                raise ValueError("magic byte %d" % m[0])
            buf = io.BytesIO(m[5:])
            rec = fastavro.schemaless_reader(buf, writer, reader)
            if buf.read(1):
                raise ValueError("bytes after the record")
        except Exception as exc:  # fastavro reports a bad payload in many types
            raise Undecodable("avro message %d: %s: %s" % (i, type(exc).__name__, exc))
        out.append(rec)
    return out


def protobuf(descriptor_set, messages):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    fds = descriptor_pb2.FileDescriptorSet()
    fds.ParseFromString(open(descriptor_set, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    f = fds.file[-1]
    desc = pool.FindMessageTypeByName("%s.%s" % (f.package, f.message_type[0].name))
    cls = message_factory.GetMessageClass(desc)
    out = []
    for i, m in enumerate(frames(messages), 1):
        try:
            if m[0] != 0 or m[5] != 0:
                raise ValueError("header %r" % m[:6])
            msg = cls()
            msg.ParseFromString(m[6:])
        except Exception as exc:  # DecodeError and friends
            raise Undecodable("protobuf message %d: %s: %s" % (i, type(exc).__name__, exc))
        rec = {}
        for fd in desc.fields:
            if fd.has_presence and not msg.HasField(fd.name):
                rec[fd.name] = None
            else:
                rec[fd.name] = getattr(msg, fd.name)
        out.append(rec)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: orig_decode.py JOBS.json")
    for job in json.load(open(sys.argv[1])):
        try:
            if job["format"] == "avro":
                result = {"records": avro(job["writer"], job["reader"], job["messages"])}
            else:
                result = {"records": protobuf(job["reader"], job["messages"])}
        except Undecodable as exc:
            result = {"error": str(exc)}
        print(json.dumps(result))
