// rack-attack (Ruby) throttles, through the Rails cache or a Redis store: one string counter per
// throttle, discriminator and period, "rack::attack:<floor(epoch s / period)>:<name>:<discriminator>",
// incremented by every request (throttled ones too, so it can exceed the limit) and expiring
// at the end of its period. Listed as "rack::attack:<name>:<discriminator>".
#include "formats/readers/readersupport.h"

#include "base/glob.h"

namespace ratescope::formats {

namespace {

constexpr char kPrefix[] = "rack::attack:";

// Periods people throttle by (s), to infer one from the index.
constexpr std::initializer_list<qint64> kUsualPeriods = {1,   2,   5,    10,   15,   20,    30,    60,    120,   300,
                                                         600, 900, 1800, 3600, 7200, 21600, 43200, 86400, 604800};
bool parseKey(const QByteArray &key, QByteArray *name, qint64 *index)
{
    if (!key.startsWith(kPrefix))
        return false;
    const qsizetype from = sizeof kPrefix - 1;
    const qsizetype colon = key.indexOf(':', from);
    if (colon < 0 || colon + 1 >= key.size())
        return false;
    const auto i = integerValue(key.mid(from, colon - from));
    if (!i || *i <= 0)
        return false;
    *index = *i;
    *name = kPrefix + key.mid(colon + 1);
    return true;
}

class RackAttack final : public AlignedCounterFormat {
public:
    QString name() const override { return QStringLiteral("rack-attack"); }
    QString label() const override { return QStringLiteral("rack-attack throttle"); }
    QString library() const override { return QStringLiteral("rack-attack (Ruby)"); }
    QString keyShape() const override { return QStringLiteral("rack::attack:<floor(epoch / period)>:<name>:<discriminator>"); }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const override
    {
        QByteArray name;
        qint64 index = 0;
        if (!integerReply(sample) || !parseKey(key, &name, &index))
            return false;
        kind.windowUs = windowOfIndex(index, nowUs / 1000000, kUsualPeriods) * 1000000;
        if (!kind.windowUs && !declared)
            return false;
        kind.base = name;
        return true;
    }

    QByteArray windowKeysGlob(const QByteArray &name, bool) const override
    {
        return name.startsWith(kPrefix) ? kPrefix + QByteArray("*:") + escapeGlob(name.mid(sizeof kPrefix - 1)) : QByteArray();
    }

    QByteArray limiterNameOf(const QByteArray &key, qint64) const override
    {
        QByteArray name;
        qint64 index = 0;
        return parseKey(key, &name, &index) ? name : QByteArray();
    }

    std::optional<KeyKind> nameKind(const QByteArray &name, const LimitSpec *spec, bool) const override
    {
        // "rack::attack:<name>:<discriminator>" with a period of whole seconds from the limits
        if (!name.startsWith(kPrefix) || name.size() <= qsizetype(sizeof kPrefix) || !spec || spec->windowUs < 1000000 ||
            spec->windowUs % 1000000)
            return std::nullopt;
        KeyKind kind;
        kind.base = name;
        kind.windowUs = spec->windowUs;
        return kind;
    }

protected:
    QByteArray windowKey(const KeyKind &kind, qint64 windowUs, qint64 nowUs) const override
    {
        return kPrefix + QByteArray::number(nowUs / windowUs) + ":" + kind.base.mid(sizeof kPrefix - 1);
    }
    QString windowField() const override { return QStringLiteral("period_us"); }
};

} // namespace

const FormatReader &rackAttackFormat()
{
    static const RackAttack f;
    return f;
}

} // namespace ratescope::formats
