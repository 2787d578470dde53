// Kong's rate-limiting plugin with the "redis" policy (Lua): one string counter per period
// and window, "ratelimit:<route id>:<service id>:<identifier>:<period start, Unix ms>:<period>",
// given EXPIRE of the period by its first INCR; periods second, minute, hour, day, month and
// year, aligned to the UTC calendar. In real time (sync_rate -1, the default) the usage read
// itself INCRs, so every request is counted, refused ones too; a request is refused when the
// count before it has reached the limit. Listed as one limiter per period: "ratelimit:<route>:<service>:<identifier>:<period>".
#include "formats/readers/readersupport.h"

#include "base/glob.h"

#include <QDateTime>

namespace ratescope::formats {

namespace {

constexpr char kPrefix[] = "ratelimit:";

// The period's window containing nowUs: [start, end) in µs, UTC calendar for month and year.
std::optional<std::pair<qint64, qint64>> periodWindow(const QByteArray &period, qint64 nowUs)
{
    static const std::pair<const char *, qint64> fixed[] = {{"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400}};
    for (const auto &[name, seconds] : fixed) {
        if (period == name) {
            const qint64 w = seconds * 1000000;
            const qint64 start = nowUs - nowUs % w;
            return std::pair{start, start + w};
        }
    }
    if (period != "month" && period != "year")
        return std::nullopt;
    const QDate today = QDateTime::fromMSecsSinceEpoch(nowUs / 1000, Qt::UTC).date();
    const QDate first = period == "month" ? QDate(today.year(), today.month(), 1) : QDate(today.year(), 1, 1);
    const QDate next = period == "month" ? first.addMonths(1) : first.addYears(1);
    auto us = [](const QDate &d) { return QDateTime(d, QTime(0, 0), Qt::UTC).toMSecsSinceEpoch() * 1000; };
    return std::pair{us(first), us(next)};
}

// "ratelimit:<route>:<service>:<identifier>:<start ms>:<period>" -> name without the start.
bool parseKey(const QByteArray &key, QByteArray *name, qint64 *startMs, QByteArray *period)
{
    if (!key.startsWith(kPrefix))
        return false;
    const qsizetype last = key.lastIndexOf(':');
    const qsizetype before = key.lastIndexOf(':', last - 1);
    if (last <= 0 || before < qsizetype(sizeof kPrefix) - 1)
        return false;
    const auto start = integerValue(key.mid(before + 1, last - before - 1));
    *period = key.mid(last + 1);
    if (!start || *start <= 0 || !periodWindow(*period, 0))
        return false;
    // route and service ids, then the identifier: at least three segments before the start
    if (key.mid(sizeof kPrefix - 1, before - qsizetype(sizeof kPrefix) + 1).count(':') < 2)
        return false;
    *name = key.left(before) + ":" + *period;
    *startMs = *start;
    return true;
}

class Kong final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("kong"); }
    QString label() const override { return QStringLiteral("Kong rate-limiting"); }
    QString library() const override { return QStringLiteral("Kong Gateway rate-limiting plugin, redis policy (Lua)"); }
    QString keyShape() const override { return QStringLiteral("ratelimit:<route>:<service>:<identifier>:<period start ms>:<period>"); }
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::FixedWindow; }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool, KeyKind &kind) const override
    {
        QByteArray name, period;
        qint64 startMs = 0;
        if (!integerReply(sample) || !parseKey(key, &name, &startMs, &period))
            return false;
        const auto window = periodWindow(period, nowUs);
        kind.base = name;
        kind.windowUs = window->second - window->first;
        kind.windowId = startMs;
        return true;
    }

    QByteArray windowKeysGlob(const QByteArray &name, bool) const override
    {
        const qsizetype last = name.lastIndexOf(':');
        if (!name.startsWith(kPrefix) || last < 0 || !periodWindow(name.mid(last + 1), 0))
            return {};
        return escapeGlob(name.left(last)) + ":*:" + escapeGlob(name.mid(last + 1));
    }

    QByteArray limiterNameOf(const QByteArray &key, qint64) const override
    {
        QByteArray name, period;
        qint64 startMs = 0;
        return parseKey(key, &name, &startMs, &period) ? name : QByteArray();
    }

    std::optional<KeyKind> nameKind(const QByteArray &name, const LimitSpec *, bool) const override
    {
        const qsizetype last = name.lastIndexOf(':');
        if (!name.startsWith(kPrefix) || last < 0 || name.left(last).count(':') < 3)
            return std::nullopt;
        const auto window = periodWindow(name.mid(last + 1), 0); // month and year: the policy's window
        if (!window)
            return std::nullopt;
        KeyKind kind;
        kind.base = name;
        const QByteArray period = name.mid(last + 1);
        if (period != "month" && period != "year")
            kind.windowUs = window->second - window->first;
        return kind;
    }

    QByteArrayList keys(const KeyKind &kind, qint64 nowUs) const override { return {currentKey(kind, nowUs)}; }

    std::vector<Command> read(const KeyKind &kind, const LimitSpec *, qint64 nowUs) const override
    {
        const QByteArray key = currentKey(kind, nowUs);
        return {{"GET", key}, {"PTTL", key}};
    }

    Usage usage(const KeyKind &kind, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        const auto window = periodWindow(period(kind), nowUs);
        return windowCounterUsage(integerReply(r[0]).value_or(0), spec, window->second - nowUs, window->second - window->first);
    }

    QJsonObject state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        const auto window = periodWindow(period(kind), nowUs);
        return {{QStringLiteral("current_window"), valueJson(currentKey(kind, nowUs), r[0], &r[1])},
                {QStringLiteral("period"), QString::fromLatin1(period(kind))},
                {QStringLiteral("count"), integerReply(r[0]).value_or(0)},
                {QStringLiteral("window_start_us"), window->first},
                {QStringLiteral("window_ends_in_us"), window->second - nowUs}};
    }

private:
    static QByteArray period(const KeyKind &kind) { return kind.base.mid(kind.base.lastIndexOf(':') + 1); }
    static QByteArray currentKey(const KeyKind &kind, qint64 nowUs)
    {
        const qsizetype last = kind.base.lastIndexOf(':');
        const auto window = periodWindow(kind.base.mid(last + 1), nowUs);
        return kind.base.left(last) + ":" + QByteArray::number(window->first / 1000) + kind.base.mid(last);
    }
};

} // namespace

const FormatReader &kongFormat()
{
    static const Kong f;
    return f;
}

} // namespace ratescope::formats
