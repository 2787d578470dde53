#!/usr/bin/env bash
# Builds Ratescope and shows it working against a private sandbox redis-server
# (started on a free loopback port, stopped on exit). Extra arguments go to the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"${JOBS:-2}"
if [ $# -eq 0 ]; then set -- info; fi
exec build/app/cli/ratescope-cli --sandbox "$@"
