// Envoy's rate limit service (envoyproxy/ratelimit, Go), fixed-window Redis cache: one string
// counter per descriptor and window, "<prefix><domain>_<key>_<value>[_<key>_<value>...]_<window start, Unix s>",
// the start aligned to the limit's unit (second, minute, hour, day, week, 30-day month, 365-day
// year: floor(now / unit) x unit), INCRBY'd by every hit
// (over-limit hits too) and given EXPIRE of the unit. No default prefix: without a policy it
// is recognised when the start is the current or previous window of exactly one unit.
// Listed as the key without "_<window start>".
#include "formats/readers/readersupport.h"

#include "base/glob.h"

namespace ratescope::formats {

namespace {

// UnitToDivider: year and month as 365 and 30 days of seconds since the epoch, week, day, hour,
// minute, second.
constexpr qint64 kUnits[] = {365 * 86400, 30 * 86400, 7 * 86400, 86400, 3600, 60, 1};

bool parseKey(const QByteArray &key, QByteArray *name, qint64 *start)
{
    const qsizetype under = key.lastIndexOf('_');
    if (under <= 0 || key.size() - under - 1 != 10)
        return false;
    const auto s = integerValue(key.mid(under + 1));
    if (!s || *s <= 0 || key.left(under).count('_') < 2) // <domain>_<key>_<value> at least
        return false;
    *name = key.left(under);
    *start = *s;
    return true;
}

// The units whose current or previous window starts at `start` at nowUs.
std::vector<qint64> fittingUnits(qint64 start, qint64 nowUs)
{
    std::vector<qint64> fit;
    const qint64 nowS = nowUs / 1000000;
    for (qint64 u : kUnits)
        if (start % u == 0 && (start == nowS - nowS % u || start == nowS - nowS % u - u))
            fit.push_back(u);
    return fit;
}

class Envoy final : public AlignedCounterFormat {
public:
    QString name() const override { return QStringLiteral("envoy"); }
    QString label() const override { return QStringLiteral("Envoy ratelimit"); }
    QString library() const override { return QStringLiteral("Envoy rate limit service (envoyproxy/ratelimit, Go)"); }
    QString keyShape() const override { return QStringLiteral("<prefix><domain>_<key>_<value>..._<window start, Unix s>"); }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const override
    {
        QByteArray name;
        qint64 start = 0;
        if (!integerReply(sample) || !parseKey(key, &name, &start))
            return false;
        const auto units = fittingUnits(start, nowUs);
        if (units.size() == 1)
            kind.windowUs = units.front() * 1000000;
        else if (!declared)
            return false; // no unit, or several: only a policy says
        kind.base = name;
        return true;
    }

    QByteArray windowKeysGlob(const QByteArray &name, bool declared) const override
    {
        return declared ? escapeGlob(name) + "_??????????" : QByteArray();
    }

    QByteArray limiterNameOf(const QByteArray &key, qint64) const override
    {
        QByteArray name;
        qint64 start = 0;
        return parseKey(key, &name, &start) ? name : QByteArray();
    }

    std::optional<KeyKind> nameKind(const QByteArray &name, const LimitSpec *spec, bool declared) const override
    {
        // No prefix: only a policy that declares Envoy, with its unit as the window, names one.
        if (!declared || !spec || spec->windowUs < 1000000 || spec->windowUs % 1000000 || name.count('_') < 2)
            return std::nullopt;
        KeyKind kind;
        kind.base = name;
        kind.windowUs = spec->windowUs;
        return kind;
    }

protected:
    QByteArray windowKey(const KeyKind &kind, qint64 windowUs, qint64 nowUs) const override
    {
        const qint64 w = windowUs / 1000000, nowS = nowUs / 1000000;
        return kind.base + "_" + QByteArray::number(nowS - nowS % w);
    }
    QString windowField() const override { return QStringLiteral("unit_us"); }
};

} // namespace

const FormatReader &envoyFormat()
{
    static const Envoy f;
    return f;
}

} // namespace ratescope::formats
