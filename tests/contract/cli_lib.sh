# cli_lib.sh — sourced by the contract tests of `shape emit`: a scratch
# folder and the checks of the command-line contract.
#
# Why: every command test runs the built binary the same way and holds its
# errors to the same rule (exit code, empty stdout, exactly one stderr line
# "shape: error: ..." naming the problem); one copy keeps the rule one rule.
# How (after `set -euo pipefail` and SHAPE_BIN):
#   $work                  a scratch folder (removed on exit), the current one
#   run ARGS...            shape ARGS (60 s at most): stdout $work/out, stderr
#                          $work/err, exit code RC
#   fail MESSAGE           print it with the last outputs, exit 1
#   expect_ok WHAT         RC is 0
#   expect_error CODE TEXT...  RC is CODE, stdout empty, one stderr line
#                          "shape: error: ..." containing every TEXT
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

run() {
    set +e
    timeout 60 "$SHAPE_BIN" "$@" >"$work/out" 2>"$work/err"
    RC=$?
    set -e
}
fail() {
    echo "FAIL: $*" >&2
    echo "--- stdout (head):" >&2; head -c 2000 "$work/out" >&2 || true
    echo "--- stderr:" >&2; cat "$work/err" >&2
    exit 1
}
expect_ok() { [[ $RC -eq 0 ]] || fail "expected exit 0, got $RC ($1)"; }
expect_error() {
    local code=$1; shift
    [[ $RC -eq $code ]] || fail "expected exit $code, got $RC: $*"
    [[ ! -s $work/out ]] || fail "stdout must be empty on error: $*"
    [[ $(wc -l <"$work/err") -eq 1 ]] || fail "expected exactly one stderr line: $*"
    grep -q '^shape: error: ' "$work/err" || fail "stderr must start with 'shape: error: '"
    local t
    for t in "$@"; do grep -qF -- "$t" "$work/err" || fail "stderr lacks '$t'"; done
}
