#include "formats/readers/readersupport.h"

#include "base/keytext.h"

#include <charconv>
#include <cmath>

namespace ratescope::formats {

std::optional<qint64> integerValue(const QByteArray &s)
{
    if (s.isEmpty() || s.size() > 20)
        return std::nullopt;
    for (qsizetype i = 0; i < s.size(); ++i)
        if (!(s[i] >= '0' && s[i] <= '9') && !(i == 0 && s[i] == '-' && s.size() > 1))
            return std::nullopt;
    qint64 v = 0;
    const auto [end, error] = std::from_chars(s.constData(), s.constData() + s.size(), v);
    return error == std::errc() && end == s.constData() + s.size() ? std::optional<qint64>(v) : std::nullopt;
}

std::optional<double> numberValue(const QByteArray &s)
{
    if (s.isEmpty() || s.size() > 40)
        return std::nullopt;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
            return std::nullopt; // no "inf", "nan", spaces or hex
    bool ok = false;
    const double v = s.toDouble(&ok);
    return ok && std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<qint64> integerReply(const Reply &r)
{
    if (r.isInteger())
        return r.integer();
    if (r.type() != Reply::Type::String)
        return std::nullopt;
    return integerValue(r.bytes());
}

std::optional<double> numberReply(const Reply &r)
{
    if (r.isInteger())
        return double(r.integer());
    if (r.type() != Reply::Type::String)
        return std::nullopt;
    return numberValue(r.bytes());
}

qint64 secondsToUs(double seconds)
{
    return scoreToUs(seconds, 1e6);
}

qint64 saneInteger(double v)
{
    constexpr double kBound = 2305843009213693952.0; // 2^61
    return std::isnan(v) ? 0 : qint64(std::clamp(v, -kBound, kBound));
}

bool stripPrefix(const QByteArray &key, std::initializer_list<const char *> prefixes, QByteArray *rest)
{
    for (const char *p : prefixes) {
        const QByteArray prefix(p);
        if (key.size() > prefix.size() && key.startsWith(prefix)) {
            *rest = key.mid(prefix.size());
            return true;
        }
    }
    return false;
}

namespace {

Decision counted(qint64 used, bool allowed, const LimitSpec &spec)
{
    Decision d;
    d.limit = spec.limit;
    d.allowed = allowed;
    d.used = used + (allowed ? spec.cost : 0); // above the limit when denials are counted: as it is
    d.remaining = std::max<qint64>(0, spec.limit - d.used);
    return d;
}

} // namespace

Usage windowCounterUsage(qint64 used, const LimitSpec &spec, qint64 endsInUs, qint64 windowUs)
{
    used = saneCount(used);
    Decision d = counted(used, used + spec.cost <= spec.limit, spec);
    const qint64 ends = endsInUs >= 0 ? endsInUs : windowUs; // none runs: this request would start one
    d.retryAfterUs = d.allowed ? 0 : std::max<qint64>(1, ends);
    d.resetAfterUs = d.used > 0 ? ends : 0;
    return {used, d};
}

Usage weightedCounterUsage(double weighted, qint64 curr, const LimitSpec &spec, qint64 endsInUs, qint64 windowUs)
{
    curr = saneCount(curr);
    const double w = std::clamp(weighted, 0.0, double(qint64(1) << 61));
    const qint64 estimate = qint64(std::floor(w)) + curr;
    Decision d = counted(estimate, w + double(curr + spec.cost) <= double(spec.limit), spec);
    // The previous window's share falls linearly to 0 at the end of this window; a denied
    // request passes once weighted(t) + curr + cost <= limit, or when the window turns.
    const qint64 ends = endsInUs >= 0 ? endsInUs : windowUs;
    if (!d.allowed) {
        const double room = double(spec.limit - curr - spec.cost);
        if (room >= 0 && w > 0) {
            // weighted falls at w / ends per µs: it reaches `room` after ends * (1 - room / w).
            d.retryAfterUs = std::max<qint64>(1, qint64(std::ceil(double(ends) * (1.0 - room / w))));
        } else {
            d.retryAfterUs = std::max<qint64>(1, ends);
        }
    }
    d.resetAfterUs = d.used > 0 ? (curr > 0 || !d.allowed ? ends + windowUs : ends) : 0;
    return {estimate, d};
}

Usage gcraUsage(std::optional<double> tatUs, const LimitSpec &spec, qint64 nowUs)
{
    const double now = double(nowUs), window = double(spec.windowUs);
    const double T = window / double(spec.limit);
    const double tat = std::max(tatUs.value_or(now), now);
    const double newTat = tat + T * double(spec.cost);
    const double diff = now - (newTat - window);
    Decision d;
    d.limit = spec.limit;
    d.allowed = diff >= 0;
    const double ahead = tat - now; // what is used now, in time
    if (d.allowed) {
        d.remaining = std::max<qint64>(0, qint64(std::floor(diff / T + 1e-9)));
        d.resetAfterUs = qint64(std::ceil(newTat - now));
    } else {
        d.retryAfterUs = std::max<qint64>(1, qint64(std::ceil(-diff)));
        d.resetAfterUs = qint64(std::ceil(ahead));
    }
    d.used = spec.limit - d.remaining;
    const qint64 usedNow = std::clamp<qint64>(qint64(std::ceil(ahead / T - 1e-9)), 0, spec.limit);
    return {usedNow, d};
}

QJsonObject valueJson(const QByteArray &key, const Reply &value, const Reply *pttl)
{
    QJsonObject o;
    insertBytes(o, QStringLiteral("key"), key);
    if (value.isNil())
        o.insert(QStringLiteral("value"), QJsonValue());
    else if (value.isInteger())
        o.insert(QStringLiteral("value"), value.integer());
    else
        insertBytes(o, QStringLiteral("value"), value.bytes());
    if (pttl && pttl->isInteger())
        o.insert(QStringLiteral("ttl_ms"), pttl->integer());
    return o;
}

QByteArrayList AlignedCounterFormat::keys(const KeyKind &kind, qint64 nowUs) const
{
    return kind.windowUs ? QByteArrayList{windowKey(kind, kind.windowUs, nowUs)} : QByteArrayList{};
}

std::vector<Command> AlignedCounterFormat::read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const
{
    const qint64 w = kind.windowUs ? kind.windowUs : spec ? spec->windowUs : 0;
    if (w < 1000000 || w % 1000000) // both libraries count windows in whole seconds
        return {};
    const QByteArray key = windowKey(kind, w, nowUs);
    return {{"GET", key}, {"PTTL", key}};
}

Usage AlignedCounterFormat::usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const
{
    if (r.size() != 2)
        throw UnexpectedReplyError(QStringLiteral("no window to read: the window is not a whole number of seconds"));
    const qint64 w = spec.windowUs;
    return windowCounterUsage(integerReply(r[0]).value_or(0), spec, w - nowUs % w, w);
}

QJsonObject AlignedCounterFormat::state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const
{
    if (r.size() != 2 || !kind.windowUs)
        return {};
    return {{QStringLiteral("current_window"), valueJson(windowKey(kind, kind.windowUs, nowUs), r[0], &r[1])},
            {windowField(), kind.windowUs},
            {QStringLiteral("count"), integerReply(r[0]).value_or(0)},
            {QStringLiteral("window_ends_in_us"), kind.windowUs - nowUs % kind.windowUs}};
}

std::vector<Command> TatStringFormat::read(const KeyKind &kind, const LimitSpec *, qint64) const
{
    return {{"GET", kind.base}, {"PTTL", kind.base}};
}

Usage TatStringFormat::usage(const KeyKind &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const
{
    const auto tat = tatUs(r[0]);
    return gcraUsage(tat ? std::optional<double>(double(*tat)) : std::nullopt, spec, nowUs);
}

QJsonObject TatStringFormat::state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const
{
    QJsonObject s{{QStringLiteral("tat"), valueJson(kind.base, r[0], &r[1])}};
    if (const auto tat = tatUs(r[0])) {
        s.insert(QStringLiteral("tat_us"), *tat);
        s.insert(QStringLiteral("tat_ahead_us"), std::max<qint64>(0, *tat - nowUs));
    }
    return s;
}

bool TatStringFormat::nearNow(qint64 tatUs, qint64 nowUs)
{
    return tatUs >= nowUs - 86400LL * 1000000 && tatUs <= nowUs + 366LL * 86400 * 1000000;
}

bool TtlCounterFormat::match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const
{
    const auto v = integerReply(sample);
    if (!v || *v < 0 || !keyFits(key, declared, kind))
        return false;
    // "<prefix>...:<window id of now>" is a counter window under that prefix, not a counter
    // whose TTL ends its window: only a policy says otherwise.
    QByteArray base;
    qint64 id = 0;
    if (!declared && !kind.keyLimits && splitCounterWindowKey(key, &base, &id) && inferWindowSeconds(id, nowUs / 1000000))
        return false;
    kind.base = key;
    return true;
}

std::vector<Command> TtlCounterFormat::read(const KeyKind &kind, const LimitSpec *spec, qint64 nowUs) const
{
    Q_UNUSED(spec);
    Q_UNUSED(nowUs);
    return {{"GET", kind.base}, {"PTTL", kind.base}};
}

Usage TtlCounterFormat::usage(const KeyKind &kind, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const
{
    Q_UNUSED(kind);
    Q_UNUSED(nowUs);
    const qint64 used = r[0].isNil() ? 0 : integerReply(r[0]).value_or(0);
    const qint64 pttl = r[1].isInteger() ? r[1].integer() : -2;
    return windowCounterUsage(used, spec, r[0].isNil() || pttl < 0 ? -1 : pttl * 1000, spec.windowUs);
}

QJsonObject TtlCounterFormat::state(const KeyKind &kind, const std::vector<Reply> &r, qint64 nowUs) const
{
    Q_UNUSED(nowUs);
    QJsonObject s{{QStringLiteral("counter"), valueJson(kind.base, r[0], &r[1])}};
    if (r[1].isInteger() && r[1].integer() >= 0)
        s.insert(QStringLiteral("window_ends_in_us"), r[1].integer() * 1000);
    return s;
}

} // namespace ratescope::formats
