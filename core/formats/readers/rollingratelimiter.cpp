// rolling-rate-limiter (Node.js), RedisRateLimiter: one sorted set per id, "<namespace><id>",
// scored by the attempt's time in microseconds with a UUID v4 member. Every attempt is added
// before it is judged (ZREMRANGEBYSCORE, ZADD, ZRANGE, EXPIRE in one MULTI), so refused
// attempts are stored too and the set can hold more than maxInInterval; an attempt is refused
// when the set, itself included, holds more than maxInInterval, and told to wait until
// timestamps[n - maxInInterval] (n counting itself) leaves the interval. minDifference has
// no place in a policy and is not read.
#include "formats/readers/readersupport.h"

#include <cmath>
#include <QJsonArray>

namespace ratescope::formats {

namespace {

bool isUuid(const QByteArray &m)
{
    if (m.size() != 36)
        return false;
    for (qsizetype i = 0; i < m.size(); ++i) {
        const char c = m[i];
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

QByteArray scoreText(double v)
{
    return QByteArray::number(v, 'f', 0);
}

class RollingRateLimiter final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("rolling-rate-limiter"); }
    QString label() const override { return QStringLiteral("rolling-rate-limiter log"); }
    QString library() const override { return QStringLiteral("rolling-rate-limiter (Node.js)"); }
    QString keyShape() const override { return QStringLiteral("<namespace><id> (µs scores, UUID members)"); }
    const char *type() const override { return "zset"; }
    std::optional<Algorithm> family() const override { return Algorithm::SlidingLog; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool declared, KeyKind &kind) const override
    {
        if (sample.size() != 2)
            return false;
        const auto score = numberValue(sample[1].bytes());
        if (!score || detectScoreUnit(*score) != ScoreUnit::Microseconds || (!declared && !isUuid(sample[0].bytes())))
            return false;
        kind.base = key;
        kind.unit = ScoreUnit::Microseconds;
        return true;
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const override
    {
        // Attempts in (now - interval, now]: their count, the newest, and the one whose expiry
        // the library tells a refused attempt to wait for. That attempt is stored too, so the
        // wait is for the (limit - cost)-th newest of those there now (timestamps[n - max] of
        // the attempts including itself), not the (limit - cost + 1)-th.
        const QByteArray lo = "(" + scoreText(double(nowUs - (spec ? spec->windowUs : 0)));
        const QByteArray offset = QByteArray::number(spec ? std::max<qint64>(0, spec->limit - spec->cost - 1) : 0);
        return {{"ZCOUNT", kind.base, lo, "+inf"},
                {"ZRANGE", kind.base, "-1", "-1", "WITHSCORES"},
                {"ZRANGE", kind.base, "+inf", lo, "BYSCORE", "REV", "LIMIT", offset, "1", "WITHSCORES"},
                {"ZCARD", kind.base}};
    }

    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        const qint64 used = saneCount(r[0].toInteger());
        auto expiresIn = [&](const Reply &e) {
            return e.size() == 2 ? std::max<qint64>(0, scoreToUs(numberValue(e[1].bytes()).value_or(0), 1.0) + spec.windowUs - nowUs) : 0;
        };
        Decision d;
        d.limit = spec.limit;
        d.allowed = used + spec.cost <= spec.limit;
        d.used = used + (d.allowed ? spec.cost : 0); // refused attempts are stored: above the limit as it is
        d.remaining = std::max<qint64>(0, spec.limit - d.used);
        // a limit of one: the attempt itself is what must leave the window
        d.retryAfterUs = d.allowed ? 0 : spec.limit - spec.cost - 1 < 0 ? spec.windowUs : std::max<qint64>(1, expiresIn(r[2]));
        d.resetAfterUs = d.allowed ? spec.windowUs : expiresIn(r[1]);
        return {used, d};
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonObject s{{QStringLiteral("entries_total"), r[3].toInteger()}, {QStringLiteral("entries_in_window"), r[0].toInteger()}};
        insertBytes(s, QStringLiteral("key"), kind.base);
        if (r[1].size() == 2) {
            const qint64 t = scoreToUs(numberValue(r[1][1].bytes()).value_or(0), 1.0);
            QJsonObject newest{{QStringLiteral("time_us"), t}, {QStringLiteral("age_us"), nowUs - t}};
            insertBytes(newest, QStringLiteral("member"), r[1][0].bytes());
            s.insert(QStringLiteral("newest"), newest);
        }
        return s;
    }
};

} // namespace

const FormatReader &rollingRateLimiterFormat()
{
    static const RollingRateLimiter f;
    return f;
}

} // namespace ratescope::formats
