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

// A sharded limiter (check, burst): <KEY>:0 .. <KEY>:N-1, each with its share of the limit.
inline QCommandLineOption shardsOption()
{
    return {QStringLiteral("shards"),
            QStringLiteral("Spread requests over N shard keys KEY:0..KEY:N-1 (2..1024), each with its share of the limit."),
            QStringLiteral("N")};
}

inline QCommandLineOption shardByOption()
{
    return {QStringLiteral("shard-by"),
            QStringLiteral("How a request picks its shard: hash (FNV-1a of its request id, the default) or round-robin."),
            QStringLiteral("HOW")};
}

inline QCommandLineOption shardFromOption()
{
    return {QStringLiteral("shard-from"), QStringLiteral("Number the shards from 0 (default) or 1."), QStringLiteral("0|1")};
}

} // namespace ratescope::cli
