#!/usr/bin/env bash
# test_install.sh — an installed shape runs from its prefix and builds plugins.
#
# Why: `make install PREFIX=...` is how people get shape and how plugin
# authors get headers and pkg-config data (docs/plugins/authoring.md). The
# installed command must find libshape through its RPATH and shape-kafka in
# <prefix>/<libdir>/shape/plugins without any environment, and the example
# plugin must compile against the installed headers with the exact commands
# the authoring guide shows, then load.
# How: install the build tree into a temporary prefix (cmake --install, what
# `make install` runs), check the layout, run the installed binary with a
# clean environment, build examples/plugins/hello both with the documented
# `cc` line and with its Makefile, and load the results; build and run
# examples/testing/kafka_fakes.c against the installed testing library
# (headers under include/shape-kafka/testing, shape-kafka-testing.pc).
set -euo pipefail

: "${SHAPE_BUILD_DIR:?}" "${SHAPE_SOURCE_DIR:?}"
unset SHAPE_PLUGIN_PATH LD_LIBRARY_PATH
for tool in cmake pkg-config cc make; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is needed" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*" >&2; [[ -f $work/out ]] && { echo "--- output:" >&2; cat "$work/out" >&2; }; exit 1; }

version=$(sed -n 's/^#define SHAPE_VERSION "\(.*\)"$/\1/p' "$SHAPE_BUILD_DIR/include/shape/version.h")
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$SHAPE_BUILD_DIR/CMakeCache.txt")
[[ -n $version && -n $libdir ]] || fail "cannot read the version or CMAKE_INSTALL_LIBDIR of the build"
[[ $libdir != /* ]] || { echo "CMAKE_INSTALL_LIBDIR is absolute ($libdir): not relocatable, skipping"; exit 77; }

cmake --install "$SHAPE_BUILD_DIR" --prefix "$prefix" >"$work/out" 2>&1 || fail "cmake --install"

# --- layout ---------------------------------------------------------------------
for f in bin/shape "$libdir/libshape.so" "$libdir/shape/plugins/shape-kafka.so" \
         "$libdir/pkgconfig/shape.pc" include/shape/plugin.h include/shape/cli.h \
         include/shape/error.h include/shape/registry.h include/shape/version.h \
         "$libdir/libshape_kafka_testing.a" "$libdir/pkgconfig/shape-kafka-testing.pc"; do
    [[ -e $prefix/$f ]] || fail "not installed: $f"
done
for h in fake_broker.h fake_producer.h fake_registry.h emitter_contract.h consumer_client.h producer_client.h; do
    [[ -e $prefix/include/shape-kafka/testing/$h ]] || fail "not installed: include/shape-kafka/testing/$h"
done
grep -qx "#define SHAPE_VERSION \"$version\"" "$prefix/include/shape/version.h" ||
    fail "installed version.h does not say $version"
[[ -z $(find "$prefix" -path '*/tests/*' -o -name 'shape-hello.so' -o -name 'shape-abi-future.so') ]] ||
    fail "test plugins must not be installed"

# --- the installed command, with no environment help ---------------------------
# RPATH: libshape comes from the prefix, not the build tree.
ldd "$prefix/bin/shape" >"$work/out"
got=$(awk '/libshape\.so/ {print $3}' "$work/out")
[[ -n $got && $(realpath "$got") == $(realpath "$prefix/$libdir/libshape.so.0") ]] ||
    fail "installed shape loads libshape from '$got', not from the prefix"

"$prefix/bin/shape" --version >"$work/out" 2>&1 || fail "installed shape --version"
[[ $(head -n1 "$work/out") == "shape $version" ]] || fail "first line must be 'shape $version'"
grep -qxF "shape-kafka $version ($prefix/bin/../$libdir/shape/plugins/shape-kafka.so)" "$work/out" ||
    fail "installed shape must load shape-kafka from $prefix/$libdir/shape/plugins"
! grep -q '^refused' "$work/out" || fail "nothing may be refused in a fresh install"

"$prefix/bin/shape" broker --help >"$work/out" 2>&1 || fail "installed shape broker --help"
grep -q '^usage: shape broker' "$work/out" || fail "broker --help from the install"

# --- pkg-config, as the authoring guide uses it ----------------------------------
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
[[ $(pkg-config --modversion shape) == "$version" ]] || fail "pkg-config --modversion shape"
[[ $(realpath "$(pkg-config --variable=plugindir shape)") == $(realpath "$prefix/$libdir/shape/plugins") ]] ||
    fail "pkg-config plugindir is $(pkg-config --variable=plugindir shape)"
pkg-config --cflags shape | grep -q -- "-I$prefix/" || fail "pkg-config --cflags must point into the prefix"

# The documented command line, with warnings as errors.
mkdir -p "$work/hello"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -o "$work/hello/shape-hello.so" \
    "$SHAPE_SOURCE_DIR/examples/plugins/hello/hello.c" $(pkg-config --cflags --libs shape) \
    >"$work/out" 2>&1 || fail "cc of examples/plugins/hello/hello.c against the install"

SHAPE_PLUGIN_PATH=$work/hello "$prefix/bin/shape" hello --name installed --count 2 >"$work/out" 2>&1 ||
    fail "installed shape with the example plugin"
[[ $(cat "$work/out") == $'hello, installed!\nhello, installed!' ]] || fail "hello output"
SHAPE_PLUGIN_PATH=$work/hello "$prefix/bin/shape" --version >"$work/out" 2>&1
grep -qxF "shape-hello 1.0.0 ($work/hello/shape-hello.so)" "$work/out" || fail "--version must list shape-hello"
grep -qxF "shape-kafka $version ($prefix/bin/../$libdir/shape/plugins/shape-kafka.so)" "$work/out" ||
    fail "shape-kafka next to shape-hello"

# A sanitizer build's libshape and archive call the sanitizers' runtime: so do the programs.
sanitize=()
grep -qx 'SHAPE_SANITIZE:BOOL=ON' "$SHAPE_BUILD_DIR/CMakeCache.txt" && sanitize=(-fsanitize=address,undefined)
# The library example (docs/plugins/streaming.md): one profile per table of
# a hand-built ArrowArrayStream (shape/stream_split.h), and the batches as an
# Arrow IPC stream, built with the documented command line.
mkdir -p "$work/split"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "${sanitize[@]}" -o "$work/split/split_profile" "$SHAPE_SOURCE_DIR/examples/library/split_profile.c" \
    $(pkg-config --cflags --libs shape) -Wl,-rpath,"$(pkg-config --variable=libdir shape)" \
    >"$work/out" 2>&1 || fail "cc of examples/library/split_profile.c against the install"
"$work/split/split_profile" "$work/split/b.arrows" >"$work/split/doc.json" 2>"$work/out" || fail "split_profile: $(cat "$work/out")"
python3 - "$work/split/doc.json" <<'PY' || fail "split_profile's document"
import json, sys
t = json.load(open(sys.argv[1]))["tables"]
assert list(t) == ["orders", "users"], list(t)
assert (t["orders"]["rows"], t["users"]["rows"]) == (3, 2), t
cols = lambda n: [c["name"] for c in t[n]["columns"]]
assert cols("orders") == ["table", "id", "amount"] and cols("users") == ["table", "id", "email"], (cols("orders"), cols("users"))
amount = t["orders"]["columns"][2]
assert (amount["min"], amount["max"], amount["count"]) == (5.25, 19.5, 3), amount
PY
[[ $(head -c 4 "$work/split/b.arrows" | od -An -tx1 | tr -d ' ') == ffffffff ]] || fail "split_profile's IPC stream"

# The testing library (shape_kafka_testing), as the authoring guide builds a
# test with it: examples/testing/kafka_fakes.c through pkg-config alone
# (FakeBroker, the fake registry, the emitter contract suite over FakeProducer).
mkdir -p "$work/fakes"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "${sanitize[@]}" -o "$work/fakes/kafka_fakes" "$SHAPE_SOURCE_DIR/examples/testing/kafka_fakes.c" \
    $(pkg-config --cflags --libs shape-kafka-testing) -Wl,-rpath,"$(pkg-config --variable=libdir shape)" \
    >"$work/out" 2>&1 || fail "cc of examples/testing/kafka_fakes.c against the install (pkg-config shape-kafka-testing)"
ldd "$work/fakes/kafka_fakes" >"$work/out"
got=$(awk '/libshape\.so/ {print $3}' "$work/out")
[[ -n $got && $(realpath "$got") == $(realpath "$prefix/$libdir/libshape.so.0") ]] ||
    fail "the test program loads libshape from '$got', not from the prefix"
(cd "$work/fakes" && ./kafka_fakes) >"$work/out" 2>&1 || fail "the test program built against shape_kafka_testing"
grep -qx "ok: FakeBroker, fake registry and the emitter contract suite" "$work/out" || fail "kafka_fakes output"

# The example's Makefile, out of tree, then `make install` into plugindir: the
# installed shape then finds it with no SHAPE_PLUGIN_PATH at all.
mkdir -p "$work/hello-make"
make -s -C "$work/hello-make" -f "$SHAPE_SOURCE_DIR/examples/plugins/hello/Makefile" \
    >"$work/out" 2>&1 || fail "make -f examples/plugins/hello/Makefile"
[[ -f $work/hello-make/shape-hello.so ]] || fail "the Makefile built no shape-hello.so"
make -s -C "$work/hello-make" -f "$SHAPE_SOURCE_DIR/examples/plugins/hello/Makefile" install \
    >"$work/out" 2>&1 || fail "make install of the example"
[[ -f $prefix/$libdir/shape/plugins/shape-hello.so ]] || fail "make install put nothing in plugindir"
"$prefix/bin/shape" hello --name plugindir >"$work/out" 2>&1 || fail "installed example plugin"
[[ $(cat "$work/out") == "hello, plugindir!" ]] || fail "hello from plugindir"

echo "ok: install tree"
