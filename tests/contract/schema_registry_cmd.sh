# `shape schema-registry`: the fake schema registry as a process. Started on
# an ephemeral port with --url-file, driven over real HTTP (python3's urllib:
# the curl command line is not among the build dependencies), stopped with
# SIGTERM: exit 0 and the URL file removed. A second run checks the knobs
# (basic auth from an environment variable, a refused subject, an injected
# failure), and bad flags are refused with exit 2 before anything listens.
set -euo pipefail
: "${SHAPE_BIN:?}"
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/err" ] && cat "$tmp/err" >&2; exit 1; }

# http METHOD URL [BODY [USER:PASSWORD]] → "STATUS BODY" on one line.
http() {
  python3 - "$@" <<'PY'
import base64, sys, urllib.request, urllib.error
method, url = sys.argv[1], sys.argv[2]
body = sys.argv[3].encode() if len(sys.argv) > 3 and sys.argv[3] else None
req = urllib.request.Request(url, data=body, method=method)
req.add_header("Content-Type", "application/vnd.schemaregistry.v1+json")
req.add_header("Accept", "application/vnd.schemaregistry.v1+json")
if len(sys.argv) > 4:
    req.add_header("Authorization", "Basic " + base64.b64encode(sys.argv[4].encode()).decode())
try:
    with urllib.request.urlopen(req, timeout=10) as resp:
        status, text = resp.status, resp.read().decode()
        ctype = resp.headers.get("Content-Type")
except urllib.error.HTTPError as e:
    status, text, ctype = e.code, e.read().decode(), e.headers.get("Content-Type")
if ctype != "application/vnd.schemaregistry.v1+json":
    print("unexpected Content-Type", ctype, file=sys.stderr)
    sys.exit(1)
print(status, text)
PY
}

# start ARGS...: run the registry in the background, wait for its URL file.
start() {
  rm -f "$tmp/url"
  "$SHAPE_BIN" schema-registry --listen 127.0.0.1:0 --url-file "$tmp/url" "$@" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 100); do
    [ -s "$tmp/url" ] && break
    kill -0 "$pid" 2>/dev/null || fail "schema-registry exited before listening"
    sleep 0.1
  done
  [ -s "$tmp/url" ] || fail "no URL file after 10 s"
  url=$(cat "$tmp/url")
  [[ "$url" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || fail "URL file holds '$url'"
  [ "${url##*:}" != 0 ] || fail "port 0 was not replaced by the bound port"
}

# stop: SIGTERM → exit 0, URL file removed.
stop() {
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  pid=
  [ "$rc" -eq 0 ] || fail "schema-registry exited $rc on SIGTERM"
  [ ! -e "$tmp/url" ] || fail "the URL file was left behind"
}

expect() { # expect "STATUS BODY" METHOD URL [BODY [AUTH]]
  local want=$1 got; shift
  got=$(http "$@") || fail "request $* failed"
  [ "$got" = "$want" ] || fail "$*: expected '$want', got '$got'"
}

schema='{"type":"record","name":"t","namespace":"shape.events","fields":[{"name":"a","type":"long"}]}'
body=$(python3 -c 'import json,sys; print(json.dumps({"schema": sys.argv[1]}))' "$schema")
fetched=$(python3 -c 'import json,sys; print(json.dumps({"schema": sys.argv[1], "schemaType": "AVRO"}, separators=(",", ":")))' "$schema")

# ---- a plain registry ----
start
[ "$(cat "$tmp/err")" = "schema registry listening on $url" ] || fail "stderr: $(cat "$tmp/err")"
expect '200 {"id":100}' POST "$url/subjects/orders-value/versions" "$body"
expect '200 {"id":100}' POST "$url/subjects/orders-value/versions" "$body"
expect "200 $fetched" GET "$url/schemas/ids/100"
expect '200 ["orders-value"]' GET "$url/subjects"
expect '200 [1]' GET "$url/subjects/orders-value/versions"
expect '409 {"error_code":409,"message":"Schema being registered is incompatible with an earlier schema for subject \"orders-value\""}' \
  POST "$url/subjects/orders-value/versions" '{"schema":"{\"type\":\"string\"}"}'
expect '200 {"id":101}' POST "$url/subjects/a%2Fb/versions" '{"schema":"syntax = \"proto3\";","schemaType":"PROTOBUF"}'
expect '200 ["orders-value","a/b"]' GET "$url/subjects"
expect '404 {"error_code":40403,"message":"Schema not found"}' GET "$url/schemas/ids/999"
expect '404 {"error_code":404,"message":"HTTP 404 Not Found"}' GET "$url/config"
stop

# ---- auth, a refusal and an injected failure ----
export REG_PW=s3cret
start --user svc --password-env REG_PW --refuse 'events-value=Invalid schema: bad field' --fail-next 1:503 --evolve
expect '503 {"error_code":503,"message":"injected failure"}' GET "$url/subjects" "" svc:s3cret
expect '401 {"error_code":40101,"message":"Unauthorized"}' POST "$url/subjects/orders-value/versions" "$body"
expect '401 {"error_code":40101,"message":"Unauthorized"}' POST "$url/subjects/orders-value/versions" "$body" svc:wrong
expect '200 {"id":100}' POST "$url/subjects/orders-value/versions" "$body" svc:s3cret
expect '200 {"id":101}' POST "$url/subjects/orders-value/versions" '{"schema":"{\"type\":\"string\"}"}' svc:s3cret
expect '422 {"error_code":42201,"message":"Invalid schema: bad field"}' \
  POST "$url/subjects/events-value/versions" "$body" svc:s3cret
if grep -q s3cret "$tmp/err"; then fail "the password reached stderr"; fi
stop

# ---- SIGINT stops it too ----
start
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?; pid=
[ "$rc" -eq 0 ] || fail "exit $rc on SIGINT"

# ---- refusals: exit 2, one error line, nothing listens ----
refused() { # refused NEEDLE ARGS...
  local needle=$1 rc=0; shift
  "$SHAPE_BIN" schema-registry --url-file "$tmp/url" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "'$*' exited $rc"
  grep -q "^shape: error: .*$needle" "$tmp/err" || fail "'$*': expected '$needle'"
  [ ! -e "$tmp/url" ] || fail "'$*' wrote the URL file"
}
rm -f "$tmp/url"
refused "--listen wants HOST:PORT" --listen nowhere
refused "--listen wants HOST:PORT" --listen 127.0.0.1:70000
refused "--user and --password-env go together" --listen 127.0.0.1:0 --user svc
unset REG_PW
refused "--password-env REG_PW: the environment variable is unset or empty" --listen 127.0.0.1:0 --user svc --password-env REG_PW
refused "--refuse wants SUBJECT=MESSAGE" --listen 127.0.0.1:0 --refuse nothing
refused "--fail-next wants N:STATUS" --listen 127.0.0.1:0 --fail-next 2
refused "cannot listen on 192.0.2.1:0" --listen 192.0.2.1:0
echo "schema-registry contract: ok"
