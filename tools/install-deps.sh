#!/usr/bin/env bash
# Installs the Debian 12 packages Ratescope needs to build, run and test, if any is missing.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config          # toolchain
  lld                                       # a linker twice as fast as gold (CMakeLists.txt)
  ccache                                    # compiler cache shared by builds and clones (tools/ccache-env.sh)
  qt6-base-dev qt6-charts-dev libgl-dev     # Qt 6.4: Core, Network, Widgets, Test, Charts
  libqt6opengl6-dev                         # Qt Charts' CMake package needs Qt6OpenGL
  qtkeychain-qt6-dev                        # passwords in the system keychain
  libhiredis-dev                            # RESP encoding and parsing
  redis-server redis-tools                  # private servers for tests, demo and benchmarks
  openssl                                   # TLS certificates made at test time
  fonts-dejavu-core                         # text in offscreen screenshots
  desktop-file-utils appstream              # the packaging check validates the desktop metadata
  bash-completion                           # the completion test runs under it too
)
# With --tests, what only the tests need: Python's limits library writes its own keys in the
# test of its reader; clang and its runtimes (libFuzzer, ASan, UBSan: libclang-rt-14-dev, which
# clang-14 does not pull in) build the fuzz targets (tools/fuzz.sh).
[ "${1:-}" = "--tests" ] && packages+=(python3-limits python3-redis clang-14 libclang-rt-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
