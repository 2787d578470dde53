// The options every command that takes limits shares: --algo, --limit, --window, --sub-buckets.
#pragma once

#include "limiters/algorithm.h"
#include "cli.h"
#include "base/errors.h"

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

// sliding-buckets: the sub-buckets per window (B).
inline QCommandLineOption subBucketsOption()
{
    return {QStringLiteral("sub-buckets"),
            QStringLiteral("sliding-buckets: sub-buckets per window (2..3600 and at most the window in us, default 60)."),
            QStringLiteral("B")};
}

// B from --sub-buckets (else `fallback`), refused for another algorithm.
inline int subBucketsFrom(const Cli &cli, Algorithm algorithm, int fallback = kDefaultBuckets)
{
    if (!cli.args().isSet(QStringLiteral("sub-buckets")))
        return fallback;
    if (algorithm != Algorithm::SlidingBuckets)
        throw UsageError(QStringLiteral("--sub-buckets is for sliding-buckets, not %1").arg(algorithmName(algorithm)));
    return int(cli.integerOption(QStringLiteral("sub-buckets"), kMinBuckets, kMaxBuckets));
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
