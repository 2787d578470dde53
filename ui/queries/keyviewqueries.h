// A key view's read: everything one refresh shows, for one now, in one request.
#pragma once

#include "admin/policy.h"
#include "formats/recognition.h"
#include "keys/shards.h"
#include "limiters/limiter.h"

#include <QJsonObject>

#include <optional>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

// What one refresh read, on the worker, for one now.
struct KeyRead {
    qint64 nowUs = 0;       // the time the state is shown for (frozen, or the server's)
    qint64 serverNowUs = 0; // the server's clock: overrides expire in real time
    KeyKind kind;          // at nowUs
    std::optional<Policy> policy;
    std::optional<Override> override;
    std::optional<LimitSpec> spec; // the limits in force (override applied)
    QJsonObject inspected;         // inspectKey: type, ttl, memory, encoding, state, decision
    QString placement;             // a cluster's key: "slot 1234 on 127.0.0.1:7001"
    // A key that does not exist but is the base of a sharded limiter: the group, read whole.
    std::optional<ShardGroupState> shards;
};

// The clock, the limits in force, the format, then the state and the peek for that now, all
// through the core's inspection. Nothing is written. frozenNow: the time to show the state for
// (tests), else the server's.
KeyRead readKey(Connection &c, const QByteArray &key, const QByteArray &ns, std::optional<qint64> frozenNow);

} // namespace ratescope::ui
