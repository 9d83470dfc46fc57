#!/usr/bin/env bash
# test_malloc_tuning.sh — the `shape` command keeps the heap memory it frees
# for reuse (src/cli/malloc_tuning.c), and leaves glibc's malloc alone when
# the user has tuned it.
#
# Why: with glibc's defaults a block above the mmap threshold gets a mapping
# of its own, faulted in and unmapped every batch; that churn was a tenth of
# stream-profile's CPU (docs/PERFORMANCE.md). Nothing in a profile shows
# whether the tuning is in effect, so this test looks at the process itself.
# How: strace counts the anonymous read-write mappings of 128 KiB or more the
# process makes (how glibc's malloc gives a large block its own mapping;
# thread stacks, arenas and libraries are mapped otherwise). A stream-profile
# of 200,000 lines in batches of 65,536 allocates multi-megabyte blocks every
# batch: tuned, none of them is mapped on its own; with the user's own
# threshold of 128 KiB (GLIBC_TUNABLES, or MALLOC_MMAP_THRESHOLD_) they are,
# which shows shape kept the user's setting. Skipped (77) without strace, or
# in a sanitizer build (ASan's allocator does not use glibc's malloc).
set -euo pipefail
: "${SHAPE_BIN:?}"
source "$(dirname "$0")/cli_lib.sh"
command -v strace >/dev/null || { echo "SKIP: strace is needed (scripts/install-deps installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
# (ldd's output is read whole: `ldd | grep -q` fails under pipefail when grep
# stops reading early)
if grep -q -e libasan -e libtsan <<<"$(ldd "$SHAPE_BIN" 2>/dev/null)"; then
    echo "SKIP: sanitizer build: ASan's allocator replaces glibc's malloc"
    exit 77
fi

python3 - "$work/rows.jsonl" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(200000):
        f.write('{"id":%d,"name":"customer-%d","city":"%s","note":"%s","amount":%d.25}\n'
                % (i, i % 5000, ("Lyon", "Oslo", "Kyiv", "Lima")[i % 4], "x" * (40 + i % 60), i % 997))
PY

# large_maps [VAR=VALUE...]: how many anonymous read-write mappings of
# >= 128 KiB a stream-profile of the rows makes (stdout).
large_maps() {
    env "$@" strace -f -qq -e trace=mmap -o "$work/trace" \
        "$SHAPE_BIN" stream-profile "$work/rows.jsonl" -o "$work/p.json" >"$work/out" 2>"$work/err" ||
        fail "stream-profile under strace ($*) failed"
    grep -q '"events": 200000' "$work/out" || fail "stream-profile ($*) did not read the 200000 rows"
    grep -E 'mmap\(NULL, [0-9]+, PROT_READ\|PROT_WRITE, MAP_PRIVATE\|MAP_ANONYMOUS, -1, 0\)' "$work/trace" |
        awk -F', ' '$2 >= 131072' | wc -l
}

tuned=$(large_maps)
[ "$tuned" -eq 0 ] || fail "shape mapped $tuned large blocks on their own: the malloc tuning is not in effect"

kept=()
for setting in GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 MALLOC_MMAP_THRESHOLD_=131072; do
    mapped=$(large_maps "$setting")
    [ "$mapped" -ge 5 ] || fail "with $setting only $mapped large blocks were mapped: shape overrode the user's malloc setting"
    kept+=("$mapped with $setting")
done

echo "ok: tuned 0 large mappings; the user's 128 KiB threshold kept (${kept[*]})"
