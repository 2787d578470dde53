#include "limittext.h"

#include "base/duration.h"
#include "base/errors.h"

namespace ratescope::ui {

std::optional<qint64> parseCount(const QString &text)
{
    QString t = text.trimmed();
    t.remove(QLatin1Char(',')).remove(QLatin1Char(' ')).remove(QLatin1Char('_'));
    bool ok = false;
    const qint64 v = t.toLongLong(&ok);
    return ok ? std::optional<qint64>(v) : std::nullopt;
}

FieldValue parseLimitField(const QString &text)
{
    if (text.trimmed().isEmpty())
        return {std::nullopt, QStringLiteral("a limit is needed")};
    const auto n = parseCount(text);
    return n ? FieldValue{n, {}} : FieldValue{std::nullopt, QStringLiteral("the limit must be a whole number")};
}

FieldValue parseWindowField(const QString &text)
{
    if (text.trimmed().isEmpty())
        return {std::nullopt, QStringLiteral("a window is needed, e.g. 10s, 1m, 1h")};
    try {
        return {parseDurationUs(text.trimmed()), {}};
    } catch (const UsageError &e) {
        return {std::nullopt, e.message()};
    }
}

FieldValue parseCostField(const QString &text)
{
    if (text.trimmed().isEmpty())
        return {1, {}};
    const auto n = parseCount(text);
    return n ? FieldValue{n, {}} : FieldValue{std::nullopt, QStringLiteral("the cost must be a whole number")};
}

} // namespace ratescope::ui
