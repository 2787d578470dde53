// Hot limiters: which limiters take the most admitted requests right now, which are the
// fullest, and which are denying now, found in one bounded pass over the keyspace (the CLI's
// `top`, the console's Hot view). Reading only: nothing is written.
#pragma once

#include "keyformat.h"
#include "policy.h"
#include "usage.h"

#include <functional>
#include <optional>
#include <vector>

namespace ratescope {

class Connection;

struct HotOptions {
    QByteArray match = "*";
    qint64 intervalUs = 1000000; // the span admitted requests are counted over
    // Above this many keys (DBSIZE, summed over the masters) the pass reads a sample of this
    // many keys, SCAN's first ones, and says so.
    qint64 sampleAbove = 200000;
    std::vector<Policy> policies;
    QByteArray ns = "ratescope:"; // Ratescope's own metadata under this prefix is left out
    std::optional<qint64> nowUs;  // the clock logs are read against; default: the server's TIME
    int scanCount = 1000;         // SCAN COUNT per page
    // Peek every limiter that has limits (fill, denying now). Off, only the counts are read:
    // fill and denying are then known for none until readUsage() is asked for some (the
    // ones shown after ranking by rate).
    bool readUsage = true;
};

enum class HotOrder { Rate, Fill, DenyingNow };
HotOrder parseHotOrder(const QString &name); // "rate", "fill", "denied-now"; UsageError otherwise
QString hotOrderName(HotOrder order);

struct HotLimiter {
    QByteArray key; // counter windows: the base, for the whole limiter
    KeyClass kind;
    QString master; // on a cluster, the master holding it ("host:port"); empty otherwise
    QString policy; // the policy whose limits apply, if any
    std::optional<LimitSpec> spec;
    // Admitted requests counted over `spanUs`, between the pass's two reads of the limiter
    // (one during the scan, another an interval later): log entries with times in between,
    // or how much a counter grew (a window's count; tokens taken beyond the refill; a GCRA's
    // arrival time moved on, in emission intervals). In a snapshot (explicit now) a log counts
    // the interval before it and counters are nullopt. nullopt too where the stored state
    // cannot say without limits (token buckets and GCRA without a policy, foreign token buckets).
    std::optional<qint64> admitted;
    qint64 spanUs = 0;
    std::optional<Usage> usage; // how full it is now; needs limits

    // Admitted requests per second over the span; nullopt when not known.
    std::optional<double> rate() const;
    // used / limit now (above 1 when over its limit); nullopt without limits.
    std::optional<double> fill() const;
    // Whether a request of the limits' cost would be denied now.
    bool denyingNow() const { return usage && !usage->decision.allowed; }
};

struct HotMaster {
    QString address; // "host:port"; the one server's on a standalone
    qint64 keys = 0; // DBSIZE
    qint64 limiters = 0;
    double rate = 0; // admitted requests per second, summed over its limiters
    qint64 denying = 0;
};

struct HotPass {
    std::vector<HotLimiter> limiters; // every limiter found (HotScanner::rank sorts them)
    qint64 keysInDatabase = 0;        // DBSIZE, summed over the masters
    qint64 scanned = 0;               // keys looked at
    bool sampled = false;             // stopped at sampleSize keys of keysInDatabase
    qint64 sampleSize = 0;
    qint64 intervalUs = 0;
    qint64 nowUs = 0; // the second read's clock
    std::vector<HotMaster> masters;
    bool usageRead = true; // fill and denying known for every limiter with limits (masters' denying too)
    bool cancelled = false;
};

class HotScanner {
public:
    HotScanner(Connection &connection, HotOptions options);

    // Scans (SCAN pages of TYPE + format samples), reads every counter-like limiter once,
    // calls betweenReads (default: waits until one interval has passed since that read
    // started), then reads every limiter again: counters' growth, logs' entries in between,
    // and how full each limiter with limits is. A snapshot (explicit now) reads once and
    // waits for nothing. progress(keys scanned so far)
    // returning false cancels (the pass then holds what was read, cancelled set).
    HotPass run(const std::function<void()> &betweenReads = {}, const std::function<bool(qint64)> &progress = {});

    // Sorts busiest first for the order (ties: by key), keeping at most max; denied-now keeps
    // only the limiters denying now (by rate).
    static void rank(std::vector<HotLimiter> &limiters, HotOrder order, qint64 max);
    // Peeks the limiters that have limits (for a pass made without readUsage).
    static void readUsage(Connection &connection, std::vector<HotLimiter> &limiters, qint64 nowUs);

private:
    Connection &m_connection;
    HotOptions m_options;
};

} // namespace ratescope
