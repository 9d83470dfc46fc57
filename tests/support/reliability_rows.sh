# reliability_rows.sh — sourced by the tests whose figures docs/RELIABILITY.md
# shows: the two kinds of rows they append for tests/emulator/reliability-report.sh.
#
# Why: the document is a measurement of one run of the suite, not prose kept
# by hand; a row comes from the test that asserts it, written only once its
# assertions held (a failing test writes no row, and its verdict says FAIL).
# How (both do nothing unless the generator set their file):
#   report FAULT INJECTION LOST DUPS EXIT NOTE
#       a fault injected and what happened: one tab-separated row in
#       $SHAPE_FAULT_REPORT (the table "faults injected").
#   report_input INPUT TEST ASSERTS
#       a bad input or hostile use, the ctest name of the test and what it
#       asserts (with the figures of this run): a row in $SHAPE_INPUT_REPORT
#       (the table "Bad inputs and hostile use").
report() {
  [ -n "${SHAPE_FAULT_REPORT:-}" ] || return 0
  local IFS=$'\t'
  echo "$*" >>"$SHAPE_FAULT_REPORT"
}
report_input() {
  [ -n "${SHAPE_INPUT_REPORT:-}" ] || return 0
  local IFS=$'\t'
  echo "$*" >>"$SHAPE_INPUT_REPORT"
}
