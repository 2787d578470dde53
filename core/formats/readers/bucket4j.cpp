// bucket4j (Java) with a Redis proxy manager (Lettuce, Jedis, Redisson, Vert.x, Glide): the
// bucket's configuration and state serialized by bucket4j (InternalSerializationHelper, Java's
// big-endian DataOutputStream) into one binary string under the caller's key, written by
// compare-and-swap, with no TTL unless an expiration strategy is set. The serialization starts
// with int32 format (1, or 2 with a configuration version), int32 1 (the configuration's
// version), int32 N (bandwidths), int32 1 (the first bandwidth's version): that header is
// recognised by itself; any binary string is when a policy declares it (--format bucket4j).
// Ratescope labels it, lists it and resets it; it never decodes or modifies it.
#include "formats/readers/readersupport.h"

namespace ratescope::formats {

namespace {

bool isBinary(const QByteArray &v)
{
    return std::any_of(v.begin(), v.end(), [](char c) { return uchar(c) < 0x09 || (uchar(c) > 0x0d && uchar(c) < 0x20); });
}

qint32 int32At(const QByteArray &v, qsizetype at)
{
    return qint32((quint32(uchar(v[at])) << 24) | (quint32(uchar(v[at + 1])) << 16) | (quint32(uchar(v[at + 2])) << 8) |
                  quint32(uchar(v[at + 3])));
}

// 00 00 00 01|02  00 00 00 01  00 00 00 N (1..64)  00 00 00 01
bool hasSerializationHeader(const QByteArray &v)
{
    if (v.size() < 16)
        return false;
    const qint32 format = int32At(v, 0), bandwidths = int32At(v, 8);
    return (format == 1 || format == 2) && int32At(v, 4) == 1 && bandwidths >= 1 && bandwidths <= 64 && int32At(v, 12) == 1;
}

class Bucket4j final : public FormatReader {
public:
    QString name() const override { return QStringLiteral("bucket4j"); }
    QString label() const override { return QStringLiteral("bucket4j (opaque)"); }
    QString library() const override { return QStringLiteral("bucket4j Redis proxy managers (Java)"); }
    QString keyShape() const override { return QStringLiteral("<key> (bucket4j's serialization header; never decoded)"); }
    const char *type() const override { return "string"; }
    std::optional<Algorithm> family() const override { return std::nullopt; }
    bool readable() const override { return false; }

    bool match(const QByteArray &key, const Reply &sample, qint64, bool declared, KeyKind &kind) const override
    {
        if (sample.type() != Reply::Type::String || !(hasSerializationHeader(sample.bytes()) || (declared && isBinary(sample.bytes()))))
            return false;
        kind.base = key;
        return true;
    }

    std::vector<Command> read(const KeyKind &, const LimitSpec *, qint64) const override { return {}; }

    Usage usage(const KeyKind &, const std::vector<Reply> &, const LimitSpec &, qint64) const override
    {
        throw UnexpectedReplyError(QStringLiteral("bucket4j's state is never decoded"));
    }

    QJsonObject state(const KeyKind &, const std::vector<Reply> &, qint64) const override { return {{QStringLiteral("opaque"), true}}; }
};

} // namespace

const FormatReader &bucket4jFormat()
{
    static const Bucket4j f;
    return f;
}

} // namespace ratescope::formats
