#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan + libFuzzer coverage on
# every library) in build-fuzz/ and runs them.
#   make fuzz                                 build every target
#   make fuzz TARGET=fuzz_diff SECONDS=600    run one target
#   scripts/fuzz.sh --all 60                  run every target in turn
# Each run starts from the seeds in fuzz/corpus/<target>/ plus what earlier
# runs on this machine found (build-fuzz/corpus/<target>/, not committed).
# A crash leaves its reproducer in fuzz/artifacts/ and prints the command
# that replays it. Prints executions and executions/s per target; exits
# non-zero if any target failed.
# build-fuzz/ is the same build dir as scripts/ci-sanitize.sh's (it also
# builds the unit tests there); this script only builds the fuzz targets.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-}
seconds=${2:-60}
build=${BUILD:-build-fuzz}
targets_all=$(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DHERON_FUZZ=ON -DHERON_SANITIZE=address,undefined -DHERON_TESTS=ON -DHERON_BENCH=OFF >/dev/null
# shellcheck disable=SC2086
ninja -C "$build" -j"${JOBS:-2}" $targets_all
[ -z "$target" ] && exit 0
targets=$target
[ "$target" = "--all" ] && targets=$targets_all

# LeakSanitizer checks at exit and whenever libFuzzer sees the heap grow
# across one input (-detect_leaks, on by default with ASan).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p fuzz/artifacts
status=0
for t in $targets; do
  seeds=fuzz/corpus/$t
  corpus=$build/corpus/$t
  mkdir -p "$seeds" "$corpus"
  log=$build/fuzz-$t.log
  echo "== $t for ${seconds}s"
  # -timeout: one input taking longer than 20 s is reported as a hang.
  if ! nice -n "${NICE:-0}" "$build/bin/$t" "$corpus" "$seeds" -max_total_time="$seconds" -timeout=20 \
       -artifact_prefix="fuzz/artifacts/$t-" -print_final_stats=1 >"$log" 2>&1; then
    status=1
    grep -E "ERROR|SUMMARY|Test unit written|fuzz_[a-z]+: " "$log" | head -20
    art=$(ls -t fuzz/artifacts/"$t"-* 2>/dev/null | head -1 || true)
    [ -n "$art" ] && echo "replay: $build/bin/$t $art    (full log: $log)"
  fi
  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec" "$log" | sed "s/^/  $t /"
done
exit $status
