#include "limiterformat.h"

#include "errors.h"
#include "formats/formatrules.h"
#include "keyformat.h"

namespace ratescope {

QByteArrayList LimiterFormat::keys(const KeyClass &kind, qint64 nowUs) const
{
    Q_UNUSED(nowUs);
    return {kind.base};
}

std::optional<KeyClass> LimiterFormat::nameKind(const QByteArray &name, const LimitSpec *spec, bool declared) const
{
    Q_UNUSED(name);
    Q_UNUSED(spec);
    Q_UNUSED(declared);
    return std::nullopt;
}

const std::vector<const LimiterFormat *> &limiterFormats()
{
    // The most specific shapes first: a default prefix, then value shapes, then the formats
    // only a policy declares.
    static const std::vector<const LimiterFormat *> all{
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

const LimiterFormat *findLimiterFormat(const QString &name)
{
    for (const LimiterFormat *f : limiterFormats())
        if (f->name() == name)
            return f;
    return nullptr;
}

const LimiterFormat *parseLimiterFormat(const QString &name)
{
    if (const LimiterFormat *f = findLimiterFormat(name))
        return f;
    QStringList names;
    for (const LimiterFormat *f : limiterFormats())
        names << f->name();
    throw UsageError(QStringLiteral("unknown format '%1' (one of: %2)").arg(name, names.join(QStringLiteral(", "))));
}

} // namespace ratescope
