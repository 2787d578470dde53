// The Lookup page's work: one pass of core's customer lookup (the policies and the namespace's
// settings read first, so a page learns in the same round whether a reason is required), and
// a temporary limit granted to each limiter of a lookup, audited one entry each with its reason.
#pragma once

#include "admin/metadatanamespace.h"
#include "admin/policy.h"
#include "keys/lookup.h"

#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

struct LookupPass {
    LookupResult result;
    bool requireReason = false; // the namespace requires a reason for every change
};

// Reads the policies and the settings, then looks the identifier up (core's lookupLimiters).
// Throws UsageError for an empty identifier, the server's error as it comes.
LookupPass runLookupPass(Connection &c, const MetadataNamespace &ns, const QByteArray &id);

struct GrantOutcome {
    std::vector<Override> granted;  // as stored, one per limiter a policy covers
    QByteArrayList skipped;         // limiters no policy covers: an override would change nothing
};

// The same temporary limit (limit, windowUs: 0 keeps the policy's) for forUs on each of keys
// (LookupRow::key: a group's base covers the group), as `override set --lookup`: the audit is
// checked writable first (refused, with the reason required when the namespace says so: nothing
// is changed), then each override is set and audited with reason. keys with an empty entry in
// covered (no policy) are skipped. Throws as the stores do.
GrantOutcome grantLookupOverrides(Connection &c, const MetadataNamespace &ns, const QByteArrayList &keys,
                                  const std::vector<bool> &covered, qint64 limit, qint64 windowUs, qint64 forUs,
                                  const QString &actor, const QString &op, const QString &reason);

} // namespace ratescope::ui
