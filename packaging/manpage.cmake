# cmake -DEXE=... -DARG=... -DOUT=page.1.gz -DGZIP=gzip -P manpage.cmake
# Runs a built executable that prints its own man page (ratescope-cli help --man,
# ratescope --help-man) and compresses it the way Debian wants (gzip -9n: no name, no time).
# help2man would not do: it reads one --help and cannot document subcommands.
set(ENV{QT_QPA_PLATFORM} offscreen)      # the console parses its options before any display
set(ENV{ASAN_OPTIONS} detect_leaks=0)    # a sanitizer build: Qt's one-time allocations
string(REGEX REPLACE "\\.gz$" "" page "${OUT}")
execute_process(COMMAND "${EXE}" ${ARG} OUTPUT_FILE "${page}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXE} ${ARG} failed (${rc})")
endif()
file(SIZE "${page}" size)
if(size LESS 1000)
    message(FATAL_ERROR "${EXE} ${ARG} printed no man page")
endif()
execute_process(COMMAND "${GZIP}" -9n -c "${page}" OUTPUT_FILE "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip failed (${rc})")
endif()
