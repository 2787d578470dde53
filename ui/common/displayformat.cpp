#include "displayformat.h"

#include <QTextDocument> // Qt::mightBeRichText

#include <cmath>

namespace ratescope::ui {

QString formatCount(qint64 n)
{
    QString digits = QString::number(n < 0 ? -n : n);
    for (qsizetype i = digits.size() - 3; i > 0; i -= 3)
        digits.insert(i, QLatin1Char(','));
    return n < 0 ? QLatin1Char('-') + digits : digits;
}

QString formatCountShort(qint64 n)
{
    const qint64 magnitude = n < 0 ? -n : n;
    if (magnitude < 10000)
        return formatCount(n);
    static const char units[] = {'k', 'M', 'G', 'T', 'P', 'E'};
    double v = double(magnitude) / 1000;
    int u = 0;
    // The unit chosen after rounding: 999,999 reads "1.0M", not "1000k".
    while (v >= 999.5 && u < 5) {
        v /= 1000;
        ++u;
    }
    const QString digits = v < 9.95 ? QString::number(v, 'f', 1) : QString::number(qint64(std::llround(v)));
    return (n < 0 ? QStringLiteral("-") : QString()) + digits + QLatin1Char(units[u]);
}

QString formatUsage(qint64 used, qint64 limit)
{
    return QStringLiteral("%1 / %2").arg(formatCount(used), formatCount(limit));
}

QString formatUsageShort(qint64 used, qint64 limit)
{
    return QStringLiteral("%1 / %2").arg(formatCountShort(used), formatCountShort(limit));
}

QString formatKeys(qint64 n)
{
    return n == 1 ? QStringLiteral("1 key") : QStringLiteral("%1 keys").arg(formatCount(n));
}

QString formatSize(qint64 bytes)
{
    if (bytes < 0)
        return {};
    if (bytes < 1024)
        return QStringLiteral("%1 B").arg(bytes);
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes) / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        ++u;
    }
    return QStringLiteral("%1 %2").arg(v, 0, 'f', v < 10 ? 1 : 0).arg(QLatin1String(units[u]));
}

QString formatSpan(qint64 us)
{
    if (us < 0)
        return {};
    if (us < 1000)
        return QStringLiteral("%1 µs").arg(us);
    if (us < 1000000)
        return QStringLiteral("%1 ms").arg(us / 1000);
    const qint64 s = us / 1000000;
    if (s < 10)
        return QStringLiteral("%1 s").arg(double(us) / 1e6, 0, 'f', 1);
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1 m %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    if (s < 86400)
        return QStringLiteral("%1 h %2 m").arg(s / 3600).arg(s % 3600 / 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 d %2 h").arg(s / 86400).arg(s % 86400 / 3600);
}

QString formatAgo(qint64 ms)
{
    const qint64 s = ms / 1000; // toward zero: a clock less than a second ahead reads "0 s ago"
    if (s < 0)
        return QStringLiteral("in the future by this machine's clock");
    if (s < 60)
        return QStringLiteral("%1 s ago").arg(s);
    return formatSpan(s * 1000000) + QStringLiteral(" ago");
}

QString formatTtl(qint64 pttlMs)
{
    if (pttlMs == -1)
        return QStringLiteral("no expiry");
    if (pttlMs == -3)
        return QStringLiteral("?"); // the server did not say
    if (pttlMs < 0)
        return QStringLiteral("gone");
    return formatSpan(pttlMs * 1000);
}

QString formatRoundTrip(double ms)
{
    if (ms < 0)
        return QStringLiteral("?");
    return QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 10 ? 2 : 0);
}

QString formatLimit(const LimitSpec &spec)
{
    // "60 per 10 s" reads better than "60 per 10000000 us"; whole units only.
    qint64 w = spec.windowUs;
    QString window;
    if (w % 86400000000LL == 0)
        window = QStringLiteral("%1 d").arg(w / 86400000000LL);
    else if (w % 3600000000LL == 0)
        window = QStringLiteral("%1 h").arg(w / 3600000000LL);
    else if (w % 60000000 == 0)
        window = QStringLiteral("%1 m").arg(w / 60000000);
    else if (w % 1000000 == 0)
        window = QStringLiteral("%1 s").arg(w / 1000000);
    else
        window = QStringLiteral("%1 ms").arg(double(w) / 1000);
    QString text = QStringLiteral("%1 per %2").arg(formatCount(spec.limit), window);
    if (spec.cost != 1)
        text += QStringLiteral(" (cost %1)").arg(spec.cost);
    return text;
}

QString plainToolTip(const QString &text)
{
    if (!Qt::mightBeRichText(text))
        return text;
    return QStringLiteral("<qt>%1</qt>").arg(text.toHtmlEscaped().replace(QLatin1Char('\n'), QLatin1String("<br>")));
}

} // namespace ratescope::ui
