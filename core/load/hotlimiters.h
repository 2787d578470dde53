// Hot limiters: which limiters take the most admitted requests right now, which are the
// fullest, and which are denying now, found in one bounded pass over the keyspace (the CLI's
// `top`, the console's Hot view). Reading only: nothing is written.
#pragma once

#include "formats/recognition.h"
#include "keys/keyscanner.h"
#include "admin/limitsinforce.h"
#include "admin/policy.h"
#include "formats/usage.h"

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_set>
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
    int scanCount = 1000;         // SCAN COUNT per page (on a slow link, more: KeyScanner::countFor)
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
    KeyKind kind;
    QString master; // on a cluster, the master holding it ("host:port"); empty otherwise
    QString policy; // the policy matching it, if any
    std::optional<LimitSpec> spec; // the limits in force (admin/limitsinforce.h), known once the scan is over
    LimitSource source = LimitSource::None;
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
    // Keys whose type was asked (TYPE); the others' types were guessed from the keys of the
    // same shape before them, and proved by their samples. Guesses proved wrong were typed.
    qint64 typed = 0;
    qint64 guessedWrong = 0;
    qint64 intervalUs = 0;
    qint64 nowUs = 0; // the second read's clock
    std::vector<HotMaster> masters;
    bool usageRead = true; // fill and denying known for every limiter with limits (masters' denying too)
    bool cancelled = false;
};

// One pass, in phases that a caller may spread over several requests (the console runs
// each on its connection's worker, so that other reads go between them, and waits for the
// interval on its own clock): scan() until it says the scan is over, firstRead(), then one
// interval later secondRead(). run() does it all at once. Each phase takes the connection
// it is to use; one scanner serves one pass.
class HotScanner {
public:
    explicit HotScanner(HotOptions options); // throws UsageError for bad options
    ~HotScanner();
    HotScanner(const HotScanner &) = delete;
    HotScanner &operator=(const HotScanner &) = delete;

    // DBSIZE on every master (once), then SCAN pages, each classified (TYPE + format
    // samples; TYPE left out where the keys of the same shape before were all of one type, the
    // sample then proving it); pause() is asked after each page and true ends this call there. True when the
    // scan is over (every key, or the sample). When it throws, the pass is over: later calls
    // throw the same error (start a new scanner), and the connection has been closed, as
    // replies it was waiting for may still be on their way.
    bool scan(Connection &connection, const std::function<bool()> &pause = {});
    bool scanDone() const;
    // Reads the limits in force of every limiter found (the override records the scan met, when
    // it met every key; else the overrides of the limiters a policy covers, an MGET per 1,000),
    // then every counter-like limiter found (1,000 per pipeline, the next one sent while the
    // replies of one are read; times from one TIME and the steady clock). Nothing in a
    // snapshot (explicit now).
    void firstRead(Connection &connection);
    // Reads every limiter again: counters' growth since firstRead, logs' entries in between
    // (a snapshot's: in the interval before its now), and how full the limiters with limits
    // are (their peeks after each 1,000; without peeks the pipelines overlap as in
    // firstRead). The pass, whole; the scanner is spent.
    HotPass secondRead(Connection &connection);

    // scan + firstRead + betweenReads (default: waits until one interval has passed since the
    // first read started) + secondRead. progress(keys scanned so far) returning false
    // cancels (the pass then holds what was read, cancelled set). A snapshot waits for nothing.
    HotPass run(Connection &connection, const std::function<void()> &betweenReads = {}, const std::function<bool(qint64)> &progress = {});

    qint64 scanned() const { return m_pass.scanned; }
    qint64 keysInDatabase() const { return m_pass.keysInDatabase; }
    qint64 sampleAbove() const { return m_options.sampleAbove; }
    qint64 intervalUs() const { return m_options.intervalUs; }

    // Sorts busiest first for the order (ties: by key), keeping at most max; denied-now keeps
    // only the limiters denying now (by rate).
    static void rank(std::vector<HotLimiter> &limiters, HotOrder order, qint64 max);
    // Peeks the limiters that have limits (for a pass made without readUsage: the ones shown
    // after ranking by rate). A part of the keyspace ranked by rate reads overrides only where
    // counting needs limits (token buckets, GCRA); the others' are read here first, for these.
    void readUsage(Connection &connection, std::vector<HotLimiter> &limiters, qint64 nowUs);

    // One read of a counter-like limiter's state, as far as its admitted count needs it
    // (fixed window / sliding counter: w, n|c; counter window: current, previous (0 when not
    // read), id; token bucket: tk, fr, ts; GCRA: tat, f).
    struct CounterState {
        bool present = false;
        qint64 a = 0, b = 0, c = 0;
        std::vector<std::pair<qint64, qint64>> buckets; // sliding-buckets: (id, count), by id (the first read's from its newest on)
    };

private:
    bool scanPages(Connection &connection, const std::function<bool()> &pause); // scan() without its failure handling
    Command scanCommand() const;                                                // SCAN from the cursor
    // Reads a SCAN reply (or asks for one when none is given): the next cursor, and a reader of
    // its keys (Ratescope's own left out, none past the sample), whose first round is not sent.
    std::unique_ptr<KeyRoundReader> scanPage(Connection &connection, std::optional<Reply> page);
    void readAhead(Connection &connection); // the next page and its first round, one after the other
    void addLimiters(KeyRoundResult &&read);
    void resolveLimits(Connection &connection); // every limiter's limits in force, overrides read
    std::unique_ptr<KeyRoundReader> retryPage(); // the keys whose guessed type was wrong, as a page of their own (all asked with TYPE)
    void readRetries(Connection &connection);    // retryPage, its first round read
    bool scanExhausted() const;                  // no SCAN to send any more (the cursor is back at 0, or the sample is full)

    HotOptions m_options;
    HotPass m_pass;
    KeyRound m_round; // how the pages are read (no PTTL; types guessed by key shape)
    TypeGuesser m_guesser;
    std::vector<QByteArray> m_retry;         // keys to read again with TYPE, with a later page (or after the last)
    std::optional<Reply> m_nextScan;         // one server: the reply of the SCAN after m_ahead
    std::unique_ptr<KeyRoundReader> m_ahead; // the next page, its first round read (between calls, nothing else is in flight)
    bool m_started = false;
    bool m_scanOver = false;
    // Sized from the first round's time (the link's round trip), as the key scanner sizes its
    // pages: SCAN's COUNT, and the limiters per pipelined round of each read.
    int m_scanCount = 1000;
    size_t m_chunk = 1000;
    std::exception_ptr m_failure; // what ended the scan, if it failed
    QByteArray m_cursor = "0";
    struct KeyHash {
        size_t operator()(const QByteArray &key) const noexcept
        {
            return std::hash<std::string_view>()({key.constData(), size_t(key.size())});
        }
    };
    std::unordered_set<QByteArray, KeyHash> m_bases; // counter windows: one limiter per base
    QByteArray m_overridePrefix;             // "<ns>override:"
    std::vector<QByteArray> m_overrideKeys;  // the override records the scan met
    bool m_overridesPending = false;          // some limiters' overrides left for readUsage
    std::vector<CounterState> m_first;
    std::vector<qint64> m_firstAt;
};

} // namespace ratescope
