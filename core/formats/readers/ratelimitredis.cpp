// express-rate-limit's Redis store, rate-limit-redis (Node.js): one string counter per
// client, "<prefix><key>" with the default prefix "rl:", incremented by every request
// (allowed or not) and given the window as its TTL by the first.
#include "formats/readers/readersupport.h"

namespace ratescope::formats {

namespace {

class RateLimitRedis final : public TtlCounterFormat {
public:
    QString name() const override { return QStringLiteral("rate-limit-redis"); }
    QString label() const override { return QStringLiteral("express-rate-limit (rate-limit-redis)"); }
    QString library() const override { return QStringLiteral("express-rate-limit with rate-limit-redis (Node.js)"); }
    QString keyShape() const override { return QStringLiteral("rl:<key>"); }

protected:
    bool keyFits(const QByteArray &key, bool declared, KeyKind &) const override
    {
        QByteArray rest;
        return declared || stripPrefix(key, {"rl:"}, &rest);
    }
};

} // namespace

const FormatReader &rateLimitRedisFormat()
{
    static const RateLimitRedis f;
    return f;
}

} // namespace ratescope::formats
