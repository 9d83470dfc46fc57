# Top-level wrapper around CMake + CTest. See README for what each target does.
BUILD     ?= build
SANITIZE_BUILD ?= build-sanitize
PREFIX    ?= /usr/local
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?=

.PHONY: all deps configure test unit contract emulator live sanitize valgrind install demo bench clean

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

# The whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
sanitize: deps
	@test -f $(SANITIZE_BUILD)/CMakeCache.txt || cmake -S . -B $(SANITIZE_BUILD) -DSHAPE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Every unit test program under valgrind's memcheck: no leak, no invalid access.
valgrind: deps all
	@set -e; for t in $(BUILD)/tests/bin/test_*; do \
	  echo "valgrind $$t"; \
	  SHAPE_SOURCE_DIR=$(CURDIR) valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    --error-exitcode=1 $$t >/dev/null; \
	done

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

demo: deps all
	scripts/demo

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)
