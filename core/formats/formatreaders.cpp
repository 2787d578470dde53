#include "formats/formatreaders.h"

#include "base/errors.h"
#include "formats/readers/readersupport.h"

#include <algorithm>

namespace ratescope {

const std::vector<const FormatReader *> &formatReaders()
{
    // The most specific shapes first: a default prefix, then value shapes, then the formats
    // only a policy declares.
    static const std::vector<const FormatReader *> all{
        &formats::springTokenBucketFormat(),
        &formats::rateLimiterFlexibleFormat(),
        &formats::rateLimitRedisFormat(),
        &formats::limitsFixedWindowFormat(),
        &formats::limitsSlidingWindowFormat(),
        &formats::limitsMovingWindowFormat(),
        &formats::upstashWindowFormat(),
        &formats::upstashTokenBucketFormat(),
        &formats::kongFormat(),
        &formats::rackAttackFormat(),
        &formats::redisRateFormat(),
        &formats::laravelFormat(),
        &formats::laravelDurationFormat(),
        &formats::bucketedCounterFormat(),
        &formats::rollingRateLimiterFormat(),
        &formats::envoyFormat(),
        &formats::redisCellFormat(),
        &formats::bucket4jFormat(),
    };
    return all;
}

const std::vector<const FormatReader *> &formatReadersOfType(const QByteArray &type)
{
    // Looked up once per key a scan classifies: by type, made once.
    static const std::vector<std::pair<QByteArray, std::vector<const FormatReader *>>> byType = [] {
        std::vector<std::pair<QByteArray, std::vector<const FormatReader *>>> out;
        for (const FormatReader *f : formatReaders()) {
            const QByteArray t = f->type();
            auto at = std::find_if(out.begin(), out.end(), [&](const auto &e) { return e.first == t; });
            if (at == out.end())
                at = out.insert(out.end(), {t, {}});
            at->second.push_back(f);
        }
        return out;
    }();
    static const std::vector<const FormatReader *> none;
    for (const auto &[t, formats] : byType)
        if (t == type)
            return formats;
    return none;
}

const FormatReader *findFormatReader(const QString &name)
{
    for (const FormatReader *f : formatReaders())
        if (f->name() == name)
            return f;
    return nullptr;
}

const FormatReader *parseFormatReader(const QString &name)
{
    if (const FormatReader *f = findFormatReader(name))
        return f;
    QStringList names;
    for (const FormatReader *f : formatReaders())
        names << f->name();
    throw UsageError(QStringLiteral("unknown format '%1' (one of: %2)").arg(name, names.join(QStringLiteral(", "))));
}

} // namespace ratescope
