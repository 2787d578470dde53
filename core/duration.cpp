#include "duration.h"

#include "errors.h"

#include <QRegularExpression>
#include <array>
#include <cmath>

namespace ratescope {

namespace {

struct Unit {
    const char *suffix;
    qint64 us;
};

constexpr std::array<Unit, 7> kUnits{{
    {"us", 1},
    {"ms", 1000},
    {"s", 1000000},
    {"m", 60LL * 1000000},
    {"h", 3600LL * 1000000},
    {"d", 86400LL * 1000000},
    {"", 1000000}, // a bare number is seconds
}};

} // namespace

qint64 parseDurationUs(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^\\s*(\\d+(?:\\.\\d+)?)\\s*([a-z]*)\\s*$"));
    const auto m = re.match(text);
    if (!m.hasMatch())
        throw UsageError(QStringLiteral("invalid duration '%1' (examples: 250ms, 60s, 5m, 2h, 1d)").arg(text));
    const QString unit = m.captured(2);
    for (const Unit &u : kUnits) {
        if (unit != QLatin1String(u.suffix))
            continue;
        const double value = m.captured(1).toDouble() * double(u.us);
        if (value > 9.0e15)
            throw UsageError(QStringLiteral("duration '%1' is too long").arg(text));
        const double rounded = std::round(value);
        if (std::abs(rounded - value) > 1e-6)
            throw UsageError(QStringLiteral("duration '%1' is finer than a microsecond").arg(text));
        return qint64(rounded);
    }
    throw UsageError(QStringLiteral("invalid duration unit '%1' in '%2' (use us, ms, s, m, h, d)").arg(unit, text));
}

QString formatDurationUs(qint64 us)
{
    if (us == 0)
        return QStringLiteral("0s");
    const QString sign = us < 0 ? QStringLiteral("-") : QString();
    const qint64 a = std::llabs(us);
    // Largest unit that keeps at most three decimals exact.
    for (int i = 5; i >= 0; --i) {
        const Unit &u = kUnits[size_t(i)];
        if (a >= u.us && (a * 1000) % u.us == 0)
            return sign + QString::number(double(a) / double(u.us), 'g', 15) + QLatin1String(u.suffix);
    }
    return sign + QString::number(a) + QStringLiteral("us");
}

} // namespace ratescope
