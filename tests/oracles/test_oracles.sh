#!/usr/bin/env bash
# test_oracles.sh — the oracles' self-test: each accepts its good hand-made
# fixtures and refuses every fixture with one wrong thing, naming it.
#
# Why: the emulator test trusts these oracles to catch encoder bugs; an
# oracle that passes everything would hide them. Every bad fixture changes one
# value of one logical type (or breaks one message), so each comparison rule
# is shown to bite.
# How: oracle_fixtures.py writes the fixtures and OUT/cases.tsv; each case
# runs its oracle (from SHAPE_ORACLE_DIR, the build's tests/bin) and checks
# the exit status (0 pass, 1 fail) and that the output holds the case's text.
# Cases run eight at a time. protobuf_oracle.sh takes its interpreter from
# PYTHON (default python3).
set -euo pipefail

: "${SHAPE_SOURCE_DIR:?}" "${SHAPE_ORACLE_DIR:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v protoc >/dev/null || { echo "FAIL: protoc is missing (scripts/install-deps)" >&2; exit 1; }
# The interpreter itself, not a version manager's shim: ~180 cases start it.
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
export PYTHON
"$PYTHON" "$SHAPE_SOURCE_DIR/tests/oracles/oracle_fixtures.py" "$work/fixtures"

oracle_command() {
    case $1 in
        avro) echo "$SHAPE_ORACLE_DIR/avro_oracle" ;;
        protobuf) echo "bash $SHAPE_ORACLE_DIR/protobuf_oracle.sh" ;;
        jsonschema) echo "$PYTHON $SHAPE_ORACLE_DIR/jsonschema_oracle.py" ;;
    esac
}

# One case: exit status and output checked; writes its verdict to $work/verdicts/N.
run_case() {
    local n=$1 tool=$2 dir=$3 outcome=$4 needle=$5 rc want_rc=0
    [[ $outcome == fail ]] && want_rc=1
    set +e
    $(oracle_command "$tool") "$dir" >"$work/out.$n" 2>&1
    rc=$?
    set -e
    if [[ $rc -ne $want_rc ]] || ! grep -qF -- "$needle" "$work/out.$n"; then
        { echo "FAIL: $tool ${dir##*/}: exit $rc (want $want_rc), output must contain: $needle"
          sed 's/^/    /' "$work/out.$n"; } >"$work/verdicts/$n.fail"
    else
        echo "$tool $outcome" >"$work/verdicts/$n.ok"
    fi
}

mkdir "$work/verdicts"
cases=0
while IFS=$'\t' read -r tool dir outcome needle; do
    cases=$((cases + 1))
    run_case "$cases" "$tool" "$dir" "$outcome" "$needle" &
    while [[ $(jobs -rp | wc -l) -ge 8 ]]; do wait -n || true; done
done <"$work/fixtures/cases.tsv"
wait

failures=$(find "$work/verdicts" -name '*.fail' | wc -l)
verdicts=$(find "$work/verdicts" -name '*.ok' -o -name '*.fail' | wc -l)
[[ $verdicts -eq $cases ]] || { echo "FAIL: $verdicts verdicts for $cases cases" >&2; exit 1; }
cat "$work/verdicts"/*.fail >&2 2>/dev/null || true
refused() { cat "$work/verdicts"/*.ok | grep -c "^$1 fail$" || true; }
echo "oracles self-test: $cases cases; refused as they should: avro $(refused avro)," \
     "protobuf $(refused protobuf), jsonschema $(refused jsonschema); $failures failures"
[[ $failures -eq 0 ]]
