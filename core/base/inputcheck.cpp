#include "base/inputcheck.h"

#include "base/errors.h"

#include <QList>

namespace ratescope {

namespace {

QString codePoint(char32_t c)
{
    return QStringLiteral("U+") + QString::number(uint(c), 16).toUpper().rightJustified(4, QLatin1Char('0'));
}

bool isInvisibleFormat(char32_t c)
{
    return (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) || c == 0x061C || c == 0xFEFF ||
           c == 0x00AD || c == 0x180E;
}

bool isControl(char32_t c)
{
    return c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || c == 0x2028 || c == 0x2029;
}

} // namespace

QString unsafeCharacterProblem(const QString &text)
{
    for (const uint c : text.toUcs4()) {
        const QString code = codePoint(c);
        if (isControl(c))
            return QStringLiteral("contains a control character (%1)").arg(code);
        if (isInvisibleFormat(c))
            return QStringLiteral("contains an invisible formatting character (%1)").arg(code);
        if (c == 0xFFFD)
            return QStringLiteral("contains U+FFFD (bytes that were not UTF-8)");
    }
    return {};
}

void requireSafeText(const QString &text, const QString &what, int maxLength, bool allowEmpty)
{
    if (text.isEmpty() && !allowEmpty)
        throw UsageError(QStringLiteral("%1 must not be empty").arg(what));
    if (text.size() > maxLength)
        throw UsageError(QStringLiteral("%1 is too long (%2 characters; at most %3)").arg(what).arg(text.size()).arg(maxLength));
    if (const QString problem = unsafeCharacterProblem(text); !problem.isEmpty())
        throw UsageError(QStringLiteral("%1 %2").arg(what, problem));
}

void requireValidNamespace(const QString &ns)
{
    if (ns.isEmpty() || ns.size() > kMaxNamespaceLength)
        throw UsageError(QStringLiteral("--namespace must be 1 to %1 characters of A-Z a-z 0-9 : _ . - (got %2 characters)")
                             .arg(kMaxNamespaceLength)
                             .arg(ns.size()));
    for (const QChar c : ns) {
        const bool ok = (c >= QLatin1Char('a') && c <= QLatin1Char('z')) || (c >= QLatin1Char('A') && c <= QLatin1Char('Z')) ||
                        (c >= QLatin1Char('0') && c <= QLatin1Char('9')) || c == QLatin1Char(':') || c == QLatin1Char('_') ||
                        c == QLatin1Char('.') || c == QLatin1Char('-');
        if (!ok)
            throw UsageError(QStringLiteral("--namespace may hold only A-Z a-z 0-9 : _ . - (not %1)").arg(codePoint(c.unicode())));
    }
}

qint64 parseStrictInteger(const QString &text, bool *ok)
{
    *ok = false;
    const qsizetype start = text.startsWith(QLatin1Char('-')) ? 1 : 0;
    if (text.size() == start || text.size() > 20)
        return 0;
    for (qsizetype i = start; i < text.size(); ++i)
        if (text[i] < QLatin1Char('0') || text[i] > QLatin1Char('9'))
            return 0;
    return text.toLongLong(ok);
}

} // namespace ratescope
