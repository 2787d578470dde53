# Sourced by tools/run.sh, tools/test.sh and tools/package.sh, or by hand before a build of your
# own (`. tools/ccache-env.sh`): the ccache settings under which every clone of the repository on
# this machine, at whatever path, shares one cache (ccache's own, ~/.cache/ccache unless
# CCACHE_DIR says otherwise). The top-level CMakeLists.txt compiles through ccache when it is
# installed (RATESCOPE_CCACHE, default ON).
#   base_dir    paths under the source tree (build directories included) are hashed relative
#   hash_dir    off: the build directory's own path is not hashed (debug info then names the
#               directory of the build that filled the cache entry; gdb's `directory` fixes that)
#   sloppiness  what precompiled headers need (cmake/Precompile.cmake), and include files
#               fresh from a clone (their mtime and ctime are new, their content is the same)
CCACHE_BASEDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
export CCACHE_BASEDIR
export CCACHE_NOHASHDIR=true
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
