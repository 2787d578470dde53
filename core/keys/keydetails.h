// What the console shows about a key beyond its name (type, algorithm, used/limit,
// remaining, TTL, memory): read for the key panel's rows in view a batch at a time, for the
// monitor, the reset preview and the burst page.
#pragma once

#include "formats/recognition.h"
#include "admin/limitsinforce.h"
#include "admin/policy.h"
#include "formats/usage.h"

#include <optional>
#include <vector>

namespace ratescope {

class Connection;

struct KeyDetails {
    QByteArray type;    // as TYPE says; "none" when the key is gone
    KeyKind kind;      // the limiter format, if it is one
    qint64 pttlMs = -1; // -1: no expiry; -2: gone; -3: not known (PTTL refused)
    QString placement;  // a cluster's key: "slot 1234 on 127.0.0.1:7001" (key pages only)
    qint64 memory = -1; // MEMORY USAGE; -1 when the server would not say
    QString policy;     // the policy that applies, if any
    QByteArray policyMatch;
    std::optional<LimitSpec> spec; // the limits in force (an override applied)
    bool overridden = false;
    LimitSource source = LimitSource::None; // where the limits come from (admin/limitsinforce.h)
    std::optional<Usage> usage; // how full it is now (read without writing)
    QString problem;            // why there is no usage, in the server's words when it gave some
    QByteArray metadata;        // under Ratescope's namespace: "policies", "override", "audit", ...

    bool exists() const { return type != "none"; }
    qint64 used() const { return usage ? usage->usedNow : -1; }
    qint64 limit() const { return usage ? usage->decision.limit : spec ? spec->limit : -1; }
    qint64 remaining() const { return usage ? std::max<qint64>(0, usage->decision.limit - usage->usedNow) : -1; }
};

// Two pipelined round trips for a few keys (the rows a view shows, up to 500): TYPE, PTTL,
// MEMORY USAGE, overrides and every type's samples that tell limiter formats apart; then
// usage (scripts' peek, or counted here for foreign formats). More keys take three: the
// samples of each key's own type in a round between (as readKeyRecords reads them for the
// key scanner). Nothing is written. ns is Ratescope's metadata prefix
// ("ratescope:"). Throws the core's ConnectionError when the connection fails; per-key problems (WRONGTYPE, NOPERM, ...) are reported in
// KeyDetails::problem.
std::vector<KeyDetails> readKeyDetails(Connection &connection, const std::vector<QByteArray> &keys, const std::vector<Policy> &policies,
                                       const MetadataNamespace &ns);

} // namespace ratescope
