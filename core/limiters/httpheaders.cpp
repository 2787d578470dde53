#include "limiters/httpheaders.h"

namespace ratescope {

namespace {

constexpr qint64 kSecondUs = 1000000;

qint64 secondsRoundedUp(qint64 us)
{
    return us <= 0 ? 0 : us / kSecondUs + (us % kSecondUs != 0);
}

// A structured-field String: printable ASCII, with \ and " escaped.
QString sfString(const QString &name)
{
    bool printable = !name.isEmpty();
    for (const QChar c : name)
        printable = printable && c.unicode() >= 0x20 && c.unicode() <= 0x7E;
    QString out = QStringLiteral("\"");
    for (const QChar c : printable ? name : QStringLiteral("default")) {
        if (c == QLatin1Char('"') || c == QLatin1Char('\\'))
            out += QLatin1Char('\\');
        out += c;
    }
    return out + QLatin1Char('"');
}

} // namespace

QList<QPair<QString, QString>> rateLimitHeaders(const Decision &decision, const LimitSpec &spec, const QString &policyName)
{
    QList<QPair<QString, QString>> headers;
    if (!decision.allowed) // "retry at once" is never what a denial means: at least one second
        headers.append({QStringLiteral("Retry-After"), QString::number(std::max<qint64>(1, secondsRoundedUp(decision.retryAfterUs)))});
    const QString id = sfString(policyName);
    headers.append({QStringLiteral("RateLimit-Policy"),
                    QStringLiteral("%1;q=%2;w=%3").arg(id).arg(decision.limit).arg(std::max<qint64>(1, secondsRoundedUp(spec.windowUs)))});
    headers.append(
        {QStringLiteral("RateLimit"),
         QStringLiteral("%1;r=%2;t=%3").arg(id).arg(std::max<qint64>(0, decision.remaining)).arg(secondsRoundedUp(decision.resetAfterUs))});
    return headers;
}

} // namespace ratescope
