#include "burstqueries.h"

#include "admin/policy.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "formats/recognition.h"
#include "formats/usage.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "limiters/limiter.h"
#include "redis/connection.h"

namespace ratescope::ui {

BurstPreflight readBurstPreflight(Connection &c, const MetadataNamespace &ns, const QByteArray &key, const LimitSpec &spec)
{
    const std::vector<Policy> policies = PolicyStore(c, ns).list();
    KeyDetails d = readKeyDetails(c, {key}, policies, ns).front();
    const auto policy = matchPolicy(policies, key);
    if (!d.exists()) {
        // The name of another library's limiter whose keys carry their window (Kong, Upstash...)
        const KeyKind named = classifyKey(c, key, serverTimeUs(c), policy ? policy->scoreUnit : ScoreUnit::Auto, spec,
                                          policy ? policy->format : QString());
        if (named.format == KeyFormat::Library)
            d.kind = named;
    }
    BurstPreflight out;
    out.refusal = notOursToDecide(displayKey(key), d.kind);
    if (out.refusal.isEmpty())
        out.refusal = writeRefusal(c, ns, key, policy ? &*policy : nullptr, spec);
    if (d.kind.isLimiter() && out.refusal.isEmpty()) {
        // How full it is under the limits the burst will use, read without writing.
        try {
            d.usage = peekAnyFormat(c, key, d.kind, spec, serverTimeUs(c));
        } catch (const Error &) {
            // what readKeyDetails found stands
        }
    }
    out.details = std::move(d);
    return out;
}

qint64 readRemainingQuota(Connection &c, const QByteArray &key, const LimitSpec &spec)
{
    return Limiter(c).peek(key, spec).remaining;
}

} // namespace ratescope::ui
