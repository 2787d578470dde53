#include "formats/keykind.h"

#include <algorithm>

namespace ratescope {

std::optional<Algorithm> KeyKind::algorithm() const
{
    switch (format) {
    case KeyFormat::SlidingLog:
    case KeyFormat::ForeignSlidingLog:
        return Algorithm::SlidingLog;
    case KeyFormat::SlidingCounter:
        return Algorithm::SlidingCounter;
    case KeyFormat::FixedWindow:
        return Algorithm::FixedWindow;
    case KeyFormat::TokenBucket:
    case KeyFormat::ForeignTokenBucket:
        return Algorithm::TokenBucket;
    case KeyFormat::Gcra:
        return Algorithm::Gcra;
    case KeyFormat::SlidingBuckets:
        return Algorithm::SlidingBuckets;
    case KeyFormat::Library:
        return reader->family();
    case KeyFormat::CounterWindow:
    case KeyFormat::Other:
        break;
    }
    return std::nullopt;
}

bool KeyKind::readable() const
{
    switch (format) {
    case KeyFormat::Other:
    case KeyFormat::ForeignTokenBucket:
        return false;
    case KeyFormat::Library:
        return reader->readable();
    default:
        return true;
    }
}

KeyFormat ownFormat(Algorithm a)
{
    switch (a) {
    case Algorithm::SlidingLog:
        return KeyFormat::SlidingLog;
    case Algorithm::SlidingCounter:
        return KeyFormat::SlidingCounter;
    case Algorithm::FixedWindow:
        return KeyFormat::FixedWindow;
    case Algorithm::TokenBucket:
        return KeyFormat::TokenBucket;
    case Algorithm::SlidingBuckets:
        return KeyFormat::SlidingBuckets;
    case Algorithm::Gcra:
        break;
    }
    return KeyFormat::Gcra;
}

QString KeyKind::label() const
{
    switch (format) {
    case KeyFormat::ForeignSlidingLog:
        return QStringLiteral("sliding-log (%1 scores)").arg(scoreUnitName(unit));
    case KeyFormat::CounterWindow:
        return windowSeconds ? QStringLiteral("counter window (%1s)").arg(windowSeconds) : QStringLiteral("counter window");
    case KeyFormat::ForeignTokenBucket:
        return QStringLiteral("token-bucket (foreign)");
    case KeyFormat::Library:
        return reader->label();
    case KeyFormat::Other:
        return QStringLiteral("other");
    default:
        return algorithmName(*algorithm());
    }
}

QString notOursToDecide(const QString &shownKey, const KeyKind &kind)
{
    switch (kind.format) {
    case KeyFormat::Library:
    case KeyFormat::ForeignSlidingLog:
    case KeyFormat::CounterWindow:
    case KeyFormat::ForeignTokenBucket:
        return QStringLiteral("'%1' is a %2 limiter that another service keeps: its library decides on it, and Ratescope's scripts "
                              "never write to it (peek and inspect read it)")
            .arg(shownKey, kind.label());
    default:
        return {};
    }
}

bool isTicketMember(const QByteArray &member)
{
    // <length code><ticket>[:<cost>], the code being k nines and a digit c, for 9k+c digits.
    const qsizetype colon = member.indexOf(':');
    const QByteArray ticket = colon < 0 ? member : member.left(colon);
    if (colon >= 0) {
        const QByteArray cost = member.mid(colon + 1);
        if (cost.isEmpty() || cost.size() > 13 || !std::all_of(cost.begin(), cost.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return false;
    }
    qsizetype nines = 0;
    while (nines < ticket.size() && ticket[nines] == '9')
        ++nines;
    if (nines >= ticket.size())
        return false;
    const char c = ticket[nines];
    if (c < '0' || c > '8' || (nines == 0 && c == '0'))
        return false;
    const qsizetype digits = 9 * nines + (c - '0');
    const QByteArray rest = ticket.mid(nines + 1);
    return rest.size() == digits && std::all_of(rest.begin(), rest.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

QByteArrayList FormatReader::keys(const KeyKind &kind, qint64 nowUs) const
{
    Q_UNUSED(nowUs);
    return {kind.base};
}

std::optional<KeyKind> FormatReader::nameKind(const QByteArray &name, const LimitSpec *spec, bool declared) const
{
    Q_UNUSED(name);
    Q_UNUSED(spec);
    Q_UNUSED(declared);
    return std::nullopt;
}

} // namespace ratescope
