#!/usr/bin/env bash
# protobuf_oracle.sh DIR — decode captured Protobuf messages with protoc and
# compare them with the flat JSON events they should carry.
#
# Why: protoc is Google's own Protobuf parser, independent of shape's encoder
# and of shape's wire decoder; if it reads every captured payload as the
# registered message type with the expected values, the bytes are Protobuf.
# How: DIR holds schema.proto (the registered text), messages.bin (message
# values, each behind a 4-byte big-endian length) and expected.jsonl (see
# README.md). protobuf_compare.py checks each Confluent header (magic 0,
# schema id, message-index byte 0) and frames all payloads as one message
# of a wrapper type `Batch { repeated <message> m = 1; }` (each payload
# becomes a length-delimited field 1, so none merges into another); one
# protoc --decode call reads them all, and protobuf_compare.py compares the
# text it prints with expected.jsonl. When protoc refuses the batch, each
# payload is decoded alone to name the first one it refuses.
# Exit 0 with "protobuf_oracle: N messages decoded and equal", else 1 with
# the first difference (2: usage).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: protobuf_oracle.sh DIR   (DIR holds schema.proto, messages.bin, expected.jsonl)" >&2
    exit 2
fi
dir=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
compare=("${PYTHON:-python3}" "$here/protobuf_compare.py")
say() { echo "protobuf_oracle: $*" >&2; }

command -v protoc >/dev/null || { say "protoc is not installed (Debian package protobuf-compiler)"; exit 1; }
for f in schema.proto messages.bin expected.jsonl; do
    [[ -f $dir/$f ]] || { say "$dir/$f is missing"; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Writes $work/oracle_batch.proto and $work/batch.bin; prints the wrapper's type.
batch_type=$("${compare[@]}" frame "$dir" "$work") || exit 1

if ! protoc --proto_path="$dir" --proto_path="$work" --decode="$batch_type" oracle_batch.proto \
        <"$work/batch.bin" >"$work/decoded.txt" 2>"$work/protoc.err"; then
    # Find the first payload protoc refuses, decoding each alone.
    message_type=$("${compare[@]}" split "$dir" "$work") || exit 1
    k=1
    while [[ -f $work/payload_$k.bin ]]; do
        if ! protoc --proto_path="$dir" --decode="$message_type" schema.proto \
                <"$work/payload_$k.bin" >/dev/null 2>"$work/protoc.err"; then
            say "message $k: protoc cannot decode the payload as $message_type: $(tr '\n' ' ' <"$work/protoc.err")"
            exit 1
        fi
        k=$((k + 1))
    done
    say "protoc refuses the batch: $(tr '\n' ' ' <"$work/protoc.err")"
    exit 1
fi

"${compare[@]}" compare "$dir" "$work/decoded.txt"
