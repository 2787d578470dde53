// The Burst tab's reads: the limits in force at the key, the look before firing at it, and
// the remaining quota sampled while a burst runs.
#pragma once

#include "admin/metadatanamespace.h"
#include "limitqueries.h"
#include "keys/keydetails.h"
#include "limiters/algorithm.h"

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

// What the key holds before a burst at it with `spec`: its details (its usage read under spec,
// without writing), or why it is not ours to write (refusal, empty when it is).
struct BurstPreflight {
    KeyDetails details;
    QString refusal;
};
BurstPreflight readBurstPreflight(Connection &c, const MetadataNamespace &ns, const QByteArray &key, const LimitSpec &spec);

// The key's remaining quota under spec, read without writing (throws WRONGTYPE for a key of
// another format).
qint64 readRemainingQuota(Connection &c, const QByteArray &key, const LimitSpec &spec);

} // namespace ratescope::ui
