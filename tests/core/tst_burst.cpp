// Bursts against a real redis-server: exact admission under concurrency for every
// algorithm, the window-boundary scenario, a server dying mid-burst, NOSCRIPT recovery,
// open-loop pacing, cancellation, the CLI; and the latency histogram's precision.
#include "builtpaths.h"
#include "admin/audit.h"
#include "load/boundaryscenario.h"
#include "load/burst.h"
#include "redis/connection.h"
#include "base/errors.h"
#include "load/latencyhistogram.h"
#include "limiters/scriptlibrary.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <map>

using namespace ratescope;
using namespace ratescope::test;

Q_DECLARE_METATYPE(ratescope::Algorithm)

namespace {

constexpr qint64 kSecond = 1000000;
constexpr qint64 kDay = 86400 * kSecond;

using Samples = QList<QPair<qint64, qint64>>; // value (us), how many times

QString describe(const BurstSummary &s)
{
    return QStringLiteral("sent=%1 allowed=%2 denied=%3 errors=%4 unknown=%5 not_sent=%6 (connection %7) first_error='%8' "
                          "elapsed_us=%9")
        .arg(s.sent)
        .arg(s.allowed)
        .arg(s.denied)
        .arg(s.errors)
        .arg(s.unknown)
        .arg(s.notSent)
        .arg(s.connectionErrors)
        .arg(s.firstError)
        .arg(s.elapsedUs);
}

// Whatever happens, every request ends as exactly one outcome.
bool balanced(const BurstSummary &s)
{
    qint64 allowed = 0, denied = 0, errors = 0, unknown = 0;
    for (const BurstSlice &slice : s.timeline) {
        allowed += slice.allowed;
        denied += slice.denied;
        errors += slice.errors;
        unknown += slice.unknown;
    }
    return s.sent == s.allowed + s.denied + s.errors + s.unknown && allowed == s.allowed && denied == s.denied && errors == s.errors &&
           unknown == s.unknown && s.connectionErrors == s.unknown + s.notSent;
}

QJsonObject parseJson(const QByteArray &text)
{
    QJsonParseError error;
    const QJsonObject o = QJsonDocument::fromJson(text, &error).object();
    if (error.error != QJsonParseError::NoError)
        qWarning("not JSON: %s", text.constData());
    return o;
}

} // namespace

class TestBurst : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();

    void histogramPercentiles_data();
    void histogramPercentiles();
    void histogramBucketsKeepTheirPrecision();
    void histogramMergeAndEmpty();
    void histogramBars();

    void admitsExactlyTheLimit_data();
    void admitsExactlyTheLimit();
    void boundary_data();
    void boundary();
    void boundaryRefusesAnExistingKey();
    void serverKilledMidBurst();
    void stalledServerFiguresMatchTheServer();
    void decisionsRecordEveryRequestInOrder();
    void cliTimelineCheckedBeforeSending();
    void cliDecisions();
    void cliDecisionsCheckedBeforeSending();
    void cliThreadThatCannotStartIsAnError();
    void noscriptIsRecoveredWithoutDoubleCounting();
    void noscriptResendsKeepTheirShard();
    void pacing();
    void cancel();
    void invalidConfiguration_data();
    void invalidConfiguration();

    void cliBurstJsonTimelineAndAudit();
    void cliHumanSummary();
    void cliBoundary();
    void cliReadOnlyRefusesBursts_data();
    void cliReadOnlyRefusesBursts();
    void cliUsage_data();
    void cliUsage();
    void cliExitsThreeWhenServerDies();
    void shardedRoundRobinAdmitsTheLimit();
    void shardedByHashDriftsBelowTheLimit();
    void cliShardedCheckAndBurst();
    void repliesThatAreNoDecisionKeepTheSocketInStep();

private:
    BurstConfig config(Algorithm a, const QByteArray &key, qint64 limit, qint64 windowUs) const
    {
        BurstConfig c;
        c.key = key;
        c.spec = {a, limit, windowUs, 1};
        return c;
    }
    QStringList cliBase() const { return {QStringLiteral("--url"), m_server->url()}; }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestBurst::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    m_conn = std::make_unique<Connection>(m_server->options());
}

void TestBurst::init()
{
    m_conn->command({"FLUSHALL"});
}

// ---- the histogram --------------------------------------------------------------------

void TestBurst::histogramPercentiles_data()
{
    QTest::addColumn<Samples>("samples");
    QTest::addColumn<double>("percent");
    QTest::addColumn<qint64>("expected"); // the true nearest-rank value

    QTest::newRow("one value, p50") << Samples{{42, 1}} << 50.0 << qint64(42);
    QTest::newRow("one value, p0") << Samples{{42, 1}} << 0.0 << qint64(42);
    QTest::newRow("zero") << Samples{{0, 10}} << 99.0 << qint64(0);
    Samples oneToHundred;
    for (qint64 v = 1; v <= 100; ++v)
        oneToHundred << qMakePair(v, qint64(1));
    QTest::newRow("1..100 p0") << oneToHundred << 0.0 << qint64(1);
    QTest::newRow("1..100 p50") << oneToHundred << 50.0 << qint64(50);
    QTest::newRow("1..100 p90") << oneToHundred << 90.0 << qint64(90);
    QTest::newRow("1..100 p99") << oneToHundred << 99.0 << qint64(99);
    QTest::newRow("1..100 p99.9") << oneToHundred << 99.9 << qint64(100);
    QTest::newRow("1..100 p100") << oneToHundred << 100.0 << qint64(100);
    Samples oneToThousand;
    for (qint64 v = 1; v <= 1000; ++v)
        oneToThousand << qMakePair(v, qint64(1));
    QTest::newRow("1..1000 p99.9") << oneToThousand << 99.9 << qint64(999);
    QTest::newRow("1..1000 p50.05") << oneToThousand << 50.05 << qint64(501);
    const Samples tail{{100, 990}, {5000, 10}};
    QTest::newRow("tail p99") << tail << 99.0 << qint64(100);
    QTest::newRow("tail p99.1") << tail << 99.1 << qint64(5000);
    QTest::newRow("tail p99.9") << tail << 99.9 << qint64(5000);
    QTest::newRow("exact below 2048") << Samples{{2046, 1}, {2047, 1}} << 100.0 << qint64(2047);
    Samples milliseconds;
    for (qint64 i = 1; i <= 1000; ++i)
        milliseconds << qMakePair(i * 1000, qint64(1));
    QTest::newRow("1ms..1s p50") << milliseconds << 50.0 << qint64(500000);
    QTest::newRow("1ms..1s p90") << milliseconds << 90.0 << qint64(900000);
    QTest::newRow("1ms..1s p99") << milliseconds << 99.0 << qint64(990000);
    QTest::newRow("1ms..1s max") << milliseconds << 100.0 << qint64(1000000);
    QTest::newRow("stall of a minute") << Samples{{80, 999}, {60 * kSecond + 123, 1}} << 99.95 << qint64(60 * kSecond + 123);
    QTest::newRow("beyond trackable") << Samples{{qint64(1) << 41, 1}} << 50.0 << (qint64(1) << 41);
}

void TestBurst::histogramPercentiles()
{
    QFETCH(Samples, samples);
    QFETCH(double, percent);
    QFETCH(qint64, expected);
    LatencyHistogram h;
    for (const auto &[value, count] : samples)
        h.record(value, count);
    const qint64 reported = h.percentile(percent);
    if (expected < LatencyHistogram::kExactBelowUs) {
        QCOMPARE(reported, expected);
        return;
    }
    // Documented precision: never better than the truth, at most 1/1024 worse.
    QVERIFY2(reported >= expected, qPrintable(QString::number(reported)));
    QVERIFY2(reported <= expected + expected / 1024, qPrintable(QString::number(reported)));
}

void TestBurst::histogramBucketsKeepTheirPrecision()
{
    for (qint64 v = 0; v < 5000000; v = v < 4096 ? v + 1 : v + v / 37 + 1) {
        const qint64 low = LatencyHistogram::lowestEquivalent(v);
        const qint64 high = LatencyHistogram::highestEquivalent(v);
        QVERIFY2(low <= v && v <= high, qPrintable(QStringLiteral("%1 in [%2, %3]").arg(v).arg(low).arg(high)));
        QVERIFY2(high - low <= std::max<qint64>(0, v / 1024), qPrintable(QString::number(v)));
        if (v < LatencyHistogram::kExactBelowUs)
            QCOMPARE(high, low);
        QCOMPARE(LatencyHistogram::lowestEquivalent(high + 1), high + 1); // buckets tile the axis
    }
}

void TestBurst::histogramMergeAndEmpty()
{
    LatencyHistogram empty;
    QCOMPARE(empty.count(), 0);
    QCOMPARE(empty.percentile(99), 0);
    QCOMPARE(empty.max(), 0);
    QVERIFY(empty.bars(10).empty());

    LatencyHistogram a, b, all;
    for (qint64 v = 1; v <= 3000; ++v) {
        (v % 2 ? a : b).record(v * 7);
        all.record(v * 7);
    }
    a.merge(b);
    a.merge(empty);
    QCOMPARE(a.count(), all.count());
    QCOMPARE(a.min(), 7);
    QCOMPARE(a.max(), 21000);
    QCOMPARE(a.mean(), all.mean());
    for (double p : {0.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0})
        QCOMPARE(a.percentile(p), all.percentile(p));
}

void TestBurst::histogramBars()
{
    LatencyHistogram h;
    h.record(50, 900);
    h.record(400, 90);
    h.record(30000, 10);
    const auto bars = h.bars(8);
    QVERIFY(!bars.empty() && bars.size() <= 8);
    QCOMPARE(bars.front().lowUs, 50);
    QCOMPARE(bars.back().highUs, 30000);
    qint64 total = 0;
    for (size_t i = 0; i < bars.size(); ++i) {
        total += bars[i].count;
        if (i)
            QCOMPARE(bars[i].lowUs, bars[i - 1].highUs + 1);
    }
    QCOMPARE(total, 1000);
    QCOMPARE(bars.front().count, 900);
    QCOMPARE(bars.back().count, 10);
}

// ---- the engine -------------------------------------------------------------------------

void TestBurst::admitsExactlyTheLimit_data()
{
    QTest::addColumn<Algorithm>("algorithm");
    for (Algorithm a : kAllAlgorithms)
        QTest::newRow(qPrintable(algorithmName(a))) << a;
}

void TestBurst::admitsExactlyTheLimit()
{
    QFETCH(Algorithm, algorithm);
    // A day-long window: no bucket refills a whole request while the test runs.
    BurstConfig c = config(algorithm, "burst:" + algorithmName(algorithm).toUtf8(), 1000, kDay);
    c.requests = 20000;
    c.connections = 8;
    c.pipeline = 16;
    int progressCalls = 0;
    BurstEngine engine(m_server->options(), c);
    engine.setProgressCallback([&](const BurstProgress &p) {
        ++progressCalls;
        QVERIFY(p.allowed <= 1000);
        QVERIFY(!p.timeline.empty());
    });
    const BurstSummary s = engine.run();
    QVERIFY2(s.errors == 0, qPrintable(describe(s)));
    QCOMPARE(s.sent, 20000);
    QCOMPARE(s.allowed, 1000);
    QCOMPARE(s.denied, 19000);
    QVERIFY(balanced(s));
    QCOMPARE(s.latency.count(), 20000);
    QVERIFY(s.latency.percentile(50) <= s.latency.percentile(99));
    QVERIFY(s.elapsedUs > 0 && s.throughput() > 0);
    QVERIFY(progressCalls >= 1); // at least the final one
    QVERIFY(!s.cancelled);
}

void TestBurst::boundary_data()
{
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<int>("factor");
    QTest::newRow("fixed-window admits 2x") << Algorithm::FixedWindow << 2;
    QTest::newRow("sliding-log admits 1x") << Algorithm::SlidingLog << 1;
    // The first burst's bucket is still whole inside the window after the boundary: nothing
    // more passes (at most 1 + 1/B of the limit would with traffic spread over the window).
    QTest::newRow("sliding-buckets admits 1x") << Algorithm::SlidingBuckets << 1;
}

void TestBurst::boundary()
{
    QFETCH(Algorithm, algorithm);
    QFETCH(int, factor);
    BoundaryScenario scenario(*m_conn, "boundary:" + algorithmName(algorithm).toUtf8(), {algorithm, 100, kSecond, 1});
    const BoundaryResult r = scenario.run();
    QCOMPARE(r.admitted(), 100 * factor);
    QCOMPARE(r.firstAllowed, 100);
    QCOMPARE(r.secondAllowed, 100 * (factor - 1));
    QCOMPARE(scenario.requestsSent(), 200);
    // What the scenario proves from the server's clock.
    QCOMPARE(r.boundaryUs % kSecond, 0);
    QVERIFY(r.firstEndUs < r.boundaryUs);
    QVERIFY(r.secondStartUs >= r.boundaryUs);
    QVERIFY(r.secondEndUs - r.firstStartUs < kSecond);
}

void TestBurst::boundaryRefusesAnExistingKey()
{
    m_conn->command({"SET", "taken", "x"});
    BoundaryScenario scenario(*m_conn, "taken", {Algorithm::FixedWindow, 10, kSecond, 1});
    QVERIFY_THROWS_EXCEPTION(UsageError, scenario.run());
    QCOMPARE(scenario.requestsSent(), 0);
    QCOMPARE(m_conn->command({"GET", "taken"}).bytes(), QByteArray("x"));
}

void TestBurst::serverKilledMidBurst()
{
    SandboxServer doomed;
    doomed.start();
    BurstConfig c = config(Algorithm::FixedWindow, "doomed", 1000000000, kDay);
    c.requests = 200000;
    c.connections = 4;
    c.pipeline = 16;
    BurstEngine engine(doomed.options(), c);
    bool killed = false;
    engine.setProgressCallback([&](const BurstProgress &p) {
        if (!killed && p.sent > 0) {
            doomed.kill();
            killed = true;
        }
    });
    std::map<BurstDecision::Outcome, qint64> outcomes;
    qint64 rows = 0;
    engine.setDecisionCallback([&](std::span<const BurstDecision> ds) {
        rows += qint64(ds.size());
        for (const BurstDecision &d : ds)
            ++outcomes[d.outcome];
    });
    const BurstSummary s = engine.run(); // returns: no hang, no throw
    QVERIFY(killed);
    // The record has every request written to a socket, each as it ended; none never written.
    QCOMPARE(rows, s.sent);
    QCOMPARE(outcomes[BurstDecision::Outcome::Allowed], s.allowed);
    QCOMPARE(outcomes[BurstDecision::Outcome::Unknown], s.unknown);
    QCOMPARE(outcomes[BurstDecision::Outcome::Error], s.errors);
    // Lost with the server: no error reply, so no "errors"; the replies owed are unknown, and
    // what came after the kill was never written (not sent), never counted as sent.
    QVERIFY2(s.errors == 0 && s.connectionErrors > 0 && s.notSent > 0, qPrintable(describe(s)));
    QVERIFY2(s.allowed > 0, qPrintable(describe(s)));
    QVERIFY(!s.firstError.isEmpty());
    QVERIFY2(balanced(s), qPrintable(describe(s)));
    QVERIFY2(s.sent + s.notSent <= 200000, qPrintable(describe(s)));
    QVERIFY2(s.sent < 200000 - s.notSent + 1, qPrintable(describe(s)));
}

// A server that stops answering: the replies never received are "unknown", not errors, and
// the server holds exactly the allowed ones plus some of the unknown ones (they may have been
// admitted), never more.
void TestBurst::stalledServerFiguresMatchTheServer()
{
    SandboxServer stalling;
    stalling.start();
    ConnectionOptions options = stalling.options();
    options.commandTimeoutMs = 300;
    options.connectTimeoutMs = 300;
    BurstConfig c = config(Algorithm::SlidingLog, "stalled", 1000000000, kDay);
    c.durationUs = 2 * kSecond;
    c.requests = 600; // 0.3 s of schedule: some before the stall, most after
    c.rate = 2000;
    c.connections = 2;
    c.pipeline = 50; // a stalled round costs a timeout: few rounds keep the test short
    BurstEngine engine(options, c);
    bool paused = false;
    engine.setProgressCallback([&](const BurstProgress &p) {
        if (!paused && p.allowed > 0) {
            stalling.pause();
            paused = true;
        }
    });
    const BurstSummary s = engine.run();
    QVERIFY(paused);
    stalling.resume();
    Connection check(stalling.options());
    const qint64 held = check.command({"ZCARD", "stalled"}).integer();
    QVERIFY2(s.errors == 0, qPrintable(describe(s)));
    QVERIFY2(s.unknown > 0, qPrintable(describe(s)));
    QVERIFY2(balanced(s), qPrintable(describe(s)));
    QVERIFY2(held >= s.allowed && held <= s.allowed + s.unknown, qPrintable(QStringLiteral("server holds %1; ").arg(held) + describe(s)));
    const QJsonObject o = s.toJson();
    QCOMPARE(o.value(QStringLiteral("unknown")).toInteger(), s.unknown);
    QCOMPARE(o.value(QStringLiteral("not_sent")).toInteger(), s.notSent);
}

// The decision record: every request once, in the order the requests ended, each with its
// shard's key and the decision the script returned; the times are the wall clock's, the
// server's on one host (its TIME lies between a request's write and its reply).
void TestBurst::decisionsRecordEveryRequestInOrder()
{
    BurstConfig c = config(Algorithm::FixedWindow, "rec", 400, kDay);
    c.requests = 3000;
    c.connections = 4;
    c.pipeline = 8;
    c.shards = 4;
    c.shardBy = BurstConfig::ShardRouting::RoundRobin;
    BurstEngine engine(m_server->options(), c);
    std::vector<BurstDecision> record;
    int calls = 0;
    engine.setDecisionCallback([&](std::span<const BurstDecision> ds) {
        ++calls;
        QVERIFY(!ds.empty());
        record.insert(record.end(), ds.begin(), ds.end());
    });
    auto serverTimeUs = [this] {
        const Reply t = m_conn->command({"TIME"});
        return t[0].toInteger() * kSecond + t[1].toInteger();
    };
    const qint64 before = serverTimeUs();
    const BurstSummary s = engine.run();
    const qint64 after = serverTimeUs();
    QVERIFY2(s.errors == 0 && s.unknown == 0, qPrintable(describe(s)));
    QVERIFY(calls >= 1);
    QCOMPARE(qint64(record.size()), s.sent);
    std::map<int, std::vector<qint64>> usedAllowed; // per shard, the used of each admission
    qint64 allowed = 0;
    for (size_t i = 0; i < record.size(); ++i) {
        const BurstDecision &d = record[i];
        QVERIFY(i == 0 || record[i - 1].timeUs <= d.timeUs);
        QVERIFY(d.sentUs <= d.timeUs);
        QVERIFY2(d.sentUs >= before - 1000 && d.timeUs <= after + 1000, qPrintable(QString::number(d.timeUs - after)));
        QVERIFY(d.shard >= 0 && d.shard < 4);
        QVERIFY(d.outcome == BurstDecision::Outcome::Allowed || d.outcome == BurstDecision::Outcome::Denied);
        QCOMPARE(d.used + d.remaining, 100);
        if (d.outcome == BurstDecision::Outcome::Allowed) {
            ++allowed;
            usedAllowed[d.shard].push_back(d.used);
            QCOMPARE(d.retryAfterUs, 0);
        } else {
            QVERIFY(d.retryAfterUs > 0);
        }
    }
    QCOMPARE(allowed, s.allowed);
    QCOMPARE(allowed, 400);
    // Each shard admitted its share, each admission counted once: used 1 .. 100, each once.
    for (auto &[shard, used] : usedAllowed) {
        std::sort(used.begin(), used.end());
        QCOMPARE(qint64(used.size()), 100);
        for (size_t i = 0; i < used.size(); ++i)
            QCOMPARE(used[i], qint64(i + 1));
    }
}

// A timeline that cannot be written fails the command before anything is sent or audited.
void TestBurst::cliTimelineCheckedBeforeSending()
{
    const CliResult r =
        runCli(cliBase() + QStringList{QStringLiteral("burst"), QStringLiteral("tl:1"), QStringLiteral("--algo"), QStringLiteral("gcra"),
                                       QStringLiteral("--limit"), QStringLiteral("5"), QStringLiteral("--window"), QStringLiteral("1s"),
                                       QStringLiteral("--requests"), QStringLiteral("10"), QStringLiteral("--timeline"),
                                       QStringLiteral("/nonexistent/x.csv")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--timeline '/nonexistent/x.csv' is in a folder that does not exist"), r.err.constData());
    QCOMPARE(m_conn->command({"EXISTS", "tl:1"}).integer(), 0);
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:audit"}).integer(), 0);
}

// `burst --decisions FILE`: a row per request sent, as the summary counts them, keys quoted as CSV
// wants them; no temporary file left beside it.
void TestBurst::cliDecisions()
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("decisions.csv"));
    const CliResult r =
        runCli(cliBase() + QStringList{QStringLiteral("--json"), QStringLiteral("burst"), QStringLiteral("cli,dec"), QStringLiteral("--algo"),
                                       QStringLiteral("token-bucket"), QStringLiteral("--limit"), QStringLiteral("50"),
                                       QStringLiteral("--window"), QStringLiteral("1d"), QStringLiteral("--requests"), QStringLiteral("400"),
                                       QStringLiteral("--connections"), QStringLiteral("2"), QStringLiteral("--pipeline"), QStringLiteral("4"),
                                       QStringLiteral("--decisions"), file});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject o = parseJson(r.out);
    QCOMPARE(o.value(QStringLiteral("sent")).toInteger(), 400);
    QFile csv(file);
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
    QCOMPARE(lines.first(), QByteArray("time_us,sent_us,key,outcome,used,remaining,retry_after_us,reset_after_us"));
    QCOMPARE(lines.size(), 401);
    qint64 allowed = 0, last = 0;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        // The key holds a comma: quoted, so the row splits into 9 cells at the commas.
        QVERIFY2(lines[i].contains(",\"cli,dec\","), lines[i].constData());
        const QList<QByteArray> cells = QByteArray(lines[i]).replace("\"cli,dec\"", "k").split(',');
        QCOMPARE(cells.size(), 8);
        QVERIFY(cells[0].toLongLong() >= last && cells[1].toLongLong() <= cells[0].toLongLong());
        last = cells[0].toLongLong();
        QVERIFY2(cells[3] == "allowed" || cells[3] == "denied", lines[i].constData());
        allowed += cells[3] == "allowed" ? 1 : 0;
        QCOMPARE(cells[4].toLongLong() + cells[5].toLongLong(), 50);
    }
    QCOMPARE(allowed, o.value(QStringLiteral("allowed")).toInteger());
    QCOMPARE(allowed, 50);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("decisions.csv")});
}

// A record that cannot be written, or that would share standard output or a file with the
// timeline, fails the command before anything is sent or audited.
void TestBurst::cliDecisionsCheckedBeforeSending()
{
    const QStringList burst{QStringLiteral("burst"),    QStringLiteral("dc:1"),  QStringLiteral("--algo"),     QStringLiteral("gcra"),
                            QStringLiteral("--limit"),  QStringLiteral("5"),     QStringLiteral("--window"),   QStringLiteral("1s"),
                            QStringLiteral("--requests"), QStringLiteral("10")};
    CliResult r = runCli(cliBase() + burst + QStringList{QStringLiteral("--decisions"), QStringLiteral("/nonexistent/d.csv")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--decisions '/nonexistent/d.csv' is in a folder that does not exist"), r.err.constData());
    r = runCli(cliBase() + burst +
               QStringList{QStringLiteral("--decisions"), QStringLiteral("-"), QStringLiteral("--timeline"), QStringLiteral("-")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--timeline and --decisions cannot both be standard output"), r.err.constData());
    QTemporaryDir dir;
    const QString same = dir.filePath(QStringLiteral("same.csv"));
    r = runCli(cliBase() + burst + QStringList{QStringLiteral("--decisions"), same, QStringLiteral("--timeline"), same});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--timeline and --decisions name the same file"), r.err.constData());
    QCOMPARE(m_conn->command({"EXISTS", "dc:1"}).integer(), 0);
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:audit"}).integer(), 0);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList());
}

// Under an address-space limit most of 256 threads cannot start: the burst fails cleanly
// (exit 2, nothing sent) instead of std::terminate killing the process.
void TestBurst::cliThreadThatCannotStartIsAnError()
{
    const QString limit = QStringLiteral("ulimit -v 600000; exec \"$0\" \"$@\"");
    auto underLimit = [&](const QStringList &args) {
        QProcess p;
        p.start(QStringLiteral("bash"), QStringList{QStringLiteral("-c"), limit, BuiltPaths::cli()} + args);
        p.waitForFinished(60000);
        return std::pair(p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardError());
    };
    if (underLimit({QStringLiteral("--version")}).first != 0)
        QSKIP("this build cannot run under a 600 MB address-space limit (sanitizers)");
    const auto [code, err] =
        underLimit(cliBase() + QStringList{QStringLiteral("burst"), QStringLiteral("threads:1"), QStringLiteral("--algo"),
                                           QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("5"),
                                           QStringLiteral("--window"), QStringLiteral("1s"), QStringLiteral("--requests"),
                                           QStringLiteral("1000"), QStringLiteral("--connections"), QStringLiteral("256")});
    if (code == 0)
        QSKIP("256 threads started under a 600 MB address-space limit here");
    QVERIFY2(code == 2, err.constData());
    QVERIFY2(err.contains("could not start the thread of connection"), err.constData());
    QCOMPARE(m_conn->command({"EXISTS", "threads:1"}).integer(), 0);
}

void TestBurst::noscriptIsRecoveredWithoutDoubleCounting()
{
    BurstConfig c = config(Algorithm::SlidingLog, "flushed", 1000, kDay);
    c.requests = 100000;
    c.connections = 4;
    c.pipeline = 16;
    Connection admin(m_server->options());
    BurstEngine engine(m_server->options(), c);
    int flushes = 0;
    engine.setProgressCallback([&](const BurstProgress &) {
        if (flushes < 3) {
            admin.command({"SCRIPT", "FLUSH"}); // as a restart or a failover would
            ++flushes;
        }
    });
    const BurstSummary s = engine.run();
    QVERIFY2(s.errors == 0, qPrintable(describe(s)));
    QCOMPARE(s.allowed, 1000);
    QCOMPARE(s.sent, 100000);
    QVERIFY(balanced(s));
}

// A request sent again after NOSCRIPT goes to its own shard, and is counted there.
void TestBurst::noscriptResendsKeepTheirShard()
{
    BurstConfig c = config(Algorithm::SlidingLog, "reshard", 40000, kDay);
    c.requests = 60000;
    c.connections = 4;
    c.pipeline = 16;
    c.shards = 4;
    c.shardBy = BurstConfig::ShardRouting::RoundRobin;
    Connection admin(m_server->options());
    BurstEngine engine(m_server->options(), c);
    int flushes = 0;
    engine.setProgressCallback([&](const BurstProgress &) {
        if (flushes < 3) {
            admin.command({"SCRIPT", "FLUSH"});
            ++flushes;
        }
    });
    qint64 recorded = 0;
    engine.setDecisionCallback([&](std::span<const BurstDecision> ds) { recorded += qint64(ds.size()); });
    const BurstSummary s = engine.run();
    QVERIFY2(s.errors == 0, qPrintable(describe(s)));
    QCOMPARE(s.sent, 60000);
    QCOMPARE(recorded, s.sent);
    QCOMPARE(s.shards.size(), size_t(4));
    for (const BurstShard &shard : s.shards) {
        QCOMPARE(shard.sent, 15000);
        QCOMPARE(shard.allowed + shard.denied, shard.sent);
        QCOMPARE(admin.command({"ZCARD", shard.key}).integer(), shard.allowed);
    }
}

void TestBurst::pacing()
{
    BurstConfig c = config(Algorithm::TokenBucket, "paced", 1000000, kDay);
    c.durationUs = 2 * kSecond;
    c.rate = 500;
    c.connections = 2;
    c.pipeline = 4;
    const BurstSummary s = BurstEngine(m_server->options(), c).run();
    QVERIFY2(s.errors == 0, qPrintable(describe(s)));
    // Generous bounds: correctness of the schedule, not speed.
    QVERIFY2(s.sent >= 900 && s.sent <= 1100, qPrintable(describe(s)));
    QVERIFY2(s.elapsedUs >= 1800000 && s.elapsedUs <= 3000000, qPrintable(describe(s)));
    QVERIFY2(s.throughput() >= 400 && s.throughput() <= 600, qPrintable(describe(s)));
    // Spread over the whole duration, not fired at once: every full 100 ms slice but the
    // last holds about 50 decisions.
    int busySlices = 0;
    for (const BurstSlice &slice : s.timeline)
        busySlices += slice.allowed >= 20 ? 1 : 0;
    QVERIFY2(busySlices >= 15, qPrintable(QString::number(busySlices)));
    QVERIFY(balanced(s));
}

void TestBurst::cancel()
{
    BurstConfig c = config(Algorithm::Gcra, "cancelled", 1000, kDay);
    c.durationUs = 600 * kSecond;
    c.connections = 3;
    c.pipeline = 8;
    BurstEngine engine(m_server->options(), c);
    engine.setProgressCallback([&](const BurstProgress &) { engine.cancel(); });
    const BurstSummary s = engine.run();
    QVERIFY(s.cancelled);
    QVERIFY2(s.errors == 0 && s.sent > 0, qPrintable(describe(s)));
    QVERIFY(balanced(s));
    QVERIFY(s.elapsedUs < 600 * kSecond);
}

void TestBurst::invalidConfiguration_data()
{
    QTest::addColumn<int>("what");
    QTest::newRow("no requests and no duration") << 0;
    QTest::newRow("zero connections") << 1;
    QTest::newRow("zero pipeline") << 2;
    QTest::newRow("cost above the limit") << 3;
    QTest::newRow("negative rate") << 4;
    QTest::newRow("empty key") << 5;
}

void TestBurst::invalidConfiguration()
{
    QFETCH(int, what);
    BurstConfig c = config(Algorithm::FixedWindow, "invalid", 10, kSecond);
    c.requests = 10;
    switch (what) {
    case 0:
        c.requests.reset();
        break;
    case 1:
        c.connections = 0;
        break;
    case 2:
        c.pipeline = 0;
        break;
    case 3:
        c.spec.cost = 11;
        break;
    case 4:
        c.rate = -1;
        break;
    case 5:
        c.key.clear();
        break;
    }
    QVERIFY_THROWS_EXCEPTION(UsageError, BurstEngine(m_server->options(), c).run());
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 0);
}

// ---- the CLI ----------------------------------------------------------------------------

void TestBurst::cliBurstJsonTimelineAndAudit()
{
    QTemporaryDir dir;
    const QString timeline = dir.filePath(QStringLiteral("timeline.csv"));
    const CliResult r = runCli(
        cliBase() + QStringList{QStringLiteral("--json"), QStringLiteral("--operator"), QStringLiteral("alice"), QStringLiteral("burst"),
                                QStringLiteral("cli:burst"), QStringLiteral("--algo"), QStringLiteral("sliding-log"),
                                QStringLiteral("--limit"), QStringLiteral("300"), QStringLiteral("--window"), QStringLiteral("1d"),
                                QStringLiteral("--requests"), QStringLiteral("5000"), QStringLiteral("--connections"), QStringLiteral("4"),
                                QStringLiteral("--pipeline"), QStringLiteral("8"), QStringLiteral("--timeline"), timeline});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject o = parseJson(r.out);
    QCOMPARE(o.value(QStringLiteral("sent")).toInteger(), 5000);
    QCOMPARE(o.value(QStringLiteral("allowed")).toInteger(), 300);
    QCOMPARE(o.value(QStringLiteral("denied")).toInteger(), 4700);
    QCOMPARE(o.value(QStringLiteral("errors")).toInteger(), 0);
    QVERIFY(o.value(QStringLiteral("elapsed_ms")).isDouble());
    QVERIFY(o.value(QStringLiteral("throughput")).toDouble() > 0);
    const QJsonObject latency = o.value(QStringLiteral("latency_us")).toObject();
    for (const char *field : {"p50", "p90", "p99", "max"})
        QVERIFY2(latency.value(QLatin1String(field)).toInteger() > 0, field);
    QVERIFY(latency.value(QStringLiteral("p50")).toInteger() <= latency.value(QStringLiteral("max")).toInteger());

    QFile csv(timeline);
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
    QCOMPARE(lines.first(), QByteArray("elapsed_ms,allowed,denied,errors,unknown"));
    qint64 allowed = 0;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QList<QByteArray> cells = lines[i].split(',');
        QCOMPARE(cells.size(), 5);
        allowed += cells[1].toLongLong();
    }
    QCOMPARE(allowed, 300);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("timeline.csv")}); // no temp file left

    const auto entries = AuditLog(*m_conn, QStringLiteral("ratescope:")).list(1);
    QCOMPARE(entries.size(), size_t(1));
    const AuditEntry &e = entries.front();
    QCOMPARE(e.action, QStringLiteral("burst"));
    QCOMPARE(e.target, QStringLiteral("cli:burst"));
    QCOMPARE(e.actor, QStringLiteral("alice"));
    QCOMPARE(e.count, 5000);
    const QJsonObject before = parseJson(e.before.toUtf8());
    QCOMPARE(before.value(QStringLiteral("algo")).toString(), QStringLiteral("sliding-log"));
    QCOMPARE(before.value(QStringLiteral("connections")).toInteger(), 4);
    QCOMPARE(parseJson(e.after.toUtf8()).value(QStringLiteral("allowed")).toInteger(), 300);
}

void TestBurst::cliHumanSummary()
{
    const CliResult r = runCli(cliBase() + QStringList{QStringLiteral("burst"), QStringLiteral("cli:human"), QStringLiteral("--algo"),
                                                       QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("10"),
                                                       QStringLiteral("--window"), QStringLiteral("1h"), QStringLiteral("--requests"),
                                                       QStringLiteral("500"), QStringLiteral("--pipeline"), QStringLiteral("10")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(r.out.contains("allowed     10"));
    QVERIFY(r.out.contains("denied      490"));
    QVERIFY(r.out.contains("p99"));
    QVERIFY(r.out.contains("latency distribution"));
    QVERIFY(r.out.contains('#'));
}

void TestBurst::cliBoundary()
{
    const CliResult r = runCli(cliBase() + QStringList{QStringLiteral("--json"), QStringLiteral("boundary"), QStringLiteral("--algo"),
                                                       QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("50"),
                                                       QStringLiteral("--window"), QStringLiteral("1s")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject o = parseJson(r.out);
    QCOMPARE(o.value(QStringLiteral("admitted")).toInteger(), 100);
    QVERIFY(o.value(QStringLiteral("key")).toString().startsWith(QStringLiteral("ratescope:boundary:fixed-window:")));
    const auto entries = AuditLog(*m_conn, QStringLiteral("ratescope:")).list(1);
    QCOMPARE(entries.size(), size_t(1));
    QCOMPARE(entries.front().action, QStringLiteral("burst"));
    QCOMPARE(entries.front().count, 100);
    QCOMPARE(parseJson(entries.front().before.toUtf8()).value(QStringLiteral("scenario")).toString(), QStringLiteral("boundary"));
}

void TestBurst::cliReadOnlyRefusesBursts_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("burst") << QStringList{QStringLiteral("burst"),    QStringLiteral("ro"),      QStringLiteral("--algo"),
                                          QStringLiteral("gcra"),     QStringLiteral("--limit"), QStringLiteral("5"),
                                          QStringLiteral("--window"), QStringLiteral("1s"),      QStringLiteral("--requests"),
                                          QStringLiteral("10")};
    QTest::newRow("boundary") << QStringList{QStringLiteral("boundary"), QStringLiteral("--algo"), QStringLiteral("gcra"),
                                             QStringLiteral("--limit"),  QStringLiteral("5"),      QStringLiteral("--window"),
                                             QStringLiteral("1s")};
}

void TestBurst::cliReadOnlyRefusesBursts()
{
    QFETCH(QStringList, args);
    const CliResult r = runCli(cliBase() + QStringList{QStringLiteral("--read-only")} + args);
    QCOMPARE(r.exitCode, 5);
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 0); // nothing written, not even audit
}

void TestBurst::cliUsage_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    const QStringList spec = {QStringLiteral("--algo"), QStringLiteral("fixed-window"), QStringLiteral("--limit"),
                              QStringLiteral("5"),      QStringLiteral("--window"),     QStringLiteral("1s")};
    QTest::newRow("no requests nor duration") << (QStringList{QStringLiteral("burst"), QStringLiteral("k")} + spec) << 2;
    QTest::newRow("no key") << (QStringList{QStringLiteral("burst"), QStringLiteral("--requests"), QStringLiteral("5")} + spec) << 2;
    QTest::newRow("bad rate") << (QStringList{QStringLiteral("burst"), QStringLiteral("k"), QStringLiteral("--requests"),
                                              QStringLiteral("5"), QStringLiteral("--rate"), QStringLiteral("fast")} +
                                  spec)
                              << 2;
    QTest::newRow("zero connections") << (QStringList{QStringLiteral("burst"), QStringLiteral("k"), QStringLiteral("--requests"),
                                                      QStringLiteral("5"), QStringLiteral("--connections"), QStringLiteral("0")} +
                                          spec)
                                      << 2;
    QTest::newRow("boundary window too short") << QStringList{QStringLiteral("boundary"),     QStringLiteral("--algo"),
                                                              QStringLiteral("fixed-window"), QStringLiteral("--limit"),
                                                              QStringLiteral("100000"),       QStringLiteral("--window"),
                                                              QStringLiteral("10ms")}
                                               << 2;
    QTest::newRow("wrong type") << QStringList{QStringLiteral("burst"),    QStringLiteral("a-string"), QStringLiteral("--algo"),
                                               QStringLiteral("gcra"),     QStringLiteral("--limit"),  QStringLiteral("5"),
                                               QStringLiteral("--window"), QStringLiteral("1s"),       QStringLiteral("--requests"),
                                               QStringLiteral("20")}
                                << 2;
}

void TestBurst::cliUsage()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    m_conn->command({"SET", "a-string", "x"});
    const CliResult r = runCli(cliBase() + args);
    QVERIFY2(r.exitCode == exitCode, r.err.constData());
}

void TestBurst::cliExitsThreeWhenServerDies()
{
    SandboxServer doomed;
    doomed.start();
    QProcess cli;
    cli.start(BuiltPaths::cli(),
              {QStringLiteral("--url"), doomed.url(), QStringLiteral("--json"), QStringLiteral("burst"), QStringLiteral("doomed"),
               QStringLiteral("--algo"), QStringLiteral("sliding-counter"), QStringLiteral("--limit"), QStringLiteral("1000000000"),
               QStringLiteral("--window"), QStringLiteral("1d"), QStringLiteral("--requests"), QStringLiteral("100000000"),
               QStringLiteral("--duration"), QStringLiteral("3s"), QStringLiteral("--connections"), QStringLiteral("2"),
               QStringLiteral("--pipeline"), QStringLiteral("16")});
    QVERIFY(cli.waitForStarted(10000));
    // Kill the server once the burst has written something.
    Connection probe(doomed.options());
    bool firing = false;
    for (int i = 0; i < 1000 && !firing && cli.state() == QProcess::Running; ++i) {
        firing = probe.command({"EXISTS", "doomed"}).integer() == 1;
        if (!firing)
            QThread::msleep(10);
    }
    QVERIFY(firing);
    doomed.kill();
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
    const QByteArray err = cli.readAllStandardError();
    QVERIFY2(cli.exitCode() == 3, err.constData());
    const QJsonObject o = parseJson(cli.readAllStandardOutput());
    const qint64 errors = o.value(QStringLiteral("errors")).toInteger();
    const qint64 lost = o.value(QStringLiteral("unknown")).toInteger() + o.value(QStringLiteral("not_sent")).toInteger();
    QVERIFY(lost > 0);
    QCOMPARE(o.value(QStringLiteral("connection_errors")).toInteger(), lost);
    QCOMPARE(o.value(QStringLiteral("sent")).toInteger(), o.value(QStringLiteral("allowed")).toInteger() +
                                                              o.value(QStringLiteral("denied")).toInteger() + errors +
                                                              o.value(QStringLiteral("unknown")).toInteger());
    QVERIFY(!o.value(QStringLiteral("first_error")).toString().isEmpty());
}

// Round robin: 800 requests over 8 shards of a limit of 400, 100 each: every shard admits
// its 50 and the group exactly what one unsharded limiter admits.
void TestBurst::shardedRoundRobinAdmitsTheLimit()
{
    BurstConfig c = config(Algorithm::SlidingLog, "rr:{t1}", 400, kDay);
    c.requests = 800;
    c.connections = 4;
    c.pipeline = 8;
    c.shards = 8;
    c.shardBy = BurstConfig::ShardRouting::RoundRobin;
    const BurstSummary s = BurstEngine(m_server->options(), c).run();
    QCOMPARE(s.allowed, 400);
    QCOMPARE(s.shards.size(), size_t(8));
    for (int i = 0; i < 8; ++i) {
        QCOMPARE(s.shards[size_t(i)].key, "rr:{t1}:" + QByteArray::number(i));
        QCOMPARE(s.shards[size_t(i)].limit, 50);
        QCOMPARE(s.shards[size_t(i)].sent, 100);
        QCOMPARE(s.shards[size_t(i)].allowed, 50);
        QCOMPARE(m_conn->command({"ZCARD", s.shards[size_t(i)].key}).integer(), 50);
    }
    QCOMPARE(m_conn->command({"EXISTS", "rr:{t1}"}).integer(), 0); // only the shards
    QCOMPARE(s.toJson().value(QStringLiteral("skew")).toDouble(), 1.0);
}

// Hash routing (as services shard by a request id): the requests fall unevenly, the busy
// shards fill while the others keep room, and the group admits less than one unsharded
// limiter given the same requests: exactly the sum over the shards of min(requests, share).
void TestBurst::shardedByHashDriftsBelowTheLimit()
{
    constexpr int kShards = 8;
    constexpr qint64 kLimit = 400;
    for (const qint64 requests : {qint64(400), qint64(800), qint64(4000)}) {
        const QByteArray key = "hash:{t" + QByteArray::number(requests) + "}";
        BurstConfig c = config(Algorithm::FixedWindow, key, kLimit, kDay);
        c.requests = requests;
        c.connections = 2;
        c.pipeline = 16;
        c.shards = kShards;
        const BurstSummary s = BurstEngine(m_server->options(), c).run();
        qint64 perShard[kShards] = {};
        for (qint64 n = 0; n < requests; ++n)
            ++perShard[shardForId(QByteArray::number(n), kShards)];
        qint64 expected = 0;
        for (int i = 0; i < kShards; ++i) {
            QCOMPARE(s.shards[size_t(i)].sent, perShard[i]);
            QCOMPARE(s.shards[size_t(i)].allowed, std::min(perShard[i], kLimit / kShards));
            expected += std::min(perShard[i], kLimit / kShards);
        }
        QCOMPARE(s.allowed, expected);
        // The same requests on one unsharded limiter.
        BurstConfig whole = config(Algorithm::FixedWindow, key + ":whole", kLimit, kDay);
        whole.requests = requests;
        const qint64 unsharded = BurstEngine(m_server->options(), whole).run().allowed;
        QCOMPARE(unsharded, std::min(requests, kLimit));
        QVERIFY(s.allowed <= unsharded);
        qInfo("%lld requests, 8 shards by hash, limit 400: the group admitted %lld, one limiter %lld (drift %lld, %.1f %%), skew %.2f",
              requests, s.allowed, unsharded, unsharded - s.allowed, 100.0 * double(unsharded - s.allowed) / double(unsharded),
              s.toJson().value(QStringLiteral("skew")).toDouble());
    }
}

void TestBurst::cliShardedCheckAndBurst()
{
    auto check = [&](const QString &id) {
        const CliResult r =
            runCli(cliBase() + QStringList{QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("ck:{t}"),
                                           QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"),
                                           QStringLiteral("10"), QStringLiteral("--window"), QStringLiteral("1m"),
                                           QStringLiteral("--shards"), QStringLiteral("4"), QStringLiteral("--request-id"), id});
        return parseJson(r.out);
    };
    // The same id always lands on the same shard, with that shard's share of the limit (10
    // over 4: 3, 3, 2, 2).
    const QJsonObject first = check(QStringLiteral("user-17"));
    const QJsonObject again = check(QStringLiteral("user-17"));
    const QJsonObject shard = first.value(QStringLiteral("shard")).toObject();
    const int index = shardForId("user-17", 4);
    QCOMPARE(shard.value(QStringLiteral("index")).toInt(), index);
    QCOMPARE(shard.value(QStringLiteral("key")).toString(), QStringLiteral("ck:{t}:%1").arg(index));
    QCOMPARE(again.value(QStringLiteral("shard")).toObject(), shard);
    QCOMPARE(first.value(QStringLiteral("limit")).toInt(), index < 2 ? 3 : 2);
    QCOMPARE(again.value(QStringLiteral("used")).toInt(), 2);
    QCOMPARE(m_conn->command({"EXISTS", "ck:{t}:" + QByteArray::number(index)}).integer(), 1);

    const CliResult burst =
        runCli(cliBase() + QStringList{QStringLiteral("burst"), QStringLiteral("cb:{t}"), QStringLiteral("--algo"),
                                       QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("40"),
                                       QStringLiteral("--window"), QStringLiteral("1d"), QStringLiteral("--requests"), QStringLiteral("80"),
                                       QStringLiteral("--shards"), QStringLiteral("4"), QStringLiteral("--shard-by"),
                                       QStringLiteral("round-robin"), QStringLiteral("--shard-from"), QStringLiteral("1")});
    QVERIFY2(burst.exitCode == 0, burst.err.constData());
    QVERIFY2(burst.out.contains("cb:{t}:4") && burst.out.contains("the group admitted 40"), burst.out.constData());
    QCOMPARE(m_conn->command({"EXISTS", "cb:{t}:0"}).integer(), 0); // numbered from 1

    // Refused before anything is sent.
    for (const QStringList &bad :
         {QStringList{QStringLiteral("--shards"), QStringLiteral("1")},
          QStringList{QStringLiteral("--shards"), QStringLiteral("50")}, // 40 / 50 < cost 1
          QStringList{QStringLiteral("--shards"), QStringLiteral("4"), QStringLiteral("--shard-by"), QStringLiteral("random")},
          QStringList{QStringLiteral("--shard-by"), QStringLiteral("hash")},
          QStringList{QStringLiteral("--shards"), QStringLiteral("4"), QStringLiteral("--shard-from"), QStringLiteral("2")}}) {
        const CliResult r =
            runCli(cliBase() +
                   QStringList{QStringLiteral("burst"), QStringLiteral("bad:{t}"), QStringLiteral("--algo"), QStringLiteral("fixed-window"),
                               QStringLiteral("--limit"), QStringLiteral("40"), QStringLiteral("--window"), QStringLiteral("1d"),
                               QStringLiteral("--requests"), QStringLiteral("10")} +
                   bad);
        QVERIFY2(r.exitCode == 2, qPrintable(bad.join(QLatin1Char(' ')) + QLatin1Char(' ') + QString::fromUtf8(r.err)));
    }
    QCOMPARE(m_conn->command({"KEYS", "bad:*"}).size(), size_t(0));
    const CliResult stray =
        runCli(cliBase() + QStringList{QStringLiteral("check"), QStringLiteral("k"), QStringLiteral("--algo"), QStringLiteral("gcra"),
                                       QStringLiteral("--limit"), QStringLiteral("5"), QStringLiteral("--window"), QStringLiteral("1s"),
                                       QStringLiteral("--request-id"), QStringLiteral("x")});
    QCOMPARE(stray.exitCode, 2);
}

// Replies of the wrong shape in the middle of pipelined batches (a library that answers
// every other call with two integers instead of six): each is one error, and every reply
// after it is still read as its own request's, so the counts are exact. The library claims
// this build's version and digest, so that the burst calls it.
void TestBurst::repliesThatAreNoDecisionKeepTheSocketInStep()
{
    SandboxServer server;
    server.start();
    Connection c(server.options());
    const FunctionLibrary &real = FunctionLibrary::instance();
    const QByteArray code =
        "#!lua name=ratescope\n"
        "local function version() return {'" +
        real.version().toUtf8() + "', '" + real.scriptsDigest() +
        "'} end\n"
        "local function decide(keys, args)\n"
        "  local n = redis.call('INCR', 'calls')\n"
        "  if n % 2 == 0 then return {1, 2} end\n"
        "  return {1, 1000, 1, 999, 0, 0}\n"
        "end\n"
        "local function peek(keys, args) return {1, 1000, 0, 1000, 0, 0} end\n"
        "redis.register_function{function_name = 'ratescope_version', callback = version, flags = {'no-writes'}}\n"
        "redis.register_function('ratescope_fixed_window', decide)\n"
        "redis.register_function{function_name = 'ratescope_fixed_window_peek', callback = peek, flags = {'no-writes'}}\n";
    QCOMPARE(c.command({"FUNCTION", "LOAD", code}).text(), QStringLiteral("ratescope"));
    BurstConfig config = this->config(Algorithm::FixedWindow, "odd", 1000, kDay);
    config.requests = 300;
    config.pipeline = 16;
    const BurstSummary s = BurstEngine(server.options(), config).run();
    QCOMPARE(c.command({"GET", "calls"}).bytes(), QByteArray("300")); // each request ran once
    QCOMPARE(s.sent, 300);
    QCOMPARE(s.allowed, 150);
    QCOMPARE(s.errors, 150);
    QCOMPARE(s.unknown, 0);
    QVERIFY2(s.firstError.contains(QStringLiteral("expected six integers")), qPrintable(s.firstError));
}

QTEST_GUILESS_MAIN(TestBurst)
#include "tst_burst.moc"
