#!/usr/bin/env bash
# Builds the libFuzzer targets with clang + ASan/UBSan in build-fuzz/ and
# runs them. `make fuzz` builds; `make fuzz TARGET=fuzz_diff SECONDS=600`
# runs one target; `scripts/fuzz.sh --all SECONDS` runs every target.
# A crash leaves its reproducer in fuzz/artifacts/ and prints the command
# that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-}
seconds=${2:-60}
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DHERON_FUZZ=ON -DHERON_SANITIZE=address,undefined -DHERON_TESTS=OFF -DHERON_BENCH=OFF >/dev/null
ninja -C build-fuzz -j"${JOBS:-2}" $(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')
[ -z "$target" ] && exit 0
targets=$target
[ "$target" = "--all" ] && targets=$(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')
mkdir -p fuzz/artifacts
status=0
for t in $targets; do
  corpus=fuzz/corpus/$t
  mkdir -p "$corpus"
  work=$(mktemp -d)
  echo "== $t for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1 build-fuzz/bin/$t "$work" "$corpus" -max_total_time="$seconds" \
       -artifact_prefix=fuzz/artifacts/$t- -print_final_stats=1 2>"$work/log"; then
    status=1
    grep -E "ERROR|SUMMARY|Test unit written" "$work/log" | head -20
    art=$(ls -t fuzz/artifacts/$t-* 2>/dev/null | head -1)
    [ -n "$art" ] && echo "replay: build-fuzz/bin/$t $art"
  fi
  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec" "$work/log" | sed "s/^/  $t /"
  rm -rf "$work"
done
exit $status
