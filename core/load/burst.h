// Test bursts: fire many decisions at one limiter, as fast as Redis allows or at a set rate,
// and report exactly what it admitted and how long each decision took.
#pragma once

#include "limiters/algorithm.h"
#include "admin/audit.h"
#include "redis/connectionoptions.h"
#include "load/latencyhistogram.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace ratescope {

struct BurstConfig {
    QByteArray key;
    LimitSpec spec;                   // algorithm, limit, window, cost of every request
    std::optional<qint64> requests;   // stop after this many requests ...
    std::optional<qint64> durationUs; // ... or this long after the start, whichever comes first
    double rate = 0;                  // requests/s over all connections, open loop; 0: as fast as possible
    int connections = 1;              // each on its own thread
    int pipeline = 1;                 // requests per round trip on one connection
    // A sharded limiter, as services shard a hot one: shards > 1 spreads the requests over
    // the keys <key>:<shardFrom> .. <key>:<shardFrom + shards - 1>, each limited to its share
    // of the limit (limit / shards, the first limit % shards shards one more). Request n (0,
    // 1, ...) goes to shard n % shards (round robin) or to shardForId(its id, the decimal n).
    int shards = 0;
    enum class ShardRouting { Hash, RoundRobin };
    ShardRouting shardBy = ShardRouting::Hash;
    int shardFrom = 0; // 0 or 1

    static constexpr int kMaxConnections = 256;
    static constexpr int kMaxPipeline = 10000;
    static constexpr int kMaxShards = 1024;

    QByteArray shardKey(int i) const;   // <key>:<shardFrom + i>
    qint64 shardLimit(int i) const;     // shard i's share of the limit
    int shardFor(qint64 request) const; // the shard request n goes to

    // Throws UsageError naming the bad value.
    void validate() const;
    // The parameters, for the audit trail ("before").
    QJsonObject toJson() const;
};

// The shard a request id goes to among n shards: FNV-1a (64 bits) of its bytes, modulo n. The
// same for `check --shards` and sharded bursts, and stable across runs and machines.
int shardForId(const QByteArray &id, int n);
QString shardRoutingName(BurstConfig::ShardRouting routing); // "hash", "round-robin"

// One shard of a sharded burst: its key, share of the limit, and what it was sent and did.
struct BurstShard {
    QByteArray key;
    qint64 limit = 0;
    qint64 sent = 0;
    qint64 allowed = 0;
    qint64 denied = 0;
};

// Decisions that completed in one slice of the burst's timeline (every 100 ms).
struct BurstSlice {
    qint64 endUs = 0; // since the start; the slice covers (previous endUs, endUs]
    qint64 allowed = 0;
    qint64 denied = 0;
    qint64 errors = 0;
    qint64 unknown = 0; // sent, no reply (see BurstSummary::unknown)
};

// One request of a burst as it ended, for a record of every decision (BurstEngine::
// setDecisionCallback). Times are this machine's wall clock in microseconds since the epoch,
// which is the server's clock when both run on one host: the server decided somewhere between
// sentUs and timeUs.
struct BurstDecision {
    enum class Outcome : quint8 {
        Allowed,
        Denied,
        Error,   // an error reply (or a reply that is no decision): not admitted
        Unknown, // sent, no reply (timeout, drop): it may have been admitted
    };
    qint64 sentUs = 0; // written to the socket (the pipeline's write that carried it)
    qint64 timeUs = 0; // its reply read, or (Unknown) the loss noticed
    int shard = 0;     // which shard's key (0 when the burst is not sharded)
    Outcome outcome = Outcome::Unknown;
    // The decision's, for Allowed and Denied (0 otherwise): after the decision.
    qint64 used = 0;
    qint64 remaining = 0;
    qint64 retryAfterUs = 0;
    qint64 resetAfterUs = 0;
};
QString burstOutcomeName(BurstDecision::Outcome outcome); // "allowed", "denied", "error", "unknown"

// What the progress callback sees. The timeline is valid during the call only.
struct BurstProgress {
    qint64 elapsedUs = 0;
    qint64 sent = 0;
    qint64 allowed = 0;
    qint64 denied = 0;
    qint64 errors = 0;
    qint64 unknown = 0;
    qint64 notSent = 0;
    std::span<const BurstSlice> timeline;
};

struct BurstSummary {
    // Every request written to a socket ends as exactly one of allowed, denied, errors or
    // unknown: sent == allowed + denied + errors + unknown. Requests that could not be written
    // at all (the connection was down) are notSent, never part of sent.
    qint64 sent = 0;
    qint64 allowed = 0;
    qint64 denied = 0;
    qint64 errors = 0;           // answered with an error reply (or a reply that is no decision)
    qint64 unknown = 0;          // sent, but the reply never came (timeout, drop): may have been admitted
    qint64 notSent = 0;          // never written: the connection could not be (re)established
    qint64 connectionErrors = 0; // unknown + notSent: lost to a failed connection
    QString firstError;          // the earliest error's text, empty when none
    bool cancelled = false;
    // The server could not be reached again for a few seconds: the burst stopped, and the
    // requests it had still to send (when their number is known) are counted in notSent.
    bool gaveUp = false;
    qint64 elapsedUs = 0;     // from the start to the last reply
    LatencyHistogram latency; // from each request's intended send time to its reply
    std::vector<BurstSlice> timeline;
    std::vector<BurstShard> shards; // a sharded burst: each shard, in order

    // Decisions (allowed + denied) per second.
    double throughput() const;
    // The JSON summary of docs/cli.md plus p999, min, mean, connection_errors, first_error,
    // cancelled. Without the timeline.
    QJsonObject toJson() const;
};

// The timeline as CSV: "elapsed_ms,allowed,denied,errors,unknown", one line per slice.
QByteArray timelineCsv(std::span<const BurstSlice> timeline);

// The audit trail's record of one burst or boundary run, the same whoever fired it (the CLI
// or the console), so the trail reads alike: action "burst", the key (as displayKey shows it,
// like the other entries), the parameters as "before", the summary (or what went wrong) as
// "after", and the requests sent as the count.
AuditEntry burstAuditEntry(const QByteArray &key, const QJsonObject &parameters, const QJsonObject &outcome, qint64 sent);
// A burst's record: its configuration before, its summary after.
AuditEntry burstAuditEntry(const BurstConfig &config, const BurstSummary &summary);
// The boundary scenario's parameters ("before" of its record).
QJsonObject boundaryAuditParameters(const LimitSpec &spec);

// Runs bursts. One connection per thread, each connected and with the script loaded before
// the clock starts. Up to `pipeline` requests go out in one write and all their replies are
// read before the next write, as redis-benchmark -P does, so the two compare like for like.
//
// Open loop: with a rate, request i is due at start + i / rate whatever the server does, and
// its latency is measured from that intended time, so a stalled server shows as latency
// instead of hiding behind fewer requests (coordinated omission). Without a rate, a request
// is due when it is sent.
//
// Faults are counted, never fatal and never blindly retried: a request whose connection
// failed before its reply may have been counted by the server, so it is an error, not sent
// again. Only an explicit NOSCRIPT or "Function not found" reply (nothing ran) loads the
// script and sends that request once more (as EVALSHA; requests go as FCALL where this build's
// functions library is loaded). After a failure the connection reconnects for its next requests;
// while the server is down those fail fast, so the burst still ends promptly.
class BurstEngine {
public:
    using ProgressCallback = std::function<void(const BurstProgress &)>;
    using DecisionCallback = std::function<void(std::span<const BurstDecision>)>;
    static constexpr int kProgressIntervalMs = 100;

    BurstEngine(ConnectionOptions options, BurstConfig config);

    // Called on the thread that runs the burst, every 100 ms and once at the end.
    void setProgressCallback(ProgressCallback callback) { m_progress = std::move(callback); }
    // Every request written to a socket, once it has ended (allowed, denied, error or unknown;
    // requests never written are not in it), in the order of timeUs: called on the thread that
    // runs the burst, every 100 ms with the requests that ended since the last call, and once at
    // the end. Set before run(); without it nothing is recorded.
    void setDecisionCallback(DecisionCallback callback) { m_decisions = std::move(callback); }

    // Blocks until the burst is over. Throws UsageError for a bad configuration and
    // ConnectionError/ReplyError when a connection cannot be set up (nothing was sent then);
    // once the clock runs, failures are counted in the summary instead.
    BurstSummary run();

    // From any thread (also from the progress callback): no new requests go out; the
    // replies of those in flight are still awaited and counted. run() then returns.
    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    bool isCancelled() const { return m_cancelled.load(std::memory_order_relaxed); }

private:
    ConnectionOptions m_options;
    BurstConfig m_config;
    ProgressCallback m_progress;
    DecisionCallback m_decisions;
    std::atomic<bool> m_cancelled{false};
};

} // namespace ratescope
