// rack-attack (Ruby) throttles, through the Rails cache or a Redis store: one string counter per
// throttle, discriminator and period, "rack::attack:<floor(epoch s / period)>:<name>:<discriminator>",
// incremented by every request (throttled ones too, so it can exceed the limit) and expiring
// at the end of its period. Listed as "rack::attack:<name>:<discriminator>".
#include "formatrules.h"

#include "glob.h"

namespace ratescope::formats {

namespace {

constexpr char kPrefix[] = "rack::attack:";

// Periods people throttle by (s), to infer one from the index.
constexpr qint64 kUsualPeriods[] = {1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400, 604800};

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

class RackAttack final : public LimiterFormat {
public:
    QString name() const override { return QStringLiteral("rack-attack"); }
    QString label() const override { return QStringLiteral("rack-attack throttle"); }
    QString library() const override { return QStringLiteral("rack-attack (Ruby)"); }
    QString keyShape() const override { return QStringLiteral("rack::attack:<floor(epoch / period)>:<name>:<discriminator>"); }
    QByteArray type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return Algorithm::FixedWindow; }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyClass &kind) const override
    {
        QByteArray name;
        qint64 index = 0;
        if (!integerReply(sample) || !parseKey(key, &name, &index))
            return false;
        const qint64 nowS = nowUs / 1000000;
        for (qint64 p : kUsualPeriods) {
            if (index == nowS / p || index == nowS / p - 1) {
                kind.windowUs = p * 1000000;
                break;
            }
        }
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

    std::optional<KeyClass> nameKind(const QByteArray &name, const LimitSpec *spec, bool) const override
    {
        // "rack::attack:<name>:<discriminator>" with a period of whole seconds from the limits
        if (!name.startsWith(kPrefix) || name.size() <= qsizetype(sizeof kPrefix) || !spec || spec->windowUs < 1000000 ||
            spec->windowUs % 1000000)
            return std::nullopt;
        KeyClass kind;
        kind.base = name;
        kind.windowUs = spec->windowUs;
        return kind;
    }

    QByteArrayList keys(const KeyClass &kind, qint64 nowUs) const override
    {
        return kind.windowUs ? QByteArrayList{windowKey(kind, nowUs / kind.windowUs)} : QByteArrayList{};
    }

    std::vector<Command> read(const KeyClass &kind, const LimitSpec *spec, qint64 nowUs) const override
    {
        const qint64 w = kind.windowUs ? kind.windowUs : spec ? spec->windowUs : 0;
        if (w < 1000000 || w % 1000000) // rack-attack's periods are whole seconds
            return {};
        const QByteArray key = windowKey(kind, nowUs / w);
        return {{"GET", key}, {"PTTL", key}};
    }

    Usage usage(const KeyClass &, const std::vector<Reply> &r, const LimitSpec &spec, qint64 nowUs) const override
    {
        if (r.size() != 2)
            throw UnexpectedReplyError(QStringLiteral("no period to read: the window is not a whole number of seconds"));
        const qint64 w = spec.windowUs;
        return windowCounterUsage(integerReply(r[0]).value_or(0), spec, w - nowUs % w, w);
    }

    QJsonObject state(const KeyClass &kind, const std::vector<Reply> &r, qint64 nowUs) const override
    {
        if (r.size() != 2 || !kind.windowUs)
            return {};
        return {{QStringLiteral("current_window"), valueJson(windowKey(kind, nowUs / kind.windowUs), r[0], &r[1])},
                {QStringLiteral("period_us"), kind.windowUs},
                {QStringLiteral("count"), integerReply(r[0]).value_or(0)},
                {QStringLiteral("window_ends_in_us"), kind.windowUs - nowUs % kind.windowUs}};
    }

private:
    static QByteArray windowKey(const KeyClass &kind, qint64 index)
    {
        return kPrefix + QByteArray::number(index) + ":" + kind.base.mid(sizeof kPrefix - 1);
    }
};

} // namespace

const LimiterFormat &rackAttackFormat()
{
    static const RackAttack f;
    return f;
}

} // namespace ratescope::formats
