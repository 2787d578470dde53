#include "limitqueries.h"

#include "redis/connection.h"

namespace ratescope::ui {

std::vector<Policy> readPolicies(Connection &c, const MetadataNamespace &ns)
{
    return PolicyStore(c, ns).list();
}

EffectiveLimits readLimitsInForceAt(Connection &c, const MetadataNamespace &ns, const QByteArray &key)
{
    return readLimitsInForce(c, ns, readPolicies(c, ns), key);
}

} // namespace ratescope::ui
