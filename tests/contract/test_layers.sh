#!/usr/bin/env bash
# test_layers.sh — the arrows between the rooms of src/ point only down
# (docs/ARCHITECTURE.md).
#
# Why: a room that reaches above itself (core calling the profiler, the
# emit runtime naming the retail domain) is how a house stops being one;
# this test fails the build the day an include goes the wrong way.
# How: every public header (include/shape/*.h) belongs to one room (the
# table below; a new header must be added to it); every #include "shape/..."
# in a room's sources and in its public headers must name a header of a room
# that room may use. Private headers (no "shape/" prefix) must stay within
# their own folder. The emit runtime and the command must not name the
# retail domain directly (they see domains through shape/domain.h).
set -euo pipefail
root=${SHAPE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fail=0
complain() { echo "FAIL: $*" >&2; fail=1; }

room_of_header() {
  case $1 in
    profile|profile_worker) echo profile ;;
    generate|generate_arrow|generate_retail|generate_schema|domain) echo generate ;;
    stream|stream_checkpoint|stream_profiler|stream_split|stream_window|windows_file|duration) echo stream ;;
    emit|emit_schedule|event) echo emit ;;
    arrow_ipc|parquet) echo io ;;
    arrow|arrow_json|arrow_value|atomic_file|base64|bytes|checkpoint_file|cli|clock|credref|decode|error|export|json|json_write|offsets|options|paths|plugin|registry|source|source_stream|task|timestamp|utf8|version) echo core ;;
    *) echo unknown ;;
  esac
}
# The rooms each room may include from (besides itself).
allowed() {
  case $1 in
    core) echo "core" ;;
    profile) echo "core profile" ;;
    generate) echo "core generate" ;;
    stream) echo "core profile stream" ;;
    emit) echo "core generate emit" ;;
    io) echo "core io" ;;
    plugins) echo "core emit plugins" ;;
    cli) echo "core profile generate stream emit io cli" ;;
  esac
}

check_file() { # ROOM FILE
  local room=$1 file=$2 inc name hroom
  while IFS= read -r inc; do
    name=${inc#shape/}; name=${name%.h}
    hroom=$(room_of_header "$name")
    if [ "$hroom" = unknown ]; then
      complain "${file#$root/} includes $inc, which has no room in tests/contract/test_layers.sh (add it there and to docs/ARCHITECTURE.md)"
    elif ! [[ " $(allowed "$room") " == *" $hroom "* ]]; then
      complain "${file#$root/} ($room) includes $inc ($hroom): $room may use only $(allowed "$room")"
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(shape\/[^"]*\)".*/\1/p' "$file")
}

for dir in core profile generate stream emit io cli; do
  while IFS= read -r f; do check_file "$dir" "$f"; done < <(find "$root/src/$dir" -name '*.[ch]')
done
while IFS= read -r f; do check_file plugins "$f"; done < <(find "$root/src/plugins" -name '*.[ch]')
for h in "$root"/include/shape/*.h; do
  name=$(basename "$h" .h)
  room=$(room_of_header "$name")
  [ "$room" != unknown ] || { complain "include/shape/$name.h has no room in tests/contract/test_layers.sh"; continue; }
  check_file "$room" "$h"
done
# Domains are reached through the interface only.
if grep -rn 'shape_retail_\|generate_retail\.h' "$root/src/emit" "$root/src/cli" >/dev/null; then
  complain "src/emit or src/cli names the retail domain directly: $(grep -rln 'shape_retail_\|generate_retail\.h' "$root/src/emit" "$root/src/cli" | tr '\n' ' ')"
fi
# The broker's socket fix is the plugin's, not a process-wide patch by the command.
if grep -rn 'accept(' "$root/src/cli" >/dev/null; then complain "src/cli defines or calls accept()"; fi
[ $fail -eq 0 ] || exit 1
echo "ok: every include points down (core < profile, generate, io < stream, emit < plugins, cli)"
