#!/usr/bin/env bash
# Builds Ratescope and opens the console on a private sandbox redis-server with simulated
# traffic (`ratescope --demo`: a free loopback port, a temporary directory, stopped when the
# console exits). Arguments replace --demo, e.g. `bash tools/run.sh --url redis://host:6379`.
# Without a display it renders the demo console to a PNG and says where it is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
source tools/ccache-env.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"${JOBS:-2}"
if [ $# -eq 0 ]; then set -- --demo; fi
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ] || [ -n "${QT_QPA_PLATFORM:-}" ]; then
  exec build/app/gui/ratescope "$@"
fi
shot="$PWD/build/ratescope-demo.png"
echo "No display here (neither DISPLAY nor WAYLAND_DISPLAY is set): rendering the console to a picture instead."
# (Qt's notes about the missing runtime directory and window hints are noise here.)
{ QT_QPA_PLATFORM=offscreen build/app/gui/ratescope "$@" --screenshot "$shot" 2>&1 1>&3 |
    { grep -v -e XDG_RUNTIME_DIR -e propagateSizeHints >&2 || true; }; } 3>&1
cat <<MSG

The console, once its data had loaded: $shot
To use it live, run this from a desktop session (or over ssh -X), or serve it over VNC:
  QT_QPA_PLATFORM=vnc:size=1280x800 build/app/gui/ratescope --demo   # then connect a VNC viewer to port 5900
The CLI needs no display: build/app/cli/ratescope-cli --sandbox info
MSG
