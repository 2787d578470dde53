// redis-cell (a Redis module, Rust): CL.THROTTLE <key> <max_burst> <count per period> <period>
// [<quantity>] keeps GCRA's theoretical arrival time in the key itself, a string of integer
// nanoseconds since the Unix epoch, with a TTL until it is no longer ahead of now. The key is
// the caller's own name, so only a policy declares it (--format redis-cell): limit =
// max_burst + 1 and window = period x (max_burst + 1) / count give the same emission interval
// and tolerance as CL.THROTTLE's arguments.
#include "formats/readers/readersupport.h"

namespace ratescope::formats {

namespace {

class RedisCell final : public TatStringFormat {
public:
    QString name() const override { return QStringLiteral("redis-cell"); }
    QString label() const override { return QStringLiteral("redis-cell GCRA"); }
    QString library() const override { return QStringLiteral("redis-cell module (CL.THROTTLE)"); }
    QString keyShape() const override { return QStringLiteral("<key> (a policy declares it)"); }

    bool match(const QByteArray &key, const Reply &sample, qint64 nowUs, bool declared, KeyKind &kind) const override
    {
        if (!declared) // only a policy names it
            return false;
        const auto tat = tatUs(sample);
        if (!tat || !nearNow(*tat, nowUs))
            return false;
        kind.base = key;
        return true;
    }

protected:
    std::optional<qint64> tatUs(const Reply &value) const override
    {
        // whole µs from integer ns (a double of nanoseconds since 1970 is only good to 256 ns)
        const auto ns = integerReply(value);
        return ns ? std::optional<qint64>(*ns / 1000) : std::nullopt;
    }
};

} // namespace

const FormatReader &redisCellFormat()
{
    static const RedisCell f;
    return f;
}

} // namespace ratescope::formats
