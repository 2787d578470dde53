#!/usr/bin/env bash
# Builds Ratescope and runs every test suite; then builds the core again under
# AddressSanitizer + UndefinedBehaviorSanitizer and runs the core suites there; then
# packages the first build as a .deb and checks the package (tools/check-package.sh).
# Tests start their own redis-servers on free loopback ports and stop them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh --tests
source tools/ccache-env.sh

jobs=${JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600)

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRATESCOPE_SANITIZE=ON \
      -DRATESCOPE_BUILD_GUI=OFF -DRATESCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
# Qt's own one-time allocations are not ours to chase: leaks are checked elsewhere.
(cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
   QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 -L core)

bash tools/check-package.sh build
