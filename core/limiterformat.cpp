#include "limiterformat.h"

#include "errors.h"
#include "formats/formatrules.h"
#include "keyformat.h"

#include <algorithm>

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

const std::vector<const LimiterFormat *> &limiterFormatsOfType(const QByteArray &type)
{
    // Looked up once per key a scan classifies: by type, made once.
    static const std::vector<std::pair<QByteArray, std::vector<const LimiterFormat *>>> byType = [] {
        std::vector<std::pair<QByteArray, std::vector<const LimiterFormat *>>> out;
        for (const LimiterFormat *f : limiterFormats()) {
            const QByteArray t = f->type();
            auto at = std::find_if(out.begin(), out.end(), [&](const auto &e) { return e.first == t; });
            if (at == out.end())
                at = out.insert(out.end(), {t, {}});
            at->second.push_back(f);
        }
        return out;
    }();
    static const std::vector<const LimiterFormat *> none;
    for (const auto &[t, formats] : byType)
        if (t == type)
            return formats;
    return none;
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
