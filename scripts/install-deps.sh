#!/usr/bin/env bash
# Installs what Heron needs to build and test, from Debian 12 packages only.
# Idempotent: asks apt only for the packages that are missing, and runs
# `apt-get update` first only when something has to be installed.
#   scripts/install-deps.sh            core build + tests
#   scripts/install-deps.sh --aarch64  + cross toolchain and qemu-user
set -euo pipefail

pkgs=(build-essential cmake ninja-build ccache pkg-config
      clang libclang-rt-14-dev
      libasmjit-dev libzydis-dev libcapstone-dev
      libgtest-dev libgmock-dev libbenchmark-dev libedit-dev)
for arg in "$@"; do
  case "$arg" in
    --aarch64) pkgs+=(qemu-user g++-aarch64-linux-gnu) ;;
    --llvm) pkgs+=(llvm-14-dev) ;;
    *) echo "install-deps: unknown option $arg" >&2; exit 2 ;;
  esac
done

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
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
