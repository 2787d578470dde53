# What makes an installed Ratescope a Debian application: man pages, shell completion, AppStream
# metadata, the copyright file, and the .deb itself (CPack; `cmake --build build --target package`
# or tools/package.sh). Included from the top-level CMakeLists.txt after the executables.

option(RATESCOPE_BUILD_MANPAGES "Generate the man pages by running the built executables" ON)
set(RATESCOPE_PACKAGE_MAINTAINER "Ratescope <dev@ratescope.invalid>" CACHE STRING
    "Maintainer field of the Debian package (the project's own commit identity by default)")
set(RATESCOPE_APPSTREAM_ID "invalid.ratescope.ratescope" CACHE STRING
    "AppStream component ID: reverse-DNS of a domain the project controls")

set(_pkg_doc_dir "${CMAKE_INSTALL_DATADIR}/doc/ratescope")
find_program(RATESCOPE_GZIP gzip REQUIRED)

# Man pages: each executable prints its own from the option lists that print its --help
# (`ratescope-cli help --man`, `ratescope --help-man`), so a page cannot drift from the help;
# tests/tst_manpages.cpp compares the two. (help2man cannot: it knows nothing of subcommands.)
if(RATESCOPE_BUILD_MANPAGES)
    set(_man_pages)
    set(_man_targets ratescope-cli)
    if(RATESCOPE_BUILD_GUI)
        list(APPEND _man_targets ratescope)
    endif()
    foreach(_exe ${_man_targets})
        if(_exe STREQUAL "ratescope-cli")
            set(_arg "help;--man")
            set(_frame "${PROJECT_SOURCE_DIR}/app/cli/ratescope-cli.1.in")
        else()
            set(_arg "--help-man")
            set(_frame "${PROJECT_SOURCE_DIR}/app/gui/ratescope.1.in")
        endif()
        set(_out "${PROJECT_BINARY_DIR}/man/${_exe}.1.gz")
        add_custom_command(OUTPUT "${_out}"
            COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:${_exe}>" "-DARG=${_arg}" "-DOUT=${_out}"
                    "-DGZIP=${RATESCOPE_GZIP}" -P "${PROJECT_SOURCE_DIR}/packaging/manpage.cmake"
            DEPENDS ${_exe} "${_frame}" "${PROJECT_SOURCE_DIR}/packaging/manpage.cmake"
            COMMENT "Writing the man page ${_exe}(1)"
            VERBATIM)
        list(APPEND _man_pages "${_out}")
    endforeach()
    add_custom_target(manpages ALL DEPENDS ${_man_pages})
    install(FILES ${_man_pages} DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
endif()

# Bash completion. The scripts ask the executables for their commands and options, so they
# follow the installed version (packaging/completion, tests/tst_completion.cpp).
install(FILES "${PROJECT_SOURCE_DIR}/packaging/completion/ratescope-cli.bash"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" RENAME ratescope-cli)
if(RATESCOPE_BUILD_GUI)
    install(FILES "${PROJECT_SOURCE_DIR}/packaging/completion/ratescope.bash"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" RENAME ratescope)
endif()

# AppStream metadata of the console (its desktop entry and icons install with it, app/gui).
if(RATESCOPE_BUILD_GUI)
    configure_file("${PROJECT_SOURCE_DIR}/packaging/ratescope.metainfo.xml.in"
                   "${PROJECT_BINARY_DIR}/packaging/${RATESCOPE_APPSTREAM_ID}.metainfo.xml" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/packaging/${RATESCOPE_APPSTREAM_ID}.metainfo.xml"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/metainfo")
endif()

install(FILES "${PROJECT_SOURCE_DIR}/packaging/copyright" DESTINATION "${_pkg_doc_dir}")
# A package built outside Debian's archive is native: its changelog is changelog.gz, one entry
# for this version (dated now, or SOURCE_DATE_EPOCH for a reproducible build).
string(TIMESTAMP _pkg_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE "${PROJECT_BINARY_DIR}/packaging/changelog"
     "ratescope (${PROJECT_VERSION}) unstable; urgency=medium\n\n"
     "  * Ratescope ${PROJECT_VERSION}, packaged with CPack from its sources.\n\n"
     " -- ${RATESCOPE_PACKAGE_MAINTAINER}  ${_pkg_date}\n")
add_custom_command(OUTPUT "${PROJECT_BINARY_DIR}/packaging/changelog.gz"
    COMMAND "${RATESCOPE_GZIP}" -9nkf "${PROJECT_BINARY_DIR}/packaging/changelog"
    DEPENDS "${PROJECT_BINARY_DIR}/packaging/changelog"
    VERBATIM)
add_custom_target(package_changelog ALL DEPENDS "${PROJECT_BINARY_DIR}/packaging/changelog.gz")
install(FILES "${PROJECT_BINARY_DIR}/packaging/changelog.gz" DESTINATION "${_pkg_doc_dir}")

# The Debian package. Depends comes from the binaries (dpkg-shlibdeps).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ratescope)
set(CPACK_PACKAGE_VENDOR Ratescope)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${RATESCOPE_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS redis-tools)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS redis-server) # --demo and --sandbox start one
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION [=[admin console and live monitor for rate limiters kept in Redis
Ratescope shows, tests and administers rate limiters that keep their state
in Redis, running the very same Lua limiter scripts as the services
(sliding-window log, sliding-window counter, fixed window, token bucket,
GCRA): which keys are hot, how full each window is, when a client gets
capacity back, test bursts, policies and overrides, resets with an audit
trail.
.
This package holds the desktop console (ratescope), the headless CLI
(ratescope-cli) and the limiter scripts under /usr/share/ratescope.]=])
include(CPack)
