#!/usr/bin/env bash
# Installs what Heron needs to build and test, from Debian 12 packages only.
# Idempotent: asks apt only for the packages that are missing, and runs
# `apt-get update` first only when something has to be installed.
#   scripts/install-deps.sh            core build + tests
#   scripts/install-deps.sh --aarch64  + cross toolchain, qemu-user and the
#                                      arm64 multiarch -dev libraries
set -euo pipefail

pkgs=(build-essential cmake ninja-build ccache pkg-config
      clang libclang-rt-14-dev
      libasmjit-dev libzydis-dev libcapstone-dev
      libgtest-dev libgmock-dev libbenchmark-dev libedit-dev)
for arg in "$@"; do
  case "$arg" in
    --aarch64) pkgs+=(qemu-user g++-aarch64-linux-gnu
                      libasmjit-dev:arm64 libzydis-dev:arm64 libcapstone-dev:arm64
                      libgtest-dev:arm64 libedit-dev:arm64)
               arm64=1 ;;
    --llvm) pkgs+=(llvm-14-dev) ;;
    *) echo "install-deps: unknown option $arg" >&2; exit 2 ;;
  esac
done

arm64=${arm64:-0}
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The arm64 libraries come from Debian's multiarch packages.
if [ "$arm64" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
