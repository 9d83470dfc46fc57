#!/usr/bin/env bash
# test_cli.sh — the command-line contract every command shares.
#
# Why: scripts and people rely on it (DESIGN.md, "The command-line contract"):
# `shape help` lists the commands, `COMMAND --help` lists every option with
# its default, and any refused input is exactly one stderr line
# `shape: error: <message>` naming what was wrong, with exit 2 and nothing on
# stdout.
# How: run the built binary with the bundled plugin (shape broker is the
# richest command with a real option table) and check outputs line by line.
# Every call has a time-out: a `shape broker` that wrongly accepted its input
# would start serving, and the time-out turns that into a failure.
set -euo pipefail

: "${SHAPE_BIN:?}" "${SHAPE_BUILD_DIR:?}"
unset SHAPE_PLUGIN_PATH

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {
    set +e
    timeout 20 "$SHAPE_BIN" "$@" >"$work/out" 2>"$work/err"
    RC=$?
    set -e
}
fail() {
    echo "FAIL: $*" >&2
    echo "--- stdout:" >&2; cat "$work/out" >&2
    echo "--- stderr:" >&2; cat "$work/err" >&2
    exit 1
}
expect_ok() { [[ $RC -eq 0 ]] || fail "expected exit 0, got $RC ($1)"; }
# expect_error CODE TEXT...: exit CODE, nothing on stdout, exactly one stderr
# line starting 'shape: error: ' and containing every TEXT.
expect_error() {
    local code=$1; shift
    [[ $RC -eq $code ]] || fail "expected exit $code, got $RC"
    [[ ! -s $work/out ]] || fail "stdout must be empty on error"
    [[ $(wc -l <"$work/err") -eq 1 ]] || fail "expected exactly one stderr line"
    grep -q '^shape: error: ' "$work/err" || fail "stderr must start with 'shape: error: '"
    local t
    for t in "$@"; do grep -qF -- "$t" "$work/err" || fail "error line lacks: $t"; done
}

# --- help ----------------------------------------------------------------------
for form in --help -h help ""; do
    if [[ -n $form ]]; then run "$form"; else run; fi
    expect_ok "shape $form"
    grep -q '^usage: shape COMMAND' "$work/out" || fail "shape $form: usage line"
    for c in help version plugins broker; do
        grep -qE "^  $c +[A-Z]" "$work/out" || fail "shape $form must list '$c' with a summary"
    done
    [[ ! -s $work/err ]] || fail "shape $form wrote to stderr"
done

# Every option of broker, with its default, in both help forms.
for form in "broker --help" "broker -h" "help broker"; do
    # shellcheck disable=SC2086
    run $form
    expect_ok "shape $form"
    grep -q '^usage: shape broker \[options\]' "$work/out" || fail "$form: usage line"
    grep -qE -- '--brokers N +.*\[default: 1\]$' "$work/out" || fail "$form: --brokers default"
    grep -qE -- '-t, --topic NAME\[:PARTITIONS\] +.*\(repeatable\) \[default: none\]$' "$work/out" ||
        fail "$form: --topic default"
    grep -qE -- '--bootstrap-file FILE +.*\[default: none\]$' "$work/out" || fail "$form: --bootstrap-file default"
    # Every option line (those starting with a dash after indentation) has a
    # default, except --help itself.
    missing=$(grep -E '^ +-' "$work/out" | grep -v -- '--help' | grep -vF '[default: ' || true)
    [[ -z $missing ]] || fail "$form: options without a default: $missing"
done

run --version
expect_ok "--version"
grep -qE '^shape [0-9]+\.[0-9]+\.[0-9]+' "$work/out" || fail "--version first line"
run -V
expect_ok "-V"
run version
expect_ok "version"

# --- errors: one line, exit 2, empty stdout --------------------------------------
run nosuchcommand
expect_error 2 "unknown command 'nosuchcommand'" "shape help"
run --bogus
expect_error 2 "unknown option '--bogus'"
run help nosuchcommand
expect_error 2 "unknown command 'nosuchcommand'"
run help broker extra
expect_error 2 "unexpected argument 'extra'"
run version extra
expect_error 2 "unexpected argument 'extra'"

run broker --bogus
expect_error 2 "'--bogus'" "shape broker --help"
run broker --bogus=1
expect_error 2 "'--bogus'"
run broker -x
expect_error 2 "'-x'"
run broker extra
expect_error 2 "unexpected argument 'extra' for 'shape broker'"

# Missing values.
run broker --brokers
expect_error 2 "option '--brokers' needs a value (N)"
run broker --topic
expect_error 2 "option '--topic' needs a value"
run broker -t
expect_error 2 "option '--topic' needs a value"
run broker --bootstrap-file
expect_error 2 "option '--bootstrap-file' needs a value (FILE)"
run plugins --json=yes
expect_error 2 "option '--json' takes no value"

# Values out of range or not numbers.
for bad in 0 17 x -1 1.5 " 1" ""; do
    run broker --brokers "$bad"
    expect_error 2 "--brokers must be an integer from 1 to 16"
done
run broker --brokers=x
expect_error 2 "--brokers must be an integer from 1 to 16, got 'x'"

# Topics: names Kafka would refuse, partition counts out of range.
run broker --topic 'bad name'
expect_error 2 "--topic 'bad name' is not a Kafka topic name"
run broker -t 'ok' --topic 'bad/name'
expect_error 2 "--topic 'bad/name'"
for bad in 'orders:0' 'orders:x' 'orders:10001' ':3'; do
    run broker --topic "$bad"
    expect_error 2 "--topic wants NAME[:PARTITIONS]"
done

echo "ok: command-line contract"
