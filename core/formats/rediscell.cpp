// redis-cell (a Redis module, Rust): CL.THROTTLE <key> <max_burst> <count per period> <period>
// [<quantity>] keeps GCRA's theoretical arrival time in the key itself, a string of integer
// nanoseconds since the Unix epoch, with a TTL until it is no longer ahead of now. The key is
// the caller's own name, so only a policy declares it (--format redis-cell): limit =
// max_burst + 1 and window = period x (max_burst + 1) / count give the same emission interval
// and tolerance as CL.THROTTLE's arguments.
#include "formatrules.h"

namespace ratescope::formats {

namespace {

class RedisCell final : public LimiterFormat {
public:
    QString name() const override { return QStringLiteral("redis-cell"); }
    QString label() const override { return QStringLiteral("redis-cell GCRA"); }
    QString library() const override { return QStringLiteral("redis-cell module (CL.THROTTLE)"); }
    QString keyShape() const override { return QStringLiteral("<key> (a policy declares it)"); }
    QByteArray type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::Gcra; }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyClass &kind) const override
    {
        const auto v = integerReply(sample);
        // nanoseconds from a day behind now to a year ahead
        if (!declared || !v || *v / 1000 < nowUs - 86400LL * 1000000 || *v / 1000 > nowUs + 366LL * 86400 * 1000000)
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
        const auto ns = integerReply(r[0]);
        // whole µs first: a double of nanoseconds since 1970 is only good to about 256 ns
        return gcraUsage(ns ? std::optional<double>(double(*ns / 1000)) : std::nullopt, spec, nowUs);
    }

    QJsonObject state(const KeyClass &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonObject s{{QStringLiteral("tat"), valueJson(kind.base, r[0], &r[1])}};
        if (const auto ns = integerReply(r[0])) {
            s.insert(QStringLiteral("tat_us"), *ns / 1000);
            s.insert(QStringLiteral("tat_ahead_us"), std::max<qint64>(0, *ns / 1000 - nowUs));
        }
        return s;
    }
};

} // namespace

const LimiterFormat &redisCellFormat()
{
    static const RedisCell f;
    return f;
}

} // namespace ratescope::formats
