#include "base/duration.h"

#include "base/errors.h"

#include <array>
#include <cmath>
#include <numeric>
#include <QRegularExpression>
#include <QStringList>
#include <utility>

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

constexpr qint64 kLongestUs = 9000000000000000LL; // about 285 years

} // namespace

qint64 parseDurationUs(const QString &text)
{
    // ASCII digits and a unit, nothing around or between them: " 5", "60 s" and "60s\n" are
    // not durations (anchoredPattern: '$' would accept a final newline).
    static const QRegularExpression re(QRegularExpression::anchoredPattern(QStringLiteral("([0-9]{1,20})(?:\\.([0-9]{1,20}))?([a-z]*)")));
    const auto m = re.match(text);
    if (!m.hasMatch())
        throw UsageError(QStringLiteral("invalid duration '%1' (examples: 250ms, 60s, 5m, 2h, 1d)").arg(text));
    const QString unit = m.captured(3);
    for (const Unit &u : kUnits) {
        if (unit != QLatin1String(u.suffix))
            continue;
        // In integers, exactly: a double keeps 15-16 digits, and what formatDurationUs writes
        // ("4422620559510.693ms") must read back as it was.
        bool ok = false;
        const quint64 whole = m.captured(1).toULongLong(&ok);
        if (!ok || whole > quint64(kLongestUs / u.us))
            throw UsageError(QStringLiteral("duration '%1' is too long").arg(text));
        QString decimals = m.captured(2);
        while (decimals.endsWith(QLatin1Char('0')))
            decimals.chop(1);
        // The fraction's µs: fraction * us / 10^digits, whole when 10^digits / gcd divides the
        // fraction. A unit has at most 13 factors 2 and 8 factors 5, and the fraction (no final
        // 0) lacks one of the two, so more than 13 digits is always finer than a µs.
        quint64 fractionUs = 0;
        if (!decimals.isEmpty()) {
            quint64 pow10 = 1;
            for (qsizetype i = 0; i < decimals.size() && i < 14; ++i)
                pow10 *= 10;
            const quint64 fraction = decimals.size() <= 13 ? decimals.toULongLong() : 1;
            const quint64 g = std::gcd(pow10, quint64(u.us)), step = pow10 / g;
            if (decimals.size() > 13 || fraction % step != 0)
                throw UsageError(QStringLiteral("duration '%1' is finer than a microsecond").arg(text));
            fractionUs = fraction / step * (quint64(u.us) / g); // < u.us
        }
        const quint64 us = whole * quint64(u.us) + fractionUs;
        if (us > quint64(kLongestUs))
            throw UsageError(QStringLiteral("duration '%1' is too long").arg(text));
        return qint64(us);
    }
    throw UsageError(QStringLiteral("invalid duration unit '%1' in '%2' (use us, ms, s, m, h, d)").arg(unit, text));
}

QString formatDurationUs(qint64 us)
{
    if (us == 0)
        return QStringLiteral("0s");
    const QString sign = us < 0 ? QStringLiteral("-") : QString();
    // The magnitude in unsigned arithmetic: llabs(INT64_MIN) overflows.
    const quint64 a = us < 0 ? quint64(0) - quint64(us) : quint64(us);
    // Largest unit that keeps at most three decimals exact: a / u.us has at most three
    // decimals when a is a multiple of u.us / 1000 (never a * 1000, which can overflow).
    // Seconds keep six, down to the microsecond: from a second on, any time is exact in
    // seconds ("3599.988023s", not "3599988.023ms").
    for (int i = 5; i >= 0; --i) {
        const Unit &u = kUnits[size_t(i)];
        const bool seconds = u.us == 1000000;
        const quint64 step = seconds ? 1 : u.us >= 1000 ? quint64(u.us / 1000) : 1;
        if (a >= quint64(u.us) && a % step == 0) {
            // Whole units and the fraction apart, so large values keep every digit.
            const quint64 whole = a / quint64(u.us), rest = (a % quint64(u.us)) / step;
            QString text = QString::number(whole);
            if (rest) {
                QString decimals = QString::number(rest).rightJustified(seconds ? 6 : 3, QLatin1Char('0'));
                while (decimals.endsWith(QLatin1Char('0')))
                    decimals.chop(1);
                text += QLatin1Char('.') + decimals;
            }
            return sign + text + QLatin1String(u.suffix);
        }
    }
    return sign + QString::number(a) + QStringLiteral("us");
}

QString formatWaitUs(qint64 us)
{
    constexpr qint64 kMs = 1000, kS = 1000000, kMinute = 60 * kS;
    if (us < kMs)
        return formatDurationUs(us);
    if (us < kMinute) // up to the millisecond; 59.9995s and above round up to "1m"
        return formatDurationUs(unitsRoundedUp(us, kMs) * kMs);
    const qint64 s = unitsRoundedUp(us, kS);
    const std::pair<qint64, char> units[] = {{s / 86400, 'd'}, {s % 86400 / 3600, 'h'}, {s % 3600 / 60, 'm'}, {s % 60, 's'}};
    QStringList parts;
    for (const auto &[n, suffix] : units)
        if (n)
            parts << QString::number(n) + QLatin1Char(suffix);
    return parts.join(QLatin1Char(' '));
}

} // namespace ratescope
