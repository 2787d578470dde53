// go-redis/redis_rate (Go): GCRA with its theoretical arrival time in one string,
// "rate:<key>", a float of seconds since 2017-01-01 00:00 UTC (Unix 1483228800), SET with
// EX ceil(reset_after) by allowed requests only. A policy gives limit = Rate, window = Period;
// Burst is taken equal to Rate (redis_rate.PerSecond/PerMinute/PerHour do the same).
#include "formats/readers/readersupport.h"

namespace ratescope::formats {

namespace {

constexpr qint64 kEpoch2017Us = 1483228800LL * 1000000;

class RedisRate final : public TatStringFormat {
public:
    QString name() const override { return QStringLiteral("redis_rate"); }
    QString label() const override { return QStringLiteral("redis_rate GCRA"); }
    QString library() const override { return QStringLiteral("go-redis/redis_rate (Go)"); }
    QString keyShape() const override { return QStringLiteral("rate:<key>"); }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const override
    {
        QByteArray rest;
        if (!declared && !stripPrefix(key, {"rate:"}, &rest)) // the key first: the cheaper test
            return false;
        const auto tat = tatUs(sample);
        if (!tat || !nearNow(*tat, nowUs))
            return false;
        kind.base = key;
        return true;
    }

protected:
    std::optional<qint64> tatUs(const Reply &value) const override
    {
        const auto seconds = numberReply(value);
        // whole µs: the float's last digits are noise
        return seconds ? std::optional<qint64>(secondsToUs(*seconds) + kEpoch2017Us) : std::nullopt;
    }
};

} // namespace

const FormatReader &redisRateFormat()
{
    static const RedisRate f;
    return f;
}

} // namespace ratescope::formats
