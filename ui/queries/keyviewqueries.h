// A key view's read: everything one refresh shows, for one now, in one request.
#pragma once

#include "admin/policy.h"
#include "formats/recognition.h"
#include "keys/shards.h"
#include "limiters/limiter.h"
#include "logqueries.h"

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
    // A key drawn as a log (drawnAsLog), read with a log view's settings: its window, peeks
    // and page, read along with the key's state.
    std::optional<LogRead> log;
};

// Whether the key view draws the key as a sliding log (its log view): Ratescope's or another
// service's log, or another library's sliding log kept in a sorted set.
bool drawnAsLog(const KeyKind &kind, const QString &type);

// The clock, the limits in force, the format, then the state and the peek for that now, all
// through the core's inspection. Nothing is written. frozenNow: the time to show the state for
// (tests), else the server's. With `log` (a log view's settings: history, time filter, page,
// what its last read found), a key drawn as a log is read for its log view as well, in the
// same round trips: 2 after the click, whatever the key.
KeyRead readKey(Connection &c, const QByteArray &key, const QByteArray &ns, std::optional<qint64> frozenNow,
                const std::optional<LogReadRequest> &log = std::nullopt);

} // namespace ratescope::ui
