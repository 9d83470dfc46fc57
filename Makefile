# Top-level wrapper around CMake + CTest. See README for what each target does.
BUILD     ?= build
SANITIZE_BUILD ?= build-sanitize
PREFIX    ?= /usr/local
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?=
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= fuzz_options fuzz_kafka_uri fuzz_json fuzz_decode fuzz_wire_decode fuzz_registry_http fuzz_registry_answer fuzz_timestamp fuzz_checkpoint fuzz_duration fuzz_rate_curve fuzz_schema fuzz_writers fuzz_credref fuzz_args fuzz_schema_option

.PHONY: all deps configure test unit contract emulator emulator-kafka live sanitize valgrind install demo bench bench-check bench-baseline clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps

configure:
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null

# Every tier that needs no outside service; live tests report themselves skipped.
test: deps all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

unit contract emulator live: deps all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L '^$@$$' $(CTEST_ARGS)

# The emulator tier again against a real Apache Kafka (one KRaft node, started
# once by scripts/kafka and stopped at the end; jars fetched by install-deps).
emulator-kafka: deps all
	tests/emulator/run-real-kafka --build $(BUILD) --jobs $(JOBS) $(CTEST_ARGS)

# The whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
sanitize: deps
	@test -f $(SANITIZE_BUILD)/CMakeCache.txt || cmake -S . -B $(SANITIZE_BUILD) -DSHAPE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Each libFuzzer target (tests/fuzz) for FUZZ_SECONDS seconds, in its own clang
# build tree with ASan+UBSan, from the CMake-written seeds and the committed corpus
# (tests/fuzz/corpus/NAME, refreshed by `make fuzz-keep`). The corpus grows in $(FUZZ_BUILD)/corpus/NAME; a
# crashing input is saved as $(FUZZ_BUILD)/artifacts/NAME-crash-* (see tests/fuzz/README.md).
.PHONY: fuzz
fuzz:
	@command -v clang >/dev/null || { echo "make fuzz needs clang (apt-get install clang)" >&2; exit 2; }
	@test -f $(FUZZ_BUILD)/CMakeCache.txt || CC=clang cmake -S . -B $(FUZZ_BUILD) -DSHAPE_FUZZ=ON -DSHAPE_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS)
	@set -e; mkdir -p $(FUZZ_BUILD)/artifacts; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  kept=; [ -d tests/fuzz/corpus/$$t ] && kept=tests/fuzz/corpus/$$t; \
	  if ! $(FUZZ_BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/fuzz/seeds/$$t $$kept \
	    >$(FUZZ_BUILD)/$$t.log 2>&1; then tail -n 80 $(FUZZ_BUILD)/$$t.log; exit 1; fi; \
	  grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' $(FUZZ_BUILD)/$$t.log | sed 's/^/  /'; \
	done

# Keep what fuzzing found: merge each target's grown corpus ($(FUZZ_BUILD)/corpus/NAME)
# into the committed one (tests/fuzz/corpus/NAME, seeds of every `make fuzz` run),
# keeping only inputs of at most 4 KiB that add coverage (-merge=1). Commit the result.
.PHONY: fuzz-keep
fuzz-keep:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  [ -x $(FUZZ_BUILD)/fuzz/$$t ] && [ -d $(FUZZ_BUILD)/corpus/$$t ] || continue; \
	  mkdir -p tests/fuzz/corpus/$$t; \
	  $(FUZZ_BUILD)/fuzz/$$t -merge=1 -max_len=4096 tests/fuzz/corpus/$$t $(FUZZ_BUILD)/corpus/$$t \
	    >$(FUZZ_BUILD)/$$t.keep.log 2>&1 || { tail -n 20 $(FUZZ_BUILD)/$$t.keep.log; exit 1; }; \
	  echo "fuzz-keep: $$t: $$(ls tests/fuzz/corpus/$$t | wc -l) inputs kept"; \
	done

# valgrind's memcheck, no leak and no invalid access: every unit test program
# and every contract C program (the emitter contract suite, the kafka:// fakes)
# (valgrind-unit), then the emulator tier with every shape client command under
# memcheck (valgrind-emulator: tests/valgrind/run-emulator; its summary feeds
# docs/RELIABILITY.md through tests/emulator/reliability-report.sh).
.PHONY: valgrind-unit valgrind-emulator
valgrind: valgrind-unit valgrind-emulator

valgrind-emulator: deps all
	tests/valgrind/run-emulator --build $(BUILD) --jobs $(JOBS) --summary $(BUILD)/valgrind-emulator/summary.md

# The programs run $(JOBS) at a time (each is one process on one core), each
# with its output in $(BUILD)/valgrind-unit/NAME.log, shown when it fails;
# sampling loops run fewer cases under memcheck (tests/support/memcheck.h).
valgrind-unit: deps all
	@mkdir -p $(BUILD)/valgrind-unit
	@ls -d $(BUILD)/tests/bin/test_* $(BUILD)/tests/bin/contract_* | xargs -P $(JOBS) -n 1 sh -c '\
	  log=$(BUILD)/valgrind-unit/$$(basename "$$0").log; start=$$(date +%s); \
	  if SHAPE_SOURCE_DIR=$(CURDIR) SHAPE_BUILD_DIR=$(CURDIR)/$(BUILD) SHAPE_BIN=$(CURDIR)/$(BUILD)/shape \
	    valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    --error-exitcode=1 "$$0" >"$$log" 2>&1; then echo "valgrind $$0: ok ($$(( $$(date +%s) - start )) s)"; \
	  else echo "valgrind $$0: FAILED, $$log:"; tail -n 60 "$$log"; exit 1; fi'

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

demo: deps all
	scripts/demo

# Every benchmark side by side with its peers in one run (bench/run); rewrites
# docs/PERFORMANCE.md. BENCH_QUICK=1 for a short smoke run.
bench: deps
	bench/run

# The regression guard (bench/check): the key ratios on the full run's 1M-message
# topic, 5 rounds (~2 min on an idle 2-core machine once build-bench/ is built);
# fails when a ratio falls below its guard in bench/baseline.json (issue 19: the
# issue's target, or what the code reaches less a noise margin while the target
# is not met yet, printed beside it), below half its baseline, or when any
# reader's message count is wrong. CI runs it after `make test`.
bench-check: deps
	bench/check

# Rewrite bench/baseline.json's ratios from a bench-check run (on an idle machine
# of CI's kind; commit it); it keeps the guards and prints what each could be.
bench-baseline: deps
	bench/check --write-baseline

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)
	rm -rf $(FUZZ_BUILD)
