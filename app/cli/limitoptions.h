// The options every command that takes limits shares: --algo, --limit, --window.
#pragma once

#include "algorithm.h"

#include <QCommandLineOption>

namespace ratescope::cli {

inline QCommandLineOption algoOption()
{
    return {QStringLiteral("algo"), QStringLiteral("Algorithm: %1.").arg(algorithmNames().join(QStringLiteral(", "))), QStringLiteral("A")};
}

inline QCommandLineOption limitOption()
{
    return {QStringLiteral("limit"), QStringLiteral("Units of cost allowed per window (1..10^12)."), QStringLiteral("N")};
}

inline QCommandLineOption windowOption()
{
    return {QStringLiteral("window"), QStringLiteral("Window length (1ms..366d), e.g. 60s."), QStringLiteral("D")};
}

} // namespace ratescope::cli
