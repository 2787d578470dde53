// bucket4j (Java) with a Redis proxy manager (Lettuce, Jedis, Redisson): the bucket's whole
// state serialized by bucket4j into one binary string under the caller's key. Ratescope
// recognises it when a policy declares it (--format bucket4j) and the value is binary, labels
// it, lists it and resets it; it never decodes or modifies it.
#include "formatrules.h"

namespace ratescope::formats {

namespace {

bool isBinary(const QByteArray &v)
{
    return std::any_of(v.begin(), v.end(), [](char c) { return uchar(c) < 0x09 || (uchar(c) > 0x0d && uchar(c) < 0x20); });
}

class Bucket4j final : public LimiterFormat {
public:
    QString name() const override { return QStringLiteral("bucket4j"); }
    QString label() const override { return QStringLiteral("bucket4j (opaque)"); }
    QString library() const override { return QStringLiteral("bucket4j Redis proxy managers (Java)"); }
    QString keyShape() const override { return QStringLiteral("<key> (a policy declares it; never decoded)"); }
    QByteArray type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return std::nullopt; }
    bool readable() const override { return false; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool declared, KeyClass &kind) const override
    {
        if (!declared || sample.type() != Reply::Type::String || !isBinary(sample.bytes()))
            return false;
        kind.base = key;
        return true;
    }

    std::vector<Command> read(const KeyClass &, const LimitSpec *, qint64) const override { return {}; }

    Usage usage(const KeyClass &, const std::vector<Reply> &, const LimitSpec &, qint64) const override
    {
        throw UnexpectedReplyError(QStringLiteral("bucket4j's state is never decoded"));
    }

    QJsonObject state(const KeyClass &, const std::vector<Reply> &, qint64) const override { return {{QStringLiteral("opaque"), true}}; }
};

} // namespace

const LimiterFormat &bucket4jFormat()
{
    static const Bucket4j f;
    return f;
}

} // namespace ratescope::formats
