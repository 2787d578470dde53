// Python `limits` (used by Flask-Limiter and SlowAPI), its Redis storage: every key is
// "LIMITS:" (since 3.7; none before) + RateLimitItem.key_for(...) =
// "LIMITER/<identifiers...>/<amount>/<multiples>/<granularity>", read from the right (an
// identifier may hold "/"),
// so the key states the limits ("LIMITS:LIMITER/login/10.0.0.1/5/1/minute": 5 per 1 minute).
//  - fixed window: a string counter, INCRBY cost then EXPIRE on the first hit; hit() allows when
//    the new value <= amount, so refused hits are counted too;
//  - moving window: a list of hit times (float Unix seconds), newest first, LPUSHed per unit of
//    cost and LTRIMmed to `amount`; a hit is refused while the entry at index amount - cost is
//    not older than the window (>= now - expiry);
//  - sliding window: two counters, "LIMITS:{<key>}" (current) created with PX 2 x window and
//    "LIMITS:{<key>}/-1" (previous); when the current one's TTL falls below one window it is
//    renamed to the previous one; the estimate is floor(previous x previous_ttl / window) +
//    current, and a hit is refused when estimate + cost > amount (refused hits not counted).
#include "formats/readers/readersupport.h"

#include <cmath>
#include <QJsonArray>

namespace ratescope::formats {

namespace {

constexpr char kPrefix[] = "LIMITS:LIMITER/";
constexpr char kSlidingPrefix[] = "LIMITS:{LIMITER/";

// granularity name -> seconds (month and year as the library counts them: 30 and 365 days)
qint64 granularitySeconds(const QByteArray &g)
{
    static const std::pair<const char *, qint64> known[] = {{"second", 1},  {"minute", 60},        {"hour", 3600},
                                                            {"day", 86400}, {"month", 30 * 86400}, {"year", 365 * 86400}};
    for (const auto &[name, s] : known)
        if (g == name)
            return s;
    return 0;
}

// ".../<amount>/<multiples>/<granularity>" at the end of the item key: the limits it states.
std::optional<LimitSpec> limitsInKey(const QByteArray &item)
{
    const QList<QByteArray> parts = item.split('/');
    if (parts.size() < 4 || parts.first() != "LIMITER")
        return std::nullopt;
    const auto amount = integerValue(parts[parts.size() - 3]);
    const auto multiples = integerValue(parts[parts.size() - 2]);
    const qint64 g = granularitySeconds(parts.last());
    if (!amount || !multiples || *amount < 1 || *amount > kMaxLimit || *multiples < 1 || !g || *multiples > kMaxWindowUs / (g * 1000000))
        return std::nullopt;
    LimitSpec s;
    s.limit = *amount;
    s.windowUs = *multiples * g * 1000000;
    return s;
}

// The item key ("LIMITER/...") of a fixed or moving window key, or of either sliding key.
bool itemKey(const QByteArray &key, bool sliding, QByteArray *item, bool *previous = nullptr)
{
    if (!sliding) {
        if (key.startsWith(kPrefix)) {
            *item = key.mid(7);
            return true;
        }
        if (key.startsWith("LIMITER/")) { // before limits 3.7, keys had no "LIMITS:" prefix
            *item = key;
            return true;
        }
        return false;
    }
    if (!key.startsWith(kSlidingPrefix))
        return false;
    QByteArray rest = key.mid(7);
    const bool prev = rest.endsWith("}/-1");
    if (prev)
        rest.chop(3);
    if (!rest.endsWith('}'))
        return false;
    *item = rest.mid(1, rest.size() - 2);
    if (previous)
        *previous = prev;
    return true;
}

class LimitsFixedWindow final : public TtlCounterFormat {
public:
    QString name() const override { return QStringLiteral("limits-fixed-window"); }
    QString label() const override { return QStringLiteral("Python limits fixed window"); }
    QString library() const override { return QStringLiteral("limits (Python; Flask-Limiter, SlowAPI)"); }
    QString keyShape() const override { return QStringLiteral("LIMITS:LIMITER/<ids>/<amount>/<multiples>/<granularity>"); }

protected:
    bool keyFits(const QByteArray &key, bool, KeyKind &kind) const override
    {
        QByteArray item;
        if (!itemKey(key, false, &item))
            return false;
        kind.keyLimits = limitsInKey(item);
        if (!kind.keyLimits)
            return false;
        kind.keyLimits->algorithm = Algorithm::FixedWindow;
        return true;
    }
};

class LimitsMovingWindow final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("limits-moving-window"); }
    QString label() const override { return QStringLiteral("Python limits moving window"); }
    QString library() const override { return QStringLiteral("limits (Python; Flask-Limiter, SlowAPI)"); }
    QString keyShape() const override { return QStringLiteral("LIMITS:LIMITER/<ids>/<amount>/<multiples>/<granularity> (list)"); }
    const char *type() const override { return "list"; }
    std::optional<Algorithm> family() const override { return Algorithm::SlidingLog; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool, KeyKind &kind) const override
    {
        QByteArray item;
        const auto newest = numberReply(sample);
        if (!newest || detectScoreUnit(*newest) != ScoreUnit::Seconds || !itemKey(key, false, &item))
            return false;
        kind.keyLimits = limitsInKey(item);
        if (!kind.keyLimits)
            return false;
        kind.keyLimits->algorithm = Algorithm::SlidingLog;
        kind.base = key;
        kind.unit = ScoreUnit::Seconds;
        return true;
    }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *spec, qint64) const override
    {
        // The list holds at most `amount` entries: all of them, newest first.
        const qint64 n = spec ? spec->limit : kind.keyLimits ? kind.keyLimits->limit : 1000;
        return {{"LRANGE", kind.base, "0", QByteArray::number(std::min<qint64>(n, 100000) - 1)}, {"PTTL", kind.base}};
    }

    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        std::vector<qint64> times; // newest first
        for (const Reply &e : r[0].elements())
            times.push_back(secondsToUs(numberReply(e).value_or(0)));
        // An entry counts while it is not older than the window (t >= now - window).
        const qint64 since = nowUs - spec.windowUs;
        const qint64 used = qint64(std::count_if(times.begin(), times.end(), [&](qint64 t) { return t >= since; }));
        Decision d;
        d.limit = spec.limit;
        const qint64 at = spec.limit - spec.cost; // the entry that must have left the window
        d.allowed = spec.cost <= spec.limit && (at >= qint64(times.size()) || times[size_t(at)] < since);
        d.used = used + (d.allowed ? spec.cost : 0);
        d.remaining = std::max<qint64>(0, spec.limit - d.used);
        if (!d.allowed && at >= 0 && at < qint64(times.size()))
            d.retryAfterUs = std::max<qint64>(1, times[size_t(at)] + spec.windowUs - nowUs + 1);
        const qint64 newest = times.empty() ? nowUs : std::max(times.front(), d.allowed ? nowUs : times.front());
        d.resetAfterUs = d.used > 0 ? std::max<qint64>(0, newest + spec.windowUs - nowUs + 1) : 0;
        return {used, d};
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        QJsonArray entries;
        for (const Reply &e : r[0].elements()) {
            const qint64 t = secondsToUs(numberReply(e).value_or(0));
            entries.append(QJsonObject{{QStringLiteral("time_us"), t}, {QStringLiteral("age_us"), nowUs - t}});
        }
        QJsonObject s{{QStringLiteral("entries"), entries}, {QStringLiteral("entries_total"), entries.size()}};
        insertBytes(s, QStringLiteral("key"), kind.base);
        if (kind.keyLimits && !r[0].elements().empty()) {
            // every entry has left the window one window after the newest (t >= now - window)
            const qint64 newest = secondsToUs(numberReply(r[0][0]).value_or(0));
            s.insert(QStringLiteral("window_ends_in_us"), std::max<qint64>(0, newest + kind.keyLimits->windowUs - nowUs + 1));
            const qint64 since = nowUs - kind.keyLimits->windowUs;
            qint64 inWindow = 0;
            for (const Reply &e : r[0].elements())
                inWindow += secondsToUs(numberReply(e).value_or(0)) >= since ? 1 : 0;
            s.insert(QStringLiteral("entries_in_window"), inWindow);
        }
        if (r[1].isInteger())
            s.insert(QStringLiteral("ttl_ms"), r[1].integer());
        return s;
    }
};

class LimitsSlidingWindow final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("limits-sliding-window"); }
    QString label() const override { return QStringLiteral("Python limits sliding window"); }
    QString library() const override { return QStringLiteral("limits (Python; Flask-Limiter, SlowAPI)"); }
    QString keyShape() const override { return QStringLiteral("LIMITS:{LIMITER/<ids>/<amount>/<multiples>/<granularity>} + …}/-1"); }
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::SlidingCounter; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool, KeyKind &kind) const override
    {
        QByteArray item;
        bool previous = false;
        if (!integerReply(sample) || !itemKey(key, true, &item, &previous))
            return false;
        kind.keyLimits = limitsInKey(item);
        if (!kind.keyLimits)
            return false;
        kind.keyLimits->algorithm = Algorithm::SlidingCounter;
        kind.base = previous ? key.chopped(3) : key;
        return true;
    }

    QByteArrayList keys(const KeyKind &kind, qint64) const override { return {kind.base, kind.base + "/-1"}; }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *, qint64) const override
    {
        return {{"GET", kind.base}, {"PTTL", kind.base}, {"GET", kind.base + "/-1"}, {"PTTL", kind.base + "/-1"}};
    }

    // The counts and TTLs as the library's script sees them after its shift: a current
    // counter whose TTL fell below one window has become the previous one.
    struct Windows {
        qint64 current = 0, currentTtlMs = 0, previous = 0, previousTtlMs = 0;
    };
    static Windows windows(const std::vector<Reply> &r, qint64 windowMs)
    {
        Windows w;
        w.current = integerReply(r[0]).value_or(0);
        w.currentTtlMs = r[1].isInteger() ? std::max<qint64>(0, r[1].integer()) : 0;
        w.previous = integerReply(r[2]).value_or(0);
        w.previousTtlMs = r[3].isInteger() ? std::max<qint64>(0, r[3].integer()) : 0;
        if (w.currentTtlMs > 0 && w.currentTtlMs < windowMs) {
            w.previous = w.current;
            w.previousTtlMs = w.currentTtlMs;
            w.current = 0;
            w.currentTtlMs = w.currentTtlMs + windowMs;
        }
        return w;
    }

    Usage usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64) const override
    {
        const qint64 windowMs = std::max<qint64>(1, spec.windowUs / 1000);
        const Windows w = windows(r, windowMs);
        const qint64 prev = saneCount(w.previous), curr = saneCount(w.current);
        const qint64 weighted = qint64(double(prev) * double(w.previousTtlMs) / double(windowMs)); // the script's own float arithmetic
        Decision d;
        d.limit = spec.limit;
        d.allowed = weighted + curr + spec.cost <= spec.limit;
        d.used = weighted + curr + (d.allowed ? spec.cost : 0);
        d.remaining = std::max<qint64>(0, spec.limit - d.used);
        if (!d.allowed) {
            // The previous window's weight falls as its TTL runs down; when it is gone, the
            // current one becomes the previous (at its TTL minus one window).
            const qint64 room = spec.limit - curr - spec.cost;
            qint64 waitMs = 0;
            if (room >= 0 && prev > 0) {
                // floor(prev * ttl / W) <= room  <=>  ttl < (room + 1) * W / prev
                const qint64 ttlNeeded = qint64(std::ceil(double(room + 1) * double(windowMs) / double(prev))) - 1;
                waitMs = std::max<qint64>(0, w.previousTtlMs - ttlNeeded);
            } else {
                const qint64 turn = w.currentTtlMs > windowMs ? w.currentTtlMs - windowMs : windowMs;
                // after the turn the current count is the previous one, weighted from a full window down
                const qint64 roomAfter = spec.limit - spec.cost;
                const qint64 ttlNeeded =
                    curr > 0 ? qint64(std::ceil(double(roomAfter + 1) * double(windowMs) / double(curr))) - 1 : windowMs;
                waitMs = turn + std::max<qint64>(0, windowMs - std::min(windowMs, ttlNeeded));
            }
            d.retryAfterUs = std::max<qint64>(1, waitMs * 1000);
        }
        const qint64 lastTtl = std::max(w.previousTtlMs, w.currentTtlMs);
        d.resetAfterUs = d.used > 0 ? std::max<qint64>(lastTtl, d.allowed && curr == 0 ? 2 * windowMs : 0) * 1000 : 0;
        return {weighted + curr, d};
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64) const override
    {
        QJsonObject s{{QStringLiteral("current_key"), valueJson(kind.base, r[0], &r[1])},
                      {QStringLiteral("previous_key"), valueJson(kind.base + "/-1", r[2], &r[3])}};
        if (kind.keyLimits) {
            const qint64 windowMs = std::max<qint64>(1, kind.keyLimits->windowUs / 1000);
            const Windows w = windows(r, windowMs);
            s.insert(QStringLiteral("current"), w.current);
            s.insert(QStringLiteral("previous"), w.previous);
            s.insert(QStringLiteral("previous_weight"), double(w.previousTtlMs) / double(windowMs));
            // how far into the current window: the previous one's TTL runs from one window to 0
            s.insert(QStringLiteral("elapsed_us"), std::clamp<qint64>(windowMs - w.previousTtlMs, 0, windowMs) * 1000);
        }
        return s;
    }
};

} // namespace

const FormatReader &limitsFixedWindowFormat()
{
    static const LimitsFixedWindow f;
    return f;
}

const FormatReader &limitsMovingWindowFormat()
{
    static const LimitsMovingWindow f;
    return f;
}

const FormatReader &limitsSlidingWindowFormat()
{
    static const LimitsSlidingWindow f;
    return f;
}

} // namespace ratescope::formats
