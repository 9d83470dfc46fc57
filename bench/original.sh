# bench/original.sh — the original Python project (sqllocks-shape 0.9.3 and
# its Kafka plugin, tests/compat/requirements.txt, in the venv scripts/install-deps
# builds) as a benchmark peer: its `shape stream-profile kafka://…` of the same
# `orders` topic ours profiles, and its `shape emit retail --scale medium
# --sink kafka://…` of the same $emit_events events ours emits, beside ours
# (bench/report.py: "Beside the original"). Sourced by bench/run (it uses
# bench/lib.sh's measure, $bs, $tmp, $con_events, $emit_events); skipped,
# saying so, without the venv.
#
# One round each, like the reference-style reader: the original reads one
# partition at a time and waits out a 1 s poll at the end of each
# (docs/COMPATIBILITY.md, "the stall"), so 64 partitions cost it 64 s before
# any parsing; rounds would only repeat that.

original_topics=(emit-orig:6)
original_ok=0
original_shape=""
if reason=$(python3 tests/compat/venv.py check); then
    original_ok=1
    original_shape="$(python3 tests/compat/venv.py path)/bin/shape"
else
    log "the original: skipped ($reason)"
fi

# original_peers — after the consume and emit rounds, while the broker is up.
original_peers() {
    [ "$original_ok" = 1 ] || return 0
    log "the original: stream-profile of orders ($con_events messages) and emit retail ($emit_events events), one run each"
    measure original stream_profile 1 KEEP events="$con_events" expect="$con_events" -- \
        "$original_shape" stream-profile "kafka://$bs/orders" -o "$tmp/profile-original.json"
    measure original emit 1 KEEP events="$emit_events" expect="$emit_events" -- \
        "$original_shape" emit retail --scale medium --max-events "$emit_events" --sink "kafka://$bs/emit-orig" \
        --no-progress --json
}
