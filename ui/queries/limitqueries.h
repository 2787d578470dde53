// The limits as pages read them: the policies, and the limits in force at one key.
#pragma once

#include "admin/limitsinforce.h"
#include "admin/metadatanamespace.h"
#include "admin/policy.h"

#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

// The policies in the namespace (throws when they cannot be read).
std::vector<Policy> readPolicies(Connection &c, const MetadataNamespace &ns);

// The policies, then the limits in force at key (policy, override), through core's resolver.
EffectiveLimits readLimitsInForceAt(Connection &c, const MetadataNamespace &ns, const QByteArray &key);

} // namespace ratescope::ui
