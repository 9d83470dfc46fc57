#!/usr/bin/env bash
# test_public_headers.sh — libshape's ABI is its public headers, and the
# kafka plugin exports its entry point only.
#
# Why: libshape is built with hidden visibility (shape/export.h): a public
# header that forgets SHAPE_API_BEGIN/SHAPE_API_END hides its functions from
# plugins and the command, and a SHAPE_API on a private declaration exports
# an internal. Both are easy to do in a merge and hard to see in a review.
# How: every include/shape/*.h (and version.h.in) except export.h includes
# shape/export.h and opens its declarations with SHAPE_API_BEGIN after its
# include guard and closes them with SHAPE_API_END just before the guard's
# #endif, once each; every symbol libshape.so exports is named in a public
# header; shape-kafka.so exports shape_plugin_entry (SHAPE_PLUGIN_ENTRY_SYMBOL,
# what the core's loader looks up) and nothing else.
set -euo pipefail

: "${SHAPE_BUILD_DIR:?}" "${SHAPE_SOURCE_DIR:?}"
command -v nm >/dev/null || { echo "SKIP: nm (binutils) is needed"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

inc=$SHAPE_SOURCE_DIR/include/shape
for h in "$inc"/*.h "$inc"/version.h.in; do
    [[ $h == */export.h ]] && continue
    name=${h#"$SHAPE_SOURCE_DIR"/}
    [[ $(grep -c '^SHAPE_API_BEGIN$' "$h") == 1 && $(grep -c '^SHAPE_API_END$' "$h") == 1 ]] ||
        fail "$name: needs one SHAPE_API_BEGIN and one SHAPE_API_END line (shape/export.h)"
    grep -qx '#include "shape/export.h"' "$h" || fail "$name: must include \"shape/export.h\""
    # The guard's #define comes before BEGIN; END is the last line before the final #endif.
    awk '/^#define SHAPE_[A-Z0-9_]+_H$/ && !g {g = NR} /^SHAPE_API_BEGIN$/ {b = NR}
         /^SHAPE_API_END$/ {e = NR} NF {last = NR; text = $0}
         END {exit !(g && b > g && e < last && text == "#endif" && e == last - 1)}' "$h" ||
        fail "$name: SHAPE_API_BEGIN must follow the include guard and SHAPE_API_END precede its #endif"
done

lib=$SHAPE_BUILD_DIR/lib/libshape.so
[[ -e $lib ]] || fail "no $lib"
exported=$(nm -D --defined-only "$lib" | awk '{print $3}')
[[ $(wc -l <<<"$exported") -gt 100 ]] || fail "libshape exports almost nothing: the public headers lost their marks?"
for s in $exported; do
    grep -qw -- "$s" "$inc"/*.h "$SHAPE_BUILD_DIR/include/shape/version.h" ||
        fail "libshape exports $s, which no public header declares (hidden visibility broken?)"
done

plugin=$SHAPE_BUILD_DIR/plugins/shape-kafka.so
[[ -e $plugin ]] || fail "no $plugin"
got=$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort | tr '\n' ' ')
[[ $got == "shape_plugin_entry " ]] || fail "shape-kafka.so must export shape_plugin_entry only, exports: $got"

echo "ok: $(wc -l <<<"$exported") symbols exported by libshape, each declared in a public header; shape-kafka exports its entry point only"
