#!/usr/bin/env bash
# test_registry_tls.sh — the schema registry over https://: the CA setting,
# a certificate the client must refuse, verification turned off, and mutual
# TLS with a client certificate (kafka.schema_registry_* TLS keys).
#
# Why: real registries are https, often with a private CA and sometimes
# client certificates; the libcurl path must verify by default and take the
# files the user names.
# How: openssl makes a throwaway CA, a server certificate for 127.0.0.1 and a
# client certificate; tls_proxy.py terminates TLS in front of `shape
# schema-registry`; `shape emit --event-format avro` goes to `shape broker`.
source "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || fail "openssl is not installed (scripts/install-deps installs it)"
cd "$TEST_TMP"
here=$(cd "$(dirname "$0")" && pwd)

t1=$(unique_topic tls)
kafka_up "$t1:1"
export SHAPE_CONFIRM_REMOTE=0

# --- certificates -------------------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=shape test CA" -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other CA" -keyout other.key -out other.pem 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr 2>/dev/null
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext \
    -out server.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=shape-client" -keyout client.key -out client.csr 2>/dev/null
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem 2>/dev/null
chmod 600 ./*.key

# --- the registry behind TLS (one front without, one with client certificates) ------
PIDS=()
"$SHAPE_BIN" schema-registry --listen 127.0.0.1:0 --url-file reg.url 2>reg.err &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s reg.url ] && break; sleep 0.05; done
[ -s reg.url ] || fail "schema registry did not start: $(cat reg.err)"
reg=$(cat reg.url)
reg_port=${reg##*:}
python3 "$here/tls_proxy.py" tls.port 127.0.0.1 "$reg_port" server.pem server.key 2>tls.err &
PIDS+=($!)
python3 "$here/tls_proxy.py" mtls.port 127.0.0.1 "$reg_port" server.pem server.key ca.pem 2>mtls.err &
PIDS+=($!)
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; cleanup' EXIT
for _ in $(seq 1 100); do [ -s tls.port ] && [ -s mtls.port ] && break; sleep 0.05; done
[ -s tls.port ] && [ -s mtls.port ] || fail "tls_proxy did not start: $(cat tls.err mtls.err)"
TLS_URL=https://127.0.0.1:$(cat tls.port)
MTLS_URL=https://127.0.0.1:$(cat mtls.port)

emit() { # OUT args...: 100 order_line events as avro
  local out=$1
  shift
  set +e
  "$SHAPE_BIN" emit retail --table order_line --max-events 100 --sink "kafka://$BOOTSTRAP/$t1" --event-format avro \
      --no-progress --json "$@" >"$out.json" 2>"$out.err"
  RC=$?
  set -e
}

# verified with the CA given
emit ca --sink-config "kafka.schema_registry_url=$TLS_URL" kafka.schema_registry_ca_location=ca.pem
[ $RC -eq 0 ] || fail "https with the CA: $(cat ca.err)"
# the server's certificate is not from a CA the client trusts: refused (verification is on by default)
emit nocafile --sink-config "kafka.schema_registry_url=$TLS_URL"
[ $RC -eq 2 ] || fail "an unknown CA was accepted (exit $RC)"
grep -q "schema registry unreachable" nocafile.err || fail "unknown CA: $(cat nocafile.err)"
emit wrongca --sink-config "kafka.schema_registry_url=$TLS_URL" kafka.schema_registry_ca_location=other.pem
[ $RC -eq 2 ] || fail "a certificate from another CA was accepted (exit $RC)"
# verification off (testing only)
emit noverify --sink-config "kafka.schema_registry_url=$TLS_URL" kafka.schema_registry_ssl_verify=false
[ $RC -eq 0 ] || fail "ssl_verify=false: $(cat noverify.err)"
# mutual TLS: without a client certificate the handshake fails; with one it works
emit nocert --sink-config "kafka.schema_registry_url=$MTLS_URL" kafka.schema_registry_ca_location=ca.pem
[ $RC -eq 2 ] || fail "mutual TLS without a client certificate was accepted (exit $RC)"
emit mtls --sink-config "kafka.schema_registry_url=$MTLS_URL" kafka.schema_registry_ca_location=ca.pem \
    kafka.schema_registry_certificate_location=client.pem kafka.schema_registry_key_location=client.key
[ $RC -eq 0 ] || fail "mutual TLS with a client certificate: $(cat mtls.err)"
n=$(kcat -b "$BOOTSTRAP" -t "$t1" -C -e -q -f '%o\n' | wc -l)
[ "$n" -eq 300 ] || fail "expected 300 messages from the three accepted runs, got $n"
echo "ok: registry over TLS"
