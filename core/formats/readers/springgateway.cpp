// Spring Cloud Gateway's RedisRateLimiter (Java): a token bucket kept as two strings,
// "request_rate_limiter.{<route>.<id>}.tokens" (tokens left) and "request_rate_limiter.{<route>.<id>}.timestamp"
// (Unix seconds of that level), written by its request_rate_limiter.lua with SETEX for twice
// the fill time. It refills replenishRate tokens per whole second up to burstCapacity; a
// request of `requested` tokens passes when that many are there. One limiter, listed as its
// .tokens key; a policy gives limit = burstCapacity and window = burstCapacity / replenishRate.
#include "formats/readers/readersupport.h"

#include <cmath>

namespace ratescope::formats {

namespace {

constexpr char kPrefix[] = "request_rate_limiter.{";

class SpringGateway final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("spring-cloud-gateway"); }
    QString label() const override { return QStringLiteral("Spring Cloud Gateway token bucket"); }
    QString library() const override { return QStringLiteral("Spring Cloud Gateway RedisRateLimiter (Java)"); }
    QString keyShape() const override { return QStringLiteral("request_rate_limiter.{<route>.<id>}.tokens + .timestamp"); }
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::TokenBucket; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool declared, KeyKind &kind) const override
    {
        // The key first (cheaper than reading the value, and what most keys fail).
        QByteArray stem;
        if (key.endsWith(".tokens"))
            stem = key.chopped(7);
        else if (key.endsWith(".timestamp"))
            stem = key.chopped(10);
        else
            return false;
        if (stem.isEmpty() || (!declared && !(stem.startsWith(kPrefix) && stem.endsWith('}') && stem.size() > int(sizeof kPrefix))))
            return false;
        if (!numberReply(sample))
            return false;
        kind.base = stem + ".tokens";
        return true;
    }

    QByteArrayList keys(const KeyKind &kind, qint64) const override { return {kind.base, timestampKey(kind)}; }

    // The .tokens key named when only its .timestamp is left (tokens expired, or not written yet).
    QByteArrayList probeKeys(const QByteArray &key) const override
    {
        return key.endsWith(".tokens") ? QByteArrayList{key.chopped(7) + ".timestamp"} : QByteArrayList{};
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *, qint64) const override
    {
        return {{"GET", kind.base}, {"GET", timestampKey(kind)}, {"PTTL", kind.base}};
    }

    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        // The script's own arithmetic: whole seconds of the server's clock, rate per second.
        const double capacity = double(spec.limit);
        const double rate = double(spec.limit) * 1e6 / double(spec.windowUs);
        const double tokens = r[0].isNil() ? capacity : numberReply(r[0]).value_or(capacity);
        const qint64 nowS = nowUs / 1000000;
        const qint64 last = r[1].isNil() ? 0 : saneInteger(numberReply(r[1]).value_or(0));
        const double filled = std::min(capacity, tokens + double(std::max<qint64>(0, nowS - last)) * rate);
        const double cost = double(spec.cost);
        Decision d;
        d.limit = spec.limit;
        d.allowed = filled >= cost;
        const double after = d.allowed ? filled - cost : filled;
        d.used = qint64(std::ceil(capacity - after));
        d.remaining = std::max<qint64>(0, qint64(std::floor(after)));
        auto secondsUntil = [&](double target) { return qint64(std::ceil((target - after) / rate)); };
        auto at = [&](qint64 seconds) { return std::max<qint64>(0, (nowS + seconds) * 1000000 - nowUs); };
        d.retryAfterUs = d.allowed ? 0 : std::max<qint64>(1, at(secondsUntil(cost)));
        d.resetAfterUs = after < capacity ? at(secondsUntil(capacity)) : 0;
        return {qint64(std::ceil(capacity - filled)), d};
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonObject s{{QStringLiteral("tokens"), valueJson(kind.base, r[0], &r[2])},
                      {QStringLiteral("timestamp"), valueJson(timestampKey(kind), r[1])}};
        if (const auto t = numberReply(r[1]))
            s.insert(QStringLiteral("refreshed_ago_us"), nowUs - secondsToUs(*t));
        return s;
    }

private:
    static QByteArray timestampKey(const KeyKind &kind) { return kind.base.chopped(7) + ".timestamp"; }
};

} // namespace

const FormatReader &springTokenBucketFormat()
{
    static const SpringGateway f;
    return f;
}

} // namespace ratescope::formats
