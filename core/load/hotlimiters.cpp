#include "load/hotlimiters.h"

#include "admin/limitsinforce.h"

#include "redis/connection.h"
#include "redis/scan.h"
#include "base/errors.h"
#include "keys/keyscanner.h"
#include "limiters/slidingbuckets.h"

#include <QElapsedTimer>
#include <QHash>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace ratescope {

namespace {

constexpr size_t kChunk = 1000; // limiters per pipelined round of each read (more on a slow link)

using CounterState = HotScanner::CounterState;

qint64 integerOf(const Reply &r)
{
    if (r.isNil() || r.isError())
        return 0;
    bool ok = false;
    const qint64 v = r.bytes().toLongLong(&ok);
    return ok ? saneCount(v) : 0;
}

bool usesTwoReads(KeyFormat f)
{
    switch (f) {
    case KeyFormat::FixedWindow:
    case KeyFormat::SlidingCounter:
    case KeyFormat::CounterWindow:
    case KeyFormat::TokenBucket:
    case KeyFormat::Gcra:
    case KeyFormat::SlidingBuckets:
        return true;
    default:
        return false;
    }
}

qint64 counterWindowUs(const HotLimiter &l)
{
    return l.kind.windowSeconds ? l.kind.windowSeconds * 1000000 : l.spec ? l.spec->windowUs : 0;
}

// Which windows of a counter window a read needs. The first read needs only the current one:
// what the window before held is never compared (when the window turns between the reads, the
// second read's previous window is the first read's current one).
enum class Windows { Current, CurrentAndPrevious };

// Hands add() the keys of the windows a counter window's read takes at nowUs, the current
// window first; how many: none for the other limiters, and for a counter window whose length
// is not known. Only the keys read are made.
template <typename Add> size_t addWindowKeys(const HotLimiter &l, qint64 nowUs, Windows windowsRead, Add add)
{
    const qint64 w = l.kind.format == KeyFormat::CounterWindow ? counterWindowUs(l) : 0;
    if (w <= 0)
        return 0;
    const qint64 id = nowUs / w;
    add(counterWindowKey(l.key, id));
    if (windowsRead == Windows::Current)
        return 1;
    add(counterWindowKey(l.key, id - 1));
    return 2;
}

// Appends the commands that read a counter-like limiter's state (nothing for the others);
// how many. A counter window's windows: a GET each on a cluster (they may be in two slots);
// on one server, none here (appendCounterWindowKeys).
size_t appendStateCommands(std::vector<Command> &out, const HotLimiter &l, qint64 nowUs, bool cluster, Windows windowsRead)
{
    switch (l.kind.format) {
    case KeyFormat::FixedWindow:
        out.push_back({QByteArrayLiteral("HMGET"), l.key, QByteArrayLiteral("w"), QByteArrayLiteral("n")});
        return 1;
    case KeyFormat::SlidingCounter:
        out.push_back({QByteArrayLiteral("HMGET"), l.key, QByteArrayLiteral("w"), QByteArrayLiteral("c")});
        return 1;
    case KeyFormat::TokenBucket:
        out.push_back({QByteArrayLiteral("HMGET"), l.key, QByteArrayLiteral("tk"), QByteArrayLiteral("fr"), QByteArrayLiteral("ts")});
        return 1;
    case KeyFormat::Gcra:
        out.push_back({QByteArrayLiteral("HMGET"), l.key, QByteArrayLiteral("tat"), QByteArrayLiteral("f")});
        return 1;
    case KeyFormat::SlidingBuckets:
        // A page of its fields (all of any hash the script writes; never millions) and its newest
        // bucket by name, which a page of a bigger hash may leave out.
        out.push_back(bucketHashScan(l.key));
        out.push_back({QByteArrayLiteral("HGET"), l.key, QByteArrayLiteral("h")});
        return 2;
    case KeyFormat::CounterWindow:
        if (!cluster)
            return 0;
        return addWindowKeys(l, nowUs, windowsRead, [&](QByteArray key) { out.push_back({QByteArrayLiteral("GET"), std::move(key)}); });
    default:
        return 0;
    }
}

// On one server, the windows a counter window's read takes go into its chunk's MGET.
size_t appendCounterWindowKeys(Command &mget, const HotLimiter &l, qint64 nowUs, Windows windowsRead)
{
    return addWindowKeys(l, nowUs, windowsRead, [&](QByteArray key) { mget.push_back(std::move(key)); });
}

// replies: the n replies to appendStateCommands(..., l, nowUs, ...).
CounterState stateOf(const HotLimiter &l, const Reply *replies, size_t n, qint64 nowUs)
{
    CounterState s;
    if (n == 0)
        return s;
    if (l.kind.format == KeyFormat::CounterWindow) {
        // The current window alone (a first read: an absent window has counted nothing yet), or
        // with the previous one. One error: its chunk's MGET refused.
        if (n > 2 || replies[0].isError() || (n == 2 && replies[1].isError()))
            return s;
        s.present = n == 1 || !replies[0].isNil() || !replies[1].isNil();
        s.a = integerOf(replies[0]);
        s.b = n == 2 ? integerOf(replies[1]) : 0;
        s.c = nowUs / counterWindowUs(l);
        return s;
    }
    const Reply &r = replies[0];
    if (l.kind.format == KeyFormat::SlidingBuckets) {
        // a = the newest bucket id with admissions, b = its count; every bucket read, by id; c =
        // 1 when the page was not the whole hash
        if (n != 2 || r.isError() || replies[1].isError() || replies[1].isNil())
            return s;
        s.a = integerOf(replies[1]), s.present = true;
        s.c = isWholeHash(r) ? 0 : 1;
        const Reply &fields = scannedFields(r);
        for (size_t i = 0; i + 1 < fields.size(); i += 2) {
            const QByteArray name = fields[i].bytes();
            bool ok = false;
            const qint64 id = name.startsWith('b') ? name.mid(1).toLongLong(&ok) : 0;
            if (ok)
                s.buckets.emplace_back(id, integerOf(fields[i + 1]));
        }
        std::sort(s.buckets.begin(), s.buckets.end());
        for (const auto &[id, count] : s.buckets)
            if (id == s.a)
                s.b = count;
        return s;
    }
    if (r.isError() || !r.isArray() || r.size() < 2 || r[0].isNil())
        return s;
    s.present = true;
    s.a = integerOf(r[0]);
    s.b = integerOf(r[1]);
    if (r.size() > 2)
        s.c = integerOf(r[2]);
    return s;
}

// How many requests were admitted between two reads of a counter-like limiter, from its own
// rule: a window's count growing (or starting again in the next window); tokens taken beyond
// the refill; a GCRA's theoretical arrival time moving on by one emission interval per request.
// nullopt when the state cannot say (a bucket or GCRA without limits).
std::optional<qint64> admittedBetween(const HotLimiter &l, const CounterState &before, const CounterState &after, qint64 t1, qint64 t2)
{
    if (!after.present)
        return 0;
    switch (l.kind.format) {
    case KeyFormat::FixedWindow:
    case KeyFormat::SlidingCounter:
        if (!before.present || after.a != before.a)
            return after.b; // a new window: its count so far
        return std::max<qint64>(0, after.b - before.b);
    case KeyFormat::SlidingBuckets: {
        // What grew from the newest bucket of the first read on: that one's growth and the
        // buckets after it, each less what the first read saw there (a hash that is not the
        // script's may hold buckets ahead of its newest; standing still, they admitted nothing).
        // A hash bigger than one page (than any the script keeps) was read in part: not known.
        if (before.c || after.c)
            return std::nullopt;
        qint64 sum = 0;
        for (const auto &[id, count] : after.buckets) {
            if (before.present && id < before.a)
                continue;
            const auto seen = std::lower_bound(before.buckets.begin(), before.buckets.end(), std::pair<qint64, qint64>(id, 0),
                                               [](const auto &x, const auto &y) { return x.first < y.first; });
            const qint64 was = seen != before.buckets.end() && seen->first == id ? seen->second : 0;
            sum = saneCount(sum + std::max<qint64>(0, count - was));
        }
        return sum;
    }
    case KeyFormat::CounterWindow:
        if (!before.present)
            return after.a;
        if (after.c == before.c)
            return std::max<qint64>(0, after.a - before.a);
        if (after.c == before.c + 1)
            return after.a + std::max<qint64>(0, after.b - before.a);
        return after.a;
    case KeyFormat::TokenBucket: {
        if (!l.spec)
            return std::nullopt;
        const qint64 limit = l.spec->limit, window = l.spec->windowUs;
        if (!before.present)
            return std::max<qint64>(0, limit - after.a);
        if (after.c == before.c)
            return 0; // no admission moves ts
        const long double refill = (long double)std::max<qint64>(0, after.c - before.c) * limit / window;
        const long double level = std::min<long double>(limit, before.a + refill);
        return std::max<qint64>(0, qint64(std::llround(level - after.a)));
    }
    case KeyFormat::Gcra: {
        if (!l.spec)
            return std::nullopt;
        if (before.present && after.a == before.a && after.b == before.b)
            return 0;
        const long double interval = (long double)l.spec->windowUs / l.spec->limit;
        const qint64 from = before.present ? std::max(before.a, t1) : t1;
        Q_UNUSED(t2);
        return std::max<qint64>(0, qint64(std::llround((after.a - from) / interval)));
    }
    default:
        return std::nullopt;
    }
}

// Token buckets and GCRA count what they admitted from their limits (the refill, the
// emission interval); the others from their state alone.
bool countingNeedsLimits(KeyFormat f)
{
    return f == KeyFormat::TokenBucket || f == KeyFormat::Gcra;
}

// The limits in force at l, as the resolver has them.
void applyLimits(HotLimiter &l, const LimitResolver &resolver)
{
    LimitsInForce in = resolver.resolve(l.key, l.kind);
    l.policy = in.policyName();
    l.source = in.source;
    l.spec = l.kind.format == KeyFormat::Library && !l.kind.readable() ? std::nullopt : std::move(in.spec);
}

UsageTarget usageTarget(const HotLimiter &l)
{
    UsageTarget t{l.key, l.kind, *l.spec};
    if (l.kind.format == KeyFormat::CounterWindow && !l.kind.windowSeconds)
        t.kind.windowSeconds = l.spec->windowUs / 1000000;
    return t;
}

bool isLog(KeyFormat f)
{
    return f == KeyFormat::SlidingLog || f == KeyFormat::ForeignSlidingLog;
}

qint64 timeOf(const Reply &r)
{
    if (r.isError() || r.size() != 2)
        throw UnexpectedReplyError(QStringLiteral("unexpected TIME reply %1").arg(r.debugString()));
    return r[0].toInteger() * 1000000 + r[1].toInteger();
}

QString addressText(const HostPort &h)
{
    return h.host.contains(QLatin1Char(':')) ? QStringLiteral("[%1]:%2").arg(h.host).arg(h.port)
                                             : QStringLiteral("%1:%2").arg(h.host).arg(h.port);
}

} // namespace

HotOrder parseHotOrder(const QString &name)
{
    if (name == QLatin1String("rate"))
        return HotOrder::Rate;
    if (name == QLatin1String("fill"))
        return HotOrder::Fill;
    if (name == QLatin1String("denied-now"))
        return HotOrder::DenyingNow;
    throw UsageError(QStringLiteral("--by must be rate, fill or denied-now, not '%1'").arg(name));
}

QString hotOrderName(HotOrder order)
{
    switch (order) {
    case HotOrder::Rate:
        return QStringLiteral("rate");
    case HotOrder::Fill:
        return QStringLiteral("fill");
    case HotOrder::DenyingNow:
        return QStringLiteral("denied-now");
    }
    return {};
}

std::optional<double> HotLimiter::rate() const
{
    if (!admitted || spanUs <= 0)
        return std::nullopt;
    return double(*admitted) * 1e6 / double(spanUs);
}

std::optional<double> HotLimiter::fill() const
{
    if (!usage || usage->decision.limit <= 0)
        return std::nullopt;
    return double(usage->usedNow) / double(usage->decision.limit);
}

HotScanner::HotScanner(HotOptions options)
    : m_options(std::move(options))
{
    if (m_options.match.isEmpty())
        m_options.match = "*";
    if (m_options.intervalUs <= 0)
        throw UsageError(QStringLiteral("the interval must be positive"));
    if (m_options.sampleAbove <= 0)
        throw UsageError(QStringLiteral("the sample size must be positive"));
    m_options.scanCount = std::clamp(m_options.scanCount, 10, 100000);
    m_scanCount = m_options.scanCount;
    m_pass.intervalUs = m_options.intervalUs;
    m_round.nowUs = m_options.nowUs;
    m_round.ttl = false;
    m_round.policies = &m_options.policies;
    m_round.guesser = &m_guesser;
    m_overridePrefix = MetadataNamespace(m_options.ns).key("override:");
}

HotScanner::~HotScanner() = default;

bool HotScanner::scan(Connection &connection, const std::function<bool()> &pause)
{
    // A pass that failed stays failed: its page in hand may be lost, so going on would leave
    // keys out without a word.
    if (m_failure)
        std::rethrow_exception(m_failure);
    try {
        return scanPages(connection, pause);
    } catch (...) {
        m_failure = std::current_exception();
        m_ahead.reset();
        m_nextScan.reset();
        // The overlapped reads may have left replies in flight, which would answer whatever
        // this connection is asked next.
        if (!connection.isCluster())
            connection.disconnect();
        throw;
    }
}

bool HotScanner::scanPages(Connection &connection, const std::function<bool()> &pause)
{
    HotPass &pass = m_pass;
    if (!m_started) {
        // How many keys there are, per master: whether to sample, and the per-master table.
        m_started = true;
        QElapsedTimer roundTrip;
        roundTrip.start();
        const auto sizes = connection.onEachMaster({{"DBSIZE"}});
        const qint64 roundTripUs = roundTrip.nsecsElapsed() / 1000;
        const int pageCount = KeyScanner::countFor(roundTripUs, m_options.scanCount);
        m_chunk = size_t(KeyScanner::countFor(roundTripUs, int(kChunk)));
        std::vector<Connection::Node> masters;
        for (const Connection::Node &n : connection.nodes())
            if (n.role != QLatin1String("replica"))
                masters.push_back(n);
        for (size_t i = 0; i < sizes.size(); ++i) {
            HotMaster m;
            m.address = i < masters.size() ? addressText(masters[i].address) : QString();
            m.keys = sizes[i].empty() || !sizes[i][0].isInteger() ? 0 : sizes[i][0].integer();
            pass.keysInDatabase += m.keys;
            pass.masters.push_back(m);
        }
        pass.sampled = pass.keysInDatabase > m_options.sampleAbove;
        // Room for every key the pass may find, reserved once: growing by copies would hold
        // two arrays at a time. Untouched room costs address space, not memory.
        pass.limiters.reserve(size_t(std::min(pass.keysInDatabase, m_options.sampleAbove)));
        // The counter windows' bases too (its bucket array: 8 bytes a key): rehashing a growing
        // set hashes every base again (std::hash of a string keeps no hash codes), which took a
        // quarter of the scan's time.
        m_bases.reserve(pass.limiters.capacity());
        // The first page at the COUNT asked for, whatever the link: the types it reads teach
        // the guesser the shapes of the pages after it, which are as big as the link wants.
        readAhead(connection);
        m_scanCount = pageCount;
    }
    // Page by page, one ahead. Between calls nothing is in flight: the next page waits with
    // its first round read (and, on one server, the SCAN reply after it in hand). A cluster's
    // SCAN walks its masters behind one cursor, which only whole pipelines do: there each
    // round is a pipeline of its own.
    const bool overlap = !connection.isCluster();
    while (m_ahead && !overlap) {
        std::unique_ptr<KeyRoundReader> page = std::move(m_ahead);
        std::vector<Reply> samples = connection.pipeline(page->sampleCommands());
        addLimiters(page->takeSamples(samples.data()));
        if (!scanExhausted())
            readAhead(connection);
        else if (!m_retry.empty())
            readRetries(connection);
        if (pause && pause())
            break;
    }
    // One server: the server is kept two pages ahead. Each step builds the next page from the
    // SCAN reply in hand and sends, in this order, the remaining samples of the page to classify
    // (its keys asked with TYPE), the SCAN after the next page and the next page's first round.
    // It then reads the first round of the page sent one step before (the server meanwhile
    // works on what was just sent), classifies its page, and takes the SCAN reply, kept for the
    // next step. Once pause() says so, one last step sends no new page, so that between calls
    // nothing is in flight.
    if (m_ahead && overlap && !m_nextScan && !scanExhausted())
        m_nextScan = connection.command(scanCommand());
    std::unique_ptr<KeyRoundReader> flying; // its first round sent, not yet read
    size_t flyingReplies = 0;
    bool stopping = false;
    while (overlap && (m_ahead || flying || m_nextScan || (!stopping && scanExhausted() && !m_retry.empty()))) {
        std::unique_ptr<KeyRoundReader> page = std::move(m_ahead);
        std::vector<Command> commands = page ? page->sampleCommands() : std::vector<Command>{};
        const size_t samples = commands.size();
        std::unique_ptr<KeyRoundReader> next;
        if (!stopping && m_nextScan)
            next = scanPage(connection, *std::exchange(m_nextScan, std::nullopt));
        else if (!stopping && scanExhausted() && !m_retry.empty())
            next = retryPage(); // the scan is over; the keys guessed wrong on its last pages
        const bool more = next && !scanExhausted();
        if (more)
            commands.push_back(scanCommand());
        size_t firstReplies = 0;
        if (next) {
            std::vector<Command> first = next->firstCommands();
            firstReplies = first.size();
            std::move(first.begin(), first.end(), std::back_inserter(commands));
        }
        if (!commands.empty())
            connection.send(commands);
        if (flying) {
            std::vector<Reply> first = connection.receive(flyingReplies);
            flying->takeFirst(first.data());
        }
        if (page) {
            std::vector<Reply> replies = connection.receive(samples);
            addLimiters(page->takeSamples(replies.data()));
        }
        if (more)
            m_nextScan = connection.receive();
        m_ahead = std::exchange(flying, std::move(next));
        flyingReplies = firstReplies;
        if (stopping)
            break;
        stopping = page && pause && pause();
    }
    pass.sampleSize = pass.sampled ? pass.scanned : 0;
    return scanDone();
}

std::unique_ptr<KeyRoundReader> HotScanner::retryPage()
{
    const size_t n = m_retry.size();
    return std::make_unique<KeyRoundReader>(std::exchange(m_retry, {}), m_round, n);
}

void HotScanner::readRetries(Connection &connection)
{
    m_ahead = retryPage();
    std::vector<Reply> first = connection.pipeline(m_ahead->firstCommands());
    m_ahead->takeFirst(first.data());
}

void HotScanner::readAhead(Connection &connection)
{
    m_ahead = scanPage(connection, {});
    std::vector<Reply> first = connection.pipeline(m_ahead->firstCommands());
    m_ahead->takeFirst(first.data());
}

Command HotScanner::scanCommand() const
{
    return ratescope::scanCommand(m_cursor, m_options.match, m_scanCount);
}

std::unique_ptr<KeyRoundReader> HotScanner::scanPage(Connection &connection, std::optional<Reply> page)
{
    if (!page)
        page = connection.command(scanCommand());
    const std::vector<Reply> &names = scanReplyNames(*page, &m_cursor); // a refused SCAN (NOPERM) says so
    HotPass &pass = m_pass;
    m_scanOver = m_cursor == "0";
    // Keys guessed wrong on an earlier page go first, to be typed.
    std::vector<QByteArray> keys = std::exchange(m_retry, {});
    const size_t typed = keys.size();
    for (const Reply &k : names) {
        if (pass.sampled && pass.scanned >= m_options.sampleAbove)
            break;
        ++pass.scanned;
        if (!m_options.ns.isEmpty() && k.bytes().startsWith(m_options.ns)) {
            if (k.bytes().startsWith(m_overridePrefix))
                m_overrideKeys.push_back(k.bytes()); // an override record: resolveLimits reads it
            continue; // Ratescope's own metadata
        }
        keys.push_back(k.bytes());
    }
    return std::make_unique<KeyRoundReader>(std::move(keys), m_round, typed);
}

void HotScanner::addLimiters(KeyRoundResult &&read)
{
    m_pass.typed += qint64(read.typed);
    m_pass.guessedWrong += qint64(read.retry.size());
    for (QByteArray &key : read.retry)
        m_retry.push_back(std::move(key));
    for (const KeyRecord &rec : read.records) {
        if (!rec.kind.isLimiter())
            continue;
        HotLimiter l;
        l.kind = rec.kind;
        l.key = rec.kind.subject(rec.key);
        if (rec.kind.format == KeyFormat::CounterWindow || rec.kind.format == KeyFormat::Library) {
            if (!m_bases.insert(l.key).second)
                continue; // another window (or key) of a limiter already found
        }
        m_pass.limiters.push_back(std::move(l)); // its limits once the scan is over (resolveLimits)
    }
}

bool HotScanner::scanExhausted() const
{
    return m_scanOver || (m_pass.sampled && m_pass.scanned >= m_options.sampleAbove);
}

bool HotScanner::scanDone() const
{
    return m_started && !m_failure && !m_ahead && !m_nextScan && m_retry.empty() && scanExhausted();
}

namespace {

// The server's clock during a sweep: TIME once at its start, then this machine's steady clock
// from there (a sweep lasts seconds, over which the two clocks drift apart by microseconds).
// Chunks are then built without a TIME round trip each, so one chunk can be sent while the
// replies of the one before are read.
class SweepClock {
public:
    explicit SweepClock(Connection &connection)
        : m_startUs(timeOf(connection.command({"TIME"})))
    {
        m_elapsed.start();
    }
    qint64 nowUs() const { return m_startUs + m_elapsed.nsecsElapsed() / 1000; }

private:
    qint64 m_startUs;
    QElapsedTimer m_elapsed;
};

// The steps of a sweep over the limiters: the time a chunk is read at (taken as it is built),
// a limiter's commands at that time, what to do with their replies, and (optionally) with a
// chunk once all of its replies are taken.
struct SweepSteps {
    std::function<qint64()> now;
    std::function<size_t(size_t limiter, qint64 t, std::vector<Command> &out)> reads; // appends; how many
    std::function<void(size_t limiter, qint64 t, const Reply *replies, size_t n)> take;
    std::function<void(size_t from, size_t to, qint64 t)> chunkDone;
    // Optional (one server): the keys a limiter reads with GET, appended to its chunk's one
    // MGET; how many. Such a limiter has no commands of its own: take() gets those values.
    std::function<size_t(size_t limiter, qint64 t, Command &mget)> gets;
};

// The limiters [0, count) in chunks of `chunkSize`, each chunk's reads in one pipeline. With
// `overlap`, chunk k + 1 is sent before the replies of chunk k are read, so the server works on
// one while this side reads and handles the other; chunkDone must then send nothing itself. A
// cluster's chunks are whole pipelines (Connection::pipeline: each node's share at once, a
// node out of reach answering DOWN in place, redirections followed).
void sweep(Connection &connection, size_t count, size_t chunkSize, bool overlap, const SweepSteps &steps)
{
    overlap = overlap && !connection.isCluster();
    struct Chunk {
        size_t from = 0, to = 0, replies = 0;
        qint64 t = 0;
        std::vector<size_t> counts, gets; // per limiter: its commands, its keys in the MGET
        size_t gotten = 0;                // keys in the MGET, the chunk's last command (none: no MGET)
    };
    auto take = [&](const Chunk &chunk, const std::vector<Reply> &replies) {
        // The MGET's values; when it was refused, its error for each limiter in it.
        const Reply *mget = chunk.gotten ? &replies.back() : nullptr;
        const bool values = mget && mget->isArray() && mget->size() == chunk.gotten;
        size_t at = 0, got = 0;
        for (size_t i = chunk.from; i < chunk.to; ++i) {
            const size_t n = chunk.counts[i - chunk.from], g = chunk.gets.empty() ? 0 : chunk.gets[i - chunk.from];
            if (g == 0)
                steps.take(i, chunk.t, replies.data() + at, n);
            else if (values)
                steps.take(i, chunk.t, mget->elements().data() + got, g);
            else
                steps.take(i, chunk.t, mget, 1);
            at += n;
            got += g;
        }
        if (steps.chunkDone)
            steps.chunkDone(chunk.from, chunk.to, chunk.t);
    };
    std::optional<Chunk> pending;
    try {
        for (size_t from = 0; from < count; from += chunkSize) {
            Chunk chunk;
            chunk.from = from;
            chunk.to = std::min(count, from + chunkSize);
            chunk.t = steps.now();
            std::vector<Command> commands;
            commands.reserve(chunk.to - chunk.from);
            chunk.counts.reserve(chunk.to - chunk.from);
            Command mget{QByteArrayLiteral("MGET")};
            const bool gets = steps.gets && !connection.isCluster();
            if (gets)
                chunk.gets.reserve(chunk.to - chunk.from);
            for (size_t i = chunk.from; i < chunk.to; ++i) {
                chunk.counts.push_back(steps.reads(i, chunk.t, commands));
                if (gets)
                    chunk.gets.push_back(steps.gets(i, chunk.t, mget));
            }
            chunk.gotten = size_t(mget.size() - 1);
            if (chunk.gotten)
                commands.push_back(std::move(mget));
            chunk.replies = commands.size();
            if (!overlap) {
                take(chunk, commands.empty() ? std::vector<Reply>{} : connection.pipeline(commands));
                continue;
            }
            if (!commands.empty())
                connection.send(commands);
            if (pending)
                take(*pending, connection.receive(pending->replies));
            pending = std::move(chunk);
        }
        if (pending)
            take(*pending, connection.receive(pending->replies));
    } catch (...) {
        // A chunk may still be in flight: its replies would answer whatever this connection
        // is asked next.
        if (overlap)
            connection.disconnect();
        throw;
    }
}

} // namespace

// The first read of every counter-like limiter, in one sweep after the scan, so that all
// limiters are measured over about the same span (whatever page they were found on). At an
// explicit now the pass is a snapshot: counters, which need two reads over real time, are
// not measured, and this reads nothing.
void HotScanner::resolveLimits(Connection &connection)
{
    LimitResolver resolver(m_options.policies, m_options.ns);
    if (m_options.match == "*" && !m_pass.sampled) {
        // The scan met every key, so every override record: those are read, no more.
        std::vector<Command> gets;
        gets.reserve(m_overrideKeys.size());
        for (const QByteArray &k : m_overrideKeys)
            gets.push_back({"GET", k});
        const std::vector<Reply> values = gets.empty() ? std::vector<Reply>{} : connection.pipeline(gets);
        for (size_t i = 0; i < values.size(); ++i)
            if (!values[i].orThrow().isNil()) // expired since the scan
                resolver.takeOverride(m_overrideKeys[i].mid(m_overridePrefix.size()), values[i]);
    } else if (!m_options.policies.empty()) {
        // A part of the keyspace: the overrides of the limiters found that a policy covers (an
        // override changes only a policy's limits), an MGET per 1,000. Ranked by rate, only
        // where counting needs the limits; readUsage reads the rest for those shown.
        std::vector<QByteArray> subjects;
        subjects.reserve(m_pass.limiters.size());
        for (const HotLimiter &l : m_pass.limiters) {
            if (!findPolicy(m_options.policies, l.key))
                continue;
            if (m_options.readUsage || countingNeedsLimits(l.kind.format))
                subjects.push_back(l.key);
            else
                m_overridesPending = true;
        }
        resolver.readOverrides(connection, subjects);
    }
    m_overrideKeys = {};
    for (HotLimiter &l : m_pass.limiters)
        applyLimits(l, resolver);
}

void HotScanner::firstRead(Connection &connection)
{
    HotPass &pass = m_pass;
    resolveLimits(connection);
    m_first.assign(pass.limiters.size(), {});
    m_firstAt.assign(pass.limiters.size(), 0);
    if (m_options.nowUs || pass.limiters.empty())
        return;
    const SweepClock clock(connection);
    SweepSteps steps;
    steps.now = [&] { return clock.nowUs(); };
    const bool cluster = connection.isCluster();
    steps.reads = [&](size_t i, qint64 t1, std::vector<Command> &out) {
        return usesTwoReads(pass.limiters[i].kind.format) ? appendStateCommands(out, pass.limiters[i], t1, cluster, Windows::Current) : 0;
    };
    steps.gets = [&](size_t i, qint64 t1, Command &mget) { return appendCounterWindowKeys(mget, pass.limiters[i], t1, Windows::Current); };
    steps.take = [&](size_t i, qint64 t1, const Reply *replies, size_t n) {
        m_first[i] = stateOf(pass.limiters[i], replies, n, t1);
        // the buckets from the newest on stay, to be compared with the second read (one for a
        // hash the script writes: it keeps none ahead of its newest)
        std::erase_if(m_first[i].buckets, [&](const auto &b) { return b.first < m_first[i].a; });
        m_firstAt[i] = t1;
    };
    sweep(connection, pass.limiters.size(), m_chunk, true, steps);
}

HotPass HotScanner::secondRead(Connection &connection)
{
    HotPass &pass = m_pass;
    const bool snapshot = m_options.nowUs.has_value();
    if (m_first.size() != pass.limiters.size())
        firstRead(connection); // not asked for: the counters then measure nothing
    QHash<QString, size_t> masterIndex;
    for (size_t i = 0; i < pass.masters.size(); ++i)
        masterIndex.insert(pass.masters[i].address, i);
    std::optional<SweepClock> clock;
    if (!snapshot && !pass.limiters.empty())
        clock.emplace(connection);
    std::vector<UsageTarget> targets; // of the chunk being taken
    std::vector<size_t> targetOf;
    SweepSteps steps;
    steps.now = [&] { return snapshot ? *m_options.nowUs : clock->nowUs(); };
    const bool cluster = connection.isCluster();
    // A chunk's logs share their bounds (the times of their chunks' two reads): the texts of
    // the last ones made, kept.
    struct Bound {
        qint64 us = -1;
        double unit = 0;
        QByteArray text;
        const QByteArray &of(qint64 t, double u, bool exclusive)
        {
            if (t != us || u != unit) {
                us = t, unit = u;
                text = (exclusive ? QByteArrayLiteral("(") : QByteArray()) +
                       (u == 1.0 ? QByteArray::number(t) : QByteArray::number(double(t) / u, 'f', 6));
            }
            return text;
        }
    } from, to;
    // A counter window still in the window of its first read needs that window alone; one that
    // turned, the window before too (the first read's, with what it admitted since).
    auto windowsAt = [&](size_t i, qint64 t2) {
        const qint64 w = counterWindowUs(pass.limiters[i]);
        return w > 0 && m_first[i].present && m_first[i].c == t2 / w ? Windows::Current : Windows::CurrentAndPrevious;
    };
    steps.reads = [&](size_t i, qint64 t2, std::vector<Command> &out) -> size_t {
        const HotLimiter &l = pass.limiters[i];
        if (usesTwoReads(l.kind.format))
            return appendStateCommands(out, l, t2, cluster, windowsAt(i, t2));
        if (!isLog(l.kind.format))
            return 0;
        // Entries admitted between the two reads (scores in (t1, t2]); with an explicit now,
        // in the interval before it.
        const qint64 since = snapshot ? t2 - m_options.intervalUs : m_firstAt[i];
        const double unit = l.kind.format == KeyFormat::SlidingLog ? 1.0 : double(scoreUnitUs(l.kind.unit));
        if (unit <= 0)
            return 0;
        out.push_back({QByteArrayLiteral("ZCOUNT"), l.key, from.of(since, unit, true), to.of(t2, unit, false)});
        return 1;
    };
    steps.gets = [&](size_t i, qint64 t2, Command &mget) { return appendCounterWindowKeys(mget, pass.limiters[i], t2, windowsAt(i, t2)); };
    steps.take = [&](size_t i, qint64 t2, const Reply *mine, size_t n) {
        HotLimiter &l = pass.limiters[i];
        pass.nowUs = t2;
        // The span: between the two reads, on the server's clock; a snapshot's logs count the
        // interval before its now.
        const qint64 between = std::max<qint64>(1, t2 - m_firstAt[i]);
        if (usesTwoReads(l.kind.format)) {
            if (n > 0 && !snapshot) {
                l.admitted = admittedBetween(l, m_first[i], stateOf(l, mine, n, t2), m_firstAt[i], t2);
                l.spanUs = between;
            }
        } else if (n > 0 && mine[0].isInteger()) {
            l.admitted = mine[0].integer();
            l.spanUs = snapshot ? m_options.intervalUs : between;
        }
        if (l.spec && m_options.readUsage) {
            targets.push_back(usageTarget(l));
            targetOf.push_back(i);
        }
        if (cluster) {
            // A counter window's base is no key: the master of its current window's.
            QByteArray placed = l.key;
            addWindowKeys(l, t2, Windows::Current, [&](QByteArray key) { placed = std::move(key); });
            if (const auto place = connection.placementOf(placed))
                l.master = addressText(place->master);
        } else if (!pass.masters.empty()) {
            l.master = pass.masters.front().address;
        }
    };
    // Peeks: a pipeline of their own per chunk, once its replies are taken (so without peeks
    // the chunks overlap).
    steps.chunkDone = [&](size_t, size_t, qint64 t2) {
        if (!targets.empty()) {
            const auto usage = ratescope::readUsage(connection, targets, t2);
            for (size_t k = 0; k < usage.size(); ++k)
                pass.limiters[targetOf[k]].usage = usage[k];
        }
        targets.clear();
        targetOf.clear();
    };
    sweep(connection, pass.limiters.size(), m_chunk, !m_options.readUsage, steps);
    // Limiters mostly come in runs of one master (there is one, unless on a cluster, whose SCAN
    // walks the masters in turn): the last master found is tried first.
    const QString *lastAddress = nullptr;
    HotMaster *lastMaster = nullptr;
    for (const HotLimiter &l : pass.limiters) {
        if (!lastAddress || *lastAddress != l.master) {
            const auto found = masterIndex.constFind(l.master);
            lastAddress = &l.master;
            lastMaster = found == masterIndex.cend() ? nullptr : &pass.masters[*found];
        }
        if (!lastMaster)
            continue;
        HotMaster &m = *lastMaster;
        ++m.limiters;
        m.rate += l.rate().value_or(0);
        m.denying += l.denyingNow() ? 1 : 0;
    }
    pass.usageRead = m_options.readUsage;
    return std::move(m_pass);
}

HotPass HotScanner::run(Connection &connection, const std::function<void()> &betweenReads, const std::function<bool(qint64)> &progress)
{
    scan(connection, [&] {
        if (progress && !progress(m_pass.scanned))
            m_pass.cancelled = true;
        return m_pass.cancelled;
    });
    if (m_pass.cancelled)
        return std::move(m_pass);
    const auto firstReadAt = std::chrono::steady_clock::now();
    firstRead(connection);
    // One interval after the first read started (or as the caller says), the second read.
    if (!m_options.nowUs) {
        if (betweenReads) {
            betweenReads();
        } else {
            const auto until = firstReadAt + std::chrono::microseconds(m_options.intervalUs);
            while (std::chrono::steady_clock::now() < until) {
                if (progress && !progress(m_pass.scanned)) {
                    m_pass.cancelled = true;
                    return std::move(m_pass);
                }
                std::this_thread::sleep_for(
                    std::min<std::chrono::steady_clock::duration>(until - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
            }
        }
    }
    return secondRead(connection);
}

void HotScanner::rank(std::vector<HotLimiter> &limiters, HotOrder order, qint64 max)
{
    if (order == HotOrder::DenyingNow)
        limiters.erase(std::remove_if(limiters.begin(), limiters.end(), [](const HotLimiter &l) { return !l.denyingNow(); }),
                       limiters.end());
    // The sort key of each limiter, computed once: the order's figure, then a second one;
    // unknown figures sort last.
    std::vector<std::pair<std::pair<double, double>, size_t>> keys(limiters.size());
    for (size_t i = 0; i < limiters.size(); ++i) {
        const HotLimiter &l = limiters[i];
        const double rate = l.rate().value_or(-1), fill = l.fill().value_or(-1);
        keys[i] = {order == HotOrder::Fill ? std::pair{fill, rate} : std::pair{rate, fill}, i};
    }
    const size_t keep = max >= 0 ? std::min(limiters.size(), size_t(max)) : limiters.size();
    auto busier = [&](const auto &a, const auto &b) {
        if (a.first != b.first)
            return a.first > b.first;
        return limiters[a.second].key < limiters[b.second].key;
    };
    std::partial_sort(keys.begin(), keys.begin() + qsizetype(keep), keys.end(), busier);
    std::vector<HotLimiter> ranked;
    ranked.reserve(keep);
    for (size_t i = 0; i < keep; ++i)
        ranked.push_back(std::move(limiters[keys[i].second]));
    limiters = std::move(ranked);
}

void HotScanner::readUsage(Connection &connection, std::vector<HotLimiter> &limiters, qint64 nowUs)
{
    if (m_overridesPending) {
        LimitResolver resolver(m_options.policies, m_options.ns);
        std::vector<QByteArray> subjects;
        for (const HotLimiter &l : limiters)
            if (findPolicy(m_options.policies, l.key))
                subjects.push_back(l.key);
        resolver.readOverrides(connection, subjects);
        for (HotLimiter &l : limiters)
            applyLimits(l, resolver);
    }
    std::vector<UsageTarget> targets;
    std::vector<size_t> targetOf;
    for (size_t i = 0; i < limiters.size(); ++i) {
        if (!limiters[i].spec)
            continue;
        targets.push_back(usageTarget(limiters[i]));
        targetOf.push_back(i);
    }
    const auto usage = ratescope::readUsage(connection, targets, nowUs);
    for (size_t k = 0; k < usage.size(); ++k)
        limiters[targetOf[k]].usage = usage[k];
}

} // namespace ratescope
