// The window-boundary test: `limit` requests just before a window boundary and `limit` just
// after it, to show what a limiter admits across the boundary (fixed window 2x, sliding log 1x).
#pragma once

#include "limiters/algorithm.h"

#include <QByteArray>
#include <QJsonObject>

#include <functional>

namespace ratescope {

class Connection;

struct BoundaryResult {
    qint64 requestsPerBurst = 0;
    qint64 firstAllowed = 0;  // before the boundary
    qint64 secondAllowed = 0; // after it
    qint64 admitted() const { return firstAllowed + secondAllowed; }
    // Server clock (TIME), microseconds since the epoch.
    qint64 boundaryUs = 0;
    qint64 firstStartUs = 0, firstEndUs = 0;
    qint64 secondStartUs = 0, secondEndUs = 0;

    QJsonObject toJson() const;
};

// Windows are clock-aligned on the server's clock (the scripts read TIME), so the scenario
// reads TIME too: it parks until just before the next multiple of the window since the
// epoch, with enough lead for the first burst to finish in time (estimated from a few
// peeks), fires, waits until the server's clock is past the boundary, and fires again. The
// server's TIME around each burst proves the timing; when it cannot be proven the run throws
// UsageError (the window is too short for the limit) rather than report a misleading number.
class BoundaryScenario {
public:
    // spec.cost must be 1. The key must not exist: old state would blur the result.
    BoundaryScenario(Connection &connection, QByteArray key, LimitSpec spec);

    // Blocks for up to about one window plus the two bursts. Throws UsageError (bad input,
    // existing key, timing not met), ConnectionError, ReplyError.
    BoundaryResult run();
    // The longest the scenario parks before its first burst: a window whose next boundary is
    // further (a day's, a year's) is refused before anything is sent.
    static constexpr qint64 kMaxWaitUs = 3660LL * 1000000; // an hour and a minute: any window up to 1h fits
    // Told once, before parking, how long it will wait and for which boundary (server clock, us).
    std::function<void(qint64 waitUs, qint64 boundaryUs)> onWait;
    // Requests fired so far, also when run() threw after firing (for the audit trail).
    qint64 requestsSent() const { return m_sent; }

private:
    qint64 serverTimeUs();
    qint64 estimateBurstUs();
    qint64 fire();
    void waitForServerTime(qint64 targetUs);

    Connection &m_connection;
    QByteArray m_key;
    LimitSpec m_spec;
    qint64 m_sent = 0;
};

} // namespace ratescope
