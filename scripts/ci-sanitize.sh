#!/usr/bin/env bash
# CI leg: Heron under AddressSanitizer + UndefinedBehaviorSanitizer.
#
# One clang build dir (build-fuzz/, shared with `make fuzz`) compiles the
# world once: the libraries (with libFuzzer's coverage instrumentation, idle
# outside the fuzzers), heron, the unit tests and the fuzz targets. Then:
#   1. the unit tests and file tests that are quick under ASan, among them
#      the parser robustness sweep (every file test truncated and byte-edited,
#      tests/unit/parser_test.cpp);
#   2. every fuzz target for FUZZ_SECONDS (default 60) each, from the seed
#      corpora (scripts/fuzz.sh --all).
# Exits non-zero on the first failing stage; a fuzzer crash prints its
# reproducer and the command that replays it.
#   scripts/ci-sanitize.sh                  the CI leg
#   FUZZ_SECONDS=10 scripts/ci-sanitize.sh  a quicker local run
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
start=$(date +%s)
stamp() { echo "-- $1 at $(( $(date +%s) - start ))s"; }

bash scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DHERON_FUZZ=ON -DHERON_SANITIZE=address,undefined -DHERON_TESTS=ON -DHERON_BENCH=OFF >/dev/null
ninja -C "$build" -j"${JOBS:-2}"
stamp "built"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Left out under ASan: the tests whose sheer size is their point (million-
# block and million-instruction functions, some with time bounds measured
# without sanitizers); the everyday gcc build (`make test`) runs them.
slow='Million'
(cd "$build" && ctest -j"${JOBS:-2}" --output-on-failure --timeout 600 -E "$slow")
stamp "tests passed"

NICE=0 BUILD="$build" bash scripts/fuzz.sh --all "$seconds"
stamp "fuzzers passed"
