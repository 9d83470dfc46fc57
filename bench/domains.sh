#!/usr/bin/env bash
# bench/domains.sh — generation-schema domains (docs/DOMAINS.md) through
# `--sink null`: events/s per core of each example domain, and the
# retail-equivalent schema (examples/domains/retail/retail.json) against the
# built-in retail domain on the same scale, side by side in one run (target
# of issue 22: >= 0.7x).
#
# Usage (after `make`): bench/domains.sh [SCALE]   (default: medium)
# Each run is the whole stream of the scale; the generator is one thread, so
# events/s is per core. The best of REPEAT (3) runs is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
shape=${SHAPE_BIN:-build/shape}
scale=${1:-medium}
repeat=${REPEAT:-3}

best() { # best events/s of `repeat` runs of: shape emit "$@" --sink null
    local top=0 v
    for _ in $(seq 1 "$repeat"); do
        v=$("$shape" emit "$@" --scale "$scale" --sink null --no-progress --json | \
            python3 -c "import json,sys; print(int(json.load(sys.stdin)['per_second']))")
        (( v > top )) && top=$v
    done
    echo "$top"
}

echo "schema domains: --sink null, scale $scale, best of $repeat"
builtin=$(best retail)
schema=$(best examples/domains/retail/retail.json)
printf '  %-34s %12d events/s\n' "retail (built-in)" "$builtin"
printf '  %-34s %12d events/s  (%.2fx the built-in; target >= 0.70x)\n' "retail as a schema" "$schema" \
    "$(python3 -c "print($schema / $builtin)")"
for d in payments iot clickstream crm orgchart; do
    printf '  %-34s %12d events/s per core\n' "examples/domains/$d.json" "$(best "examples/domains/$d.json")"
done
