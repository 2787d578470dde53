#!/usr/bin/env bash
# The packaging check (run by tools/test.sh): builds the .deb from an existing build directory
# (default: build, the one tools/test.sh has just built) and checks it: the files it installs,
# its Depends (computed by dpkg-shlibdeps) naming the Qt, hiredis and keychain libraries, its
# version, and the desktop entry and AppStream metadata as installed (desktop-file-validate,
# appstreamcli validate). Skipped where dpkg-deb is missing (not a Debian system).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

if ! command -v dpkg-deb >/dev/null; then
  echo "Packaging check skipped: dpkg-deb is missing (not a Debian system)."
  exit 0
fi
for tool in desktop-file-validate appstreamcli cpack; do
  command -v "$tool" >/dev/null || { echo "check-package: $tool is missing (bash tools/install-deps.sh installs it)" >&2; exit 1; }
done

out="$build/package"
rm -rf "$out"
(cd "$build" && cpack -G DEB -B "$PWD/package" >cpack.log 2>&1) || { cat "$build/cpack.log" >&2; exit 1; }
debs=("$out"/ratescope_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { echo "check-package: cpack made no single .deb in $out" >&2; exit 1; }
deb=${debs[0]}
failed=0
fail() { echo "check-package: $*" >&2; failed=1; }

# The files. The Lua scripts are whatever lua/*.lua holds, plus the generated functions library.
expected=(
  ./usr/bin/ratescope ./usr/bin/ratescope-cli
  ./usr/share/ratescope/lua/ratescope-library.lua
  ./usr/share/applications/ratescope.desktop
  ./usr/share/icons/hicolor/scalable/apps/ratescope.svg ./usr/share/icons/hicolor/256x256/apps/ratescope.png
  ./usr/share/man/man1/ratescope.1.gz ./usr/share/man/man1/ratescope-cli.1.gz
  ./usr/share/bash-completion/completions/ratescope ./usr/share/bash-completion/completions/ratescope-cli
  ./usr/share/doc/ratescope/copyright ./usr/share/doc/ratescope/changelog.gz
)
for f in lua/*.lua; do expected+=("./usr/share/ratescope/lua/${f#lua/}"); done
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for f in "${expected[@]}"; do
  grep -qxF -- "$f" <<<"$contents" || fail "$f is not in the package"
done
grep -qx -- './usr/share/metainfo/.*\.metainfo\.xml' <<<"$contents" || fail "no AppStream metainfo in the package"
grep -v -e '/$' -e '^\./usr/' <<<"$contents" && fail "files outside /usr"

# Depends from the binaries; Recommends and Suggests as declared; the project's version.
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libqt6core6 libqt6network6 libqt6widgets6 libqt6charts6 libhiredis libqt6keychain; do
  grep -q "\b$lib" <<<"$depends" || fail "Depends does not name $lib: $depends"
done
[ "$(dpkg-deb -f "$deb" Recommends)" = redis-tools ] || fail "Recommends is not redis-tools"
[ "$(dpkg-deb -f "$deb" Suggests)" = redis-server ] || fail "Suggests is not redis-server"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version is $(dpkg-deb -f "$deb" Version), the project's $version"

# The desktop entry and the AppStream metadata, as installed.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
desktop-file-validate "$root/usr/share/applications/ratescope.desktop" || fail "desktop-file-validate failed"
for m in "$root"/usr/share/metainfo/*.metainfo.xml; do
  appstreamcli validate --no-net "$m" >/dev/null || { appstreamcli validate --no-net "$m" >&2; fail "appstreamcli validate failed on ${m#"$root"}"; }
done
# The binaries are stripped.
for b in ratescope ratescope-cli; do
  [ "$(readelf -S "$root/usr/bin/$b" | grep -c '\.symtab')" = 0 ] || fail "$b is not stripped"
done

[ $failed -eq 0 ] || exit 1
echo "Packaging check passed: $deb ($(du -k "$deb" | cut -f1) KiB)"
echo "Depends: $depends"
