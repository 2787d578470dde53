#!/usr/bin/env bash
# Builds the Debian package: a Release build in build-pkg with Debian's hardening flags
# (dpkg-buildflags), then CPack's DEB generator (packaging/Packaging.cmake). Prints the .deb's path.
#
# lintian (large, so not run in CI: `apt-get install lintian`, then `lintian -I --pedantic
# build-pkg/ratescope_*.deb`) reports no errors and no warnings on this package. Kept, at the
# informational level only:
#   binary-has-unneeded-section .comment (both binaries): CMake's strip step (CPACK_STRIP_FILES)
#   runs plain `strip`, which keeps the compiler's version string that dh_strip would remove;
#   a few hundred bytes, harmless.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
source tools/ccache-env.sh

export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cppflags=$(dpkg-buildflags --get CPPFLAGS)
cxxflags=$(dpkg-buildflags --get CXXFLAGS)
ldflags=$(dpkg-buildflags --get LDFLAGS)
cmake -S . -B build-pkg -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DRATESCOPE_BUILD_TESTS=OFF -DRATESCOPE_BUILD_BENCH=OFF \
      -DCMAKE_CXX_FLAGS="$cppflags $cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" >/dev/null
cmake --build build-pkg -j"${JOBS:-2}"
rm -f build-pkg/ratescope_*.deb
(cd build-pkg && cpack -G DEB >cpack.log 2>&1) || { cat build-pkg/cpack.log >&2; exit 1; }
ls "$PWD"/build-pkg/ratescope_*.deb
