# ratescope_precompile(<target> [WIDGETS] [REUSE_FROM <other>]): precompiles, for <target>'s own sources, the Qt and
# standard headers most of the project's files include, so each file parses them once per target
# instead of once per file. WIDGETS adds the Qt Widgets classes the console's pages use most.
# Only for targets with many sources: the header is compiled once per target, which a target of
# one or two files does not win back, unless it reuses another target's (REUSE_FROM: the console's
# page targets share ratescope_ui_common's, compiled once; they have the same compile options). RATESCOPE_PCH=OFF turns it off everywhere (e.g. to check that
# every file still includes what it uses).
#
# Each file keeps its own includes: the precompiled header only makes them cheap. With ccache
# (tools/ccache-env.sh) the precompiled header is cached too: its sloppiness settings are there.
option(RATESCOPE_PCH "Precompile the common Qt and standard headers (ratescope_precompile)" ON)

set(RATESCOPE_PCH_CORE
    <QtCore/QByteArray> <QtCore/QString> <QtCore/QStringList> <QtCore/QList> <QtCore/QHash>
    <QtCore/QDateTime> <QtCore/QJsonObject> <QtCore/QJsonArray> <QtCore/QJsonDocument>
    <vector> <optional> <memory> <functional> <algorithm> <map> <cmath> <chrono>)
set(RATESCOPE_PCH_WIDGETS
    <QtCore/QTimer> <QtCore/QPointer> <QtCore/QAbstractTableModel>
    <QtWidgets/QWidget> <QtWidgets/QLabel> <QtWidgets/QBoxLayout> <QtWidgets/QPushButton>
    <QtWidgets/QLineEdit> <QtWidgets/QComboBox> <QtWidgets/QHeaderView> <QtWidgets/QTableView>)

function(ratescope_precompile target)
    cmake_parse_arguments(P "WIDGETS" "REUSE_FROM" "" ${ARGN})
    if(P_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "ratescope_precompile(${target}): unknown arguments ${P_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT RATESCOPE_PCH)
        return()
    endif()
    if(P_REUSE_FROM)
        target_precompile_headers(${target} REUSE_FROM ${P_REUSE_FROM})
        return()
    endif()
    set(headers ${RATESCOPE_PCH_CORE})
    if(P_WIDGETS)
        list(APPEND headers ${RATESCOPE_PCH_WIDGETS})
    endif()
    target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
