#include "limiters/algorithm.h"

#include "base/duration.h"
#include "base/errors.h"

namespace ratescope {

QString algorithmName(Algorithm a)
{
    switch (a) {
    case Algorithm::SlidingLog:
        return QStringLiteral("sliding-log");
    case Algorithm::SlidingCounter:
        return QStringLiteral("sliding-counter");
    case Algorithm::FixedWindow:
        return QStringLiteral("fixed-window");
    case Algorithm::TokenBucket:
        return QStringLiteral("token-bucket");
    case Algorithm::Gcra:
        return QStringLiteral("gcra");
    case Algorithm::SlidingBuckets:
        return QStringLiteral("sliding-buckets");
    }
    return {};
}

QStringList algorithmNames()
{
    QStringList names;
    for (Algorithm a : kAllAlgorithms)
        names << algorithmName(a);
    return names;
}

QString algorithmLabel(const LimitSpec &spec)
{
    if (spec.algorithm != Algorithm::SlidingBuckets || spec.buckets < 1)
        return algorithmName(spec.algorithm);
    return QStringLiteral("%1 (%2 x %3)")
        .arg(algorithmName(spec.algorithm))
        .arg(spec.buckets)
        .arg(formatDurationUs(std::max<qint64>(1, spec.windowUs / spec.buckets)));
}

Algorithm parseAlgorithm(const QString &name)
{
    for (Algorithm a : kAllAlgorithms)
        if (algorithmName(a) == name)
            return a;
    throw UsageError(QStringLiteral("unknown algorithm '%1' (choose one of %2)").arg(name, algorithmNames().join(QStringLiteral(", "))));
}

QString storageType(Algorithm a)
{
    return a == Algorithm::SlidingLog ? QStringLiteral("zset") : QStringLiteral("hash");
}

void LimitSpec::validate() const
{
    if (limit < 1 || limit > kMaxLimit)
        throw UsageError(QStringLiteral("limit must be between 1 and %1, not %2").arg(kMaxLimit).arg(limit));
    if (windowUs < kMinWindowUs || windowUs > kMaxWindowUs)
        throw UsageError(QStringLiteral("window must be between 1ms and 366d, not %1").arg(formatDurationUs(windowUs)));
    if (cost < 1)
        throw UsageError(QStringLiteral("cost must be at least 1, not %1").arg(cost));
    if (cost > limit)
        throw UsageError(QStringLiteral("cost %1 is above the limit %2: such a request could never be allowed").arg(cost).arg(limit));
    if (algorithm == Algorithm::SlidingBuckets && (buckets < kMinBuckets || buckets > kMaxBuckets || buckets > windowUs))
        throw UsageError(QStringLiteral("sub-buckets must be between %1 and %2 (and at most the window in microseconds), not %3")
                             .arg(kMinBuckets)
                             .arg(kMaxBuckets)
                             .arg(buckets));
}

} // namespace ratescope
