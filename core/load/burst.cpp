#include "load/burst.h"

#include "redis/connection.h"
#include "base/duration.h"
#include "base/errors.h"
#include "base/keytext.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "keys/shards.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <latch>
#include <limits>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace ratescope {

namespace {

using Clock = std::chrono::steady_clock;
using Nanos = qint64; // steady-clock time in nanoseconds

constexpr Nanos kNever = std::numeric_limits<Nanos>::max();
// How long a sleeping connection goes without looking at the cancel flag.
constexpr Nanos kCancelPollNs = 20'000'000;
// A connection that cannot be re-established waits before trying again (25 ms, doubling to
// 400 ms), and the burst gives up once one has failed to reconnect for this long: the rest
// of the requests are never sent, instead of being counted off one failed connect at a time.
constexpr Nanos kReconnectFirstWaitNs = 25'000'000;
constexpr Nanos kReconnectMaxWaitNs = 400'000'000;
constexpr Nanos kGiveUpAfterNs = 3'000'000'000;

Nanos nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

void sleepUntil(Nanos t)
{
    std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(t)));
}

qint64 roundedUs(Nanos ns)
{
    return (ns + 500) / 1000;
}

// Which requests exist and when each is due: one ticket per request, shared by all
// connections, so fast connections take more of an unpaced burst and a paced one keeps
// one global schedule.
class Schedule {
public:
    Schedule(const BurstConfig &config, const std::atomic<bool> &cancelled)
        : m_maxRequests(config.requests.value_or(std::numeric_limits<qint64>::max()))
        , m_durationNs(config.durationUs ? *config.durationUs * 1000 : kNever)
        , m_intervalNs(config.rate > 0 ? 1e9 / config.rate : 0)
        , m_cancelled(cancelled)
    {
    }

    void start(Nanos at)
    {
        m_startNs = at;
        m_endNs = m_durationNs == kNever ? kNever : at + m_durationNs;
    }
    Nanos startNs() const { return m_startNs; }
    bool paced() const { return m_intervalNs > 0; }

    // Up to n tickets to send now (unpaced), numbered from *first; 0 when the burst is over.
    qint64 claimNow(qint64 n, qint64 *first)
    {
        if (over() || nowNs() >= m_endNs)
            return 0;
        *first = m_next.fetch_add(n, std::memory_order_relaxed);
        return *first >= m_maxRequests ? 0 : std::min(n, m_maxRequests - *first);
    }

    // The next ticket and its intended send time (paced); nullopt when the burst is over.
    std::optional<std::pair<qint64, Nanos>> claimNext()
    {
        if (over())
            return std::nullopt;
        const qint64 ticket = m_next.fetch_add(1, std::memory_order_relaxed);
        const Nanos due = m_startNs + Nanos(std::llround(double(ticket) * m_intervalNs));
        if (ticket >= m_maxRequests || due >= m_endNs)
            return std::nullopt;
        return std::pair{ticket, due};
    }

    bool over() const { return m_cancelled.load(std::memory_order_relaxed) || m_gaveUp.load(std::memory_order_relaxed); }

    // The server cannot be reached: the burst ends for every connection.
    void giveUp() { m_gaveUp.store(true, std::memory_order_relaxed); }
    bool gaveUp() const { return m_gaveUp.load(std::memory_order_relaxed); }

    // After giving up: the requests of a burst with a known number of requests that no
    // connection had claimed yet (never sent). 0 when that number is not known (a duration
    // alone bounds an unpaced burst).
    qint64 unclaimed() const
    {
        qint64 total = m_maxRequests;
        if (m_durationNs != kNever) {
            if (!paced())
                return 0;
            total = std::min<qint64>(total, qint64(std::ceil(double(m_durationNs) / m_intervalNs)));
        }
        if (total == std::numeric_limits<qint64>::max())
            return 0;
        return std::max<qint64>(0, total - m_next.load(std::memory_order_relaxed));
    }

private:
    const qint64 m_maxRequests;
    const Nanos m_durationNs;
    const double m_intervalNs;
    const std::atomic<bool> &m_cancelled;
    Nanos m_startNs = 0;
    Nanos m_endNs = kNever;
    std::atomic<qint64> m_next{0};
    std::atomic<bool> m_gaveUp{false};
};

// The requests one connection has ended, for the decision callback: appended on the
// connection's thread, taken on the thread that runs the burst. Each one's end is read from
// the clock under the lock, so whatever is appended after a take ends at or after the time
// that take returns: the takes of every connection merge into one order (DecisionMerger).
class DecisionLog {
public:
    struct Entry {
        Nanos sentNs = 0;
        Nanos endNs = 0;
        BurstDecision decision; // its times are filled in when it is handed on
    };

    void add(Nanos sentNs, const BurstDecision &decision)
    {
        std::lock_guard lock(m_mutex);
        m_entries.push_back({sentNs, nowNs(), decision});
    }
    // Moves the entries into `into`; returns a time at or before which everything appended
    // later ends.
    Nanos take(std::vector<Entry> &into)
    {
        std::lock_guard lock(m_mutex);
        into.insert(into.end(), m_entries.begin(), m_entries.end());
        m_entries.clear();
        return nowNs();
    }

private:
    std::mutex m_mutex;
    std::vector<Entry> m_entries;
};

// Live counts of one connection, read by the progress loop on another thread.
struct alignas(64) Tally {
    std::atomic<qint64> sent{0};
    std::atomic<qint64> allowed{0};
    std::atomic<qint64> denied{0};
    std::atomic<qint64> errors{0};
    std::atomic<qint64> unknown{0};
    std::atomic<qint64> notSent{0};
    // Sharded bursts: per shard, written to the socket, allowed, denied.
    std::unique_ptr<std::atomic<qint64>[]> shardSent, shardAllowed, shardDenied;

    explicit Tally(int shards = 0)
    {
        if (shards > 1) {
            shardSent = std::make_unique<std::atomic<qint64>[]>(size_t(shards));
            shardAllowed = std::make_unique<std::atomic<qint64>[]>(size_t(shards));
            shardDenied = std::make_unique<std::atomic<qint64>[]>(size_t(shards));
        }
    }
    static void add(std::atomic<qint64> &counter, qint64 n) { counter.fetch_add(n, std::memory_order_relaxed); }
    static void addShard(const std::unique_ptr<std::atomic<qint64>[]> &counters, int shard)
    {
        counters[size_t(shard)].fetch_add(1, std::memory_order_relaxed);
    }
};

// One connection of a burst, on its own thread from construction of its Connection to its
// destruction (a Connection belongs to one thread).
class BurstConnection {
public:
    BurstConnection(const ConnectionOptions &options, const BurstConfig &config, Schedule &schedule, Tally &tally, DecisionLog *log)
        : m_options(options)
        , m_config(config)
        , m_script(LimiterScript::forAlgorithm(config.spec.algorithm))
        , m_schedule(schedule)
        , m_tally(tally)
        , m_log(log)
    {
        buildCommands(ScriptCalls::Evalsha);
    }

    // Before the clock starts: connected, the library found or the script cached. Throws.
    void setUp()
    {
        m_connection = std::make_unique<Connection>(m_options);
        m_connection->connect();
        if (LimiterScript::callsOn(*m_connection) == ScriptCalls::Functions)
            buildCommands(ScriptCalls::Functions);
        else
            m_script.load(*m_connection);
    }
    void tearDown() { m_connection.reset(); }

    // Until the schedule runs out or the burst is cancelled. Never throws.
    void run()
    {
        for (;;) {
            if (!m_resend.empty()) {
                m_batch.swap(m_resend);
                m_resend.clear();
            } else if (!collectDue()) {
                break;
            }
            roundTrip();
        }
        finishedAt = nowNs();
    }

    LatencyHistogram latency;
    qint64 connectionErrors = 0;
    QString firstError;
    Nanos firstErrorAt = kNever;
    Nanos finishedAt = 0;

private:
    struct Request {
        Nanos intendedNs = 0; // 0: as sent (unpaced)
        bool resent = false;  // after a NOSCRIPT or "Function not found": never a second time
        int shard = 0;        // which shard's key (0 when the burst is not sharded)
        Nanos sentNs = 0;     // written to the socket (the last time, for one sent again)
    };

    // One decision command per shard (the key itself when not sharded), its share of the limit.
    void buildCommands(ScriptCalls calls)
    {
        m_shardCommands.clear();
        const int n = std::max(1, m_config.shards);
        for (int i = 0; i < n; ++i) {
            const QByteArray key = m_config.shards > 1 ? m_config.shardKey(i) : m_config.key;
            LimitSpec spec = m_config.spec;
            if (m_config.shards > 1)
                spec.limit = m_config.shardLimit(i);
            m_shardCommands.push_back(m_script.command(key, Limiter::arguments(key, spec, std::nullopt, false), false, calls));
        }
    }
    int shardOf(qint64 ticket) const { return m_config.shards > 1 ? m_config.shardFor(ticket) : 0; }

    bool collectDue();
    bool waitUntilDue(Nanos due);
    void waitBeforeReconnecting();
    void roundTrip();
    void settle(const Request &request, const Reply &reply, Nanos at);
    void reloadScript();
    void countError(const QString &why, bool connection, qint64 n = 1);
    void countLost(const QString &why, std::atomic<qint64> &counter, qint64 n);
    // For the decision callback: how a request written to the socket ended.
    void record(const Request &request, BurstDecision::Outcome outcome, const Decision *decision = nullptr);

    const ConnectionOptions &m_options;
    const BurstConfig &m_config;
    const LimiterScript &m_script;
    std::vector<Command> m_shardCommands; // every request is the same decision (FCALL or EVALSHA) on its shard
    Schedule &m_schedule;
    Tally &m_tally;
    DecisionLog *m_log; // null: nothing is recorded
    std::unique_ptr<Connection> m_connection;
    std::optional<std::pair<qint64, Nanos>> m_claimed; // a paced ticket (number, due) that is not due yet
    Nanos m_unreachableSince = kNever;                 // the first failed reconnect in a row
    Nanos m_reconnectWaitNs = kReconnectFirstWaitNs;
    std::vector<Request> m_batch;
    std::vector<Request> m_resend;
    std::vector<Command> m_commands;
};

// The next round trip's requests: up to `pipeline` of those already due, waiting for the
// first if none is. False when the burst is over for this connection.
bool BurstConnection::collectDue()
{
    m_batch.clear();
    const qint64 room = m_config.pipeline;
    if (!m_schedule.paced()) {
        qint64 first = 0;
        const qint64 n = m_schedule.claimNow(room, &first);
        for (qint64 i = 0; i < n; ++i)
            m_batch.push_back({0, false, shardOf(first + i)});
        return !m_batch.empty();
    }
    while (qint64(m_batch.size()) < room) {
        if (!m_claimed)
            m_claimed = m_schedule.claimNext();
        if (!m_claimed)
            break;
        if (m_claimed->second > nowNs()) {
            if (!m_batch.empty())
                break; // send what is due; this one goes in a later round trip
            if (!waitUntilDue(m_claimed->second))
                break;
        }
        m_batch.push_back({m_claimed->second, false, shardOf(m_claimed->first)});
        m_claimed.reset();
    }
    return !m_batch.empty();
}

// Sleeps until `due`, looking at the cancel flag now and then. False when cancelled.
bool BurstConnection::waitUntilDue(Nanos due)
{
    for (Nanos now = nowNs(); now < due; now = nowNs()) {
        if (m_schedule.over()) {
            m_claimed.reset();
            return false;
        }
        sleepUntil(std::min(due, now + kCancelPollNs));
    }
    return true;
}

// After a failed reconnect: back off, or give the burst up when the server has been
// unreachable for kGiveUpAfterNs.
void BurstConnection::waitBeforeReconnecting()
{
    const Nanos now = nowNs();
    if (m_unreachableSince == kNever)
        m_unreachableSince = now;
    if (now - m_unreachableSince >= kGiveUpAfterNs) {
        m_schedule.giveUp();
        return;
    }
    const Nanos until = now + m_reconnectWaitNs;
    m_reconnectWaitNs = std::min(m_reconnectWaitNs * 2, kReconnectMaxWaitNs);
    for (Nanos t = now; t < until && !m_schedule.over(); t = nowNs())
        sleepUntil(std::min(until, t + kCancelPollNs));
}

void BurstConnection::roundTrip()
{
    const Nanos sentAt = nowNs();
    qint64 fresh = 0;
    for (Request &r : m_batch) {
        if (!r.intendedNs)
            r.intendedNs = sentAt;
        fresh += r.resent ? 0 : 1;
    }
    auto recordAll = [&](size_t from, BurstDecision::Outcome outcome, bool resentOnly) {
        for (size_t i = from; i < m_batch.size(); ++i)
            if (!resentOnly || m_batch[i].resent)
                record(m_batch[i], outcome);
    };
    m_commands.resize(m_batch.size());
    for (size_t i = 0; i < m_batch.size(); ++i)
        m_commands[i] = m_shardCommands[size_t(m_batch[i].shard)];
    // After a failure the connection is closed: connect first, so that a server that is
    // down shows as requests never sent, not as requests sent with no answer.
    if (!m_connection->isConnected()) {
        try {
            m_connection->connect();
        } catch (const std::exception &e) {
            countLost(QString::fromUtf8(e.what()), m_tally.notSent, fresh);
            // Requests to send again after NOSCRIPT were sent once and not run: not admitted.
            countError(QString::fromUtf8(e.what()), false, qint64(m_batch.size()) - fresh);
            recordAll(0, BurstDecision::Outcome::Error, true);
            waitBeforeReconnecting();
            return;
        }
        m_unreachableSince = kNever;
        m_reconnectWaitNs = kReconnectFirstWaitNs;
    }
    size_t done = 0;
    for (Request &r : m_batch)
        r.sentNs = sentAt;
    try {
        m_connection->send(m_commands);
    } catch (const std::exception &e) {
        // Part of the batch may have left before the write failed: sent, outcome unknown.
        Tally::add(m_tally.sent, fresh);
        countLost(QString::fromUtf8(e.what()), m_tally.unknown, qint64(m_batch.size()));
        recordAll(0, BurstDecision::Outcome::Unknown, false);
        m_connection->disconnect();
        return;
    }
    Tally::add(m_tally.sent, fresh); // written to the socket
    if (m_config.shards > 1)
        for (const Request &r : m_batch)
            if (!r.resent)
                m_tally.addShard(m_tally.shardSent, r.shard);
    try {
        for (; done < m_batch.size(); ++done) {
            const Reply reply = m_connection->receive();
            settle(m_batch[done], reply, nowNs());
        }
    } catch (const std::exception &e) {
        // No reply: these may have been counted by the server. Outcome unknown, never re-sent.
        countLost(QString::fromUtf8(e.what()), m_tally.unknown, qint64(m_batch.size() - done));
        recordAll(done, BurstDecision::Outcome::Unknown, false);
        // Whatever went wrong, replies may still be owed on this socket: never read them as
        // the next batch's. A new connection starts in step.
        m_connection->disconnect();
    }
    if (!m_resend.empty())
        reloadScript();
}

void BurstConnection::settle(const Request &request, const Reply &reply, Nanos at)
{
    if (reply.isError()) {
        // NOSCRIPT or "Function not found": nothing ran, so sending it again counts the request
        // once (after "Function not found" as EVALSHA: the library is gone).
        if (!request.resent && LimiterScript::notLoaded(reply)) {
            m_resend.push_back({request.intendedNs, true, request.shard, request.sentNs});
        } else {
            countError(reply.text(), false);
            record(request, BurstDecision::Outcome::Error);
        }
        return;
    }
    try {
        const Decision d = Decision::fromReply(reply);
        Tally::add(d.allowed ? m_tally.allowed : m_tally.denied, 1);
        if (m_config.shards > 1)
            m_tally.addShard(d.allowed ? m_tally.shardAllowed : m_tally.shardDenied, request.shard);
        latency.record(roundedUs(at - request.intendedNs));
        record(request, d.allowed ? BurstDecision::Outcome::Allowed : BurstDecision::Outcome::Denied, &d);
    } catch (const Error &e) {
        countError(e.message(), false);
        record(request, BurstDecision::Outcome::Error);
    }
}

// After NOSCRIPT replies (server restarted, SCRIPT FLUSH) or "Function not found" (the
// library was removed): load the script, then resend those requests with EVALSHA.
void BurstConnection::reloadScript()
{
    if (m_shardCommands.front()[0] != "EVALSHA") {
        LimiterScript::functionMissing(*m_connection);
        buildCommands(ScriptCalls::Evalsha);
    }
    try {
        m_script.load(*m_connection);
    } catch (const Error &e) {
        // The requests to send again were answered NOSCRIPT (nothing ran) and are not sent
        // again: known not admitted, so errors (not unknown), whatever stopped the reload.
        countError(e.message(), false, qint64(m_resend.size()));
        for (const Request &r : m_resend)
            record(r, BurstDecision::Outcome::Error);
        m_resend.clear();
    }
}

void BurstConnection::record(const Request &request, BurstDecision::Outcome outcome, const Decision *decision)
{
    if (!m_log)
        return;
    BurstDecision d;
    d.shard = request.shard;
    d.outcome = outcome;
    if (decision) {
        d.used = decision->used;
        d.remaining = decision->remaining;
        d.retryAfterUs = decision->retryAfterUs;
        d.resetAfterUs = decision->resetAfterUs;
    }
    m_log->add(request.sentNs, d);
}

void BurstConnection::countLost(const QString &why, std::atomic<qint64> &counter, qint64 n)
{
    if (n <= 0)
        return;
    Tally::add(counter, n);
    connectionErrors += n;
    if (firstError.isEmpty()) {
        firstError = why;
        firstErrorAt = nowNs();
    }
}

void BurstConnection::countError(const QString &why, bool connection, qint64 n)
{
    if (n <= 0)
        return;
    Tally::add(m_tally.errors, n);
    if (connection)
        connectionErrors += n;
    if (firstError.isEmpty()) {
        firstError = why;
        firstErrorAt = nowNs();
    }
}

struct Totals {
    qint64 sent = 0, allowed = 0, denied = 0, errors = 0, unknown = 0, notSent = 0;
};

Totals sum(const std::vector<std::unique_ptr<Tally>> &tallies)
{
    Totals t;
    for (const auto &tally : tallies) {
        t.sent += tally->sent.load(std::memory_order_relaxed);
        t.allowed += tally->allowed.load(std::memory_order_relaxed);
        t.denied += tally->denied.load(std::memory_order_relaxed);
        t.errors += tally->errors.load(std::memory_order_relaxed);
        t.unknown += tally->unknown.load(std::memory_order_relaxed);
        t.notSent += tally->notSent.load(std::memory_order_relaxed);
    }
    return t;
}

// The progress side of a running burst: turns counts into 100 ms slices.
class Timeline {
public:
    Timeline(const std::vector<std::unique_ptr<Tally>> &tallies, const BurstEngine::ProgressCallback &callback)
        : m_tallies(tallies)
        , m_callback(callback)
    {
    }

    void sliceAt(qint64 elapsedUs)
    {
        const Totals now = sum(m_tallies);
        elapsedUs = std::max(elapsedUs, m_slices.empty() ? 0 : m_slices.back().endUs);
        m_slices.push_back({elapsedUs, now.allowed - m_last.allowed, now.denied - m_last.denied, now.errors - m_last.errors,
                            now.unknown - m_last.unknown});
        m_last = now;
        if (m_callback)
            m_callback({elapsedUs, now.sent, now.allowed, now.denied, now.errors, now.unknown, now.notSent, m_slices});
    }
    std::vector<BurstSlice> take() { return std::move(m_slices); }

private:
    const std::vector<std::unique_ptr<Tally>> &m_tallies;
    const BurstEngine::ProgressCallback &m_callback;
    std::vector<BurstSlice> m_slices;
    Totals m_last;
};

// The decision callback's side of a running burst: takes what every connection has ended and
// hands it on in the order the requests ended, holding back what ended after the earliest
// take (another connection may still append something that ended before it).
class DecisionMerger {
public:
    DecisionMerger(std::vector<std::unique_ptr<DecisionLog>> &logs, const BurstEngine::DecisionCallback &callback)
        : m_logs(logs)
        , m_callback(callback)
    {
        // Wall-clock microseconds of a steady-clock time: one offset for the whole burst, so
        // that a clock step meanwhile cannot reorder the record.
        const auto wall = std::chrono::system_clock::now().time_since_epoch();
        m_wallOffsetNs = std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count() - nowNs();
    }

    // final: every connection is done; everything goes.
    void drain(bool final)
    {
        if (!m_callback)
            return;
        Nanos upTo = kNever;
        for (const auto &log : m_logs)
            upTo = std::min(upTo, log->take(m_pending));
        if (final)
            upTo = kNever;
        std::stable_sort(m_pending.begin(), m_pending.end(), [](const auto &a, const auto &b) { return a.endNs < b.endNs; });
        const auto end = std::upper_bound(m_pending.begin(), m_pending.end(), upTo, [](Nanos t, const auto &e) { return t < e.endNs; });
        m_out.clear();
        for (auto it = m_pending.begin(); it != end; ++it) {
            BurstDecision d = it->decision;
            d.sentUs = roundedUs(it->sentNs + m_wallOffsetNs);
            d.timeUs = roundedUs(it->endNs + m_wallOffsetNs);
            m_out.push_back(d);
        }
        m_pending.erase(m_pending.begin(), end);
        if (!m_out.empty())
            m_callback(m_out);
    }

private:
    std::vector<std::unique_ptr<DecisionLog>> &m_logs;
    const BurstEngine::DecisionCallback &m_callback;
    Nanos m_wallOffsetNs = 0;
    std::vector<DecisionLog::Entry> m_pending;
    std::vector<BurstDecision> m_out;
};

} // namespace

QString burstOutcomeName(BurstDecision::Outcome outcome)
{
    switch (outcome) {
    case BurstDecision::Outcome::Allowed:
        return QStringLiteral("allowed");
    case BurstDecision::Outcome::Denied:
        return QStringLiteral("denied");
    case BurstDecision::Outcome::Error:
        return QStringLiteral("error");
    case BurstDecision::Outcome::Unknown:
        break;
    }
    return QStringLiteral("unknown");
}

void BurstConfig::validate() const
{
    if (key.isEmpty())
        throw UsageError(QStringLiteral("the key must not be empty"));
    spec.validate();
    if (!requests && !durationUs)
        throw UsageError(QStringLiteral("a burst needs a number of requests or a duration"));
    if (requests && *requests < 1)
        throw UsageError(QStringLiteral("requests must be at least 1, not %1").arg(*requests));
    if (durationUs && *durationUs < 1000)
        throw UsageError(QStringLiteral("the duration must be at least 1ms, not %1").arg(formatDurationUs(*durationUs)));
    if (!(rate >= 0) || !std::isfinite(rate) || rate > 1e9)
        throw UsageError(QStringLiteral("the rate must be between 0 (as fast as possible) and 10^9 requests/s, not %1").arg(rate));
    if (connections < 1 || connections > kMaxConnections)
        throw UsageError(QStringLiteral("connections must be between 1 and %1, not %2").arg(kMaxConnections).arg(connections));
    if (pipeline < 1 || pipeline > kMaxPipeline)
        throw UsageError(QStringLiteral("the pipeline depth must be between 1 and %1, not %2").arg(kMaxPipeline).arg(pipeline));
    if (shards != 0 && (shards < 2 || shards > kMaxShards))
        throw UsageError(QStringLiteral("shards must be between 2 and %1, not %2").arg(kMaxShards).arg(shards));
    if (shardFrom != 0 && shardFrom != 1)
        throw UsageError(QStringLiteral("shards are numbered from 0 or from 1, not %1").arg(shardFrom));
    if (shards > 1 && spec.limit / shards < spec.cost)
        throw UsageError(QStringLiteral("a limit of %1 over %2 shards gives each %3, less than the cost %4")
                             .arg(spec.limit)
                             .arg(shards)
                             .arg(spec.limit / shards)
                             .arg(spec.cost));
}

QByteArray BurstConfig::shardKey(int i) const
{
    return key + ":" + QByteArray::number(shardFrom + i);
}

qint64 BurstConfig::shardLimit(int i) const
{
    return shardShare(spec.limit, shards, i);
}

int BurstConfig::shardFor(qint64 request) const
{
    return shardBy == ShardRouting::RoundRobin ? int(request % shards) : shardForId(QByteArray::number(request), shards);
}

int shardForId(const QByteArray &id, int n)
{
    quint64 h = 14695981039346656037ULL;
    for (const char c : id) {
        h ^= quint8(c);
        h *= 1099511628211ULL;
    }
    return int(h % quint64(std::max(1, n)));
}

QString shardRoutingName(BurstConfig::ShardRouting routing)
{
    return routing == BurstConfig::ShardRouting::Hash ? QStringLiteral("hash") : QStringLiteral("round-robin");
}

QJsonObject BurstConfig::toJson() const
{
    QJsonObject o{
        {QStringLiteral("key"), displayKey(key)}, {QStringLiteral("algo"), algorithmName(spec.algorithm)},
        {QStringLiteral("limit"), spec.limit},    {QStringLiteral("window_us"), spec.windowUs},
        {QStringLiteral("cost"), spec.cost},      {QStringLiteral("connections"), connections},
        {QStringLiteral("pipeline"), pipeline},
    };
    if (requests)
        o.insert(QStringLiteral("requests"), *requests);
    if (durationUs)
        o.insert(QStringLiteral("duration_us"), *durationUs);
    if (rate > 0)
        o.insert(QStringLiteral("rate"), rate);
    if (shards > 1) {
        o.insert(QStringLiteral("shards"), shards);
        o.insert(QStringLiteral("shard_by"), shardRoutingName(shardBy));
        o.insert(QStringLiteral("shard_from"), shardFrom);
    }
    return o;
}

double BurstSummary::throughput() const
{
    return elapsedUs > 0 ? double(allowed + denied) * 1e6 / double(elapsedUs) : 0.0;
}

QJsonObject BurstSummary::toJson() const
{
    QJsonObject o{
        {QStringLiteral("sent"), sent},
        {QStringLiteral("allowed"), allowed},
        {QStringLiteral("denied"), denied},
        {QStringLiteral("errors"), errors},
        {QStringLiteral("unknown"), unknown},
        {QStringLiteral("not_sent"), notSent},
        {QStringLiteral("connection_errors"), connectionErrors},
        {QStringLiteral("elapsed_ms"), (elapsedUs + 500) / 1000},
        {QStringLiteral("throughput"), std::round(throughput() * 10) / 10},
        {QStringLiteral("latency_us"),
         QJsonObject{
             {QStringLiteral("min"), latency.min()},
             {QStringLiteral("mean"), std::round(latency.mean() * 10) / 10},
             {QStringLiteral("p50"), latency.percentile(50)},
             {QStringLiteral("p90"), latency.percentile(90)},
             {QStringLiteral("p99"), latency.percentile(99)},
             {QStringLiteral("p999"), latency.percentile(99.9)},
             {QStringLiteral("max"), latency.max()},
         }},
        {QStringLiteral("cancelled"), cancelled},
        {QStringLiteral("gave_up"), gaveUp},
    };
    if (!firstError.isEmpty())
        o.insert(QStringLiteral("first_error"), firstError);
    if (!shards.empty()) {
        QJsonArray list;
        qint64 most = 0, total = 0;
        for (const BurstShard &sh : shards) {
            QJsonObject j{{QStringLiteral("limit"), sh.limit},
                          {QStringLiteral("sent"), sh.sent},
                          {QStringLiteral("allowed"), sh.allowed},
                          {QStringLiteral("denied"), sh.denied}};
            insertBytes(j, QStringLiteral("key"), sh.key);
            list.append(j);
            most = std::max(most, sh.sent);
            total += sh.sent;
        }
        o.insert(QStringLiteral("shards"), list);
        // How unevenly the requests fell: the busiest shard against an even share.
        o.insert(QStringLiteral("skew"), total > 0 ? std::round(double(most) * double(shards.size()) / double(total) * 1000) / 1000 : 0.0);
    }
    return o;
}

QByteArray timelineCsv(std::span<const BurstSlice> timeline)
{
    QByteArray csv = "elapsed_ms,allowed,denied,errors,unknown\n";
    for (const BurstSlice &s : timeline)
        csv += QByteArray::number(double(s.endUs) / 1000.0, 'f', 1) + ',' + QByteArray::number(s.allowed) + ',' +
               QByteArray::number(s.denied) + ',' + QByteArray::number(s.errors) + ',' + QByteArray::number(s.unknown) + '\n';
    return csv;
}

AuditEntry burstAuditEntry(const QByteArray &key, const QJsonObject &parameters, const QJsonObject &outcome, qint64 sent)
{
    AuditEntry entry;
    entry.action = QStringLiteral("burst");
    entry.target = displayKey(key); // as the other entries name keys: bytes that are no text stay unambiguous
    entry.before = QString::fromUtf8(QJsonDocument(parameters).toJson(QJsonDocument::Compact));
    entry.after = QString::fromUtf8(QJsonDocument(outcome).toJson(QJsonDocument::Compact));
    entry.count = sent;
    return entry;
}

AuditEntry burstAuditEntry(const BurstConfig &config, const BurstSummary &summary)
{
    return burstAuditEntry(config.key, config.toJson(), summary.toJson(), summary.sent);
}

QJsonObject boundaryAuditParameters(const LimitSpec &spec)
{
    return {{QStringLiteral("scenario"), QStringLiteral("boundary")},
            {QStringLiteral("algo"), algorithmName(spec.algorithm)},
            {QStringLiteral("limit"), spec.limit},
            {QStringLiteral("window_us"), spec.windowUs}};
}

BurstEngine::BurstEngine(ConnectionOptions options, BurstConfig config)
    : m_options(std::move(options))
    , m_config(std::move(config))
{
}

BurstSummary BurstEngine::run()
{
    m_config.validate();
    Schedule schedule(m_config, m_cancelled);
    const size_t n = size_t(m_config.connections);
    std::vector<std::unique_ptr<Tally>> tallies;
    std::vector<std::unique_ptr<DecisionLog>> logs;
    std::vector<std::unique_ptr<BurstConnection>> connections;
    for (size_t i = 0; i < n; ++i) {
        tallies.push_back(std::make_unique<Tally>(m_config.shards));
        if (m_decisions)
            logs.push_back(std::make_unique<DecisionLog>());
        connections.push_back(
            std::make_unique<BurstConnection>(m_options, m_config, schedule, *tallies.back(), m_decisions ? logs.back().get() : nullptr));
    }

    std::vector<std::exception_ptr> setUpErrors(n);
    std::latch ready{std::ptrdiff_t(n)};
    std::latch startGate(1);
    std::atomic<bool> abort{false};
    std::mutex mutex;
    std::condition_variable finishedChanged;
    size_t finished = 0;

    std::vector<std::thread> threads;
    // Joins on every way out, so no thread outlives the objects it uses. Made before the
    // first thread: a thread that fails to start throws, and the ones already running must
    // then be released and joined (a joinable std::thread destroyed calls std::terminate).
    struct Joiner {
        std::vector<std::thread> &threads;
        std::latch &startGate;
        std::atomic<bool> &abort;
        bool started = false;
        ~Joiner()
        {
            if (!started) {
                abort.store(true);
                startGate.count_down();
            }
            for (auto &t : threads)
                t.join();
        }
    } joiner{threads, startGate, abort};
    threads.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        // A thread that cannot start ends the burst before anything is sent (the joiner
        // releases and joins the ones that did).
        auto startFailed = [&](const std::exception &e) {
            return UsageError(QStringLiteral("could not start the thread of connection %1 of %2 (%3): use fewer connections")
                                  .arg(i + 1)
                                  .arg(n)
                                  .arg(QString::fromLocal8Bit(e.what())));
        };
        try {
            threads.emplace_back([&, i] {
                BurstConnection &c = *connections[i];
                try {
                    c.setUp();
                } catch (...) {
                    setUpErrors[i] = std::current_exception();
                }
                ready.count_down();
                startGate.wait();
                if (!abort.load())
                    c.run();
                c.tearDown();
                std::lock_guard lock(mutex);
                ++finished;
                finishedChanged.notify_all();
            });
        } catch (const std::system_error &e) {
            throw startFailed(e);
        }
    }
    ready.wait();
    for (const auto &e : setUpErrors)
        if (e)
            std::rethrow_exception(e); // nothing was sent yet

    Timeline timeline(tallies, m_progress);
    DecisionMerger decisions(logs, m_decisions);
    schedule.start(nowNs());
    joiner.started = true;
    startGate.count_down();
    try {
        std::unique_lock lock(mutex);
        for (int tick = 1;; ++tick) {
            const auto at =
                Clock::time_point(std::chrono::nanoseconds(schedule.startNs())) + std::chrono::milliseconds(kProgressIntervalMs) * tick;
            if (finishedChanged.wait_until(lock, at, [&] { return finished == n; }))
                break;
            lock.unlock();
            timeline.sliceAt(roundedUs(nowNs() - schedule.startNs()));
            decisions.drain(false);
            lock.lock();
        }
    } catch (...) {
        cancel(); // a throwing progress callback: stop the burst, then let the joiner wait
        throw;
    }
    for (auto &t : threads)
        t.join();
    threads.clear();
    decisions.drain(true);

    BurstSummary summary;
    Nanos lastFinish = schedule.startNs();
    Nanos firstErrorAt = kNever;
    for (const auto &c : connections) {
        summary.latency.merge(c->latency);
        summary.connectionErrors += c->connectionErrors;
        lastFinish = std::max(lastFinish, c->finishedAt);
        if (c->firstErrorAt < firstErrorAt) {
            firstErrorAt = c->firstErrorAt;
            summary.firstError = c->firstError;
        }
    }
    summary.elapsedUs = roundedUs(lastFinish - schedule.startNs());
    timeline.sliceAt(summary.elapsedUs);
    const Totals totals = sum(tallies);
    summary.sent = totals.sent;
    summary.allowed = totals.allowed;
    summary.denied = totals.denied;
    summary.errors = totals.errors;
    summary.unknown = totals.unknown;
    summary.notSent = totals.notSent;
    summary.gaveUp = schedule.gaveUp();
    if (summary.gaveUp) {
        const qint64 rest = schedule.unclaimed();
        summary.notSent += rest;
        summary.connectionErrors += rest;
    }
    summary.cancelled = isCancelled();
    for (int i = 0; m_config.shards > 1 && i < m_config.shards; ++i) {
        BurstShard shard{m_config.shardKey(i), m_config.shardLimit(i), 0, 0, 0};
        for (const auto &t : tallies) {
            shard.sent += t->shardSent[size_t(i)].load(std::memory_order_relaxed);
            shard.allowed += t->shardAllowed[size_t(i)].load(std::memory_order_relaxed);
            shard.denied += t->shardDenied[size_t(i)].load(std::memory_order_relaxed);
        }
        summary.shards.push_back(shard);
    }
    summary.timeline = timeline.take();
    return summary;
}

} // namespace ratescope
