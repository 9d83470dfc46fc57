#!/usr/bin/env bash
# test_secrets.sh — sentinel secrets pushed through every path a credential
# can take without a broker; no output may ever hold one (issue 9, item 5).
#
# Why: credentials (SASL passwords, registry passwords, the values env:// and
# file:// references resolve to, userinfo in URIs) must never appear in an
# error, a --dry-run plan, a --json report, a checkpoint, a profile, a
# dead-letter file or any other output; a file:// secret others can read is
# refused. One leak in one message is enough to put a password in a CI log.
# How: five distinctive sentinels go in as literals, environment variables,
# 0600 and 0644 files and URI userinfo, through `shape emit` (dry run, real
# runs with checkpoints and --json, failures), `shape stream-read`,
# `shape stream-profile` and `shape plugins --json`. Every command's stdout
# and stderr and every file it writes land in out/; each case checks its own
# outcome (so a refusal is a refusal for the right reason), and the final
# sweep greps every file under out/ for every sentinel. The inputs that hold
# the secrets on purpose live in in/, which the sweep leaves out.
# The same sweep against a broker and a registry (dead letters, registry
# basic auth, stream reads of a real topic) is tests/emulator/test_secrets_kafka.sh.
set -euo pipefail

: "${SHAPE_BIN:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in" "$work/out"
cd "$work/out"

S_LIT=S3NTINEL-sasl-7f3a   # a literal in an --options-file
S_ENV=S3NTINEL-env-91c2    # the value of environment variables named by env://
S_FILE=S3NTINEL-file-44d0  # the content of credential files named by file://
S_URI=S3NTINEL-uri-2b8e    # a password in URI userinfo
S_REG=S3NTINEL-reg-c5d1    # a schema registry password (env://)
S_PLAIN=S3NTINEL-plain-6e1b # a value under a setting whose name does not look secret
S_NUM=739173917            # the same, numeric (librdkafka prints refused numbers back)
SENTINELS=("$S_LIT" "$S_ENV" "$S_FILE" "$S_URI" "$S_REG" "$S_PLAIN" "$S_NUM")
export SECRET_ENV=$S_ENV REG_PW=$S_REG

printf '%s\n' "$S_FILE" >"$work/in/secret600"
chmod 600 "$work/in/secret600"
printf '%s\n' "$S_FILE" >"$work/in/secret644"
chmod 644 "$work/in/secret644"
# every reference form and a literal, in settings librdkafka accepts whatever the value
cat >"$work/in/opts.json" <<EOF
{"config": {"sasl.username": "svc", "sasl.password": "$S_LIT", "ssl.key.password": "env://SECRET_ENV",
            "ssl.keystore.password": "file://$work/in/secret600", "linger.ms": 5}}
EOF
cat >"$work/in/opts644.json" <<EOF
{"config": {"sasl.password": "file://$work/in/secret644"}}
EOF
# resolved values in settings librdkafka validates (and quotes when it refuses)
cat >"$work/in/opts_env_refused.json" <<EOF
{"config": {"security.protocol": "env://SECRET_ENV"}}
EOF
cat >"$work/in/opts_file_refused.json" <<EOF
{"config": {"compression.codec": "file://$work/in/secret600"}}
EOF
cat >"$work/in/opts_literal_refused.json" <<EOF
{"config": {"sasl.password": "$S_LIT", "linger.ms": "$S_LIT"}}
EOF

RC=0
run() { # NAME ARGS...: stdout → NAME.out, stderr → NAME.err, exit code → RC
    local name=$1
    shift
    set +e
    timeout 60 "$SHAPE_BIN" "$@" >"$name.out" 2>"$name.err"
    RC=$?
    set -e
    LAST=$name
}
fail() {
    echo "FAIL: $*" >&2
    echo "--- $LAST.err:" >&2; cat "$LAST.err" >&2 || true
    exit 1
}
expect_ok() { [[ $RC -eq 0 ]] || fail "$LAST: expected exit 0, got $RC"; }
expect_error() { # WANT-TEXT: exit 2, one 'shape: error:' line holding WANT-TEXT
    [[ $RC -eq 2 ]] || fail "$LAST: expected exit 2, got $RC"
    [[ $(wc -l <"$LAST.err") -eq 1 ]] && grep -q '^shape: error: ' "$LAST.err" || fail "$LAST: not one error line"
    grep -qF -- "$1" "$LAST.err" || fail "$LAST: stderr lacks '$1'"
}

KAFKA=kafka://127.0.0.1:9/t   # nothing listens: refusals and dry runs only
REG=(--event-format avro --sink-config kafka.schema_registry_url=http://127.0.0.1:9
     kafka.schema_registry_username=svc kafka.schema_registry_password=env://REG_PW)

# --- emit: dry runs resolve every reference (check_options) and print the plan ------------------
run dry_options emit retail --sink "$KAFKA" --options-file "$work/in/opts.json" --dry-run
expect_ok
grep -q '^  destination kafka://127.0.0.1:9/t (kafka)' dry_options.out || fail "dry run: no plan"
# a destination is named by its URI without query or user info (the dead letters' "destination"
# is the same text): a secret in the query never shows
run dry_query emit retail --sink "$KAFKA?sasl.password=$S_URI" --dry-run
expect_ok
grep -qx '  destination kafka://127.0.0.1:9/t (kafka)' dry_query.out || fail "dry run with a query: $(cat dry_query.out)"
run dry_registry emit retail --sink "$KAFKA" --options-file "$work/in/opts.json" "${REG[@]}" --dry-run \
    --checkpoint dry.ck --dead-letter "file://$work/out/dry.dl.jsonl"
expect_ok
grep -q 'event format avro' dry_registry.out && grep -q 'service kafka.schema_registry_url' dry_registry.out ||
    fail "registry dry run: no plan"
[[ ! -e dry.ck && ! -e dry.dl.jsonl ]] || fail "a dry run wrote a file"

# --- emit: refusals name the setting or the reference, never a value ------------------------------
run ref_env_refused emit retail --sink "$KAFKA" --options-file "$work/in/opts_env_refused.json" --dry-run
expect_error "kafka producer setting 'security.protocol' was refused"
run ref_file_refused emit retail --sink "$KAFKA" --options-file "$work/in/opts_file_refused.json" --dry-run
expect_error "kafka producer setting 'compression.codec' was refused"
run literal_refused emit retail --sink "$KAFKA" --options-file "$work/in/opts_literal_refused.json" --dry-run
expect_error "kafka producer setting 'linger.ms' was refused"
run file644 emit retail --sink "$KAFKA" --options-file "$work/in/opts644.json" --dry-run
expect_error "accessible to other users (mode 0644): run chmod 600"
run reg_file644 emit retail --sink "$KAFKA" --event-format avro --sink-config kafka.schema_registry_url=http://127.0.0.1:9 \
    kafka.schema_registry_username=svc "kafka.schema_registry_password=file://$work/in/secret644" --dry-run
expect_error "accessible to other users (mode 0644)"
run reg_literal emit retail --sink "$KAFKA" --event-format avro --sink-config kafka.schema_registry_url=http://127.0.0.1:9 \
    kafka.schema_registry_username=svc "kafka.schema_registry_password=$S_REG" --dry-run
expect_error "must be a credential reference"
run reg_userinfo emit retail --sink "$KAFKA" --event-format avro \
    --sink-config "kafka.schema_registry_url=http://svc:$S_URI@127.0.0.1:9" --dry-run
expect_error "must not carry credentials"
run reg_userinfo_https emit retail --sink "$KAFKA" --event-format avro \
    --sink-config "kafka.schema_registry_url=https://svc:$S_URI@registry.example.com/base" --dry-run --yes
expect_error "must not carry credentials"
run reg_env_unset emit retail --sink "$KAFKA" --event-format avro --sink-config kafka.schema_registry_url=http://127.0.0.1:9 \
    kafka.schema_registry_username=svc kafka.schema_registry_password=env://NO_SUCH_SECRET_VAR --dry-run
expect_error "NO_SUCH_SECRET_VAR"
for where in sink to dead-letter; do
    case $where in
      sink) run "uri_$where" emit retail --sink "kafka://svc:$S_URI@127.0.0.1:9/t" --dry-run ;;
      to) run "uri_$where" emit retail --sink null --to "kafka://svc:$S_URI@127.0.0.1:9/t" --dry-run ;;
      dead-letter) run "uri_$where" emit retail --sink null --dead-letter "kafka://svc:$S_URI@127.0.0.1:9/t" --dry-run ;;
    esac
    expect_error "credentials must be supplied outside the URI"
done
run uri_encoded emit retail --sink "kafka://svc%3A$S_URI@127.0.0.1:9/t" --dry-run
[[ $RC -eq 2 ]] || fail "percent-encoded userinfo accepted"

# --- settings whose names do not look secret, refused by librdkafka: the refusal names the key and
# keeps librdkafka's reason, with the value (quoted, re-printed or inside other text) never shown.
# KEY|VALUE (JSON)|part of the reason that must remain
plain_refusals=(
  "compression.codec|\"$S_PLAIN\"|Invalid value \"(value not shown)\" for configuration property \"compression.codec\""
  "batch.num.messages|\"$S_NUM\"|value (value not shown) is outside allowed range 1..1000000"
  "partitioner|\"$S_PLAIN\"|configuration property \"partitioner\": (value not shown)"
  "debug|\"$S_PLAIN,all\"|Invalid value \"(value not shown)\" for configuration property \"debug\""
  "plugin.library.paths|\"$S_PLAIN\"|dlopen() failed"
  "acks|\"$S_PLAIN\"|Invalid value for configuration property \"request.required.acks\""
  "enable.idempotence|\"$S_PLAIN\"|Expected bool value for \"enable.idempotence\""
)
for case in "${plain_refusals[@]}"; do
    IFS='|' read -r key value reason <<<"$case"
    printf '{"config": {"%s": %s}}\n' "$key" "$value" >"$work/in/plain_$key.json"
    run "plain_emit_$key" emit retail --sink "$KAFKA" --options-file "$work/in/plain_$key.json" --dry-run
    expect_error "kafka producer setting '$key' was refused: "
    grep -qF -- "$reason" "$LAST.err" || fail "$LAST: librdkafka's reason '$reason' is missing"
    run "plain_read_$key" stream-read "$KAFKA" --option "config={\"$key\": $value}"
    expect_error "config property '$key' was refused: "
    grep -qF -- "$reason" "$LAST.err" || fail "$LAST: librdkafka's reason '$reason' is missing"
done

# values librdkafka accepts one by one and refuses only when the client is made (rd_kafka_new)
new_refusals=(
  "sasl|\"security.protocol\": \"sasl_plaintext\", \"sasl.mechanisms\": \"$S_PLAIN\"|Unsupported SASL mechanism: (value not shown)"
  "curves|\"security.protocol\": \"ssl\", \"ssl.curves.list\": \"$S_PLAIN\"|group '(value not shown)' cannot be set"
)
for case in "${new_refusals[@]}"; do
    IFS='|' read -r name settings reason <<<"$case"
    printf '{"config": {%s}}\n' "$settings" >"$work/in/new_$name.json"
    run "new_emit_$name" emit retail --sink "$KAFKA" --options-file "$work/in/new_$name.json" --max-events 5 --no-progress
    expect_error "cannot create a Kafka producer: "
    grep -qF -- "$reason" "$LAST.err" || fail "$LAST: librdkafka's reason '$reason' is missing"
    run "new_read_$name" stream-read "$KAFKA" --options-file "$work/in/new_$name.json"
    expect_error "kafka: "
    grep -qF -- "$reason" "$LAST.err" || fail "$LAST: librdkafka's reason '$reason' is missing"
done

# --- emit: real runs (file sinks) with the secrets configured: report, checkpoint, dead letters ----
run run_json emit retail --sink file -o run.jsonl --max-events 300 --checkpoint run.ck --options-file "$work/in/opts.json" \
    --dead-letter "file://$work/out/run.dl.jsonl" --json --no-progress
expect_ok
[[ $(wc -l <run.jsonl) -eq 300 && -s run.ck ]] || fail "file run: events or checkpoint missing"
run run_resume emit retail --sink file -o run.jsonl --max-events 600 --checkpoint run.ck --options-file "$work/in/opts.json" \
    --dead-letter "file://$work/out/run.dl.jsonl" --json --no-progress
expect_ok
# a kafka destination nobody answers: the run fails, with its one error line and a checkpoint
run run_unreachable emit retail --sink "$KAFKA" --to file://"$work/out/unreach.jsonl" --max-events 50 \
    --options-file "$work/in/opts.json" --sink-config kafka.flush_timeout=1 --checkpoint unreach.ck --json --no-progress
[[ $RC -eq 2 ]] || fail "unreachable kafka: expected exit 2, got $RC"

# --- stream-read and stream-profile: sources, options, checkpoints, outputs -----------------------
run sr_uri stream-read "kafka://svc:$S_URI@127.0.0.1:9/t"
expect_error "credentials must be supplied outside the URI"
run sp_uri stream-profile "kafka://svc:$S_URI@127.0.0.1:9/t" -o sp_uri.json
expect_error "credentials must be supplied outside the URI"
run sr_env_refused stream-read "$KAFKA" --options-file "$work/in/opts_env_refused.json"
expect_error "config property 'security.protocol' was refused"
run sr_file_refused stream-read "$KAFKA" --options-file "$work/in/opts_file_refused.json"
expect_error "config property 'compression.codec' was refused"
run sr_file644 stream-read "$KAFKA" --options-file "$work/in/opts644.json"
expect_error "accessible to other users (mode 0644)"
run sr_option stream-read "$KAFKA" --option "config={\"sasl.password\":\"$S_LIT\",\"enable.idempotence\":\"$S_LIT\"}"
expect_error "config property"
run sp_env_refused stream-profile "$KAFKA" -o sp.json --options-file "$work/in/opts_env_refused.json" --checkpoint sp.ck
expect_error "config property 'security.protocol' was refused"
# a file source with secret options: refused by key, the values not echoed
run sr_file_source stream-read "file://$work/out/run.jsonl" --options-file "$work/in/opts.json"
expect_error "unknown file source options"
run sr_file_ok stream-read "file://$work/out/run.jsonl" --checkpoint sr.ck
expect_ok
run sp_file_ok stream-profile "file://$work/out/run.jsonl" -o profile.json --checkpoint sp_ok.ck --state sp.state
expect_ok
[[ -s profile.json && -s sp_ok.ck && -s sp.state ]] || fail "stream-profile outputs missing"

# --- plugins --json, with the secrets in the environment ----------------------------------------------
run plugins plugins --json
expect_ok

# --- the sweep: every file every command wrote, stdout and stderr included -------------------------
printf '%s\n' "${SENTINELS[@]}" >"$work/in/canary"   # the sweep's grep must see each one
for s in "${SENTINELS[@]}"; do
    grep -rqF -- "$s" "$work/in/canary" || { echo "FAIL: the sweep cannot see sentinel $s" >&2; exit 1; }
done
n=$(find "$work/out" -type f | wc -l)
[[ $n -ge 60 ]] || { echo "FAIL: only $n output files to sweep" >&2; exit 1; }
LAST=sweep
for s in "${SENTINELS[@]}"; do
    if hits=$(grep -rlF -- "$s" "$work/out"); then
        echo "FAIL: sentinel $s leaked into:" >&2
        for f in $hits; do echo "  $f: $(grep -F -- "$s" "$f" | head -c 300)" >&2; done
        exit 1
    fi
done
echo "ok: $n output files, ${#SENTINELS[@]} sentinels, no leak"
