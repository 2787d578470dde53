# The ccache settings under which every clone of the repository on this machine, at whatever
# path, shares one cache (ccache's own, ~/.cache/ccache unless CCACHE_DIR says otherwise):
#   base_dir    paths under the source tree (build directories included) are hashed relative
#   hash_dir    off: the build directory's own path is not hashed (debug info then names the
#               directory of the build that filled the cache entry; gdb's `directory` fixes that)
#   sloppiness  what precompiled headers need (cmake/Precompile.cmake: without it ccache does
#               not cache a file compiled with one), and include files fresh from a clone (their
#               mtime and ctime are new, their content is the same)
#   inode_cache the hash of each include file is kept by inode and mtime: else every hit on a
#               file compiled with a precompiled header hashes the whole header (~150 MB) again
# Two uses. Sourced, by tools/run.sh, tools/test.sh and tools/package.sh, or by hand (`.
# tools/ccache-env.sh`), it exports them. Run, as `bash tools/ccache-env.sh ccache c++ ...`, it
# exports them and runs the rest of its arguments: the compiler launcher the top-level
# CMakeLists.txt sets when ccache is installed (RATESCOPE_CCACHE), so that a build started by
# hand (cmake --build) gets them too.
CCACHE_BASEDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
export CCACHE_BASEDIR
export CCACHE_NOHASHDIR=true
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_INODECACHE=true
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  exec "$@"
fi
