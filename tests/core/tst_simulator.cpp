// What if: a trace replayed by the simulator decides exactly as the same requests checked one
// by one with an explicit now; traces come from CSV files (checked whole before anything
// runs), from live log keys (read only: the inspected server is unchanged) and from burst
// timelines; `ratescope-cli simulate` reports the same figures.
#include "base/errors.h"
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "redis/sandboxserver.h"
#include "load/simulator.h"
#include "testsupport.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <random>
#include <tuple>

using namespace ratescope;
using namespace ratescope::test;

Q_DECLARE_METATYPE(ratescope::LimitSpec)

namespace {

constexpr qint64 kT0 = 1763900000000000LL; // 2025-11-23, µs
constexpr qint64 kSecond = 1000000;

struct Row {
    qint64 timeUs;
    QByteArray key;
    qint64 cost; // 0: the spec's
};

// Bursts, pauses and requests on the window's edges (±1 µs) for a few keys, in global time order.
std::vector<Row> awkwardTrace(const LimitSpec &spec)
{
    std::vector<Row> rows;
    std::mt19937_64 rng(42);
    const qint64 w = spec.windowUs;
    for (const QByteArray &key : {QByteArray("k:a"), QByteArray("k:b"), QByteArray("k,comma \"q\"")}) {
        qint64 t = (kT0 / w) * w + w / 3; // inside a window, so that its edge comes up
        for (int burst = 0; burst < 4; ++burst) {
            for (qint64 i = 0; i < spec.limit + 3; ++i) // a burst past the limit
                rows.push_back({t + i, key, (i % 5 == 4) ? 2 : 0});
            const qint64 edge = ((t / w) + 1) * w; // the next window boundary
            for (qint64 d : {-1, 0, 1})
                rows.push_back({edge + d, key, 0});
            const qint64 firstPlusWindow = t + w; // a sliding window's edge for the burst's first request
            for (qint64 d : {-1, 0, 1})
                rows.push_back({firstPlusWindow + d, key, 0});
            t = firstPlusWindow + 2 + qint64(rng() % quint64(w)) + (burst == 1 ? 5 * w : 0); // a pause
        }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.timeUs < b.timeUs; });
    return rows;
}

void writeCsv(const QString &path, const std::vector<Row> &rows, bool header = true)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    if (header)
        f.write("time,key,cost\n");
    for (const Row &r : rows) {
        QByteArray key = r.key;
        if (key.contains(',') || key.contains('"'))
            key = '"' + QByteArray(key).replace("\"", "\"\"") + '"';
        f.write(QByteArray::number(r.timeUs) + ',' + key + (r.cost ? ',' + QByteArray::number(r.cost) : QByteArray()) + '\n');
    }
}

std::vector<TraceRequest> readAll(TraceReader &reader)
{
    std::vector<TraceRequest> all;
    while (reader.next(all, 1000)) {
    }
    return all;
}

QJsonObject lastJson(const QByteArray &out)
{
    const QList<QByteArray> lines = out.trimmed().split('\n');
    return QJsonDocument::fromJson(lines.constLast()).object();
}

} // namespace

class TestSimulator : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_inspected.start();
        QVERIFY(m_dir.isValid());
    }
    void init() { Connection(m_inspected.options()).command({"FLUSHALL"}); }

    void replayEqualsOneByOneChecks_data();
    void replayEqualsOneByOneChecks();
    void cliMatchesCheckNowUs();
    void compareReportsEverySpec();
    void compareSlidingBucketsWithTheirSubBuckets();
    void liveLogKeysAreReadOnly();
    void bigLogKeysAreReadWhole();
    void badCsvRowsRunNothing_data();
    void badCsvRowsRunNothing();
    void timesGoingBackAreSorted();
    void bigTracesSpillSortedRuns();
    void isoTimesAndMilliseconds();
    void burstTimelineTrace();
    void cancelStopsTheReplay();

private:
    QString path(const QString &name) const { return m_dir.filePath(name); }
    SandboxServer m_inspected;
    QTemporaryDir m_dir;
};

void TestSimulator::replayEqualsOneByOneChecks_data()
{
    QTest::addColumn<LimitSpec>("spec");
    QTest::newRow("sliding-log") << LimitSpec{Algorithm::SlidingLog, 10, 2 * kSecond, 1};
    QTest::newRow("sliding-counter") << LimitSpec{Algorithm::SlidingCounter, 10, 2 * kSecond, 1};
    QTest::newRow("fixed-window") << LimitSpec{Algorithm::FixedWindow, 10, 2 * kSecond, 1};
    QTest::newRow("token-bucket") << LimitSpec{Algorithm::TokenBucket, 10, 2 * kSecond, 1};
    QTest::newRow("gcra") << LimitSpec{Algorithm::Gcra, 10, 2 * kSecond, 1};
}

void TestSimulator::replayEqualsOneByOneChecks()
{
    QFETCH(LimitSpec, spec);
    const std::vector<Row> rows = awkwardTrace(spec);
    const QString csv = path(QStringLiteral("awkward.csv"));
    writeCsv(csv, rows);

    // The replay, with a small pipeline so that batches end mid-key.
    std::map<QByteArray, std::vector<std::pair<qint64, Decision>>> replayed;
    SimOptions options;
    options.specs = {spec};
    options.pipeline = 7;
    options.onDecision = [&](int s, const TraceRequest &r, const Decision &d) {
        QCOMPARE(s, 0);
        replayed[r.key].push_back({r.timeUs, d});
    };
    const auto reader = openCsvTrace(csv, TraceTimeUnit::Microseconds, spec.limit);
    const SimResult result = simulate(*reader, options);
    QCOMPARE(result.specs.size(), size_t(1));
    QCOMPARE(result.specs[0].requests, qint64(rows.size()));
    QCOMPARE(result.specs[0].keys, qint64(3));

    // The same requests, one by one, key by key in time order, with an explicit now.
    Connection c(m_inspected.options());
    Limiter limiter(c);
    std::map<QByteArray, std::vector<Row>> byKey;
    for (const Row &r : rows)
        byKey[r.key].push_back(r);
    qint64 denied = 0;
    for (const auto &[key, keyRows] : byKey) {
        const auto &got = replayed[key];
        QCOMPARE(got.size(), keyRows.size());
        for (size_t i = 0; i < keyRows.size(); ++i) {
            LimitSpec s = spec;
            if (keyRows[i].cost)
                s.cost = keyRows[i].cost;
            const Decision expected = limiter.check("direct:" + key, s, keyRows[i].timeUs);
            QCOMPARE(got[i].first, keyRows[i].timeUs);
            if (!(got[i].second == expected))
                QFAIL(
                    qPrintable(QStringLiteral("%1 request %2 at %3: replay allowed=%4 used=%5 retry=%6, check allowed=%7 used=%8 retry=%9")
                                   .arg(QString::fromUtf8(key))
                                   .arg(i)
                                   .arg(keyRows[i].timeUs)
                                   .arg(got[i].second.allowed)
                                   .arg(got[i].second.used)
                                   .arg(got[i].second.retryAfterUs)
                                   .arg(expected.allowed)
                                   .arg(expected.used)
                                   .arg(expected.retryAfterUs)));
            denied += expected.allowed ? 0 : 1;
        }
    }
    QVERIFY(denied > 0); // the trace does throttle
    QCOMPARE(result.specs[0].denied, denied);
    qint64 binned = 0;
    for (const SimBin &b : result.specs[0].timeline)
        binned += b.allowed + b.denied;
    QCOMPARE(binned, qint64(rows.size()));
    QVERIFY(result.specs[0].timeline.size() <= size_t(kMaxSimBins));
    // Nothing of the replay reached the inspected server: only the direct checks are there.
    const Reply keys = c.command({"KEYS", "*"});
    for (const Reply &k : keys.elements())
        QVERIFY2(k.bytes().startsWith("direct:"), k.bytes().constData());
}

void TestSimulator::cliMatchesCheckNowUs()
{
    // The CLI's --decisions file against `check --now-us` run through the CLI, request by request
    // (gcra, 3 per minute: the key check writes expires in real time, a minute or so after it
    // is written, so that a slow run still finds it from one check to the next).
    const qint64 kMinute = 60 * kSecond;
    std::vector<Row> rows;
    for (qint64 i = 0; i < 6; ++i)
        rows.push_back({kT0 + i * 6 * kSecond, "cli:k", 0});
    rows.push_back({kT0 + kMinute - 1, "cli:k", 0});
    rows.push_back({kT0 + kMinute, "cli:k", 0});
    rows.push_back({kT0 + kMinute + 1, "cli:k", 0});
    const QString csv = path(QStringLiteral("cli.csv"));
    writeCsv(csv, rows, false);
    const QString decisions = path(QStringLiteral("decisions.csv"));
    const CliResult sim = runCli({QStringLiteral("--json"), QStringLiteral("simulate"), QStringLiteral("--trace"), csv,
                                  QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("3"),
                                  QStringLiteral("--window"), QStringLiteral("1m"), QStringLiteral("--decisions"), decisions});
    QVERIFY2(sim.exitCode == 0, sim.err.constData());
    QFile f(decisions);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.takeFirst(), QByteArray("time_us,key,allowed,used,remaining,retry_after_us"));
    QCOMPARE(lines.size(), qsizetype(rows.size()));
    qint64 allowed = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        const CliResult check = runCli({QStringLiteral("--url"), m_inspected.url(), QStringLiteral("--json"), QStringLiteral("check"),
                                        QStringLiteral("cli:k"), QStringLiteral("--algo"), QStringLiteral("gcra"),
                                        QStringLiteral("--limit"), QStringLiteral("3"), QStringLiteral("--window"), QStringLiteral("1m"),
                                        QStringLiteral("--now-us"), QString::number(rows[i].timeUs), QStringLiteral("--force")});
        QVERIFY2(check.exitCode == 0 || check.exitCode == 1, check.err.constData());
        const QJsonObject d = lastJson(check.out);
        const QList<QByteArray> f = lines[qsizetype(i)].split(',');
        QCOMPARE(f[0].toLongLong(), rows[i].timeUs);
        QCOMPARE(f[2] == "1", d.value(QStringLiteral("allowed")).toBool());
        QCOMPARE(f[3].toLongLong(), d.value(QStringLiteral("used")).toInteger());
        QCOMPARE(f[4].toLongLong(), d.value(QStringLiteral("remaining")).toInteger());
        // check reports ms rounded up; the decisions file keeps µs.
        QCOMPARE((f[5].toLongLong() + 999) / 1000, d.value(QStringLiteral("retry_after_ms")).toInteger());
        allowed += f[2] == "1";
    }
    const QJsonObject summary = lastJson(sim.out);
    QCOMPARE(summary.value(QStringLiteral("allowed")).toInteger(), allowed);
    QCOMPARE(summary.value(QStringLiteral("requests")).toInteger(), qint64(rows.size()));
}

void TestSimulator::compareReportsEverySpec()
{
    std::vector<Row> rows;
    for (int k = 0; k < 5; ++k)
        for (int i = 0; i < 30; ++i)
            rows.push_back({kT0 + i * 50000, "cmp:" + QByteArray::number(k), 0});
    const QString csv = path(QStringLiteral("cmp.csv"));
    writeCsv(csv, rows);
    const CliResult r =
        runCli({QStringLiteral("--json"), QStringLiteral("simulate"), QStringLiteral("--trace"), csv, QStringLiteral("--algo"),
                QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("100"), QStringLiteral("--window"),
                QStringLiteral("10s"), QStringLiteral("--compare"), QStringLiteral("sliding-log:20/10s"), QStringLiteral("--compare"),
                QStringLiteral("fixed-window:10/1s"), QStringLiteral("--per-key")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 6); // five keys, then the summary
    const QJsonObject s = lastJson(r.out);
    QCOMPARE(s.value(QStringLiteral("requests")).toInteger(), 150);
    QCOMPARE(s.value(QStringLiteral("denied")).toInteger(), 0);
    QCOMPARE(s.value(QStringLiteral("keys")).toInteger(), 5);
    QCOMPARE(s.value(QStringLiteral("keys_denied")).toInteger(), 0);
    QCOMPARE(s.value(QStringLiteral("admitted_only")).toBool(), false);
    const QJsonArray compare = s.value(QStringLiteral("compare")).toArray();
    QCOMPARE(compare.size(), 2);
    QCOMPARE(compare[0].toObject().value(QStringLiteral("denied")).toInteger(), 5 * 10); // 30 in 1.5 s, 20 admitted
    QCOMPARE(compare[0].toObject().value(QStringLiteral("keys_denied")).toInteger(), 5);
    // fixed-window 10 per 1 s: the windows [T0, ..) hold 20 and 10 requests → 10 denied per key.
    const qint64 firstWindowRequests =
        std::count_if(rows.begin(), rows.begin() + 30, [](const Row &row) { return row.timeUs / kSecond == kT0 / kSecond; });
    const qint64 expectedFixed = std::max<qint64>(0, firstWindowRequests - 10) + std::max<qint64>(0, 30 - firstWindowRequests - 10);
    QCOMPARE(compare[1].toObject().value(QStringLiteral("denied")).toInteger(), 5 * expectedFixed);
    const QJsonObject perKey = QJsonDocument::fromJson(lines[0]).object();
    QVERIFY(perKey.value(QStringLiteral("key")).toString().startsWith(QLatin1String("cmp:")));
    QCOMPARE(perKey.value(QStringLiteral("compare")).toArray()[0].toObject().value(QStringLiteral("denied")).toInteger(), 10);
    QCOMPARE(perKey.value(QStringLiteral("compare")).toArray()[0].toObject().value(QStringLiteral("first_denial_us")).toInteger(),
             kT0 + 20 * 50000);

    // The human form says the same.
    const CliResult h = runCli({QStringLiteral("simulate"), QStringLiteral("--trace"), csv, QStringLiteral("--algo"),
                                QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("100"), QStringLiteral("--window"),
                                QStringLiteral("10s"), QStringLiteral("--compare"), QStringLiteral("sliding-log:20/10s")});
    QVERIFY2(h.exitCode == 0, h.err.constData());
    QVERIFY2(h.out.contains("no key throttled, all 150 requests allowed"), h.out.constData());
    QVERIFY2(h.out.contains("5 of 5 keys throttled, 50 of 150 requests denied"), h.out.constData());
}

// A compared sliding-buckets spec takes its sub-buckets after the window ("/B"), and replays
// exactly as the main spec does with --sub-buckets B. The trace tells B = 2 from B = 10: a
// window's worth at 0..0.9 s, then a request every 100 ms from 10 s on, when the oldest
// bucket still counts by how much of it the window covers (all of a 1 s bucket at 10.0 s and
// half at 10.5 s; of a 5 s bucket, 90 % at 10.5 s).
void TestSimulator::compareSlidingBucketsWithTheirSubBuckets()
{
    std::vector<Row> rows;
    for (int i = 0; i < 10; ++i)
        rows.push_back({kT0 + i * 100000, "sb", 0});
    for (int i = 0; i < 20; ++i)
        rows.push_back({kT0 + 10 * kSecond + i * 100000, "sb", 0});
    const QString csv = path(QStringLiteral("sb.csv"));
    writeCsv(csv, rows);
    auto run = [&](const QStringList &more) {
        const CliResult r = runCli(QStringList{QStringLiteral("--json"), QStringLiteral("simulate"), QStringLiteral("--trace"), csv,
                                               QStringLiteral("--algo"), QStringLiteral("sliding-buckets"), QStringLiteral("--limit"),
                                               QStringLiteral("10"), QStringLiteral("--window"), QStringLiteral("10s")} +
                                   more);
        if (r.exitCode != 0)
            qWarning("%s", r.err.constData());
        return lastJson(r.out);
    };
    const QJsonObject two = run({QStringLiteral("--sub-buckets"), QStringLiteral("2")});
    const QJsonObject ten = run({QStringLiteral("--sub-buckets"), QStringLiteral("10")});
    QCOMPARE(two.value(QStringLiteral("buckets")).toInt(), 2);
    QCOMPARE(ten.value(QStringLiteral("buckets")).toInt(), 10);
    const qint64 deniedTwo = two.value(QStringLiteral("denied")).toInteger(), deniedTen = ten.value(QStringLiteral("denied")).toInteger();
    QVERIFY2(deniedTwo > deniedTen, qPrintable(QStringLiteral("%1 and %2 denied").arg(deniedTwo).arg(deniedTen)));

    const QJsonObject both =
        run({QStringLiteral("--compare"), QStringLiteral("sliding-buckets:10/10s/2"), QStringLiteral("--compare"),
             QStringLiteral("sliding-buckets:10/10s/10"), QStringLiteral("--compare"), QStringLiteral("sliding-buckets:10/10s")});
    const QJsonArray compare = both.value(QStringLiteral("compare")).toArray();
    QCOMPARE(compare.size(), 3);
    QCOMPARE(compare[0].toObject().value(QStringLiteral("buckets")).toInt(), 2);
    QCOMPARE(compare[0].toObject().value(QStringLiteral("denied")).toInteger(), deniedTwo);
    QCOMPARE(compare[1].toObject().value(QStringLiteral("buckets")).toInt(), 10);
    QCOMPARE(compare[1].toObject().value(QStringLiteral("denied")).toInteger(), deniedTen);
    QCOMPARE(compare[2].toObject().value(QStringLiteral("buckets")).toInt(), 60); // the default

    // The human form names each spec's buckets.
    const CliResult h = runCli({QStringLiteral("simulate"), QStringLiteral("--trace"), csv, QStringLiteral("--algo"),
                                QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("10"), QStringLiteral("--window"),
                                QStringLiteral("10s"), QStringLiteral("--compare"), QStringLiteral("sliding-buckets:10/10s/2")});
    QVERIFY2(h.exitCode == 0, h.err.constData());
    QVERIFY2(h.out.contains("10 per 10s sliding-buckets (2 x 5s)"), h.out.constData());

    // Sub-buckets where they do not belong, or out of range: refused, nothing run.
    for (const QString &bad : {QStringLiteral("fixed-window:10/10s/2"), QStringLiteral("sliding-buckets:10/10s/1"),
                               QStringLiteral("sliding-buckets:10/10s/3601"), QStringLiteral("sliding-buckets:10/2ms/3000"),
                               QStringLiteral("sliding-buckets:10/10s/2/3")}) {
        const CliResult r = runCli({QStringLiteral("simulate"), QStringLiteral("--trace"), csv, QStringLiteral("--algo"),
                                    QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("10"),
                                    QStringLiteral("--window"), QStringLiteral("10s"), QStringLiteral("--compare"), bad});
        QVERIFY2(r.exitCode == 2, qPrintable(bad + QStringLiteral(": exit %1").arg(r.exitCode)));
        QVERIFY2(r.out.isEmpty(), qPrintable(bad));
        QVERIFY2(r.err.contains("--compare"), r.err.constData());
    }
}

void TestSimulator::liveLogKeysAreReadOnly()
{
    Connection c(m_inspected.options());
    // Ratescope's own log: µs scores, ticket members carrying costs.
    Limiter limiter(c);
    const LimitSpec own{Algorithm::SlidingLog, 100, 60 * kSecond, 1};
    std::vector<std::pair<qint64, qint64>> ownRequests = {{kT0, 1}, {kT0 + 10, 3}, {kT0 + 500000, 1}};
    for (const auto &[t, cost] : ownRequests) {
        LimitSpec s = own;
        s.cost = cost;
        QVERIFY(limiter.check("live:own", s, t).allowed);
    }
    // A foreign log in ms with "<ms>-<random>" members, and one in seconds.
    const qint64 ms = kT0 / 1000;
    c.command({"ZADD", "live:ms", QByteArray::number(ms), QByteArray::number(ms) + "-0.20799", QByteArray::number(ms + 5),
               QByteArray::number(ms + 5) + "-0.91", QByteArray::number(ms + 5), QByteArray::number(ms + 5) + "-0.13"});
    c.command({"ZADD", "live:s", "1763900000.25", "a", "1763900001", "b"});
    // rolling-rate-limiter's: µs scores, UUID members (read by its library format's reader).
    c.command({"ZADD", "live:rrl", QByteArray::number(kT0 + 7), "6f1c1e3a-4b2d-4c8e-9f0a-1b2c3d4e5f60", QByteArray::number(kT0 + 9),
               "0b9e2c1d-7a3f-4e2b-8c1d-2e3f4a5b6c7d"});
    // Python limits' moving window: a list of float Unix seconds, newest first.
    c.command({"LPUSH", "LIMITS:LIMITER/dl/u1/5/1/minute", "1763900002.5", "1763900003.25"});
    c.command({"RPUSH", "live:queue", "job1", "job2"});          // a list that is no log
    c.command({"ZADD", "live:board", "3", "alice", "7", "bob"}); // a leaderboard, not a log
    c.command({"SET", "live:string", "x"});
    const QByteArray before = keyspaceSnapshot(c);
    const qint64 dbsize = c.command({"DBSIZE"}).integer();

    auto reader = openLogKeysTrace(c, "live:*");
    QVERIFY(reader->admittedOnly());
    const std::vector<TraceRequest> all = readAll(*reader);
    std::map<QByteArray, std::vector<std::pair<qint64, qint64>>> got;
    for (const TraceRequest &r : all)
        got[r.key].push_back({r.timeUs, r.cost});
    QCOMPARE(got.size(), size_t(4));
    QCOMPARE(got["live:own"], ownRequests);
    const std::vector<std::pair<qint64, qint64>> rrlExpected = {{kT0 + 7, 0}, {kT0 + 9, 0}};
    QCOMPARE(got["live:rrl"], rrlExpected);
    const std::vector<std::pair<qint64, qint64>> msExpected = {{ms * 1000, 0}, {(ms + 5) * 1000, 0}, {(ms + 5) * 1000, 0}};
    QCOMPARE(got["live:ms"], msExpected);
    const std::vector<std::pair<qint64, qint64>> sExpected = {{1763900000250000LL, 0}, {1763900001000000LL, 0}};
    QCOMPARE(got["live:s"], sExpected);
    QVERIFY2(reader->description().contains(QLatin1String("4 keys")), qPrintable(reader->description()));
    auto lists = openLogKeysTrace(c, "LIMITS:*");
    std::vector<std::pair<qint64, qint64>> listTimes;
    for (const TraceRequest &r : readAll(*lists))
        listTimes.push_back({r.timeUs, r.cost});
    const std::vector<std::pair<qint64, qint64>> listExpected = {{1763900002500000LL, 0}, {1763900003250000LL, 0}};
    QCOMPARE(listTimes, listExpected);

    // The whole replay, through the CLI in read-only mode, leaves the server as it was.
    const CliResult r = runCli({QStringLiteral("--url"), m_inspected.url(), QStringLiteral("--read-only"), QStringLiteral("--json"),
                                QStringLiteral("simulate"), QStringLiteral("--from-keys"), QStringLiteral("live:*"),
                                QStringLiteral("--algo"), QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("5"),
                                QStringLiteral("--window"), QStringLiteral("1m")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject s = lastJson(r.out);
    QCOMPARE(s.value(QStringLiteral("admitted_only")).toBool(), true);
    QCOMPARE(s.value(QStringLiteral("requests")).toInteger(), 10);
    QCOMPARE(s.value(QStringLiteral("keys")).toInteger(), 4);
    QCOMPARE(s.value(QStringLiteral("denied")).toInteger(), 0);
    QCOMPARE(keyspaceSnapshot(c), before);
    QCOMPARE(c.command({"DBSIZE"}).integer(), dbsize);
}

void TestSimulator::bigLogKeysAreReadWhole()
{
    // Logs longer than a page, read a page at a time whatever the caller's batch size: every
    // entry once, also when many share a score across a page's end (ms scores, 1,500 entries
    // in one millisecond).
    Connection c(m_inspected.options());
    const qint64 ms = kT0 / 1000;
    qint64 expected = 0;
    for (const auto &[key, entries, perScore] : {std::tuple<QByteArray, int, int>{"big:a", 600, 1}, {"big:b", 5000, 7}, {"big:c", 1500, 1500}}) {
        Command zadd{"ZADD", key};
        for (int i = 0; i < entries; ++i)
            zadd << QByteArray::number(ms + i / perScore) << QByteArray::number(ms + i / perScore) + "-" + QByteArray::number(i);
        c.command(zadd);
        expected += entries;
    }
    for (int batch : {1, 7, 511, 512, 1000, 6000}) {
        auto reader = openLogKeysTrace(c, "big:*");
        std::vector<TraceRequest> all;
        for (int calls = 0; calls < 100000 && reader->next(all, batch); ++calls) {
        }
        QCOMPARE(qint64(all.size()), expected);
        std::map<QByteArray, qint64> perKey;
        for (const TraceRequest &r : all)
            ++perKey[r.key];
        QCOMPARE(perKey["big:a"], 600);
        QCOMPARE(perKey["big:b"], 5000);
        QCOMPARE(perKey["big:c"], 1500);
    }
    const CliResult r = runCli({QStringLiteral("--url"), m_inspected.url(), QStringLiteral("--read-only"), QStringLiteral("--json"),
                                QStringLiteral("simulate"), QStringLiteral("--from-keys"), QStringLiteral("big:*"),
                                QStringLiteral("--algo"), QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("5"),
                                QStringLiteral("--window"), QStringLiteral("1m")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(lastJson(r.out).value(QStringLiteral("requests")).toInteger(), expected);
}

void TestSimulator::badCsvRowsRunNothing_data()
{
    QTest::addColumn<QByteArray>("csv");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<QString>("message");
    const QStringList none;
    QTest::newRow("missing key") << QByteArray("time,key\n1000,a\n2000\n") << none << QStringLiteral("line 3");
    QTest::newRow("empty key") << QByteArray("1000,a\n2000,\n") << none << QStringLiteral("line 2: the key is empty");
    QTest::newRow("negative time") << QByteArray("1000,a\n-5,a\n") << none << QStringLiteral("line 2: negative time '-5'");
    QTest::newRow("not a time") << QByteArray("1000,a\n12x,a\n") << none << QStringLiteral("line 2:");
    QTest::newRow("padded time") << QByteArray("1000,a\n 1001 x,a\n") << none << QStringLiteral("line 2:");
    QTest::newRow("too many fields") << QByteArray("1000,a,1,9\n") << none << QStringLiteral("line 1:");
    QTest::newRow("cost above limit") << QByteArray("1000,a,1\n2000,b,11\n") << none
                                      << QStringLiteral("line 2: cost 11 is above the limit 10");
    QTest::newRow("cost above a compared limit")
        << QByteArray("1000,a,1\n2000,b,6\n") << QStringList{QStringLiteral("--compare"), QStringLiteral("gcra:5/1s")}
        << QStringLiteral("line 2: cost 6 is above the limit 5");
    QTest::newRow("zero cost") << QByteArray("1000,a,0\n") << none << QStringLiteral("line 1: the cost must be");
    QTest::newRow("unclosed quote") << QByteArray("1000,a\n2000,\"b\n") << none << QStringLiteral("line 2: a quoted field is not closed");
    QTest::newRow("unknown unit") << QByteArray("1000,a\n") << QStringList{QStringLiteral("--time-unit"), QStringLiteral("hours")}
                                  << QStringLiteral("unknown time unit 'hours'");
    QTest::newRow("ms beyond 2^52 us") << QByteArray("1000,a\n4503599627371,a\n")
                                       << QStringList{QStringLiteral("--time-unit"), QStringLiteral("ms")}
                                       << QStringLiteral("line 2: time '4503599627371' is beyond 2^52");
    // 16 digits of ms, multiplied into µs, overflowed before the check above (found by fuzz_csvtrace).
    QTest::newRow("ms overflowing qint64") << QByteArray("1000,a\n9543127200000000,a\n")
                                           << QStringList{QStringLiteral("--time-unit"), QStringLiteral("ms")}
                                           << QStringLiteral("line 2: time '9543127200000000' is beyond 2^52");
    QTest::newRow("bad ISO") << QByteArray("2026-11-23T10:00:00Z,a\n2026-13-23T10:00:00Z,a\n") << none << QStringLiteral("line 2:");
}

void TestSimulator::badCsvRowsRunNothing()
{
    QFETCH(QByteArray, csv);
    QFETCH(QStringList, extra);
    QFETCH(QString, message);
    const QString file = path(QStringLiteral("bad.csv"));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(csv);
    }
    const QString decisions = path(QStringLiteral("bad-decisions.csv"));
    QFile::remove(decisions);
    QStringList args{QStringLiteral("simulate"),
                     QStringLiteral("--trace"),
                     file,
                     QStringLiteral("--algo"),
                     QStringLiteral("fixed-window"),
                     QStringLiteral("--limit"),
                     QStringLiteral("10"),
                     QStringLiteral("--window"),
                     QStringLiteral("1s"),
                     QStringLiteral("--decisions"),
                     decisions};
    args += extra;
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
    QVERIFY(r.out.isEmpty());
    QVERIFY2(!QFile::exists(decisions), "nothing may be written when the trace is refused");
}

void TestSimulator::timesGoingBackAreSorted()
{
    const QString file = path(QStringLiteral("back.csv"));
    writeCsv(file, {{3000, "b", 0}, {5000, "a", 0}, {1000, "a", 0}, {2000, "b", 2}, {1000, "a", 3}}, false);
    const auto reader = openCsvTrace(file, TraceTimeUnit::Microseconds);
    const std::vector<TraceRequest> all = readAll(*reader);
    QCOMPARE(all.size(), size_t(5));
    const std::vector<std::tuple<qint64, QByteArray, qint64>> expected = {
        {1000, "a", 0}, {1000, "a", 3}, {5000, "a", 0}, {2000, "b", 2}, {3000, "b", 0}};
    for (size_t i = 0; i < all.size(); ++i)
        QCOMPARE(std::make_tuple(all[i].timeUs, all[i].key, all[i].cost), expected[i]);
    QCOMPARE(reader->progress(), 1.0);
}

void TestSimulator::bigTracesSpillSortedRuns()
{
    // More rows than one in-memory run: sorted runs are spilled and merged back.
    const QString file = path(QStringLiteral("big.csv"));
    constexpr int kRows = 450000;
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray chunk;
        for (int i = 0; i < kRows; ++i) {
            chunk += QByteArray::number(kT0 + (i * 7919LL) % 1000003) + ",big:" + QByteArray::number(i % 1000) + '\n';
            if (chunk.size() > (1 << 20)) {
                f.write(chunk);
                chunk.clear();
            }
        }
        f.write(chunk);
    }
    const auto reader = openCsvTrace(file, TraceTimeUnit::Microseconds);
    std::vector<TraceRequest> batch;
    qint64 n = 0, keys = 0;
    QByteArray key;
    qint64 last = -1;
    while (reader->next(batch, 4096)) {
        for (const TraceRequest &r : batch) {
            if (r.key != key) {
                QVERIFY2(r.key > key || key.isEmpty(), "keys come grouped, in order");
                key = r.key;
                last = -1;
                ++keys;
            }
            QVERIFY(r.timeUs >= last);
            last = r.timeUs;
            ++n;
        }
        batch.clear();
    }
    QCOMPARE(n, qint64(kRows));
    QCOMPARE(keys, qint64(1000));
}

void TestSimulator::isoTimesAndMilliseconds()
{
    const QString iso = path(QStringLiteral("iso.csv"));
    {
        QFile f(iso);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("time,key\n2025-11-23T12:13:20Z,a\n2025-11-23T12:13:20.000250Z,a\n2025-11-23T13:13:20.5+01:00,a\n2025-11-23T12:13:21,"
                "a\n2025-11-23 12:13:21.9999997Z,a\n2025-11-23T12:13:22.000750Z,a\n");
    }
    const std::vector<TraceRequest> all = readAll(*openCsvTrace(iso, TraceTimeUnit::Auto));
    QCOMPARE(all.size(), size_t(6));
    QCOMPARE(all[0].timeUs, kT0);
    QCOMPARE(all[1].timeUs, kT0 + 250);
    QCOMPARE(all[2].timeUs, kT0 + 500000);
    QCOMPARE(all[3].timeUs, kT0 + kSecond);         // no offset: UTC
    QCOMPARE(all[4].timeUs, kT0 + 2 * kSecond - 1); // digits past the µs are dropped, never rounded up
    QCOMPARE(all[5].timeUs, kT0 + 2 * kSecond + 750);
    const QString ms = path(QStringLiteral("ms.csv"));
    writeCsv(ms, {{kT0 / 1000, "m", 0}, {kT0 / 1000 + 1, "m", 0}}, false);
    const std::vector<TraceRequest> m = readAll(*openCsvTrace(ms, TraceTimeUnit::Milliseconds));
    QCOMPARE(m[0].timeUs, kT0);
    QCOMPARE(m[1].timeUs, kT0 + 1000);
}

void TestSimulator::burstTimelineTrace()
{
    const QString file = path(QStringLiteral("timeline.csv"));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("elapsed_ms,allowed,denied,errors,unknown\n100.0,4,0,1,0\n200.0,2,1,0,1\n300.0,0,0,0,0\n");
    }
    const auto reader = openBurstTimelineTrace(file, "burst:k", kT0);
    const std::vector<TraceRequest> all = readAll(*reader);
    // errors never reached the limiter; unknown may have
    const std::vector<qint64> expected = {kT0 + 25000,  kT0 + 50000,  kT0 + 75000,  kT0 + 100000,
                                          kT0 + 125000, kT0 + 150000, kT0 + 175000, kT0 + 200000};
    QCOMPARE(all.size(), expected.size());
    for (size_t i = 0; i < all.size(); ++i) {
        QCOMPARE(all[i].timeUs, expected[i]);
        QCOMPARE(all[i].key, QByteArray("burst:k"));
    }
    // The CLI recognises the file and replays it on --key.
    const CliResult r = runCli({QStringLiteral("--json"), QStringLiteral("simulate"), QStringLiteral("--trace"), file,
                                QStringLiteral("--algo"), QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("5"),
                                QStringLiteral("--window"), QStringLiteral("1s"), QStringLiteral("--key"), QStringLiteral("b")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(lastJson(r.out).value(QStringLiteral("requests")).toInteger(), 8);
    QCOMPARE(lastJson(r.out).value(QStringLiteral("denied")).toInteger(), 3);

    // Counts whose sums overflowed qint64, and a long slice whose spreading did (found by
    // fuzz_csvtrace): refused, and spread exactly.
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("elapsed_ms,allowed,denied,errors,unknown\n100,9223372036854775807,9223372036854775807,0,0\n");
    }
    QVERIFY_THROWS_EXCEPTION(UsageError, openBurstTimelineTrace(file, "burst:k", kT0));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("elapsed_ms,allowed,denied,errors,unknown\n1000000000000,10000,0,0,0\n");
    }
    const auto longSlice = openBurstTimelineTrace(file, "burst:k", kT0);
    const std::vector<TraceRequest> spread = readAll(*longSlice);
    QCOMPARE(spread.size(), size_t(10000));
    QCOMPARE(spread.front().timeUs, kT0 + 100000000000LL);
    QCOMPARE(spread.back().timeUs, kT0 + 1000000000000000LL);
}

void TestSimulator::cancelStopsTheReplay()
{
    const QString file = path(QStringLiteral("cancel.csv"));
    std::vector<Row> rows;
    for (int i = 0; i < 5000; ++i)
        rows.push_back({kT0 + i, "c:" + QByteArray::number(i % 50), 0});
    writeCsv(file, rows);
    SimOptions options;
    options.specs = {LimitSpec{Algorithm::SlidingLog, 10, kSecond, 1}};
    options.pipeline = 100;
    int calls = 0;
    options.onProgress = [&](double) { return ++calls < 4; };
    const auto reader = openCsvTrace(file, TraceTimeUnit::Microseconds);
    const SimResult r = simulate(*reader, options);
    QVERIFY(r.cancelled);
    QVERIFY(r.specs[0].requests > 0);
    QVERIFY(r.specs[0].requests < 5000);
}

QTEST_GUILESS_MAIN(TestSimulator)
#include "tst_simulator.moc"
