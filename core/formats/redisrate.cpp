// go-redis/redis_rate (Go): GCRA with its theoretical arrival time in one string,
// "rate:<key>", a float of seconds since 2017-01-01 00:00 UTC (Unix 1483228800), SET with
// EX ceil(reset_after) by allowed requests only. A policy gives limit = Rate, window = Period;
// Burst is taken equal to Rate (redis_rate.PerSecond/PerMinute/PerHour do the same).
#include "formatrules.h"

namespace ratescope::formats {

namespace {

constexpr qint64 kEpoch2017Us = 1483228800LL * 1000000;

class RedisRate final : public LimiterFormat {
public:
    QString name() const override { return QStringLiteral("redis_rate"); }
    QString label() const override { return QStringLiteral("redis_rate GCRA"); }
    QString library() const override { return QStringLiteral("go-redis/redis_rate (Go)"); }
    QString keyShape() const override { return QStringLiteral("rate:<key>"); }
    QByteArray type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::Gcra; }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyClass &kind) const override
    {
        const auto v = numberReply(sample);
        QByteArray rest;
        if (!v || (!declared && !stripPrefix(key, {"rate:"}, &rest)))
            return false;
        // Seconds since 2017 near now: from a day before (a TAT in the past has expired by
        // then) to a year ahead (the longest window).
        const double tatUs = *v * 1e6 + double(kEpoch2017Us);
        if (tatUs < double(nowUs) - 86400e6 || tatUs > double(nowUs) + 366 * 86400e6)
            return false;
        kind.base = key;
        return true;
    }

    std::vector<Command> read(const KeyClass &kind, const LimitSpec *, qint64) const override
    {
        return {{"GET", kind.base}, {"PTTL", kind.base}};
    }

    Usage usage(const KeyClass &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        std::optional<double> tat;
        if (const auto v = numberReply(r[0]))
            tat = double(secondsToUs(*v) + kEpoch2017Us); // whole µs: the float's last digits are noise
        return gcraUsage(tat, spec, nowUs);
    }

    QJsonObject state(const KeyClass &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonObject s{{QStringLiteral("tat"), valueJson(kind.base, r[0], &r[1])}};
        if (const auto v = numberReply(r[0])) {
            const qint64 tatUs = secondsToUs(*v) + kEpoch2017Us;
            s.insert(QStringLiteral("tat_us"), tatUs);
            s.insert(QStringLiteral("tat_ahead_us"), std::max<qint64>(0, tatUs - nowUs));
        }
        return s;
    }
};

} // namespace

const LimiterFormat &redisRateFormat()
{
    static const RedisRate f;
    return f;
}

} // namespace ratescope::formats
