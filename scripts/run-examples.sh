#!/usr/bin/env bash
# `make run`: runs each example program's %main and prints its result, the
# engine that ran it and the time it took; then the programs in Heron's small
# language (examples/*.hn: what they print, main's result and the times);
# then the embedding examples.
set -euo pipefail
heron=${1:-build/bin/heron}
cd "$(dirname "$0")/.."
status=0
for f in examples/*.clif; do
  printf '%-24s ' "$(basename "$f")"
  "$heron" run --time "$f" || status=1
done
for f in examples/*.hn; do
  echo "== $(basename "$f")"
  "$heron" run --time "$f" || status=1
done
bindir=$(dirname "$heron")
for ex in "$bindir"/example_*; do
  [ -x "$ex" ] || continue
  echo "== $(basename "$ex")"
  "$ex" || status=1
done
exit $status
