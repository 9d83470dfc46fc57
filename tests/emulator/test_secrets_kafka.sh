#!/usr/bin/env bash
# test_secrets_kafka.sh — the sentinel-secret sweep of tests/contract/test_secrets.sh
# where it needs a broker and a registry: dead letters, registry basic auth,
# stream reads and profiles of a real topic.
#
# Why: the paths a secret takes only when something answers (a registry that
# checks the password and says 401, a broker that refuses messages so they
# become dead-letter records, a consumer configured with secret settings,
# checkpoints of a real read) are where a password is most likely to be
# copied into an output. None may hold one (issue 9, item 5).
# How: `shape broker` (lib.sh) for an Avro and a JSON topic, a second one
# failing its first 1,000 produce requests with MSG_SIZE_TOO_LARGE — more
# than the two runs' 250 events can make — (one run's dead letters, one
# run's refusal; failing only the first two made the refusal depend on how
# many requests the dead-letter run had sent), and
# `shape schema-registry --user svc --password-env`; sentinels go in as an
# options file's literals and env:// / file:// references, the registry
# password (env:// and file://, right and wrong) and the registry's own
# --password-env. Every command's stdout, stderr and files go to out/, the
# broker's and registry's stderr too; each case checks its outcome, then
# every file under out/ is grepped for every sentinel.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
mkdir -p "$TEST_TMP/in" "$TEST_TMP/out"
cd "$TEST_TMP/out"

S_LIT=S3NTINEL-sasl-7f3a   # a literal in an --options-file
S_ENV=S3NTINEL-env-91c2    # an environment variable named by env://
S_FILE=S3NTINEL-file-44d0  # a 0600 credential file named by file://
S_REG=S3NTINEL-reg-c5d1    # the registry's basic-auth password
S_BAD=S3NTINEL-bad-0e6b    # a wrong registry password
SENTINELS=("$S_LIT" "$S_ENV" "$S_FILE" "$S_REG" "$S_BAD")
export SECRET_ENV=$S_ENV REG_PW=$S_REG BAD_PW=$S_BAD
printf '%s\n' "$S_FILE" >"$TEST_TMP/in/secret600"
chmod 600 "$TEST_TMP/in/secret600"
printf '%s\n' "$S_REG" >"$TEST_TMP/in/regpw"
chmod 600 "$TEST_TMP/in/regpw"
cat >"$TEST_TMP/in/opts.json" <<EOF
{"config": {"sasl.username": "svc", "sasl.password": "$S_LIT", "ssl.key.password": "env://SECRET_ENV",
            "ssl.keystore.password": "file://$TEST_TMP/in/secret600"}}
EOF

topic=$(unique_topic secrets); jtopic=$(unique_topic secrets-json)
kafka_up "$topic:2" "$jtopic:2"
export SHAPE_CONFIRM_REMOTE=0
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; cleanup' EXIT

"$SHAPE_BIN" schema-registry --listen 127.0.0.1:0 --url-file reg.url --user svc --password-env REG_PW 2>registry.err &
PIDS+=($!)
"$SHAPE_BIN" broker --topic f:1 --fail-produce MSG_SIZE_TOO_LARGE:1000 --bootstrap-file fbs >/dev/null 2>fbroker.err &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s reg.url ] && [ -s fbs ] && break; sleep 0.1; done
[ -s reg.url ] && [ -s fbs ] || fail "registry or fault broker did not start: $(cat registry.err fbroker.err)"
REG=$(cat reg.url)
FBS=$(cat fbs)

RC=0
run() { # NAME ARGS...: stdout → NAME.out, stderr → NAME.err, exit code → RC
  LAST=$1
  shift
  set +e
  timeout 90 "$SHAPE_BIN" "$@" >"$LAST.out" 2>"$LAST.err"
  RC=$?
  set -e
}
check() { [ "$RC" -eq "$1" ] || fail "$LAST: expected exit $1, got $RC: $(cat "$LAST.err")"; }
AUTH=(kafka.schema_registry_url="$REG" kafka.schema_registry_username=svc)

# --- registry basic auth: env:// and file:// right, env:// wrong (401 in the error line) -------------
run emit_env emit retail --table customer --max-events 300 --sink "kafka://$BOOTSTRAP/$topic" --event-format avro \
    --options-file "$TEST_TMP/in/opts.json" --sink-config "${AUTH[@]}" kafka.schema_registry_password=env://REG_PW \
    --checkpoint emit.ck --json --no-progress
check 0
python3 -c "import json; d=json.load(open('emit_env.out')); assert d['events'] == 300, d" || fail "emit_env report"
run emit_file emit retail --table customer --max-events 600 --sink "kafka://$BOOTSTRAP/$topic" --event-format avro \
    --options-file "$TEST_TMP/in/opts.json" --sink-config "${AUTH[@]}" "kafka.schema_registry_password=file://$TEST_TMP/in/regpw" \
    --checkpoint emit.ck --json --no-progress
check 0
run emit_wrong emit retail --table address --max-events 10 --sink "kafka://$BOOTSTRAP/$topic" --event-format avro \
    --sink-config "${AUTH[@]}" kafka.schema_registry_password=env://BAD_PW --no-progress
check 2
grep -q "Unauthorized" emit_wrong.err || fail "wrong password: $(cat emit_wrong.err)"
run emit_dry emit retail --sink "kafka://$BOOTSTRAP/$topic" --event-format avro --options-file "$TEST_TMP/in/opts.json" \
    --sink-config "${AUTH[@]}" kafka.schema_registry_password=env://REG_PW --dry-run
check 0

# --- dead letters, then a refusal: the broker fails all their requests, the runs hold every secret --
run emit_dl emit retail --table customer --max-events 200 --sink "kafka://$FBS/f" --options-file "$TEST_TMP/in/opts.json" \
    --dead-letter "file://$TEST_TMP/out/dead.jsonl" --checkpoint dl.ck --json --no-progress
check 0
[ "$(wc -l <dead.jsonl)" -eq 200 ] || fail "dead-letter records: $(wc -l <dead.jsonl), expected 200"
grep -q '"format":"shape-dead-letter"' dead.jsonl || fail "dead-letter records: $(head -c 300 dead.jsonl)"
run emit_refused emit retail --table customer --max-events 50 --sink "kafka://$FBS/f" --options-file "$TEST_TMP/in/opts.json" \
    --no-progress
check 2

# --- stream-read and stream-profile of a JSON topic with secret consumer settings ---------------------
run emit_json emit retail --max-events 600 --sink "kafka://$BOOTSTRAP/$jtopic" --options-file "$TEST_TMP/in/opts.json" \
    --json --no-progress
check 0
run read stream-read "kafka://$BOOTSTRAP/$jtopic" --options-file "$TEST_TMP/in/opts.json" --checkpoint read.ck
check 0
[ "$(wc -l <read.out)" -eq 600 ] || fail "stream-read: $(wc -l <read.out) rows, expected 600"
run read_again stream-read "kafka://$BOOTSTRAP/$jtopic" --options-file "$TEST_TMP/in/opts.json" --checkpoint read.ck
check 0
run profile stream-profile "kafka://$BOOTSTRAP/$jtopic" --options-file "$TEST_TMP/in/opts.json" -o profile.json \
    --checkpoint profile.ck --state profile.state
check 0
[ -s profile.json ] && [ -s profile.ck ] && [ -s profile.state ] || fail "stream-profile outputs missing"
run read_missing_ref stream-read "kafka://$BOOTSTRAP/$jtopic" --option 'config={"sasl.password":"env://NO_SUCH_SECRET_VAR"}'
check 2
grep -q "NO_SUCH_SECRET_VAR" read_missing_ref.err || fail "unset env:// reference: $(cat read_missing_ref.err)"
run plugins plugins --json
check 0

# --- the sweep ----------------------------------------------------------------------------------------
for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${PIDS[@]}" 2>/dev/null || true
PIDS=()
cp "$TEST_TMP/broker.err" broker.err 2>/dev/null || true
printf '%s\n' "${SENTINELS[@]}" >"$TEST_TMP/in/canary"
for s in "${SENTINELS[@]}"; do grep -qF -- "$s" "$TEST_TMP/in/canary" || fail "the sweep cannot see $s"; done
n=$(find . -type f | wc -l)
[ "$n" -ge 30 ] || fail "only $n output files to sweep"
for s in "${SENTINELS[@]}"; do
  if hits=$(grep -rlF -- "$s" .); then
    for f in $hits; do echo "  $f: $(grep -F -- "$s" "$f" | head -c 300)" >&2; done
    fail "sentinel $s leaked into: $hits"
  fi
done
echo "ok: $n output files, ${#SENTINELS[@]} sentinels, no leak"
