// The log reader behind the sliding log's chart and `inspect --buckets`, against a real server:
// score bounds exact for s/ms/µs scores, entries with their costs, bucket counts equal to the
// entries' own times for a 200,000-entry log without downloading it, paging, and the CLI twin.
#include "redis/connection.h"
#include "base/errors.h"
#include "limiters/limiter.h"
#include "formats/usage.h"
#include "keys/logwindow.h"
#include "testsupport.h"

#include <cmath>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;
// Explicit "now" for every read: 2026-06-01T12:00:30Z.
constexpr qint64 kNow = 1780315230LL * kSecond;

// How writers of each unit store a time: seconds with 6 decimals, ms with 3, µs as an integer.
QByteArray scoreText(qint64 t, ScoreUnit unit)
{
    switch (unit) {
    case ScoreUnit::Seconds:
        return QByteArray::number(t / kSecond) + "." + QByteArray::number(t % kSecond).rightJustified(6, '0');
    case ScoreUnit::Milliseconds:
        return QByteArray::number(t / 1000) + "." + QByteArray::number(t % 1000).rightJustified(3, '0');
    default:
        return QByteArray::number(t);
    }
}

} // namespace

class TestLogWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void scoreBoundsRoundTrip();
    void entriesWithCosts();
    void foreignMsLogBoundaries_data();
    void foreignMsLogBoundaries();
    void bigLogIsBucketedOnTheServer_data();
    void bigLogIsBucketedOnTheServer();
    void paging();
    void badQueries();
    void cliBuckets();
    void cliBucketsErrors();

private:
    // Writes the times with one member each ("<ms>-<i>"), 1000 per ZADD.
    void writeTimes(const QByteArray &key, ScoreUnit unit, const std::vector<qint64> &times);
    QStringList cli(const QStringList &args) const { return QStringList{QStringLiteral("--url"), m_server->url()} + args; }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestLogWindow::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    m_conn = std::make_unique<Connection>(m_server->options());
}

void TestLogWindow::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestLogWindow::writeTimes(const QByteArray &key, ScoreUnit unit, const std::vector<qint64> &times)
{
    std::vector<Command> writes;
    for (size_t i = 0; i < times.size(); i += 1000) {
        Command c{"ZADD", key};
        for (size_t j = i; j < std::min(times.size(), i + 1000); ++j) {
            c.push_back(scoreText(times[j], unit));
            c.push_back(QByteArray::number(times[j] / 1000) + "-" + QByteArray::number(qulonglong(j) * 2654435761ULL % 1000000007ULL));
        }
        writes.push_back(std::move(c));
    }
    for (const Reply &r : m_conn->pipeline(writes))
        QVERIFY2(!r.isError(), qPrintable(r.text()));
}

void TestLogWindow::scoreBoundsRoundTrip()
{
    // The bound of t admits t and nothing before it, for every unit, near today's epoch values.
    for (ScoreUnit unit : {ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds}) {
        for (qint64 t = kNow - 5000; t <= kNow + 5000; t += 1) {
            const double b = scoreBound(t, unit);
            const double at = scoreText(t, unit).toDouble(), before = scoreText(t - 1, unit).toDouble();
            if (!(at >= b && before < b))
                QFAIL(qPrintable(
                    QStringLiteral("unit %1, t %2: bound %3").arg(scoreUnitName(unit)).arg(t).arg(QString::fromLatin1(scoreBoundText(b)))));
            QCOMPARE(scoreBoundText(b).toDouble(), b);
        }
    }
    // Any double, not only the scores of whole µs: the score an ulp below the bound reads as
    // before t. (1732459200.1225 ms times 1000 rounds up to the half, found by fuzz_member.)
    for (ScoreUnit unit : {ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds}) {
        const double per = double(scoreUnitUs(unit));
        for (const qint64 t : {qint64(1732459200123), kNow, qint64(0), kMaxNowUs}) {
            const double b = scoreBound(t, unit);
            QVERIFY2(scoreToUs(b, per) >= t && scoreToUs(std::nextafter(b, -HUGE_VAL), per) < t,
                     qPrintable(QStringLiteral("unit %1, t %2").arg(scoreUnitName(unit)).arg(t)));
        }
    }
    QCOMPARE(memberCost("245:4"), 4);
    QCOMPARE(memberCost("17"), 1);
    QCOMPARE(memberCost("1780315230123-0.77"), 1);
    QCOMPARE(memberCost("a:9"), 1); // not a ticket member: its colon means nothing to us
}

void TestLogWindow::entriesWithCosts()
{
    // Ratescope's own log: costs 1, 4, 1, 2 admitted at known times.
    Limiter limiter(*m_conn);
    const qint64 costs[] = {1, 4, 1, 2};
    for (int i = 0; i < 4; ++i)
        QVERIFY(limiter.check("own", LimitSpec{Algorithm::SlidingLog, 60, 10 * kSecond, costs[i]}, kNow - (4 - i) * kSecond).allowed);
    LogWindowQuery q{"own", ScoreUnit::Microseconds, kNow - 10 * kSecond, kNow + 1, 10, 10000};
    const LogWindow w = readLogWindow(*m_conn, q);
    QVERIFY(!w.bucketed);
    QCOMPARE(w.total, 4);
    QCOMPARE(w.entriesRead, 4);
    QCOMPARE(int(w.entries.size()), 4);
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(w.entries[size_t(i)].timeUs, kNow - (4 - i) * kSecond);
        QCOMPARE(w.entries[size_t(i)].cost, costs[i]);
    }
    QCOMPARE(w.entries[1].member, QByteArray("15:4"));
    // Buckets of 1 s: [now-10s+1µs, ...): the entries at now-4s..now-1s sit in buckets 6..9.
    QCOMPARE(int(w.buckets.size()), 10);
    QCOMPARE(w.buckets.front().fromUs, q.fromUs);
    QCOMPARE(w.buckets.back().toUs, q.toUs);
    for (int i = 0; i < 10; ++i)
        QCOMPARE(w.buckets[size_t(i)].count, i >= 6 ? 1 : 0);
}

void TestLogWindow::foreignMsLogBoundaries_data()
{
    QTest::addColumn<int>("unit");
    QTest::newRow("s") << int(ScoreUnit::Seconds);
    QTest::newRow("ms") << int(ScoreUnit::Milliseconds);
    QTest::newRow("us") << int(ScoreUnit::Microseconds);
}

void TestLogWindow::foreignMsLogBoundaries()
{
    // Entries exactly on bucket edges and one µs either side land where their time says,
    // whether the entries or only the counts are read.
    QFETCH(int, unit);
    const ScoreUnit u = ScoreUnit(unit);
    const qint64 from = kNow - 10 * kSecond + 1;
    std::vector<qint64> times;
    for (int edge = 0; edge <= 10; ++edge)
        for (qint64 d : {-1, 0, 1})
            times.push_back(from + edge * kSecond + d);
    writeTimes("ext", u, times);
    for (qint64 cap : {qint64(10000), qint64(0)}) {
        const LogWindow w = readLogWindow(*m_conn, LogWindowQuery{"ext", u, from, kNow + 1, 10, cap});
        QCOMPARE(w.bucketed, cap == 0);
        QCOMPARE(w.total, 30); // from-1 and the last edge's two later ones are outside
        for (const LogBucket &b : w.buckets)
            QCOMPARE(b.count, 3);
        if (!w.bucketed)
            QCOMPARE(w.entries.front().timeUs, from);
    }
}

void TestLogWindow::bigLogIsBucketedOnTheServer_data()
{
    QTest::addColumn<int>("unit");
    QTest::newRow("ms") << int(ScoreUnit::Milliseconds);
    QTest::newRow("s") << int(ScoreUnit::Seconds);
}

void TestLogWindow::bigLogIsBucketedOnTheServer()
{
    QFETCH(int, unit);
    const ScoreUnit u = ScoreUnit(unit);
    // 200,000 entries over the last 20 s at irregular µs, many on bucket edges.
    constexpr int kEntries = 200000;
    std::vector<qint64> times;
    times.reserve(kEntries);
    for (int i = 0; i < kEntries; ++i)
        times.push_back(kNow - 20 * kSecond + 1 + qint64(i) * 100 - (i % 3 == 0 ? 1 : 0) + (i % 7 == 0 ? 13 : 0));
    writeTimes("big", u, times);
    QCOMPARE(m_conn->command({"ZCARD", "big"}).integer(), kEntries);

    std::vector<qint64> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    auto between = [&](qint64 from, qint64 to) { // entries with from <= t < to, from the written times
        return qint64(std::lower_bound(sorted.begin(), sorted.end(), to) - std::lower_bound(sorted.begin(), sorted.end(), from));
    };
    LogWindowQuery q{"big", u, kNow - 15 * kSecond, kNow + 1, 333, 10000};
    const LogWindow w = readLogWindow(*m_conn, q);
    QVERIFY(w.bucketed);
    QVERIFY(w.entriesRead <= 10000);
    QCOMPARE(w.entriesRead, 0);
    QCOMPARE(int(w.buckets.size()), 333);
    qint64 sum = 0;
    for (size_t i = 0; i < w.buckets.size(); ++i) {
        const LogBucket &b = w.buckets[i];
        if (i > 0)
            QCOMPARE(b.fromUs, w.buckets[i - 1].toUs);
        // The count the entries' own integer times give, and ZCOUNT over the bucket's bounds.
        QCOMPARE(b.count, between(b.fromUs, b.toUs));
        const qint64 zcount =
            m_conn->command({"ZCOUNT", "big", scoreBoundText(scoreBound(b.fromUs, u)), "(" + scoreBoundText(scoreBound(b.toUs, u))})
                .integer();
        QCOMPARE(b.count, zcount);
        sum += b.count;
    }
    QCOMPARE(sum, w.total);
    QCOMPARE(w.buckets.front().fromUs, q.fromUs);
    QCOMPARE(w.buckets.back().toUs, q.toUs);
}

void TestLogWindow::paging()
{
    std::vector<qint64> times;
    for (int i = 0; i < 25; ++i)
        times.push_back(kNow - 25 * kSecond + i * kSecond);
    writeTimes("ext", ScoreUnit::Milliseconds, times);
    LogPage p = readLogPage(*m_conn, "ext", ScoreUnit::Milliseconds, kNow - 20 * kSecond, kNow + 1, 10, 4);
    QCOMPARE(p.total, 20);
    QCOMPARE(int(p.entries.size()), 4);
    QCOMPARE(p.entries.front().timeUs, kNow - 10 * kSecond);
    p = readLogPage(*m_conn, "ext", ScoreUnit::Milliseconds, kNow - 20 * kSecond, kNow + 1, 18, 4);
    QCOMPARE(int(p.entries.size()), 2);
    QCOMPARE(p.entries.back().timeUs, kNow - kSecond);
}

void TestLogWindow::badQueries()
{
    QVERIFY_THROWS_EXCEPTION(UsageError, readLogWindow(*m_conn, LogWindowQuery{"x", ScoreUnit::Milliseconds, kNow, kNow + 1, 0, 10}));
    QVERIFY_THROWS_EXCEPTION(UsageError, readLogWindow(*m_conn, LogWindowQuery{"x", ScoreUnit::Milliseconds, kNow, kNow + 1, 10001, 10}));
    QVERIFY_THROWS_EXCEPTION(UsageError, readLogWindow(*m_conn, LogWindowQuery{"x", ScoreUnit::Milliseconds, kNow, kNow, 1, 10}));
    // A missing key is an empty log; a key of another type is the server's error.
    QCOMPARE(readLogWindow(*m_conn, LogWindowQuery{"x", ScoreUnit::Milliseconds, kNow - kSecond, kNow, 5, 10}).total, 0);
    m_conn->command({"SET", "s", "1"});
    QVERIFY_THROWS_EXCEPTION(ReplyError, readLogWindow(*m_conn, LogWindowQuery{"s", ScoreUnit::Milliseconds, kNow - kSecond, kNow, 5, 10}));
}

void TestLogWindow::cliBuckets()
{
    // 3,000 entries one every 10 ms over the last 30 s; window 10 s: 1,000 in the window.
    std::vector<qint64> times;
    for (int i = 0; i < 3000; ++i)
        times.push_back(kNow - i * 10000);
    writeTimes("ext:ms", ScoreUnit::Milliseconds, times);
    const QStringList base = {QStringLiteral("inspect"),  QStringLiteral("ext:ms"),      QStringLiteral("--now-us"), QString::number(kNow),
                              QStringLiteral("--algo"),   QStringLiteral("sliding-log"), QStringLiteral("--limit"),  QStringLiteral("2000"),
                              QStringLiteral("--window"), QStringLiteral("10s")};
    CliResult r =
        runCli(cli(QStringList{QStringLiteral("--json")} + base + QStringList{QStringLiteral("--buckets"), QStringLiteral("20")}));
    QCOMPARE(r.exitCode, 0);
    QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QJsonArray b = o.value(QStringLiteral("buckets")).toArray();
    QCOMPARE(b.size(), 20);
    qint64 sum = 0;
    for (qsizetype i = 0; i < b.size(); ++i) {
        const QJsonObject x = b[i].toObject();
        QCOMPARE(x.value(QStringLiteral("to_us")).toInteger() - x.value(QStringLiteral("from_us")).toInteger(), 500000);
        QCOMPARE(x.value(QStringLiteral("count")).toInteger(), 50);
        sum += x.value(QStringLiteral("count")).toInteger();
    }
    QCOMPARE(b.first().toObject().value(QStringLiteral("from_us")).toInteger(), kNow - 10 * kSecond + 1);
    QCOMPARE(b.last().toObject().value(QStringLiteral("to_us")).toInteger(), kNow + 1);
    // The counts add up to the entries in the window.
    QCOMPARE(sum, o.value(QStringLiteral("state")).toObject().value(QStringLiteral("entries_in_window")).toInteger());
    QCOMPARE(sum, 1000);
    QCOMPARE(o.value(QStringLiteral("bucket_span_us")).toInteger(), 10 * kSecond);

    // An explicit span: 30 s in 3 buckets hold all 3,000 (the oldest is 29.99 s old).
    r = runCli(cli(QStringList{QStringLiteral("--json")} + base +
                   QStringList{QStringLiteral("--buckets"), QStringLiteral("3"), QStringLiteral("--span"), QStringLiteral("30s")}));
    QCOMPARE(r.exitCode, 0);
    b = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("buckets")).toArray();
    QCOMPARE(b.size(), 3);
    for (const QJsonValue &x : b)
        QCOMPARE(x.toObject().value(QStringLiteral("count")).toInteger(), 1000);

    // Without limits the span alone will do; the human form draws a sparkline with the range and max.
    r = runCli(cli({QStringLiteral("inspect"), QStringLiteral("ext:ms"), QStringLiteral("--now-us"), QString::number(kNow),
                    QStringLiteral("--buckets"), QStringLiteral("8"), QStringLiteral("--span"), QStringLiteral("40s")}));
    QCOMPARE(r.exitCode, 0);
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains(QStringLiteral("▁▁▇███████")) == false, qPrintable(out)); // 8 buckets, not 10
    QVERIFY2(out.contains(QStringLiteral("▁▁████")), qPrintable(out));              // 40 s: the first 10 s are empty
    QVERIFY2(out.contains(QStringLiteral("buckets.max")) && out.contains(QStringLiteral("500 entries in one bucket")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("in 8 buckets of 5s")), qPrintable(out));
}

void TestLogWindow::cliBucketsErrors()
{
    writeTimes("ext:ms", ScoreUnit::Milliseconds, {kNow - kSecond});
    const QStringList base = {QStringLiteral("inspect"), QStringLiteral("ext:ms"), QStringLiteral("--now-us"), QString::number(kNow)};
    for (const QStringList &extra :
         {QStringList{QStringLiteral("--buckets"), QStringLiteral("0"), QStringLiteral("--span"), QStringLiteral("1s")},
          QStringList{QStringLiteral("--buckets"), QStringLiteral("10001"), QStringLiteral("--span"), QStringLiteral("1h")},
          QStringList{QStringLiteral("--buckets"), QStringLiteral("x"), QStringLiteral("--span"), QStringLiteral("1s")},
          QStringList{QStringLiteral("--buckets"), QStringLiteral("10"), QStringLiteral("--span"), QStringLiteral("soon")},
          QStringList{QStringLiteral("--buckets"), QStringLiteral("10"), QStringLiteral("--span"), QStringLiteral("5us")},
          QStringList{QStringLiteral("--span"), QStringLiteral("10s")},
          QStringList{QStringLiteral("--buckets"), QStringLiteral("10")}}) { // neither span nor limits
        const CliResult r = runCli(cli(base + extra));
        QVERIFY2(r.exitCode == 2, qPrintable(extra.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromUtf8(r.err)));
        QVERIFY(r.out.isEmpty());
    }
    QVERIFY(runCli(cli(base + QStringList{QStringLiteral("--buckets"), QStringLiteral("10")}))
                .err.contains("buckets need a span or known limits"));
    // A hash limiter has no entries to count.
    m_conn->command({"HSET", "tb", "tk", "5", "ts", QByteArray::number(kNow)});
    QCOMPARE(runCli(cli({QStringLiteral("inspect"), QStringLiteral("tb"), QStringLiteral("--buckets"), QStringLiteral("10"),
                         QStringLiteral("--span"), QStringLiteral("1s")}))
                 .exitCode,
             2);
    const CliResult help = runCli({QStringLiteral("inspect"), QStringLiteral("--help")});
    QVERIFY2(help.out.contains("--buckets N") && help.out.contains("--span D"), help.out.constData());
}

QTEST_GUILESS_MAIN(TestLogWindow)
#include "tst_logwindow.moc"
