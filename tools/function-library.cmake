# Builds the Redis Functions library (`#!lua name=ratescope`) from the limiter scripts in
# lua/, so the two forms cannot drift: each script's text becomes, unchanged, the body of one
# function of (KEYS, ARGV) that the library runs once at load, without KEYS: the script then
# returns its decide function instead of deciding, and that is what gets registered, so helpers
# are built once, not per call. Run at build time (core/CMakeLists.txt):
#   cmake -DLUA_DIR=<dir> -DALGORITHMS=<a;b;...> -DVERSION=<x.y.z> -DOUT=<file> -P function-library.cmake
# docs/scripts.md describes the library.
foreach(v LUA_DIR ALGORITHMS VERSION OUT)
    if(NOT DEFINED ${v})
        message(FATAL_ERROR "function-library.cmake: ${v} is not set")
    endif()
endforeach()

# The library carries the release and a digest of the scripts it was built from (the SHA-1 of
# their SHA-1s in hex, in this order), so a caller can tell this build's library from another.
set(_shas "")
foreach(algo IN LISTS ALGORITHMS)
    file(SHA1 "${LUA_DIR}/${algo}.lua" _sha)
    string(APPEND _shas "${_sha}")
endforeach()
string(SHA1 _digest "${_shas}")

set(_lib "#!lua name=ratescope
-- Ratescope's limiter scripts as one Redis Functions library (Redis 7 and later), release
-- ${VERSION}. Generated at build time from lua/*.lua by tools/function-library.cmake: do not
-- edit it, edit the scripts. Each script's text is, unchanged, the body of one function below,
-- run once here without KEYS, so that it returns its decide(KEYS, ARGV), which each FCALL runs
-- with the same KEYS and ARGV as EVAL (docs/scripts.md):
--   FCALL    ratescope_<algorithm> 1 KEY limit window_us cost now_us|'' check|peek
--   FCALL_RO ratescope_<algorithm>_peek 1 KEY limit window_us cost now_us|'' peek
--            (flagged no-writes: always peeks, whatever ARGV[5] says)
--   FCALL_RO ratescope_version 0   ->  {'${VERSION}', '<digest of the scripts>'}
-- <algorithm> is the script's name with underscores: sliding_log, sliding_counter,
-- fixed_window, token_bucket, gcra.

local VERSION = '${VERSION}'
local SCRIPTS = '${_digest}'
")

foreach(algo IN LISTS ALGORITHMS)
    file(READ "${LUA_DIR}/${algo}.lua" _body)
    string(REPLACE "-" "_" _fn "${algo}")
    string(APPEND _lib "
-- ---- lua/${algo}.lua ----
local ${_fn} = (function(KEYS, ARGV)
${_body}
end)()
")
endforeach()

string(APPEND _lib "
-- ---- registration ----
-- The peek twin passes the same ARGV with the mode set to peek: no write command is reached.
local function peek_of(decide)
  return function(keys, args)
    args[5] = 'peek'
    return decide(keys, args)
  end
end

local function register(name, algo, decide)
  redis.register_function{function_name = 'ratescope_' .. name, callback = decide,
    description = 'ratescope ' .. VERSION .. ' ' .. algo .. ': decide (check) or peek'}
  redis.register_function{function_name = 'ratescope_' .. name .. '_peek', callback = peek_of(decide),
    flags = {'no-writes'}, description = 'ratescope ' .. VERSION .. ' ' .. algo .. ': peek, writing nothing'}
end
")
foreach(algo IN LISTS ALGORITHMS)
    string(REPLACE "-" "_" _fn "${algo}")
    string(APPEND _lib "register('${_fn}', '${algo}', ${_fn})\n")
endforeach()
string(APPEND _lib "
redis.register_function{function_name = 'ratescope_version', flags = {'no-writes'},
  callback = function() return {VERSION, SCRIPTS} end,
  description = 'ratescope ' .. VERSION .. ': the release and the digest of the scripts it was built from'}
")

# Rewritten only when it changes, so an unchanged library does not rebuild the core.
set(_old "")
if(EXISTS "${OUT}")
    file(READ "${OUT}" _old)
endif()
if(NOT _old STREQUAL _lib)
    file(WRITE "${OUT}" "${_lib}")
endif()
