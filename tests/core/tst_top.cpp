// Hot limiters (core/hotlimiters, `ratescope-cli top`) against a real redis-server: a
// controlled burst between the pass's two reads, and the ranking it must give, exactly, on
// 10,000 keys of every kind; sampling; the CLI's output and refusals. Nothing is written.
#include "redis/connection.h"
#include "base/errors.h"
#include "load/hotlimiters.h"
#include "keys/keyscanner.h"
#include "limiters/limiter.h"
#include "admin/policy.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <map>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;
constexpr qint64 kDay = 86400 * kSecond;

QStringList args(std::initializer_list<const char *> list)
{
    QStringList out;
    for (const char *a : list)
        out << QString::fromUtf8(a);
    return out;
}

} // namespace

class TestTop : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_server.start();
        m_conn = std::make_unique<Connection>(m_server.options());
    }
    void init() { m_conn->command({"FLUSHALL"}); }

    void ranksByTheTrafficOfAControlledBurst_data();
    void ranksByTheTrafficOfAControlledBurst();
    void slidingBucketsRateFromTheirBuckets();
    void slidingBucketsRateFromWhatChanged();
    void counterWindowsRateFromTheirWindows();
    void samplingSaysItsSampleSize();
    void aFailedScanStaysFailed();
    void keysOfOneShapeShareAType();
    void aWrongGuessIsTypedAgain();
    void aPassOfMixedShapesFindsEveryLimiter();
    void theKeyScannerGuessesAsItWouldType();
    void fillAndDenyingNow();
    void overridesOfAPartRankedByRate();
    void cliJsonAndTable();
    void cliRefusesBadInput_data();
    void cliRefusesBadInput();

private:
    // 10,000 keys: sliding logs with entries two hours old, fixed windows and sliding
    // counters with counts, GCRA state, and keys of applications (strings, JSON, hashes).
    void seedTenThousandKeys();
    QStringList cli(const QStringList &a) const { return QStringList{QStringLiteral("--url"), m_server.url()} + a; }

    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestTop::seedTenThousandKeys()
{
    Limiter limiter(*m_conn);
    const qint64 now = m_conn->command({"TIME"})[0].toInteger() * kSecond;
    std::vector<Command> fill;
    const QByteArray fwWindow = QByteArray::number(now / (366 * kDay));
    for (int i = 0; i < 10000; ++i) {
        const QByteArray n = QByteArray::number(i);
        switch (i % 5) {
        case 0: // a sliding log, entries from two hours ago (outside every pass)
            fill.push_back({"ZADD", "log:" + n, QByteArray::number(now - 2 * 3600 * kSecond - i), "11"});
            break;
        case 1:
            fill.push_back({"HSET", "fw:" + n, "w", fwWindow, "n", QByteArray::number(i % 7)});
            break;
        case 2:
            fill.push_back({"HSET", "sc:" + n, "w", QByteArray::number(now / (366 * kDay)), "c", "3", "p", "1"});
            break;
        case 3:
            fill.push_back({"SET", "app:session:s" + n, i % 2 ? QByteArray("{\"user\":42}") : QByteArray::number(now / kSecond)});
            break;
        default:
            fill.push_back({"HSET", "app:profile:" + n, "name", "x", "visits", "7"});
            break;
        }
    }
    m_conn->pipeline(fill);
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 10000);
}

void TestTop::ranksByTheTrafficOfAControlledBurst_data()
{
    // With peeks each 1,000 limiters' reads are a pipeline after the other; counts alone keep
    // one pipeline in flight while the replies of the one before are read (six of them here).
    QTest::addColumn<bool>("peeks");
    QTest::newRow("with peeks") << true;
    QTest::newRow("counts only, pipelines overlapping") << false;
}

// Twelve limiters of three kinds get 3, 4, 6, ... requests (each 1.5x the one before) between
// the pass's two reads; nothing else moves. Ranked by rate they come first, in that order,
// each with exactly its count; every other limiter admitted nothing.
void TestTop::ranksByTheTrafficOfAControlledBurst()
{
    QFETCH(bool, peeks);
    m_conn->command({"FLUSHALL"});
    seedTenThousandKeys();
    const QByteArray kinds[] = {"log:", "fw:", "sc:"};
    const Algorithm algos[] = {Algorithm::SlidingLog, Algorithm::FixedWindow, Algorithm::SlidingCounter};
    std::vector<std::pair<QByteArray, int>> fired; // key, requests
    double count = 3;
    for (int i = 0; i < 12; ++i, count *= 1.5)
        fired.push_back({kinds[i % 3] + QByteArray::number(5 * (97 * i + 11) + i % 3), int(count)});
    HotOptions options;
    options.intervalUs = 3600 * kSecond;
    options.readUsage = peeks;
    HotScanner scanner(options);
    int between = 0;
    HotPass pass = scanner.run(*m_conn, [&] {
        ++between;
        Limiter limiter(*m_conn);
        for (size_t i = 0; i < fired.size(); ++i) {
            const LimitSpec spec{algos[i % 3], 1000000, 366 * kDay, 1};
            for (int r = 0; r < fired[i].second; ++r)
                QVERIFY(limiter.check(fired[i].first, spec).allowed);
        }
    });
    QCOMPARE(between, 1);
    QCOMPARE(pass.keysInDatabase, 10000);
    QCOMPARE(pass.scanned, 10000);
    QVERIFY(!pass.sampled);
    for (const HotLimiter &l : pass.limiters)
        QVERIFY2(!l.key.startsWith("app:"), qPrintable(QString::fromUtf8(l.key) + QStringLiteral(" read as ") + l.kind.label()));
    QCOMPARE(pass.limiters.size(), size_t(6000)); // logs, fixed windows, sliding counters
    std::map<QByteArray, qint64> admitted;
    for (const HotLimiter &l : pass.limiters)
        admitted[l.key] = l.admitted.value_or(-1);
    for (const auto &[key, n] : fired)
        QCOMPARE(admitted[key], qint64(n));
    qint64 quiet = 0;
    for (const auto &[key, n] : admitted)
        quiet += n == 0 ? 1 : 0;
    QCOMPARE(quiet, qint64(6000 - fired.size()));

    HotScanner::rank(pass.limiters, HotOrder::Rate, 12);
    QCOMPARE(pass.limiters.size(), size_t(12));
    for (size_t i = 0; i < 12; ++i) {
        QCOMPARE(pass.limiters[i].key, fired[11 - i].first);
        QVERIFY(*pass.limiters[i].rate() > 0);
    }
    QCOMPARE(pass.masters.size(), size_t(1));
    QCOMPARE(pass.masters[0].limiters, 6000);
}

void TestTop::slidingBucketsRateFromTheirBuckets()
{
    // Admitted between the two reads: the growth of the newest bucket of the first read plus
    // every bucket after it, whatever times the requests carried (here explicit ones spanning
    // buckets, one of them the bucket a whole window later).
    m_conn->command({"FLUSHALL"});
    const qint64 t = (m_conn->command({"TIME"})[0].toInteger() * kSecond / (10 * kSecond)) * 10 * kSecond;
    const LimitSpec spec{Algorithm::SlidingBuckets, 1000, 60 * kSecond, 1, 6};
    Limiter limiter(*m_conn);
    for (int i = 0; i < 5; ++i)
        QVERIFY(limiter.check("sb:old", spec, t).allowed);
    QVERIFY(limiter.check("sb:new", spec, t - 120 * kSecond).allowed); // all of it left the window since
    HotOptions options;
    options.intervalUs = 3600 * kSecond;
    const HotPass pass = HotScanner(options).run(*m_conn, [&] {
        for (const auto &[at, n] : {std::pair{t + kSecond, 3}, std::pair{t + 15 * kSecond, 4}, std::pair{t + 65 * kSecond, 2}})
            for (int i = 0; i < n; ++i)
                QVERIFY(limiter.check("sb:old", spec, at).allowed);
        for (int i = 0; i < 7; ++i)
            QVERIFY(limiter.check("sb:new", spec, t).allowed);
    });
    std::map<QByteArray, qint64> admitted;
    for (const HotLimiter &l : pass.limiters) {
        QCOMPARE(l.kind.format, KeyFormat::SlidingBuckets);
        admitted[l.key] = l.admitted.value_or(-1);
    }
    QCOMPARE(admitted.size(), size_t(2));
    QCOMPARE(admitted["sb:old"], 9);
    QCOMPARE(admitted["sb:new"], 7);
}

void TestTop::slidingBucketsRateFromWhatChanged()
{
    // Hashes shaped like sliding buckets (1m, B = 60) holding buckets ahead of their newest,
    // which no script wrote: 3,000 of them, read whole, idle (nothing admitted) or with 3
    // admissions between the reads (3); 20,000, read a page at a time: the rate is not known
    // (not the sum of what stands still).
    const qint64 nowS = m_conn->command({"TIME"})[0].toInteger();
    const QByteArray h = QByteArray::number(nowS);
    for (const auto &[key, ahead] : {std::pair{"sb:idle", "3000"}, std::pair{"sb:busy", "3000"}, std::pair{"sb:giant", "20000"}})
        m_conn->command({"EVAL",
                         "local h = tonumber(ARGV[1]) "
                         "redis.call('HSET', KEYS[1], 'ws', '60000000', 'bn', '60', 't', '1', 'l', h, 'h', h, 'b' .. h, '1') "
                         "for i = 1, tonumber(ARGV[2]), 1000 do local f = {} for j = i, i + 999 do f[#f + 1] = 'b' .. (h + j) "
                         "f[#f + 1] = '5' end redis.call('HSET', KEYS[1], unpack(f)) end",
                         "1", key, h, ahead});
    const LimitSpec spec{Algorithm::SlidingBuckets, 1000000, 60 * kSecond, 1, 60};
    Limiter limiter(*m_conn);
    HotOptions options;
    options.intervalUs = 3600 * kSecond;
    const HotPass pass = HotScanner(options).run(*m_conn, [&] {
        for (int i = 0; i < 3; ++i)
            QVERIFY(limiter.check("sb:busy", spec, nowS * kSecond + 500000).allowed);
    });
    std::map<QByteArray, qint64> admitted;
    for (const HotLimiter &l : pass.limiters)
        admitted[l.key] = l.admitted.value_or(-1);
    QCOMPARE(admitted["sb:idle"], 0);
    QCOMPARE(admitted["sb:busy"], 3);
    QCOMPARE(admitted["sb:giant"], -1);
}

void TestTop::samplingSaysItsSampleSize()
{
    seedTenThousandKeys();
    HotOptions options;
    options.sampleAbove = 3000;
    options.intervalUs = 1000;
    const HotPass pass = HotScanner(options).run(*m_conn, [] {});
    QVERIFY(pass.sampled);
    QCOMPARE(pass.sampleSize, 3000);
    QCOMPARE(pass.scanned, 3000);
    QCOMPARE(pass.keysInDatabase, 10000);
    QVERIFY(pass.limiters.size() > 1000 && pass.limiters.size() <= 3000);
    // Under the threshold, everything.
    options.sampleAbove = 10000;
    const HotPass whole = HotScanner(options).run(*m_conn, [] {});
    QVERIFY(!whole.sampled);
    QCOMPARE(whole.scanned, 10000);
    // Five shapes of keys, each of one type: from the second page of 1,000 on, no key is typed.
    QVERIFY2(whole.typed <= 1100, qPrintable(QString::number(whole.typed)));
    QCOMPARE(whole.guessedWrong, 0);
}

// A pass whose SCAN is refused half way (the user loses SCAN between two steps, as the console
// runs them) fails, and says so again when asked to go on, rather than ending early as if
// every key was read; the connection it used answers the next command with its own reply.
void TestTop::aFailedScanStaysFailed()
{
    for (int i = 0; i < 200; ++i)
        m_conn->command({"SET", "k:" + QByteArray::number(i), "1"});
    m_conn->command({"ACL", "SETUSER", "scanner", "reset", "on", ">scanpw", "~*", "&*", "+@all"});
    ConnectionOptions asScanner = m_server.options();
    asScanner.user = QStringLiteral("scanner");
    asScanner.password = QStringLiteral("scanpw");
    Connection c(asScanner);
    HotOptions options;
    options.scanCount = 10;
    HotScanner scanner(options);
    QVERIFY(!scanner.scan(c, [] { return true; })); // one page, then pause
    m_conn->command({"ACL", "SETUSER", "scanner", "-scan"});
    QVERIFY_THROWS_EXCEPTION(ReplyError, scanner.scan(c)); // NOPERM, as the server said it
    QVERIFY_THROWS_EXCEPTION(ReplyError, scanner.scan(c)); // not a quiet "not done" for ever
    QVERIFY(!scanner.scanDone());
    QCOMPARE(c.command({"ECHO", "after"}).bytes(), QByteArray("after"));
    m_conn->command({"ACL", "DELUSER", "scanner"});
}

void TestTop::keysOfOneShapeShareAType()
{
    auto same = [](const char *a, const char *b) { return TypeGuesser::shapeOf(a) == TypeGuesser::shapeOf(b); };
    QVERIFY(same("svc:log:42", "svc:log:7"));
    QVERIFY(same("rate_limit:{t42}:3", "rate_limit:{t7}:12"));
    QVERIFY(same("user:9f86d081:rl", "user:abc1:rl"));
    QVERIFY(same("svc:cnt:5:29431", "svc:cnt:61:29432"));
    QVERIFY(!same("svc:log:42", "svc:fw:42"));
    QVERIFY(!same("a:b", "a:c"));
    QVERIFY(!same("k:1", "k:1:x"));
    QVERIFY(!same("k:1", "k1:1"));

    TypeGuesser g;
    const TypeGuesser::Shape shape = TypeGuesser::shapeOf("k:1");
    QCOMPARE(g.guess(shape), QByteArray()); // nothing seen
    g.learn(shape, "zset");
    QCOMPARE(g.guess(shape), QByteArray()); // once is not a pattern
    g.learn(shape, "zset");
    QCOMPARE(g.guess(shape), QByteArray("zset"));
    g.learn(shape, "hash"); // the pattern broke: no guess until it holds again
    QCOMPARE(g.guess(shape), QByteArray());
    g.learn(shape, "hash");
    QCOMPARE(g.guess(shape), QByteArray("hash"));
    const TypeGuesser::Shape sets = TypeGuesser::shapeOf("s:1");
    g.learn(sets, "set"); // no sample proves a set: always typed
    g.learn(sets, "set");
    QCOMPARE(g.guess(sets), QByteArray());
    g.learn(shape, "set"); // and one breaks a streak of guessable ones
    QCOMPARE(g.guess(shape), QByteArray());
    g.learn(shape, "none"); // a key gone says nothing
    g.learn(shape, "zset");
    QCOMPARE(g.guess(shape), QByteArray());
    g.learn(shape, "none");
    g.learn(shape, "zset");
    QCOMPARE(g.guess(shape), QByteArray("zset"));
}

// A round whose keys' type is guessed sends their samples in place of TYPE; the sample proves
// the guess, shows a key gone, or (WRONGTYPE) sends the key back to be typed, out of the
// records. A key typed in that round gets every type's sample with its TYPE.
void TestTop::aWrongGuessIsTypedAgain()
{
    const qint64 now = m_conn->command({"TIME"})[0].toInteger() * kSecond;
    m_conn->command({"ZADD", "k:1", QByteArray::number(now), "a"});
    m_conn->command({"HSET", "k:2", "w", "1", "n", "2"});
    TypeGuesser g;
    g.learn(TypeGuesser::shapeOf("k:0"), "zset");
    g.learn(TypeGuesser::shapeOf("k:0"), "zset");
    KeyRound round;
    round.ttl = false;
    round.guesser = &g;
    KeyRoundReader reader({"k:1", "k:2", "k:3", "k:4"}, round, 1); // k:1 is to be typed
    const std::vector<Command> first = reader.firstCommands();
    // TIME, TYPE k:1 with the samples of every guessable type (a zset's newest and oldest, a
    // hash's, a string's, a list's: a key of a shape not guessed needs no second round), the
    // samples of k:2, k:3, k:4 (a zset's newest and oldest each).
    QCOMPARE(first.size(), size_t(1 + 1 + 5 + 3 * 2));
    QCOMPARE(first[1], (Command{"TYPE", "k:1"}));
    QCOMPARE(first[2].front(), QByteArray("ZRANGE"));
    QCOMPARE(first[7], (Command{"ZRANGE", "k:2", "-1", "-1", "WITHSCORES"}));
    std::vector<Reply> replies = m_conn->pipeline(first);
    reader.takeFirst(replies.data());
    QVERIFY(reader.sampleCommands().empty()); // k:1's sample was read with its TYPE
    replies.clear();
    const KeyRoundResult read = reader.takeSamples(replies.data());
    QCOMPARE(read.typed, size_t(1));
    QCOMPARE(read.retry, std::vector<QByteArray>{"k:2"});
    QCOMPARE(read.records.size(), size_t(3));
    QCOMPARE(read.records[0].key, QByteArray("k:1"));
    QCOMPARE(read.records[0].type, QByteArray("zset"));
    QCOMPARE(read.records[0].kind.format, KeyFormat::ForeignSlidingLog); // as read with TYPE
    QCOMPARE(read.records[1].key, QByteArray("k:3"));
    QCOMPARE(read.records[1].type, QByteArray("none")); // gone: an empty zset cannot exist
    QCOMPARE(read.records[2].key, QByteArray("k:4"));
    QVERIFY(!read.records[2].kind.isLimiter());

    // With PTTL (as `keys` reads): a string's sample cannot tell a key gone from an empty
    // value, its PTTL (-2) can.
    m_conn->command({"SET", "s:1", ""});
    g.learn(TypeGuesser::shapeOf("s:0"), "string");
    g.learn(TypeGuesser::shapeOf("s:0"), "string");
    round.ttl = true;
    round.memory = true;
    KeyRoundReader withTtl({"s:1", "s:2"}, round);
    const std::vector<Command> firstWithTtl = withTtl.firstCommands();
    QCOMPARE(firstWithTtl.size(), size_t(7)); // TIME, then PTTL, MEMORY USAGE and GETRANGE of each
    replies = m_conn->pipeline(firstWithTtl);
    withTtl.takeFirst(replies.data());
    QVERIFY(withTtl.sampleCommands().empty());
    const KeyRoundResult strings = withTtl.takeSamples(nullptr);
    QCOMPARE(strings.typed, size_t(0));
    QCOMPARE(strings.records.size(), size_t(2));
    QCOMPARE(strings.records[0].type, QByteArray("string"));
    QCOMPARE(strings.records[0].pttlMs, -1);
    QVERIFY(strings.records[0].memory > 0);
    QCOMPARE(strings.records[1].type, QByteArray("none"));
    QCOMPARE(strings.records[1].pttlMs, -2);
}

// `keys` (the key scanner) guesses types too: page by page it reads what a TYPE per key reads,
// TTLs and memory included.
void TestTop::theKeyScannerGuessesAsItWouldType()
{
    const qint64 now = m_conn->command({"TIME"})[0].toInteger() * kSecond;
    std::vector<Command> fill;
    std::vector<QByteArray> keys;
    for (int i = 0; i < 3000; ++i) {
        const QByteArray n = QByteArray::number(i);
        QByteArray key;
        switch (i % 4) {
        case 0:
            key = "fw:" + n;
            fill.push_back({"HSET", key, "w", "1", "n", "2"});
            break;
        case 1:
            key = "log:" + n;
            fill.push_back({"ZADD", key, QByteArray::number(now - i), "m"});
            break;
        case 2:
            key = "app:" + n;
            fill.push_back({"SET", key, "text"});
            break;
        default: // one shape, every type in turn
            key = "mixed:" + n;
            if (i % 3 == 0)
                fill.push_back({"SET", key, "7"});
            else if (i % 3 == 1)
                fill.push_back({"RPUSH", key, "x"});
            else
                fill.push_back({"SADD", key, "x"});
            break;
        }
        if (i % 5 == 0)
            fill.push_back({"PEXPIRE", key, "3600000"});
        keys.push_back(key);
    }
    m_conn->pipeline(fill);
    KeyRound typedRound;
    typedRound.nowUs = now;
    typedRound.memory = true;
    std::map<QByteArray, KeyRecord> expected;
    for (KeyRecord &r : readKeyRecords(*m_conn, keys, typedRound).records)
        expected.emplace(r.key, std::move(r));
    KeyScanner::Options options;
    options.count = 100;
    options.nowUs = now;
    options.memory = true;
    KeyScanner scanner(*m_conn, options);
    std::map<QByteArray, KeyRecord> found;
    for (int page = 0; page < 1000 && !scanner.atEnd(); ++page)
        for (KeyRecord &r : scanner.nextPage())
            QVERIFY(found.emplace(r.key, std::move(r)).second); // each key once
    QCOMPARE(found.size(), expected.size());
    for (const auto &[key, want] : expected) {
        const KeyRecord &got = found.at(key);
        QCOMPARE(got.type, want.type);
        QCOMPARE(got.kind.format, want.kind.format);
        QCOMPARE(got.pttlMs > 0, want.pttlMs > 0);
        QCOMPARE(got.pttlMs == -1, want.pttlMs == -1);
        QVERIFY(got.memory > 0);
    }
}

// One shape for limiters of two kinds and application strings, in the order SCAN gives: the
// keys guessed wrong are typed again, and the pass finds every limiter once, with its format,
// whether it runs at once or paused after each page.
void TestTop::aPassOfMixedShapesFindsEveryLimiter()
{
    const qint64 now = m_conn->command({"TIME"})[0].toInteger() * kSecond;
    std::vector<Command> fill;
    for (int i = 0; i < 600; ++i) {
        const QByteArray key = "mix:" + QByteArray::number(i);
        if (i % 20 == 7)
            fill.push_back({"ZADD", key, QByteArray::number(now - i), "m"});
        else if (i % 20 == 13)
            fill.push_back({"SET", key, "some text"});
        else
            fill.push_back({"HSET", key, "w", "1", "n", "2"});
    }
    m_conn->pipeline(fill);
    // What each key is, typed one by one.
    std::vector<QByteArray> keys;
    for (int i = 0; i < 600; ++i)
        keys.push_back("mix:" + QByteArray::number(i));
    KeyRound typedRound;
    typedRound.nowUs = now;
    typedRound.ttl = false;
    std::map<QByteArray, KeyFormat> expected;
    for (const KeyRecord &r : readKeyRecords(*m_conn, keys, typedRound).records)
        if (r.kind.isLimiter())
            expected.emplace(r.key, r.kind.format);
    QCOMPARE(expected.size(), size_t(570));
    for (const bool paused : {false, true}) {
        HotOptions options;
        options.scanCount = 25;
        options.nowUs = now;
        HotScanner scanner(options);
        int calls = 0;
        while (!scanner.scan(*m_conn, [paused] { return paused; })) {
            // Between calls nothing is in flight: the connection answers what it is asked next.
            QCOMPARE(m_conn->command({"PING"}).bytes(), QByteArray("PONG"));
            QVERIFY(++calls < 100);
        }
        QVERIFY(paused ? calls > 10 : calls == 0);
        const HotPass pass = scanner.secondRead(*m_conn);
        QCOMPARE(pass.scanned, 600);
        QCOMPARE(pass.limiters.size(), size_t(570));
        std::map<QByteArray, KeyFormat> found;
        for (const HotLimiter &l : pass.limiters)
            found.emplace(l.key, l.kind.format);
        QVERIFY(found == expected); // each once, as typed
        QCOMPARE(found["mix:7"], KeyFormat::ForeignSlidingLog);
        QCOMPARE(found["mix:8"], KeyFormat::FixedWindow);
        QVERIFY(pass.typed < pass.scanned);       // some types guessed
        QVERIFY(pass.guessedWrong > 0);           // the other kinds, among the hashes
        QVERIFY(pass.typed >= pass.guessedWrong); // each typed again
    }
    // A sample of 300: the keys guessed wrong among them are typed, none past it is read.
    HotOptions options;
    options.scanCount = 25;
    options.nowUs = now;
    options.sampleAbove = 300;
    const HotPass sample = HotScanner(options).run(*m_conn);
    QVERIFY(sample.sampled);
    QCOMPARE(sample.scanned, 300);
    std::map<QByteArray, KeyFormat> found;
    for (const HotLimiter &l : sample.limiters) {
        QVERIFY(found.emplace(l.key, l.kind.format).second);
        QCOMPARE(l.kind.format, expected.at(l.key));
    }
    QVERIFY2(found.size() >= 250 && found.size() <= 300, qPrintable(QString::number(found.size()))); // about 95% of 300
}

// Counter windows (another service's `<base>:<window id>` strings, 3-hour windows here):
// 2,500 of them, read in chunks of 1,000 (their windows in one MGET per chunk). Those whose
// current window grew between the two reads admitted exactly that; a window that appears
// between the reads counts from zero; the others admitted nothing.
void TestTop::counterWindowsRateFromTheirWindows()
{
    const qint64 nowS = m_conn->command({"TIME"})[0].toInteger();
    const QByteArray id = QByteArray::number(nowS / 10800), previousId = QByteArray::number(nowS / 10800 - 1);
    std::vector<Command> fill;
    for (int i = 0; i < 2500; ++i) {
        const QByteArray base = "cw:" + QByteArray::number(i);
        if (i != 7)
            fill.push_back({"SET", base + ":" + id, QByteArray::number(i % 5)});
        if (i % 3 == 0 || i == 7)
            fill.push_back({"SET", base + ":" + previousId, "9"});
    }
    m_conn->pipeline(fill);
    std::map<QByteArray, qint64> fired; // base, requests between the reads
    for (int i = 0; i < 2500; i += 125)
        fired["cw:" + QByteArray::number(i)] = 1 + i / 125;
    fired["cw:7"] = 4; // only its previous window existed at the first read
    HotOptions options;
    options.intervalUs = 3600 * kSecond;
    HotPass pass = HotScanner(options).run(*m_conn, [&] {
        for (const auto &[base, n] : fired)
            m_conn->command({"INCRBY", base + ":" + id, QByteArray::number(n)});
    });
    QCOMPARE(pass.limiters.size(), size_t(2500)); // one per base, whatever its windows
    qint64 quiet = 0;
    for (const HotLimiter &l : pass.limiters) {
        QCOMPARE(l.kind.format, KeyFormat::CounterWindow);
        QCOMPARE(l.kind.windowSeconds, 10800);
        const auto f = fired.find(l.key);
        QCOMPARE(l.admitted.value_or(-1), f == fired.end() ? 0 : f->second);
        quiet += f == fired.end() ? 1 : 0;
    }
    QCOMPARE(quiet, qint64(2500 - fired.size()));
}

// With limits (a policy), fill is used / limit and denying-now lists exactly the full ones.
void TestTop::fillAndDenyingNow()
{
    Policy api;
    api.name = QStringLiteral("api");
    api.match = "api:*";
    api.spec = {Algorithm::SlidingLog, 10, 60 * kSecond, 1};
    PolicyStore(*m_conn, QStringLiteral("ratescope:")).set(api, 0, QStringLiteral("t"));
    Limiter limiter(*m_conn);
    const LimitSpec spec{Algorithm::SlidingLog, 10, 60 * kSecond, 1};
    const int used[] = {2, 10, 7, 10, 0};
    for (int k = 0; k < 5; ++k)
        for (int i = 0; i < used[k]; ++i)
            limiter.check("api:" + QByteArray::number(k), spec);
    m_conn->command({"SET", "api:4", "not a limiter"});
    HotOptions options;
    options.intervalUs = 1000;
    options.policies = PolicyStore(*m_conn, QStringLiteral("ratescope:")).list();
    HotPass pass = HotScanner(options).run(*m_conn, [] {});
    QCOMPARE(pass.limiters.size(), size_t(4)); // the metadata and the string are no limiters
    std::vector<HotLimiter> byFill = pass.limiters;
    HotScanner::rank(byFill, HotOrder::Fill, 10);
    QCOMPARE(byFill[0].key, QByteArray("api:1"));
    QCOMPARE(byFill[1].key, QByteArray("api:3"));
    QCOMPARE(byFill[2].key, QByteArray("api:2"));
    QCOMPARE(*byFill[2].fill(), 0.7);
    QCOMPARE(byFill[3].key, QByteArray("api:0"));
    HotScanner::rank(pass.limiters, HotOrder::DenyingNow, 10);
    QCOMPARE(pass.limiters.size(), size_t(2));
    QCOMPARE(pass.limiters[0].key, QByteArray("api:1"));
    QCOMPARE(pass.limiters[1].key, QByteArray("api:3"));
}

// A part of the keyspace ranked by rate reads overrides only where counting needs the limits
// (token buckets); those shown get theirs before their usage is read: no view of them shows a
// policy's limit where an override is in force.
void TestTop::overridesOfAPartRankedByRate()
{
    Policy api;
    api.name = QStringLiteral("api");
    api.match = "api:*";
    api.spec = {Algorithm::SlidingLog, 10, 60 * kSecond, 1};
    Policy tb = api;
    tb.name = QStringLiteral("tb");
    tb.match = "tb:*";
    tb.spec = {Algorithm::TokenBucket, 10, 60 * kSecond, 1};
    PolicyStore store(*m_conn, QStringLiteral("ratescope:"));
    store.set(api, 0, QStringLiteral("t"));
    store.set(tb, 0, QStringLiteral("t"));
    Limiter limiter(*m_conn);
    for (int i = 0; i < 4; ++i) {
        limiter.check("api:a", api.spec);
        limiter.check("tb:a", tb.spec);
    }
    OverrideStore overrides(*m_conn, QStringLiteral("ratescope:"));
    for (const char *key : {"api:a", "tb:a"}) {
        Override o;
        o.key = key;
        o.limit = 50;
        overrides.set(o, 3600 * kSecond, QStringLiteral("t"));
    }
    HotOptions options;
    options.match = "*:a"; // a part of the keyspace
    options.intervalUs = 1000;
    options.readUsage = false;
    options.policies = store.list();
    HotScanner scanner(options);
    HotPass pass = scanner.run(*m_conn, [] {});
    QCOMPARE(pass.limiters.size(), size_t(2));
    HotScanner::rank(pass.limiters, HotOrder::Rate, 10);
    scanner.readUsage(*m_conn, pass.limiters, pass.nowUs);
    for (const HotLimiter &l : pass.limiters) {
        QVERIFY2(l.spec && l.usage, l.key.constData());
        QCOMPARE(l.spec->limit, 50);
        QCOMPARE(l.usage->decision.limit, 50);
        QCOMPARE(l.source, LimitSource::Override);
    }
}

// The CLI at an explicit now: log entries in the interval before it, busiest first, one JSON
// object per limiter and a last one for the pass; the table names the same order.
void TestTop::cliJsonAndTable()
{
    const qint64 now = 1795400000000000LL;
    std::vector<Command> fill;
    const int counts[] = {5, 40, 12, 0, 25};
    for (int k = 0; k < 5; ++k) {
        for (int i = 0; i < counts[k]; ++i)
            fill.push_back({"ZADD", "t:" + QByteArray::number(k), QByteArray::number(now - 1000 - i * 1000), QByteArray::number(10 + i)});
        fill.push_back({"ZADD", "t:" + QByteArray::number(k), QByteArray::number(now - 10 * kSecond), "old"}); // before the interval
    }
    m_conn->pipeline(fill);
    const QByteArray before = keyspaceSnapshot(*m_conn);
    const CliResult r =
        runCli(cli(QStringList{QStringLiteral("--json"), QStringLiteral("top"), QStringLiteral("--now-us"), QString::number(now)} +
                   args({"--interval", "5s", "--max", "3"})));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const auto lines = jsonObjects(r.out);
    QCOMPARE(lines.size(), size_t(4));
    const char *order[] = {"t:1", "t:4", "t:2"};
    const qint64 admitted[] = {40, 25, 12};
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(lines[size_t(i)].value(QStringLiteral("key")).toString(), QLatin1String(order[i]));
        QCOMPARE(lines[size_t(i)].value(QStringLiteral("admitted")).toInteger(), admitted[i]);
        QCOMPARE(lines[size_t(i)].value(QStringLiteral("rate")).toDouble(), double(admitted[i]) / 5);
        QCOMPARE(lines[size_t(i)].value(QStringLiteral("algorithm")).toString(), QStringLiteral("sliding-log"));
        QVERIFY(lines[size_t(i)].value(QStringLiteral("fill")).isNull()); // no limits: no fill
    }
    const QJsonObject pass = lines[3].value(QStringLiteral("pass")).toObject();
    QCOMPARE(pass.value(QStringLiteral("limiters")).toInt(), 5);
    QCOMPARE(pass.value(QStringLiteral("shown")).toInt(), 3);
    QCOMPARE(pass.value(QStringLiteral("keys")).toInt(), 5);
    QCOMPARE(pass.value(QStringLiteral("sampled")).toBool(true), false);
    QCOMPARE(keyspaceSnapshot(*m_conn), before); // read-only

    const CliResult table =
        runCli(cli(QStringList{QStringLiteral("top"), QStringLiteral("--now-us"), QString::number(now)} + args({"--interval", "5s"})));
    QVERIFY2(table.exitCode == 0, table.err.constData());
    const QList<QByteArray> rows = table.out.split('\n');
    QVERIFY2(rows[0].startsWith("top by rate") && rows[0].contains("5 limiters in 5 keys"), rows[0].constData());
    QVERIFY(rows[1].startsWith("KEY"));
    QVERIFY(rows[2].startsWith("t:1 ") && rows[3].startsWith("t:4 ") && rows[4].startsWith("t:2 ") && rows[5].startsWith("t:0 "));
}

void TestTop::cliRefusesBadInput_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::newRow("unknown order") << args({"top", "--by", "speed"});
    QTest::newRow("zero interval") << args({"top", "--interval", "0s"});
    QTest::newRow("interval above an hour") << args({"top", "--interval", "2h"});
    QTest::newRow("zero max") << args({"top", "--max", "0"});
    QTest::newRow("padded sample") << args({"top", "--sample", " 5"});
    QTest::newRow("broken glob") << args({"top", "--match", "a["});
}

void TestTop::cliRefusesBadInput()
{
    QFETCH(QStringList, arguments);
    const CliResult r = runCli(cli(arguments));
    QVERIFY2(r.exitCode == 2, r.err.constData());
    QVERIFY(r.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestTop)
#include "tst_top.moc"
