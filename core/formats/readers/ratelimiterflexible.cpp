// rate-limiter-flexible (Node.js), RateLimiterRedis: one string counter per key,
// "<keyPrefix>:<key>" with the default prefix "rlflx", the points consumed in a window that
// starts at the first request and ends when the key expires (duration). Rejected requests
// are counted too, so the value can exceed the points.
#include "formats/readers/readersupport.h"

namespace ratescope::formats {

namespace {

class RateLimiterFlexible final : public TtlCounterFormat {
public:
    QString name() const override { return QStringLiteral("rate-limiter-flexible"); }
    QString label() const override { return QStringLiteral("rate-limiter-flexible"); }
    QString library() const override { return QStringLiteral("rate-limiter-flexible (Node.js)"); }
    QString keyShape() const override { return QStringLiteral("rlflx:<key>"); }

protected:
    bool keyFits(const QByteArray &key, bool declared, KeyKind &) const override
    {
        QByteArray rest;
        return declared || stripPrefix(key, {"rlflx:"}, &rest);
    }
};

} // namespace

const FormatReader &rateLimiterFlexibleFormat()
{
    static const RateLimiterFlexible f;
    return f;
}

} // namespace ratescope::formats
