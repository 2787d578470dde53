#!/usr/bin/env bash
# Builds the Debian package: a Release build in build-pkg with Debian's hardening flags
# (dpkg-buildflags), then CPack's DEB generator (packaging/Packaging.cmake). Prints the .deb's path.
#
# lintian (not run in CI: it is large) reports no errors on the package. Warnings and
# informational tags kept, and why:
#   - no-manual-page, binary-without-manpage: none (both pages are in the package).
#   (The list is kept in docs/packaging.md, with the lintian command.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh

export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cppflags=$(dpkg-buildflags --get CPPFLAGS)
cxxflags=$(dpkg-buildflags --get CXXFLAGS)
ldflags=$(dpkg-buildflags --get LDFLAGS)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-pkg -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
      -DRATESCOPE_BUILD_TESTS=OFF -DRATESCOPE_BUILD_BENCH=OFF \
      -DCMAKE_CXX_FLAGS="$cppflags $cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" >/dev/null
cmake --build build-pkg -j"${JOBS:-2}"
rm -f build-pkg/ratescope_*.deb
(cd build-pkg && cpack -G DEB >/dev/null)
ls "$PWD"/build-pkg/ratescope_*.deb
