// Laravel (PHP), two limiters:
//  - Illuminate\Cache\RateLimiter (the throttle middleware, RateLimiter::attempt/hit): through
//    the Redis cache store, a counter "<prefix><key>" and "<prefix><key>:timer" holding the Unix
//    second it becomes available again, both with the decay as TTL; the prefix is the Redis
//    connection's and the cache's ("laravel_database_" + "laravel_cache_" by default,
//    "laravel-database-" + "laravel-cache-" since Laravel 13), numbers stored as they are (the
//    timer PHP-serialized, "i:<n>;", when the connection serializes). A request is refused while the counter has reached maxAttempts and
//    the timer exists; refused requests are not counted. One limiter: the counter and its timer.
//  - Illuminate\Redis\Limiters\DurationLimiter (Redis::throttle): a hash {start, end, count}
//    of Unix seconds; acquire() counts a request in [start, end] (refused ones too) and lets it
//    pass while count <= maxLocks, otherwise the window restarts at now for the decay; the
//    throttle middleware asks first and counts only what it lets through.
#include "formats/readers/readersupport.h"

#include <cmath>

namespace ratescope::formats {

namespace {

// A cache prefix ("<app>_cache_", "<app>-cache-" since Laravel 13) and a key the throttle
// middleware makes: md5(name + key) for a named limiter, [prefix] + sha1(user or domain|ip).
bool looksLikeThrottleKey(const QByteArray &key)
{
    qsizetype at = key.indexOf("_cache_");
    if (at < 0)
        at = key.indexOf("-cache-");
    if (at < 0)
        return false;
    const QByteArray rest = key.mid(at + 7);
    auto hexTail = [&](qsizetype n) {
        return rest.size() >= n &&
               std::all_of(rest.end() - n, rest.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    };
    return (rest.size() == 32 && hexTail(32)) || hexTail(40);
}

// The timer's Unix second: a plain number, or PHP-serialized ("i:1719000060;") when the
// connection serializes values.
std::optional<qint64> timerValue(const Reply &r)
{
    if (const auto v = integerReply(r))
        return v;
    if (r.type() != Reply::Type::String || !r.bytes().startsWith("i:") || !r.bytes().endsWith(';'))
        return std::nullopt;
    return integerValue(r.bytes().mid(2, r.bytes().size() - 3));
}

class LaravelRateLimiter final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("laravel"); }
    QString label() const override { return QStringLiteral("Laravel RateLimiter"); }
    QString library() const override { return QStringLiteral("Laravel Illuminate\\Cache\\RateLimiter (PHP)"); }
    QString keyShape() const override { return QStringLiteral("<prefix><key> + <prefix><key>:timer"); }
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::FixedWindow; }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const override
    {
        const auto v = key.endsWith(":timer") ? timerValue(sample) : integerReply(sample);
        if (!v || *v < 0)
            return false;
        if (key.endsWith(":timer")) {
            // The Unix second it is available again: from now to a year ahead (or just past).
            const qint64 nowS = nowUs / 1000000;
            if (*v < nowS - 60 || *v > nowS + 366 * 86400)
                return false;
            const QByteArray counter = key.chopped(6);
            if (!declared && !looksLikeThrottleKey(counter))
                return false;
            kind.base = counter;
            return true;
        }
        // The counter alone is a cached integer like any other: only its timer (or a policy)
        // says it is a throttle counter.
        if (!declared)
            return false;
        kind.base = key;
        return true;
    }

    QByteArrayList keys(const KeyKind &kind, qint64) const override { return {kind.base, kind.base + ":timer"}; }

    // A counter of a key shape of your own, named without its policy: its timer says what it is.
    QByteArrayList probeKeys(const QByteArray &key) const override
    {
        return key.endsWith(":timer") ? QByteArrayList{} : QByteArrayList{key + ":timer"};
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *, qint64) const override
    {
        return {{"GET", kind.base}, {"GET", kind.base + ":timer"}, {"PTTL", kind.base}};
    }

    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        const qint64 used = saneCount(integerReply(r[0]).value_or(0));
        const auto timer = timerValue(r[1]);
        Decision d;
        d.limit = spec.limit;
        // tooManyAttempts: attempts >= max while the timer lasts; a request of cost c needs c of room
        d.allowed = !timer || used + spec.cost <= spec.limit;
        d.used = (timer ? used : 0) + (d.allowed ? spec.cost : 0);
        d.remaining = std::max<qint64>(0, spec.limit - d.used);
        const qint64 availableIn = timer ? std::max<qint64>(0, secondsToUs(double(*timer)) - nowUs) : spec.windowUs;
        d.retryAfterUs = d.allowed ? 0 : std::max<qint64>(1, availableIn);
        d.resetAfterUs = d.used > 0 ? availableIn : 0;
        return {timer ? used : 0, d};
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonObject s{{QStringLiteral("counter"), valueJson(kind.base, r[0], &r[2])},
                      {QStringLiteral("timer"), valueJson(kind.base + ":timer", r[1])},
                      {QStringLiteral("count"), integerReply(r[0]).value_or(0)}};
        if (const auto t = timerValue(r[1]))
            s.insert(QStringLiteral("window_ends_in_us"), std::max<qint64>(0, secondsToUs(double(*t)) - nowUs));
        return s;
    }
};

class LaravelDuration final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("laravel-duration"); }
    QString label() const override { return QStringLiteral("Laravel DurationLimiter"); }
    QString library() const override { return QStringLiteral("Laravel Illuminate\\Redis\\Limiters\\DurationLimiter (PHP)"); }
    QString keyShape() const override { return QStringLiteral("<name> {start, end, count}"); }
    const char *type() const override { return "hash"; }
    std::optional<Algorithm> family() const override { return Algorithm::FixedWindow; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool, KeyKind &kind) const override
    {
        QList<QByteArray> fields;
        for (const Reply &f : sample.elements())
            fields << f.bytes();
        if (fields.size() != 3 || !fields.contains("start") || !fields.contains("end") || !fields.contains("count"))
            return false;
        kind.base = key;
        return true;
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *, qint64) const override
    {
        return {{"HMGET", kind.base, "start", "end", "count"}, {"PTTL", kind.base}};
    }

    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        const auto start = r[0].size() == 3 ? numberReply(r[0][0]) : std::nullopt;
        const auto end = r[0].size() == 3 ? numberReply(r[0][1]) : std::nullopt;
        const qint64 count = r[0].size() == 3 ? saneCount(integerReply(r[0][2]).value_or(0)) : 0;
        // The script compares microtime(true) with start and end: inside, the count goes on.
        const bool inside = start && end && double(nowUs) >= *start * 1e6 && double(nowUs) <= *end * 1e6;
        const qint64 used = inside ? count : 0;
        const qint64 endsIn = inside ? secondsToUs(*end) - nowUs + 1 : -1;
        return windowCounterUsage(used, spec, endsIn, spec.windowUs);
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonObject s;
        insertBytes(s, QStringLiteral("key"), kind.base);
        if (r[0].size() == 3) {
            const auto start = numberReply(r[0][0]), end = numberReply(r[0][1]);
            const qint64 count = integerReply(r[0][2]).value_or(0);
            s.insert(QStringLiteral("count"), count);
            if (start && end) {
                s.insert(QStringLiteral("start_us"), secondsToUs(*start));
                s.insert(QStringLiteral("end_us"), secondsToUs(*end));
                s.insert(QStringLiteral("window_ends_in_us"), std::max<qint64>(0, secondsToUs(*end) - nowUs));
            }
        }
        if (r[1].isInteger())
            s.insert(QStringLiteral("ttl_ms"), r[1].integer());
        return s;
    }
};

} // namespace

const FormatReader &laravelFormat()
{
    static const LaravelRateLimiter f;
    return f;
}

const FormatReader &laravelDurationFormat()
{
    static const LaravelDuration f;
    return f;
}

} // namespace ratescope::formats
