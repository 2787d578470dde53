// What the monitor reads from Redis: the pinned keys' classification (when pinned, and again
// when a read fails), and each tick's usage in one pipelined round trip with the server's
// clock in it. Runs on the worker; nothing is written.
#pragma once

#include "keys/keydetails.h"
#include "formats/usage.h"

#include <optional>
#include <vector>

namespace ratescope {
class Connection;
}

namespace ratescope::ui {

struct MonitorRound {
    qint64 nowUs = 0;                        // the time the limiters were read at
    std::optional<qint64> serverTimeUs;      // TIME from the same pipeline (absent when refused)
    std::vector<std::optional<Usage>> usage; // per target; nullopt: not readable as classified
    std::vector<QString> problems;           // per target: why not, in the server's words
    int roundTrips = 0;                      // 1, plus one per counter window and script reload
};

// One pipeline: TIME, then per target Ratescope's peek (FCALL_RO or EVALSHA_RO), or ZCOUNT and the entry
// whose expiry frees room for a foreign log. Counter windows and a script the server has
// not cached yet take one round trip more each (core's peekAnyFormat / Limiter::peek).
MonitorRound readMonitorRound(Connection &connection, const std::vector<UsageTarget> &targets, qint64 nowUs);

// The kind a pinned key is read as: its own; for a key gone (or not created yet) under limits,
// what its policy says it is, at full quota.
KeyKind pinKind(const KeyDetails &details);

struct PinClassification {
    std::vector<KeyDetails> details;
    std::optional<qint64> serverTimeUs;
};

// TIME, the policies under ns, then readKeyDetails for the keys.
PinClassification classifyPins(Connection &connection, const std::vector<QByteArray> &keys, const QByteArray &ns);

} // namespace ratescope::ui
