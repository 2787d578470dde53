// The limiter scripts through the core Limiter, against a real redis-server, with explicit
// time: worked examples, exact retry-after, a reference model over thousands of random
// steps, concurrency, peek purity, NOSCRIPT recovery, wrong types and invalid input.
// Runs twice (tests/CMakeLists.txt): through the script cache (EVALSHA), and with
// RATESCOPE_TEST_SCRIPT_CALLS=functions through the ratescope functions library (FCALL).
#include "redis/connection.h"
#include "base/errors.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "reference_model.h"
#include "limiters/scriptlibrary.h"
#include "limiters/slidingbuckets.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

using namespace ratescope;
using namespace ratescope::test;

Q_DECLARE_METATYPE(ratescope::Algorithm)

namespace {

constexpr qint64 kSecond = 1000000;
// A fixed, clock-aligned origin for explicit time: 2025-01-01T00:00:00Z, a multiple of every
// window used below.
constexpr qint64 kT0 = 1735689600LL * kSecond;

QString toString(const Decision &d)
{
    return QStringLiteral("%1 limit=%2 used=%3 remaining=%4 retry_after_us=%5 reset_after_us=%6")
        .arg(d.allowed ? QStringLiteral("allowed") : QStringLiteral("denied"))
        .arg(d.limit)
        .arg(d.used)
        .arg(d.remaining)
        .arg(d.retryAfterUs)
        .arg(d.resetAfterUs);
}

Decision fromModel(const reference::Decision &d)
{
    return {d.allowed, d.limit, d.used, d.remaining, d.retryAfterUs, d.resetAfterUs};
}

void addAlgorithmRows()
{
    QTest::addColumn<Algorithm>("algorithm");
    for (Algorithm a : kAllAlgorithms)
        QTest::newRow(qPrintable(algorithmName(a))) << a;
}

} // namespace

class TestLimiter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void slidingCounterWorkedExample();
    void workedExamples();
    void slidingBucketsWorkedExample();
    void slidingBucketsOvershootIsOneBucket();
    void retryAfterIsExact_data() { addAlgorithmRows(); }
    void retryAfterIsExact();
    void matchesReferenceModel_data();
    void matchesReferenceModel();
    void concurrentDecisionsAdmitExactlyTheLimit_data() { addAlgorithmRows(); }
    void concurrentDecisionsAdmitExactlyTheLimit();
    void peekWritesNothing_data() { addAlgorithmRows(); }
    void peekWritesNothing();
    void slidingLogStoresOneMemberPerRequest();
    void expiryIsRefreshed_data() { addAlgorithmRows(); }
    void expiryIsRefreshed();
    void fixedWindowExpiresWithItsWindow();
    void noscriptIsRecoveredOnce();
    void wrongTypeChangesNothing_data() { addAlgorithmRows(); }
    void wrongTypeChangesNothing();
    void wrongTypeIsReportedWithTheTypeFound_data() { addAlgorithmRows(); }
    void wrongTypeIsReportedWithTheTypeFound();
    void foreignStateChangesNothing();
    void hotPathCommands_data() { addAlgorithmRows(); }
    void hotPathCommands();
    void scriptsValidateBeforeWriting_data();
    void scriptsValidateBeforeWriting();
    void cliValidation_data();
    void cliValidation();
    void cliCheckAndPeek();
    void sharedHelpersAreIdentical();

private:
    Decision check(const QByteArray &key, Algorithm a, qint64 limit, qint64 windowUs, qint64 now, qint64 cost = 1)
    {
        return Limiter(*m_conn).check(key, {a, limit, windowUs, cost}, now);
    }
    Decision peek(const QByteArray &key, Algorithm a, qint64 limit, qint64 windowUs, qint64 now, qint64 cost = 1)
    {
        return Limiter(*m_conn).peek(key, {a, limit, windowUs, cost}, now);
    }
    ConnectionOptions readerOptions() const
    {
        ConnectionOptions o = m_server->options();
        o.user = QStringLiteral("reader");
        o.password = QStringLiteral("readerpw");
        return o;
    }
    ConnectionOptions adminOptions() const
    {
        ConnectionOptions o = m_server->options();
        o.user = QStringLiteral("admin");
        o.password = QStringLiteral("adminpw");
        return o;
    }
    QStringList cliBase() const { return {QStringLiteral("--url"), adminOptions().toUrl(true)}; }

    // The form under test, as the connection detected it.
    ScriptCalls calls() const { return LimiterScript::callsOn(*m_conn); }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestLimiter::initTestCase()
{
    m_server = std::make_unique<SandboxServer>(aclConfig());
    m_server->start();
    m_conn = std::make_unique<Connection>(adminOptions());
    const bool functions = qEnvironmentVariable("RATESCOPE_TEST_SCRIPT_CALLS") == QLatin1String("functions");
    if (functions)
        m_conn->command({"FUNCTION", "LOAD", FunctionLibrary::instance().code()});
    // The suite is only worth its name if the connection picked the form asked for.
    QCOMPARE(LimiterScript::callsOn(*m_conn), functions ? ScriptCalls::Functions : ScriptCalls::Evalsha);
    qInfo("limiter decisions through %s", functions ? "FCALL" : "EVALSHA");
}

void TestLimiter::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestLimiter::slidingCounterWorkedExample()
{
    // docs/scripts.md: window 60 s, previous window 8, current 3, 45 s in, limit 5: 2 + 3 + 1 > 5.
    const qint64 w = 60 * kSecond;
    const qint64 id = kT0 / w;
    m_conn->command({"HSET", "ex", "w", QByteArray::number(id), "c", "3", "p", "8"});
    const Decision d = check("ex", Algorithm::SlidingCounter, 5, w, kT0 + 45 * kSecond);
    QVERIFY2(!d.allowed, qPrintable(toString(d)));
    QCOMPARE(d.used, 5);
    QCOMPARE(d.remaining, 0);
    // With limit 6 the same request fits: 2 + 3 + 1 = 6.
    QVERIFY(check("ex", Algorithm::SlidingCounter, 6, w, kT0 + 45 * kSecond).allowed);
    // floor(8 * 15/60) = 2 holds until the weight drops a whole request: 8*x/60 < 2 once
    // x <= 14 s remain, i.e. 46 s in; with curr now 4, limit 6 admits again when
    // floor(8*x/60) <= 1, i.e. x < 15 s -> 45.000001 s in.
    const Decision denied = check("ex", Algorithm::SlidingCounter, 6, w, kT0 + 45 * kSecond);
    QVERIFY(!denied.allowed);
    QCOMPARE(denied.retryAfterUs, 1);
}

void TestLimiter::workedExamples()
{
    const qint64 w = 10 * kSecond;
    // Fixed window: 3 per 10 s, clock-aligned.
    for (int i = 0; i < 3; ++i)
        QVERIFY(check("fw", Algorithm::FixedWindow, 3, w, kT0 + 2 * kSecond).allowed);
    Decision d = check("fw", Algorithm::FixedWindow, 3, w, kT0 + 2 * kSecond);
    QVERIFY(!d.allowed);
    QCOMPARE(d.retryAfterUs, 8 * kSecond); // the window ends at kT0 + 10 s
    QCOMPARE(d.resetAfterUs, 8 * kSecond);
    QVERIFY(check("fw", Algorithm::FixedWindow, 3, w, kT0 + w).allowed); // new window

    // Sliding log: 3 per 10 s at t0, t0+1s, t0+2s; the next slot opens when t0's entry is
    // exactly one window old.
    for (int i = 0; i < 3; ++i)
        QVERIFY(check("sl", Algorithm::SlidingLog, 3, w, kT0 + i * kSecond).allowed);
    d = check("sl", Algorithm::SlidingLog, 3, w, kT0 + 3 * kSecond);
    QVERIFY(!d.allowed);
    QCOMPARE(d.used, 3);
    QCOMPARE(d.retryAfterUs, 7 * kSecond);
    QCOMPARE(d.resetAfterUs, 9 * kSecond); // the newest entry (t0+2s) expires at t0+12s
    QVERIFY(!check("sl", Algorithm::SlidingLog, 3, w, kT0 + w - 1).allowed);
    d = check("sl", Algorithm::SlidingLog, 3, w, kT0 + w);
    QVERIFY(d.allowed);
    QCOMPARE(d.used, 3);

    // Token bucket: 10 per 10 s = one token a second, starting full.
    for (int i = 0; i < 10; ++i)
        QVERIFY(check("tb", Algorithm::TokenBucket, 10, w, kT0).allowed);
    d = check("tb", Algorithm::TokenBucket, 10, w, kT0);
    QVERIFY(!d.allowed);
    QCOMPARE(d.retryAfterUs, kSecond);
    QCOMPARE(d.resetAfterUs, w);
    d = check("tb", Algorithm::TokenBucket, 10, w, kT0 + 2500000, 2); // 2.5 tokens back, takes 2
    QVERIFY(d.allowed);
    QCOMPARE(d.remaining, 0); // half a token left
    d = check("tb", Algorithm::TokenBucket, 10, w, kT0 + 2500000, 3);
    QCOMPARE(d.retryAfterUs, 2500000); // needs 2.5 more tokens

    // GCRA: 10 per 10 s: a burst of 10, then one every second.
    for (int i = 0; i < 10; ++i)
        QVERIFY(check("g", Algorithm::Gcra, 10, w, kT0).allowed);
    d = check("g", Algorithm::Gcra, 10, w, kT0);
    QVERIFY(!d.allowed);
    QCOMPARE(d.retryAfterUs, kSecond);
    QVERIFY(check("g", Algorithm::Gcra, 10, w, kT0 + kSecond).allowed);
    QVERIFY(!check("g", Algorithm::Gcra, 10, w, kT0 + kSecond).allowed);

    // GCRA with an interval that is not a whole microsecond: 3 per 10 ms = 3333.33 us.
    const qint64 tenMs = 10000;
    for (int i = 0; i < 3; ++i)
        QVERIFY(check("g3", Algorithm::Gcra, 3, tenMs, kT0).allowed);
    d = check("g3", Algorithm::Gcra, 3, tenMs, kT0);
    QCOMPARE(d.retryAfterUs, 3334); // ceil(3333.33)
}

void TestLimiter::slidingBucketsWorkedExample()
{
    // The script header's example: window 60 s, B = 6 (10 s buckets), counts 3, 0, 0, 0, 0, 2, 4
    // for buckets id - 6 .. id, 4 s into the current bucket, limit 8: floor(3 * 6 / 10) + 6 = 7.
    const qint64 w = 60 * kSecond, width = 10 * kSecond;
    const qint64 start = (kT0 / width) * width; // the start of bucket id
    LimitSpec spec{Algorithm::SlidingBuckets, 8, w, 1, 6};
    Limiter limiter(*m_conn);
    for (int i = 0; i < 3; ++i)
        QVERIFY(limiter.check("sb", spec, start - 6 * width + kSecond).allowed);
    for (int i = 0; i < 2; ++i)
        QVERIFY(limiter.check("sb", spec, start - width + kSecond).allowed);
    for (int i = 0; i < 4; ++i)
        QVERIFY(limiter.check("sb", spec, start + kSecond).allowed);
    const Decision peeked = limiter.peek("sb", spec, start + 4 * kSecond);
    QVERIFY(peeked.allowed);
    QCOMPARE(peeked.used, 8); // 7 in use, + this request
    QVERIFY(limiter.check("sb", spec, start + 4 * kSecond).allowed);
    const Decision denied = limiter.check("sb", spec, start + 4 * kSecond);
    QVERIFY(!denied.allowed);
    QCOMPARE(denied.used, 8);
    // floor(3 * y / 10 s) <= 0 once y < 3.333334 s of the old bucket is left: 6.666667 s into
    // the current bucket, 2.666667 s from now.
    QCOMPARE(denied.retryAfterUs, 2666667);
    QVERIFY(!limiter.check("sb", spec, start + 4 * kSecond + denied.retryAfterUs - 1).allowed);
    QVERIFY(limiter.check("sb", spec, start + 4 * kSecond + denied.retryAfterUs).allowed);
    // A bad bucket count is refused before anything is written.
    const QByteArray dump = m_conn->command({"DUMP", "sb"}).bytes();
    const LimiterScript &script = LimiterScript::forAlgorithm(Algorithm::SlidingBuckets);
    for (const QByteArray &b : {QByteArray("0"), QByteArray("9999"), QByteArray("-6")}) {
        const Reply r = m_conn
                            ->pipeline({script.command("sb", {"8", "60000000", "1", QByteArray::number(start + 5 * kSecond), "check", b},
                                                       false, calls())})
                            .front();
        QVERIFY2(r.isError() && r.text().startsWith(QStringLiteral("ERR ratescope: buckets must be")), qPrintable(r.debugString()));
    }
    QCOMPARE(m_conn->command({"DUMP", "sb"}).bytes(), dump);
    // What it stores: one field per bucket with admissions, and its bookkeeping.
    const Reply all = m_conn->command({"HGETALL", "sb"});
    QCOMPARE(all.size(), 2 * (3 + 5));
    QCOMPARE(m_conn->command({"HGET", "sb", "t"}).bytes(), QByteArray("11")); // 3 + 2 + 4 + 1 + 1
    QCOMPARE(m_conn->command({"HGET", "sb", "bn"}).bytes(), QByteArray("6"));
    QCOMPARE(m_conn->command({"HGET", "sb", "ws"}).bytes(), QByteArray::number(w));
}

void TestLimiter::slidingBucketsOvershootIsOneBucket()
{
    // In any window-long span it admits at most the limit plus what the partly covered bucket
    // holds. Spread over the window (here one request per 1 s bucket) that is limit * (1 + 1/B);
    // a burst held in one bucket can nearly double it, as with the sliding counter.
    const qint64 w = 60 * kSecond, width = kSecond;
    const qint64 base = (kT0 / w) * w;
    const LimitSpec spec{Algorithm::SlidingBuckets, 60, w, 1, 60};
    Limiter limiter(*m_conn);
    std::vector<qint64> admitted; // times
    // Spread: a request every 100 ms for three windows.
    for (qint64 t = base; t < base + 3 * w; t += 100000)
        if (limiter.check("even", spec, t).allowed)
            admitted.push_back(t);
    qint64 most = 0;
    for (size_t i = 0; i < admitted.size(); ++i) {
        const auto end = std::lower_bound(admitted.begin(), admitted.end(), admitted[i] + w);
        most = std::max<qint64>(most, end - (admitted.begin() + qint64(i)));
    }
    QVERIFY2(most >= 60 && most <= 60 + 60 / 60, qPrintable(QString::number(most)));

    // A burst at the end of one bucket, then requests as it becomes the weighted bucket.
    const qint64 burstAt = base + w + width - 1;
    for (int i = 0; i < 60; ++i)
        QVERIFY(limiter.check("burst", spec, burstAt).allowed);
    qint64 again = 0;
    const qint64 later = burstAt + w - 2; // still within one window of the burst
    while (again < 100 && limiter.check("burst", spec, later).allowed)
        ++again;
    // 3 us of the burst's bucket are left inside the window: it weighs floor(60 * 3 us / 1 s) = 0,
    // so the whole limit passes again, 2x within one window-long span (the sliding counter's
    // worst case too; a sliding log would admit none).
    QCOMPARE(again, 60);
}

void TestLimiter::retryAfterIsExact()
{
    QFETCH(Algorithm, algorithm);
    QRandomGenerator rng(42);
    int denials = 0;
    for (int scenario = 0; scenario < 40; ++scenario) {
        const QByteArray key = "retry:" + QByteArray::number(scenario);
        const qint64 limit = 1 + rng.bounded(20);
        const qint64 window = kSecond * (1 + rng.bounded(60)) + rng.bounded(1000000);
        qint64 now = kT0 + rng.bounded(window);
        // Fill until denied, with random costs and small pauses.
        Decision d;
        for (int i = 0; i < 200; ++i) {
            const qint64 cost = 1 + rng.bounded(limit);
            d = check(key, algorithm, limit, window, now, cost);
            if (!d.allowed) {
                ++denials;
                QVERIFY2(d.retryAfterUs > 0, qPrintable(toString(d)));
                // Same request just before: denied (by peek and by check); at retry_after: allowed.
                const qint64 before = now + d.retryAfterUs - 1;
                QVERIFY2(!peek(key, algorithm, limit, window, before, cost).allowed, qPrintable(toString(d)));
                QVERIFY2(!check(key, algorithm, limit, window, before, cost).allowed, qPrintable(toString(d)));
                const Decision at = check(key, algorithm, limit, window, now + d.retryAfterUs, cost);
                QVERIFY2(at.allowed, qPrintable(toString(d) + QStringLiteral(" -> ") + toString(at)));
                break;
            }
            QCOMPARE(d.retryAfterUs, 0);
            now += rng.bounded(window / 8);
        }
    }
    QVERIFY2(denials >= 30, qPrintable(QString::number(denials))); // the scenarios did reach the limit
}

void TestLimiter::matchesReferenceModel_data()
{
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<qint64>("limit");
    QTest::addColumn<qint64>("window");
    QTest::addColumn<int>("buckets");
    struct Params {
        qint64 limit, window;
    };
    // Windows stay >= 10 s: the keys' expiry runs on the server's real clock while these
    // tests move an explicit clock, and the replay must finish before a key could expire.
    const Params params[] = {
        {5, 10 * kSecond}, {100, 60 * kSecond},    {7, 10 * kSecond + 3}, {1000, 3600 * kSecond}, {1000000, 366LL * 86400 * kSecond},
        {1, 10 * kSecond}, {333, 17 * kSecond + 1}};
    for (Algorithm a : kAllAlgorithms)
        for (const Params &p : params)
            QTest::addRow("%s L=%lld W=%lld", qPrintable(algorithmName(a)), p.limit, p.window)
                << a << p.limit << p.window << kDefaultBuckets;
    // sliding-buckets with other bucket counts: widths of a whole number of microseconds and
    // not (10 s / 7, 17 s + 1 / 13), the fewest and the most buckets.
    struct BucketParams {
        qint64 limit, window;
        int buckets;
    };
    const BucketParams bucketParams[] = {{5, 10 * kSecond, 2},     {50, 10 * kSecond, 7},     {333, 17 * kSecond + 1, 13},
                                         {20, 60 * kSecond, 3600}, {1000, 3600 * kSecond, 3}, {1000000, 366LL * 86400 * kSecond, 1000},
                                         {3, 10 * kSecond + 3, 10}};
    for (const BucketParams &p : bucketParams)
        QTest::addRow("sliding-buckets L=%lld W=%lld B=%d", p.limit, p.window, p.buckets)
            << Algorithm::SlidingBuckets << p.limit << p.window << p.buckets;
}

void TestLimiter::matchesReferenceModel()
{
    QFETCH(Algorithm, algorithm);
    QFETCH(qint64, limit);
    QFETCH(qint64, window);
    QFETCH(int, buckets);
    const std::string name = algorithmName(algorithm).toStdString();
    QRandomGenerator rng(quint32(limit * 31 + window % 1000 + int(algorithm)));

    struct Step {
        qint64 now, cost;
        bool peek;
        int segment; // a fresh key and model each time the clock has run far ahead
    };
    std::vector<Step> steps;
    qint64 now = kT0 + rng.bounded(window);
    int segment = 0;
    const int count = 3000;
    for (int i = 0; i < count; ++i) {
        if (now > kT0 + 40 * 366LL * 86400 * kSecond) { // the scripts accept times up to 2^52 us (2112)
            ++segment;
            now = kT0 + rng.bounded(window);
        }
        switch (rng.bounded(10)) {
        case 0: // exact window edge
            now = (now / window + 1) * window;
            break;
        case 1: // an edge minus or plus one microsecond
            now = (now / window + 1) * window + (rng.bounded(2) ? 1 : -1);
            break;
        case 9: // sliding-buckets: the first microsecond of the next bucket, or one before or after it
            if (algorithm == Algorithm::SlidingBuckets) {
                const qint64 next = bucketOf(now, window, buckets).id + 1;
                now = qint64((__int128(next) * window + buckets - 1) / buckets) + qint64(rng.bounded(3)) - 1;
                break;
            }
            now += rng.bounded(window / std::max<qint64>(1, limit) + 2);
            break;
        case 2: // long pause
            now += rng.bounded(2 * window);
            break;
        case 3:
        case 4: // burst: same microsecond
            break;
        default: // steady trickle
            now += rng.bounded(window / std::max<qint64>(1, limit) + 2);
            break;
        }
        const qint64 maxCost = rng.bounded(8) == 0 ? limit : std::min<qint64>(limit, 5);
        steps.push_back({now, 1 + qint64(rng.bounded(quint64(maxCost))), rng.bounded(6) == 0, segment});
    }
    std::vector<std::unique_ptr<reference::Model>> models;
    for (int i = 0; i <= segment; ++i)
        models.push_back(reference::makeModel(name, limit, window, buckets));
    auto keyOf = [](const Step &s) { return "model:" + QByteArray::number(s.segment); };
    // The steps do not depend on the answers, so they go in pipelines of 500.
    const LimiterScript &script = LimiterScript::forAlgorithm(algorithm);
    script.load(*m_conn);
    for (size_t first = 0; first < steps.size(); first += 500) {
        std::vector<Command> batch;
        for (size_t i = first; i < std::min(steps.size(), first + 500); ++i) {
            const Step &s = steps[i];
            batch.push_back(script.command(
                keyOf(s), Limiter::arguments(keyOf(s), {algorithm, limit, window, s.cost, buckets}, s.now, s.peek), s.peek, calls()));
        }
        const auto replies = m_conn->pipeline(batch);
        for (size_t j = 0; j < replies.size(); ++j) {
            const Step &s = steps[first + j];
            reference::Model &model = *models[size_t(s.segment)];
            const Decision expected = fromModel(s.peek ? model.peek(s.now, s.cost) : model.check(s.now, s.cost));
            if (replies[j].isError())
                QFAIL(qPrintable(QStringLiteral("step %1: %2").arg(first + j).arg(replies[j].text())));
            const Decision actual = Decision::fromReply(replies[j]);
            if (actual != expected)
                QFAIL(
                    qPrintable(QStringLiteral("step %1 (now=t0+%2us cost=%3 %4): script %5, model %6")
                                   .arg(first + j)
                                   .arg(s.now - kT0)
                                   .arg(s.cost)
                                   .arg(s.peek ? QStringLiteral("peek") : QStringLiteral("check"), toString(actual), toString(expected))));
        }
    }
}

void TestLimiter::concurrentDecisionsAdmitExactlyTheLimit()
{
    QFETCH(Algorithm, algorithm);
    const QByteArray key = "concurrent:" + algorithmName(algorithm).toUtf8();
    const LimitSpec spec{algorithm, 500, 3600 * kSecond, 1};
    std::atomic<int> allowed{0};
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            try {
                Connection c(adminOptions());
                const LimiterScript &script = LimiterScript::forAlgorithm(algorithm);
                script.load(c);
                for (int round = 0; round < 2000 / 16; ++round) {
                    std::vector<Command> batch;
                    // Every thread on the same explicit instant: no refill can blur the count.
                    for (int i = 0; i < 16; ++i)
                        batch.push_back(
                            script.command(key, Limiter::arguments(key, spec, kT0 + t, false), false, LimiterScript::callsOn(c)));
                    for (const Reply &r : c.pipeline(batch))
                        allowed += Decision::fromReply(r).allowed ? 1 : 0;
                }
            } catch (const std::exception &) {
                ++errors;
            }
        });
    }
    for (auto &th : threads)
        th.join();
    QCOMPARE(errors.load(), 0);
    QCOMPARE(allowed.load(), 500);
}

void TestLimiter::peekWritesNothing()
{
    QFETCH(Algorithm, algorithm);
    const qint64 w = 10 * kSecond;
    for (int i = 0; i < 5; ++i)
        check("p", algorithm, 5, w, kT0 + i * kSecond);
    const QByteArray before = m_conn->command({"DUMP", "p"}).bytes();
    QVERIFY(!before.isEmpty());
    Connection reader(readerOptions());
    Limiter readOnly(reader);
    // At several times, including ones where entries have expired or windows rolled over.
    for (qint64 at : {kT0 + 5 * kSecond, kT0 + w, kT0 + w + 3 * kSecond, kT0 + 5 * w}) {
        const Decision viaAdmin = peek("p", algorithm, 5, w, at);
        const Decision viaReader = readOnly.peek("p", {algorithm, 5, w, 1}, at);
        QCOMPARE(viaReader, viaAdmin);
    }
    QCOMPARE(m_conn->command({"DUMP", "p"}).bytes(), before);
    // Peek on a missing key creates nothing.
    readOnly.peek("absent", {algorithm, 5, w, 1}, kT0);
    QCOMPARE(m_conn->command({"EXISTS", "absent"}).integer(), 0);
    // The read-only user may peek but not decide.
    try {
        readOnly.check("p", {algorithm, 5, w, 1}, kT0 + 6 * kSecond);
        QFAIL("a read-only user could consume");
    } catch (const ReplyError &e) {
        QVERIFY2(e.prefix() == QLatin1String("NOPERM") || e.message().contains(QStringLiteral("NOPERM")), qPrintable(e.message()));
    }
    QCOMPARE(m_conn->command({"DUMP", "p"}).bytes(), before);
}

void TestLimiter::slidingLogStoresOneMemberPerRequest()
{
    const qint64 w = 60 * kSecond;
    QVERIFY(check("log", Algorithm::SlidingLog, 100, w, kT0, 40).allowed);
    QVERIFY(check("log", Algorithm::SlidingLog, 100, w, kT0, 1).allowed);
    for (int i = 0; i < 50; ++i)
        check("log", Algorithm::SlidingLog, 100, w, kT0 + 1, 1); // many in one microsecond
    QCOMPARE(m_conn->command({"ZCARD", "log"}).integer(), 52);   // not 91: one member per request
    const Decision d = peek("log", Algorithm::SlidingLog, 100, w, kT0 + 1);
    QCOMPARE(d.used, 92); // peek answers as check would: 91 in the window, plus this request
    // Members are short and unique: at most a few characters for these tickets.
    const Reply members = m_conn->command({"ZRANGE", "log", "0", "-1"});
    QSet<QByteArray> unique;
    for (const Reply &m : members.elements()) {
        QVERIFY2(m.bytes().size() <= 8, m.bytes().constData());
        unique.insert(m.bytes());
    }
    QCOMPARE(unique.size(), int(members.size()));
}

void TestLimiter::expiryIsRefreshed()
{
    QFETCH(Algorithm, algorithm);
    const qint64 w = 30 * kSecond;
    check("ttl", algorithm, 5, w, kT0);
    const qint64 pttl = m_conn->command({"PTTL", "ttl"}).integer();
    QVERIFY2(pttl > 0, qPrintable(QString::number(pttl)));
    QVERIFY2(pttl <= 2 * w / 1000, qPrintable(QString::number(pttl))); // about one window (two for the counter)
}

void TestLimiter::fixedWindowExpiresWithItsWindow()
{
    // The first admission of a window sets the expiry to the time left in it plus one window (from
    // now, on the server's clock); later admissions only add to the count and leave it alone.
    const qint64 w = 10 * kSecond;
    auto pttl = [&](const QByteArray &key) { return m_conn->command({"PTTL", key}).integer(); };
    QVERIFY(check("fw", Algorithm::FixedWindow, 5, w, kT0 + 2 * kSecond).allowed);
    const qint64 first = pttl("fw");
    QVERIFY2(first > 17000 && first <= 18000, qPrintable(QString::number(first)));
    m_conn->command({"PEXPIRE", "fw", "500000"}); // marks the expiry: the next admissions keep it
    QCOMPARE(check("fw", Algorithm::FixedWindow, 5, w, kT0 + 9 * kSecond, 2).used, 3);
    QVERIFY(pttl("fw") > 8000);
    QCOMPARE(m_conn->command({"HGET", "fw", "n"}).bytes(), QByteArray("3"));
    // A new window: written whole, with the new window's expiry.
    QCOMPARE(check("fw", Algorithm::FixedWindow, 5, w, kT0 + 10 * kSecond + 500 * 1000).used, 1);
    const qint64 next = pttl("fw");
    QVERIFY2(next > 18500 && next <= 19500, qPrintable(QString::number(next)));
    QCOMPARE(m_conn->command({"HGET", "fw", "w"}).bytes(), QByteArray::number(kT0 / w + 1));
    // A count in the current window with leading zeros (digits all the same, not what the script
    // writes) is rewritten whole rather than added to.
    m_conn->command({"HSET", "fw0", "w", QByteArray::number(kT0 / w), "n", "007"});
    QCOMPARE(check("fw0", Algorithm::FixedWindow, 10, w, kT0 + 4 * kSecond).used, 8);
    QCOMPARE(m_conn->command({"HGET", "fw0", "n"}).bytes(), QByteArray("8"));
    const qint64 left = pttl("fw0");
    QVERIFY2(left > 15000 && left <= 16000, qPrintable(QString::number(left)));
}

void TestLimiter::noscriptIsRecoveredOnce()
{
    const LimitSpec spec{Algorithm::SlidingLog, 10, 60 * kSecond, 1};
    Limiter limiter(*m_conn);
    QCOMPARE(limiter.check("ns", spec, kT0).used, 1);
    m_conn->command({"SCRIPT", "FLUSH"});
    // The script is reloaded and run once: the request is counted once, not twice.
    QCOMPARE(limiter.check("ns", spec, kT0).used, 2);
    m_conn->command({"SCRIPT", "FLUSH"});
    Connection reader(readerOptions());                      // may not SCRIPT LOAD: EVAL_RO it is
    QCOMPARE(Limiter(reader).peek("ns", spec, kT0).used, 3); // 2 counted, plus the one asked about
    QCOMPARE(Limiter(*m_conn).peek("ns", spec, kT0).used, 3);
}

void TestLimiter::wrongTypeChangesNothing()
{
    QFETCH(Algorithm, algorithm);
    // A string suits no algorithm; a list neither.
    m_conn->command({"SET", "s", "customer-42"});
    m_conn->command({"RPUSH", "l", "a"});
    for (const QByteArray &key : {QByteArray("s"), QByteArray("l")}) {
        const QByteArray before = m_conn->command({"DUMP", key}).bytes();
        for (bool isPeek : {false, true}) {
            try {
                if (isPeek)
                    peek(key, algorithm, 5, 10 * kSecond, kT0);
                else
                    check(key, algorithm, 5, 10 * kSecond, kT0);
                QFAIL("wrong type accepted");
            } catch (const ReplyError &e) {
                QCOMPARE(e.prefix(), QStringLiteral("WRONGTYPE"));
                QVERIFY2(e.message().contains(QString::fromUtf8(key)), qPrintable(e.message()));
                QVERIFY2(e.message().contains(storageType(algorithm)), qPrintable(e.message()));
            }
        }
        QCOMPARE(m_conn->command({"DUMP", key}).bytes(), before);
    }
    const CliResult r =
        runCli(cliBase() + QStringList{QStringLiteral("check"), QStringLiteral("s"), QStringLiteral("--algo"), algorithmName(algorithm),
                                       QStringLiteral("--limit"), QStringLiteral("5"), QStringLiteral("--window"), QStringLiteral("10s")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("WRONGTYPE"));
    QCOMPARE(m_conn->command({"GET", "s"}).text(), QStringLiteral("customer-42"));
}

void TestLimiter::wrongTypeIsReportedWithTheTypeFound()
{
    // The scripts learn of a wrong type from their first read's WRONGTYPE error (no TYPE call
    // on the way) and word it as docs/scripts.md shows, for check and peek alike.
    QFETCH(Algorithm, algorithm);
    const bool log = algorithm == Algorithm::SlidingLog;
    const QByteArray key = "other";
    if (log)
        m_conn->command({"HSET", key, "tat", "1", "f", "0"}); // a GCRA limiter
    else
        m_conn->command({"ZADD", key, QByteArray::number(kT0), "11"}); // a sliding log
    const QByteArray before = m_conn->command({"DUMP", key}).bytes();
    const QString expected =
        QStringLiteral("WRONGTYPE key 'other' holds a %1, %2 needs a %3")
            .arg(log ? QStringLiteral("hash") : QStringLiteral("zset"), algorithmName(algorithm), storageType(algorithm));
    for (bool isPeek : {false, true}) {
        try {
            if (isPeek)
                peek(key, algorithm, 5, 10 * kSecond, kT0 + 20 * kSecond);
            else
                check(key, algorithm, 5, 10 * kSecond, kT0 + 20 * kSecond);
            QFAIL("wrong type accepted");
        } catch (const ReplyError &e) {
            QCOMPARE(e.message(), expected);
        }
    }
    QCOMPARE(m_conn->command({"DUMP", key}).bytes(), before);
}

void TestLimiter::foreignStateChangesNothing()
{
    // A hash or sorted set of the right type that the script did not write is an error, and
    // nothing is written first: not the state, not a prune, not an expiry.
    const qint64 w = 10 * kSecond;
    auto expectError = [&](const QByteArray &key, Algorithm a, qint64 now, const QString &start) {
        const QByteArray before = m_conn->command({"DUMP", key}).bytes();
        const qint64 expiry = m_conn->command({"PEXPIRETIME", key}).integer();
        for (bool isPeek : {false, true}) {
            try {
                if (isPeek)
                    peek(key, a, 5, w, now);
                else
                    check(key, a, 5, w, now);
                QFAIL(qPrintable(QStringLiteral("%1 accepted %2").arg(algorithmName(a), QString::fromUtf8(key))));
            } catch (const ReplyError &e) {
                QVERIFY2(e.message().startsWith(start), qPrintable(e.message()));
            }
        }
        QCOMPARE(m_conn->command({"DUMP", key}).bytes(), before);
        QCOMPARE(m_conn->command({"PEXPIRETIME", key}).integer(), expiry);
    };
    // A hash with none of our fields: the missing key is told apart from it.
    m_conn->command({"HSET", "h", "customer", "42"});
    const QPair<Algorithm, QString> hashes[] = {
        {Algorithm::SlidingCounter, QStringLiteral("sliding counter (field w is missing)")},
        {Algorithm::FixedWindow, QStringLiteral("fixed window (field w is missing)")},
        {Algorithm::TokenBucket, QStringLiteral("token bucket (field tk is missing)")},
        {Algorithm::Gcra, QStringLiteral("GCRA limiter (field tat is missing)")},
    };
    for (const auto &[a, what] : hashes)
        expectError("h", a, kT0, QStringLiteral("ERR ratescope: key 'h' is not a ratescope ") + what);
    // One field of ours, the next one not.
    m_conn->command({"HSET", "h2", "w", "1"});
    expectError("h2", Algorithm::FixedWindow, kT0,
                QStringLiteral("ERR ratescope: key 'h2' is not a ratescope fixed window (field n is missing)"));

    const QString notALog = QStringLiteral("ERR ratescope: key 'z' is not a ratescope sliding log");
    // Every entry long expired: still not ours, so not pruned and taken over.
    m_conn->command({"ZADD", "z", QByteArray::number(kT0 - 5 * w), "alice", QByteArray::number(kT0 - 4 * w), "bob"});
    expectError("z", Algorithm::SlidingLog, kT0, notALog);
    // Our newest entry, an expired first one, and a live one between that is not ours: the
    // expired entry stays (the prune comes after every read).
    m_conn->command({"DEL", "z"});
    m_conn->command(
        {"ZADD", "z", QByteArray::number(kT0 - 2 * w), "13", QByteArray::number(kT0 - kSecond), "bob", QByteArray::number(kT0), "14"});
    m_conn->command({"PEXPIRE", "z", "600000"});
    expectError("z", Algorithm::SlidingLog, kT0, notALog);
    // The same with that entry first.
    m_conn->command({"ZREM", "z", "13"});
    expectError("z", Algorithm::SlidingLog, kT0, notALog);
}

void TestLimiter::hotPathCommands()
{
    // What a decision asks of the server, counted by INFO commandstats (the script's or the
    // function's own commands, whichever form runs): no TYPE call, one read for a hash and two
    // for a log (newest and oldest entries), then the write and its expiry; a fixed window only
    // adds to its count (HINCRBY) once its window has started.
    QFETCH(Algorithm, algorithm);
    const bool log = algorithm == Algorithm::SlidingLog;
    const bool fixed = algorithm == Algorithm::FixedWindow;
    const qint64 w = 60 * kSecond;
    auto commandsOf = [&](const std::function<void()> &run) {
        m_conn->command({"CONFIG", "RESETSTAT"});
        run();
        QMap<QString, qint64> calls;
        const QString info = m_conn->command({"INFO", "commandstats"}).text();
        static const QRegularExpression re(QStringLiteral("^cmdstat_([a-z_|]+):calls=(\\d+)"), QRegularExpression::MultilineOption);
        for (auto it = re.globalMatch(info); it.hasNext();) {
            const auto m = it.next();
            const QString name = m.captured(1);
            static const QStringList callers = {QStringLiteral("config"), QStringLiteral("info"),     QStringLiteral("evalsha"),
                                                QStringLiteral("fcall"),  QStringLiteral("function"), QStringLiteral("script")};
            if (std::none_of(callers.begin(), callers.end(), [&](const QString &c) { return name.startsWith(c); }))
                calls.insert(name, m.captured(2).toLongLong());
        }
        return calls;
    };
    using Calls = QMap<QString, qint64>;
    const LimiterScript &script = LimiterScript::forAlgorithm(algorithm);
    script.load(*m_conn);
    for (int i = 0; i < 3; ++i)
        check("hot", algorithm, 4, w, kT0 + i);
    const QString read = log ? QStringLiteral("zrange") : QStringLiteral("hmget");
    const QString write = log ? QStringLiteral("zadd") : QStringLiteral("hset");
    const qint64 reads = log ? 2 : 1;
    // Admitted (the fourth of four), then denied, then a peek: explicit time, nothing expired.
    QCOMPARE(commandsOf([&] { QVERIFY(check("hot", algorithm, 4, w, kT0 + 3).allowed); }),
             fixed ? (Calls{{read, 1}, {QStringLiteral("hincrby"), 1}})
                   : (Calls{{read, reads}, {write, 1}, {QStringLiteral("pexpire"), 1}}));
    // (sliding-buckets reads more buckets on a denial only when the ones it has do not say
    // when this cost fits: here all is in the current bucket.)
    const qint64 deniedReads = reads;
    QCOMPARE(commandsOf([&] { QVERIFY(!check("hot", algorithm, 4, w, kT0 + 4).allowed); }), (Calls{{read, deniedReads}}));
    QCOMPARE(commandsOf([&] { QVERIFY(!peek("hot", algorithm, 4, w, kT0 + 4).allowed); }), (Calls{{read, deniedReads}}));
    // The server's clock costs one TIME (the first decision on a fresh key has nothing to
    // read but the newest entry, resp. the fields and whether the key exists).
    const LimitSpec spec{algorithm, 1, 3600 * kSecond, 1};
    QCOMPARE(commandsOf([&] { QVERIFY(Limiter(*m_conn).check("hot2", spec).allowed); }),
             (Calls{{QStringLiteral("time"), 1},
                    {read, 1},
                    {log ? QStringLiteral("zadd") : QStringLiteral("exists"), 1},
                    {write, 1},
                    {QStringLiteral("pexpire"), 1}}));
    bool allowed = false;
    const Calls calls = commandsOf([&] { allowed = Limiter(*m_conn).check("hot2", spec).allowed; });
    Calls expected{{QStringLiteral("time"), 1}, {read, allowed ? reads : deniedReads}};
    if (allowed) { // a window boundary fell between the two
        expected.insert(write, 1);
        expected.insert(QStringLiteral("pexpire"), 1);
    }
    QCOMPARE(calls, expected);
}

void TestLimiter::scriptsValidateBeforeWriting_data()
{
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<QList<QByteArray>>("argv");
    const QList<QList<QByteArray>> bad = {
        {"0", "1000000", "1", "", "check"},             // limit 0
        {"1000000000001", "1000000", "1", "", "check"}, // limit above 10^12
        {"abc", "1000000", "1", "", "check"},           // limit not a number
        {"5", "999", "1", "", "check"},                 // window under 1 ms
        {"5", "31622400000001", "1", "", "check"},      // window over 366 days
        {"5", "1000000", "0", "", "check"},             // cost 0
        {"5", "1000000", "6", "", "check"},             // cost above the limit
        {"5", "1000000", "1.5", "", "check"},           // fractional cost
        {"5", "1000000", "1", "-1", "check"},           // negative now
    };
    for (Algorithm a : kAllAlgorithms)
        for (int i = 0; i < bad.size(); ++i)
            QTest::addRow("%s #%d", qPrintable(algorithmName(a)), i) << a << bad[i];
    // sliding-buckets' own argument, B.
    const QList<QList<QByteArray>> badBuckets = {
        {"5", "1000000", "1", "", "check", "1"},    // one bucket: a sliding counter
        {"5", "1000000", "1", "", "check", "3601"}, // more than 3600
        {"5", "1000000", "1", "", "check", "x"},    // not a number
        {"5", "1000000", "1", "", "check", " 6"},   // not digits only
        {"5", "1000000", "1", "", "check", "6.0"},  // a fraction
        {"5", "1000", "1", "", "check", "3600"},    // buckets narrower than 1 us
    };
    for (int i = 0; i < badBuckets.size(); ++i)
        QTest::addRow("sliding-buckets B #%d", i) << Algorithm::SlidingBuckets << badBuckets[i];
}

void TestLimiter::scriptsValidateBeforeWriting()
{
    // Services call the scripts directly, without our C++ validation in front.
    QFETCH(Algorithm, algorithm);
    QFETCH(QList<QByteArray>, argv);
    const LimiterScript &script = LimiterScript::forAlgorithm(algorithm);
    script.load(*m_conn);
    const Reply r = m_conn->pipeline({script.command("v", argv, false, calls())}).front();
    QVERIFY2(r.isError(), qPrintable(r.debugString()));
    QVERIFY2(r.text().startsWith(QStringLiteral("ERR ratescope")), qPrintable(r.text()));
    QCOMPARE(m_conn->command({"EXISTS", "v"}).integer(), 0);
}

void TestLimiter::cliValidation_data()
{
    QTest::addColumn<QStringList>("args");
    const QString a = QStringLiteral("--algo"), l = QStringLiteral("--limit"), w = QStringLiteral("--window"), c = QStringLiteral("--cost");
    const QString check = QStringLiteral("check"), key = QStringLiteral("cli:key");
    QTest::newRow("unknown algorithm") << QStringList{
        check, key, a, QStringLiteral("leaky"), l, QStringLiteral("5"), w, QStringLiteral("1s")};
    QTest::newRow("missing limit") << QStringList{check, key, a, QStringLiteral("gcra"), w, QStringLiteral("1s")};
    QTest::newRow("limit 0") << QStringList{check, key, a, QStringLiteral("gcra"), l, QStringLiteral("0"), w, QStringLiteral("1s")};
    QTest::newRow("limit not a number") << QStringList{
        check, key, a, QStringLiteral("gcra"), l, QStringLiteral("lots"), w, QStringLiteral("1s")};
    QTest::newRow("window too short") << QStringList{
        check, key, a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("500us")};
    QTest::newRow("window too long") << QStringList{
        check, key, a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("367d")};
    QTest::newRow("bad duration") << QStringList{check, key, a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("soon")};
    QTest::newRow("cost above limit") << QStringList{
        check, key, a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("1s"), c, QStringLiteral("6")};
    QTest::newRow("cost 0") << QStringList{
        check, key, a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("1s"), c, QStringLiteral("0")};
    QTest::newRow("sub-buckets for another algorithm") << QStringList{check,
                                                                      key,
                                                                      a,
                                                                      QStringLiteral("gcra"),
                                                                      l,
                                                                      QStringLiteral("5"),
                                                                      w,
                                                                      QStringLiteral("1s"),
                                                                      QStringLiteral("--sub-buckets"),
                                                                      QStringLiteral("6")};
    QTest::newRow("sub-buckets 1") << QStringList{check,
                                                  key,
                                                  a,
                                                  QStringLiteral("sliding-buckets"),
                                                  l,
                                                  QStringLiteral("5"),
                                                  w,
                                                  QStringLiteral("1s"),
                                                  QStringLiteral("--sub-buckets"),
                                                  QStringLiteral("1")};
    QTest::newRow("sub-buckets not a number") << QStringList{check,
                                                             key,
                                                             a,
                                                             QStringLiteral("sliding-buckets"),
                                                             l,
                                                             QStringLiteral("5"),
                                                             w,
                                                             QStringLiteral("1s"),
                                                             QStringLiteral("--sub-buckets"),
                                                             QStringLiteral("many")};
    QTest::newRow("empty key") << QStringList{check, QString(), a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("1s")};
    QTest::newRow("no key") << QStringList{check, a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("1s")};
    QTest::newRow("two keys") << QStringList{
        check, key, QStringLiteral("other"), a, QStringLiteral("gcra"), l, QStringLiteral("5"), w, QStringLiteral("1s")};
}

void TestLimiter::cliValidation()
{
    QFETCH(QStringList, args);
    const CliResult r = runCli(cliBase() + args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY(!r.err.isEmpty());
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 0); // nothing left behind
}

void TestLimiter::cliCheckAndPeek()
{
    const QStringList spec = {QStringLiteral("--algo"),   QStringLiteral("fixed-window"),      QStringLiteral("--limit"),
                              QStringLiteral("2"),        QStringLiteral("--window"),          QStringLiteral("60s"),
                              QStringLiteral("--now-us"), QString::number(kT0 + 15 * kSecond), QStringLiteral("--json")};
    auto run = [&](const QString &verb) {
        const CliResult r = runCli(cliBase() + QStringList{verb, QStringLiteral("cli:fw")} + spec);
        [&] { QCOMPARE(r.exitCode, 0); }();
        return QJsonDocument::fromJson(r.out).object();
    };
    QJsonObject o = run(QStringLiteral("check"));
    QCOMPARE(o.value(QStringLiteral("allowed")).toBool(), true);
    QCOMPARE(o.value(QStringLiteral("limit")).toInt(), 2);
    QCOMPARE(o.value(QStringLiteral("used")).toInt(), 1);
    QCOMPARE(o.value(QStringLiteral("remaining")).toInt(), 1);
    QCOMPARE(o.value(QStringLiteral("retry_after_ms")).toInt(), 0);
    QCOMPARE(o.value(QStringLiteral("reset_after_ms")).toInt(), 45000);
    run(QStringLiteral("check"));
    o = run(QStringLiteral("check"));
    QCOMPARE(o.value(QStringLiteral("allowed")).toBool(), false); // denied is still exit 0
    QCOMPARE(o.value(QStringLiteral("retry_after_ms")).toInt(), 45000);
    o = run(QStringLiteral("peek"));
    QCOMPARE(o.value(QStringLiteral("used")).toInt(), 2);
    // The key is the Redis key as given, without a prefix.
    QCOMPARE(m_conn->command({"EXISTS", "cli:fw"}).integer(), 1);
    // Peek is allowed in read-only mode; check is refused before anything is sent.
    CliResult ro = runCli(cliBase() + QStringList{QStringLiteral("--read-only"), QStringLiteral("peek"), QStringLiteral("cli:fw")} + spec);
    QCOMPARE(ro.exitCode, 0);
    ro = runCli(cliBase() + QStringList{QStringLiteral("--read-only"), QStringLiteral("check"), QStringLiteral("cli:new")} + spec);
    QCOMPARE(ro.exitCode, 5);
    QCOMPARE(m_conn->command({"EXISTS", "cli:new"}).integer(), 0);
    // Human output.
    const CliResult human = runCli(cliBase() + QStringList{QStringLiteral("peek"), QStringLiteral("cli:fw")} + spec.mid(0, 8));
    QCOMPARE(human.exitCode, 0);
    QVERIFY(human.out.contains("used         2 of 2"));
}

void TestLimiter::sharedHelpersAreIdentical()
{
    // Each script carries its own copy of the helpers (services load single files): every
    // copy of a helper must stay the same, so a fix reaches all five.
    static const QRegularExpression start(QStringLiteral("^local (function (\\w+)\\(|(\\w+) = )"));
    QHash<QString, QPair<QString, QString>> seen; // name -> (script, text)
    int compared = 0;
    for (Algorithm a : kAllAlgorithms) {
        const QStringList lines = QString::fromUtf8(LimiterScript::forAlgorithm(a).source()).split(QLatin1Char('\n'));
        for (qsizetype i = 0; i < lines.size(); ++i) {
            const auto m = start.match(lines[i]);
            if (!m.hasMatch())
                continue;
            const bool function = !m.captured(2).isEmpty();
            const QString name = function ? m.captured(2) : m.captured(3);
            if (name == QLatin1String("decide"))
                continue; // the one function that is each algorithm's own
            QString text = lines[i];
            for (qsizetype j = i + 1; function && j < lines.size(); ++j) {
                text += QLatin1Char('\n') + lines[j];
                if (lines[j] == QLatin1String("end"))
                    break;
            }
            const auto it = seen.constFind(name);
            if (it == seen.constEnd()) {
                seen.insert(name, {algorithmName(a), text});
                continue;
            }
            ++compared;
            QVERIFY2(it->second == text, qPrintable(QStringLiteral("%1 differs between %2 and %3").arg(name, it->first, algorithmName(a))));
        }
    }
    QVERIFY(compared >= 10);
}

QTEST_GUILESS_MAIN(TestLimiter)
#include "tst_limiter.moc"
