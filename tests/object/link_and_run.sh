#!/bin/sh
# heron compile FILE -o X.o, link X.o with main.c by the C compiler of the
# target, run the program: it checks what the object's functions compute
# and prints "ok". Usage: link_and_run.sh HERON SRCDIR WORKDIR x86_64|aarch64
# Exit 77 (ctest: skipped) when the target's compiler or emulator is absent.
set -eu
heron=$1 src=$2 work=$3 target=$4
mkdir -p "$work"
case $target in
x86_64) cc=gcc run="" ;;
aarch64)
    cc=aarch64-linux-gnu-gcc run="qemu-aarch64 -L /usr/aarch64-linux-gnu"
    command -v qemu-aarch64 >/dev/null 2>&1 || { echo "skipped: no qemu-aarch64"; exit 77; }
    ;;
*) echo "unknown target $target"; exit 2 ;;
esac
command -v "$cc" >/dev/null 2>&1 || { echo "skipped: no $cc"; exit 77; }
# An emulator prefix may be set for heron itself (the aarch64 CI leg).
${HERON_EMULATOR:-} "$heron" compile "$src/funcs.clif" --target "$target" -o "$work/funcs-$target.o" >/dev/null
"$cc" -std=c11 -Wall -Werror -Wl,--fatal-warnings "$src/main.c" "$work/funcs-$target.o" -o "$work/prog-$target"
out=$($run "$work/prog-$target")
[ "$out" = ok ] || { echo "expected ok, got: $out"; exit 1; }
echo "$target object: ok"
