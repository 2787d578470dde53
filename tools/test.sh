#!/usr/bin/env bash
# Builds Ratescope and runs every test suite, then a one-minute soak under failover
# (tools/soak.sh 1: a sentinel group whose master fails over and crashes under the console's
# and the CLI's load; no limiter may admit more than its limit except at a failover); then
# builds the core again under AddressSanitizer + UndefinedBehaviorSanitizer and runs the core
# suites there; then fuzzes each parser of outside input for FUZZ_SECONDS (default 5) per
# target with clang's libFuzzer under ASan + UBSan (tools/fuzz.sh: build-fuzz/, a copy of
# tests/fuzz/corpus/); then packages the first build as a .deb and checks the package
# (tools/check-package.sh).
# Tests start their own redis-servers on free loopback ports and stop them.
#
#   bash tools/test.sh            all of the above (what CI runs)
#   bash tools/test.sh --quick    the build in build/ (the one tools/run.sh uses) and every suite
#                                 there, as above. No soak, no sanitizer build, no fuzzing, no
#                                 packaging check: run the whole script before you push.
#   bash tools/test.sh --help     this text
#
# JOBS (default 2) is the build's parallelism; TEST_JOBS how many suites run at once (each starts
# redis-servers of its own on free ports): by default 4 in the first build, whose suites wait on
# their servers more than on the CPU, and 2 under the sanitizers, which keep the CPU busy (more
# at once there is slower, and makes their timing checks flaky). Both builds compile
# through ccache when it is installed (tools/ccache-env.sh), so a second run, or a run in another
# clone, recompiles only what changed. The sanitizer build leaves out what the core suites do
# not run: the console and its suites, the benchmarks, the man pages and their suite.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
quick=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "test.sh: unknown argument $arg" >&2; usage >&2; exit 2 ;;
  esac
done

bash tools/install-deps.sh --tests
source tools/ccache-env.sh

jobs=${JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 -j"${TEST_JOBS:-4}")
if [ $quick -eq 1 ]; then
  echo "Quick run passed: no soak, no sanitizer build, no fuzzing, no packaging check (bash tools/test.sh runs them)."
  exit 0
fi

# A minute under failover, with the binaries just tested (bash tools/soak.sh 10 for the long run).
bash tools/soak.sh 1

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRATESCOPE_SANITIZE=ON \
      -DRATESCOPE_BUILD_GUI=OFF -DRATESCOPE_BUILD_BENCH=OFF -DRATESCOPE_BUILD_MANPAGES=OFF >/dev/null
cmake --build build-asan -j"$jobs"
# Qt's own one-time allocations are not ours to chase: leaks are checked elsewhere.
(cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
   QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 -L core -j"${TEST_JOBS:-2}")

# A short run of every fuzz target: a finding (crash, hang, sanitizer report) fails the run.
bash tools/fuzz.sh "${FUZZ_SECONDS:-5}"

bash tools/check-package.sh build
