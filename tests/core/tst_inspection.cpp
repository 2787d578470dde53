// Inspection against a real server: foreign limiter formats written directly by the test
// (logs with s/ms/us scores and three member styles, <base>:<window id> counters), their
// classification, peeks with explicit time, the key listing, and inspect.
#include "redis/connection.h"
#include "keys/inspector.h"
#include "keys/keyscanner.h"
#include "limiters/limiter.h"
#include "testsupport.h"
#include "formats/usage.h"

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

QByteArray num(double v, int decimals = 0)
{
    return QByteArray::number(v, 'f', decimals);
}

} // namespace

class TestInspection : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void scoreUnitDetection_data();
    void scoreUnitDetection();
    void foreignLogs_data();
    void foreignLogs();
    void counterWindows_data();
    void counterWindows();
    void ticketMembers();
    void keysListingViaCli();
    void peekForeignViaCli();
    void inspectLogPagesAndNeverPrunes();
    void inspectOwnFormats();
    void slidingBucketsAreRecognisedAndReadAsWritten();

private:
    // Writes `count` entries, one every `spacingUs`, the newest `newestAgeUs` before kNow.
    void writeLog(const QByteArray &key, ScoreUnit unit, const QString &memberStyle, int count, qint64 spacingUs, qint64 newestAgeUs);
    QStringList cli(const QStringList &args) const { return QStringList{QStringLiteral("--url"), m_server->url()} + args; }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestInspection::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    m_conn = std::make_unique<Connection>(m_server->options());
}

void TestInspection::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestInspection::writeLog(const QByteArray &key, ScoreUnit unit, const QString &memberStyle, int count, qint64 spacingUs,
                              qint64 newestAgeUs)
{
    const double perUnit = double(scoreUnitUs(unit));
    std::vector<Command> writes;
    for (int i = 0; i < count; ++i) {
        const qint64 t = kNow - newestAgeUs - qint64(count - 1 - i) * spacingUs;
        const QByteArray score = unit == ScoreUnit::Seconds ? num(double(t) / perUnit, 6) : num(double(t) / perUnit);
        if (memberStyle == QLatin1String("timestamp")) {
            writes.push_back({"ZADD", key, score, score});
        } else if (memberStyle == QLatin1String("ms-random")) {
            writes.push_back({"ZADD", key, score, num(double(t) / 1000) + "-0." + QByteArray::number(qint64(i) * 7919 + 12345)});
        } else { // per unit of cost: "<hex>:<n>", two units per request
            const QByteArray request = QByteArray::number(0xabc000 + i, 16);
            writes.push_back({"ZADD", key, score, request + ":0", score, request + ":1"});
        }
    }
    m_conn->pipeline(writes);
}

void TestInspection::scoreUnitDetection_data()
{
    QTest::addColumn<double>("score");
    QTest::addColumn<int>("unit");
    QTest::newRow("seconds") << 1780315230.5 << int(ScoreUnit::Seconds);
    QTest::newRow("milliseconds") << 1780315230123.0 << int(ScoreUnit::Milliseconds);
    QTest::newRow("microseconds") << 1780315230123456.0 << int(ScoreUnit::Microseconds);
    QTest::newRow("small counter") << 42.0 << int(ScoreUnit::Auto);
    QTest::newRow("between units") << 5e10 << int(ScoreUnit::Auto);
}

void TestInspection::scoreUnitDetection()
{
    QFETCH(double, score);
    QFETCH(int, unit);
    QCOMPARE(int(detectScoreUnit(score)), unit);
}

void TestInspection::foreignLogs_data()
{
    QTest::addColumn<int>("unit");
    QTest::addColumn<QString>("members");
    for (ScoreUnit u : {ScoreUnit::Seconds, ScoreUnit::Milliseconds, ScoreUnit::Microseconds})
        for (const char *style : {"timestamp", "ms-random", "per-unit"})
            QTest::addRow("%s %s", qPrintable(scoreUnitName(u)), style) << int(u) << QString::fromLatin1(style);
}

void TestInspection::foreignLogs()
{
    QFETCH(int, unit);
    QFETCH(QString, members);
    const ScoreUnit u = ScoreUnit(unit);
    // 12 requests, one every 2 s, the newest 1 s ago: 5 of them within the last 10 s
    // (ages 1, 3, 5, 7, 9 s), or 10 entries when every request stored two units.
    writeLog("foreign", u, members, 12, 2 * kSecond, kSecond);
    const QByteArray before = m_conn->command({"DUMP", "foreign"}).bytes();

    const KeyKind kind = classifyKey(*m_conn, "foreign", kNow);
    QCOMPARE(int(kind.format), int(KeyFormat::ForeignSlidingLog));
    QCOMPARE(int(kind.unit), unit);

    const bool perUnit = members == QLatin1String("per-unit");
    const qint64 inWindow = perUnit ? 10 : 5;
    const LimitSpec spec{Algorithm::SlidingLog, 12, 10 * kSecond, 1};
    Usage usage = peekAnyFormat(*m_conn, "foreign", kind, spec, kNow);
    QCOMPARE(usage.usedNow, inWindow);
    QVERIFY(usage.decision.allowed);
    QCOMPARE(usage.decision.remaining, spec.limit - inWindow - 1);

    // At the limit: denied, and retry_after is when the oldest entry in the window expires
    // (age 9 s: in 1 s).
    const LimitSpec tight{Algorithm::SlidingLog, inWindow, 10 * kSecond, 1};
    usage = peekAnyFormat(*m_conn, "foreign", kind, tight, kNow);
    QVERIFY(!usage.decision.allowed);
    QCOMPARE(usage.decision.remaining, 0);
    QCOMPARE(usage.decision.retryAfterUs, kSecond);
    QCOMPARE(usage.decision.resetAfterUs, 9 * kSecond);

    // The same through the pipelined reader the listing uses; a target with impossible
    // limits reads as unknown without spoiling the rest of the batch.
    const auto batch = readUsage(*m_conn, {{"foreign", kind, LimitSpec{Algorithm::SlidingLog, 0, 0, 1}}, {"foreign", kind, spec}}, kNow);
    QVERIFY(!batch[0]);
    QVERIFY(batch[1]);
    QCOMPARE(batch[1]->usedNow, inWindow);

    // Reading never changed the key (no pruning of a foreign log).
    QCOMPARE(m_conn->command({"DUMP", "foreign"}).bytes(), before);
}

void TestInspection::counterWindows_data()
{
    QTest::addColumn<qint64>("windowSeconds");
    QTest::newRow("minute") << qint64(60);
    QTest::newRow("hour") << qint64(3600);
    QTest::newRow("second") << qint64(1);
}

void TestInspection::counterWindows()
{
    QFETCH(qint64, windowSeconds);
    const qint64 id = kNow / kSecond / windowSeconds;
    m_conn->command({"SET", "rl:user42:" + QByteArray::number(id), "7"});
    m_conn->command({"SET", "rl:user42:" + QByteArray::number(id - 1), "4"});
    m_conn->command({"SET", "user:12345", "99"}); // an integer under a numeric suffix, but no window id
    KeyScanner scanner(*m_conn, {"*", 100, {}, false, kNow, {}});
    QHash<QByteArray, KeyKind> kinds;
    for (int guard = 0; guard < 100 && !scanner.atEnd(); ++guard)
        for (const KeyRecord &r : scanner.nextPage())
            kinds.insert(r.key, r.kind);
    QCOMPARE(kinds.size(), 3);
    const KeyKind k = kinds.value("rl:user42:" + QByteArray::number(id));
    QCOMPARE(int(k.format), int(KeyFormat::CounterWindow));
    QCOMPARE(k.base, QByteArray("rl:user42"));
    QCOMPARE(k.windowSeconds, windowSeconds);
    QCOMPARE(int(kinds.value("user:12345").format), int(KeyFormat::Other));

    const qint64 w = windowSeconds * kSecond;
    // Fixed window: the current window's count.
    Usage u = peekAnyFormat(*m_conn, "rl:user42", k, {Algorithm::FixedWindow, 10, w, 1}, kNow);
    QCOMPARE(u.usedNow, 7);
    QCOMPARE(u.decision.remaining, 2);
    // Sliding counter: floor(prev * (w - elapsed) / w) + curr.
    const qint64 elapsed = kNow % w;
    const qint64 weighted = 4 * (w - elapsed) / w;
    u = peekAnyFormat(*m_conn, "rl:user42", k, {Algorithm::SlidingCounter, 20, w, 1}, kNow);
    QCOMPARE(u.usedNow, weighted + 7);
    // A base that does not exist as a key is found through its windows.
    const KeyKind base = classifyKey(*m_conn, "rl:user42", kNow, ScoreUnit::Auto, LimitSpec{Algorithm::FixedWindow, 10, w, 1});
    QCOMPARE(int(base.format), int(KeyFormat::CounterWindow));
}

void TestInspection::ticketMembers()
{
    QVERIFY(isTicketMember("17"));
    QVERIFY(isTicketMember("245:4"));
    QVERIFY(isTicketMember("90123456789"));
    QVERIFY(!isTicketMember("1780315230123")); // a millisecond timestamp member
    QVERIFY(!isTicketMember("1780315230123-0.5"));
    QVERIFY(!isTicketMember("abc:1"));
    QVERIFY(!isTicketMember(""));
    // A real log written by the script is recognised as Ratescope's.
    Limiter limiter(*m_conn);
    for (int i = 0; i < 3; ++i)
        limiter.check("own", {Algorithm::SlidingLog, 10, 60 * kSecond, 1 + i}, kNow - i);
    QCOMPARE(int(classifyKey(*m_conn, "own", kNow).format), int(KeyFormat::SlidingLog));
}

void TestInspection::keysListingViaCli()
{
    writeLog("svc:log:s", ScoreUnit::Seconds, QStringLiteral("timestamp"), 5, kSecond, kSecond);
    writeLog("svc:log:ms", ScoreUnit::Milliseconds, QStringLiteral("ms-random"), 5, kSecond, kSecond);
    writeLog("svc:log:us", ScoreUnit::Microseconds, QStringLiteral("per-unit"), 5, kSecond, kSecond);
    const qint64 id = kNow / kSecond / 60;
    m_conn->command({"SET", "svc:cnt:" + QByteArray::number(id), "3"});
    m_conn->command({"SET", "svc:cnt:" + QByteArray::number(id - 1), "9"});
    Limiter(*m_conn).check("svc:own:gcra", {Algorithm::Gcra, 10, 60 * kSecond, 1}, kNow);
    m_conn->command({"SET", "unrelated", "hello"});
    // A policy gives the logs limits, so used/remaining appear.
    CliResult r =
        runCli(cli({QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("svc-logs"), QStringLiteral("--match"),
                    QStringLiteral("svc:log:*"), QStringLiteral("--algo"), QStringLiteral("sliding-log"), QStringLiteral("--limit"),
                    QStringLiteral("100"), QStringLiteral("--window"), QStringLiteral("10s"), QStringLiteral("--declared-only")}));
    QCOMPARE(r.exitCode, 0);

    r = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--now-us"), QString::number(kNow)}));
    QCOMPARE(r.exitCode, 0);
    QHash<QString, QJsonObject> rows;
    for (const QByteArray &line : r.out.split('\n'))
        if (!line.isEmpty()) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            rows.insert(o.value(QStringLiteral("key")).toString(), o);
        }
    QCOMPARE(rows.size(), 5); // three logs, one counter base, one gcra; not "unrelated", not metadata
    QCOMPARE(rows[QStringLiteral("svc:log:s")].value(QStringLiteral("format")).toString(), QStringLiteral("sliding-log (s scores)"));
    QCOMPARE(rows[QStringLiteral("svc:log:ms")].value(QStringLiteral("format")).toString(), QStringLiteral("sliding-log (ms scores)"));
    QCOMPARE(rows[QStringLiteral("svc:log:us")].value(QStringLiteral("format")).toString(), QStringLiteral("sliding-log (us scores)"));
    QCOMPARE(rows[QStringLiteral("svc:log:s")].value(QStringLiteral("used")).toInt(), 5);
    QCOMPARE(rows[QStringLiteral("svc:log:us")].value(QStringLiteral("used")).toInt(), 10); // two units per request
    QCOMPARE(rows[QStringLiteral("svc:log:ms")].value(QStringLiteral("remaining")).toInt(), 95);
    QCOMPARE(rows[QStringLiteral("svc:cnt")].value(QStringLiteral("format")).toString(), QStringLiteral("counter window (60s)"));
    QCOMPARE(rows[QStringLiteral("svc:cnt")].value(QStringLiteral("windows")).toInt(), 2);
    QCOMPARE(rows[QStringLiteral("svc:own:gcra")].value(QStringLiteral("algorithm")).toString(), QStringLiteral("gcra"));

    // --match, --max, --all
    r = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--match"), QStringLiteral("svc:log:*")}));
    QCOMPARE(r.out.count('\n'), 3);
    r = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--max"), QStringLiteral("2")}));
    QCOMPARE(r.out.count('\n'), 2);
    r = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--all"), QStringLiteral("--memory")}));
    QVERIFY(r.out.contains("\"unrelated\""));
    QVERIFY(r.out.contains("\"memory\""));
    // Human form has a header and the units.
    r = runCli(cli({QStringLiteral("keys"), QStringLiteral("--now-us"), QString::number(kNow)}));
    QVERIFY(r.out.startsWith("KEY"));
}

void TestInspection::peekForeignViaCli()
{
    writeLog("ext:ms", ScoreUnit::Milliseconds, QStringLiteral("timestamp"), 6, kSecond, kSecond);
    const QStringList base = {QStringLiteral("--json"), QStringLiteral("peek"),    QStringLiteral("ext:ms"),     QStringLiteral("--now-us"),
                              QString::number(kNow),    QStringLiteral("--limit"), QStringLiteral("6"),          QStringLiteral("--window"),
                              QStringLiteral("10s"),    QStringLiteral("--algo"),  QStringLiteral("sliding-log")};
    CliResult r = runCli(cli(base));
    QCOMPARE(r.exitCode, 0);
    QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o.value(QStringLiteral("allowed")).toBool(), false);
    QCOMPARE(o.value(QStringLiteral("used")).toInt(), 6);
    QCOMPARE(o.value(QStringLiteral("retry_after_ms")).toInt(), 4000); // entries aged 1..6 s: the oldest leaves the 10 s window in 4 s
    // Declaring the unit explicitly gives the same answer; a wrong unit sees nothing in the window.
    r = runCli(cli(base + QStringList{QStringLiteral("--score-unit"), QStringLiteral("ms")}));
    QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("used")).toInt(), 6);
    r = runCli(cli(base + QStringList{QStringLiteral("--score-unit"), QStringLiteral("bogus")}));
    QCOMPARE(r.exitCode, 2);
    // An algorithm that does not fit the key's format is a usage error.
    QStringList wrong = base;
    wrong[wrong.indexOf(QStringLiteral("sliding-log"))] = QStringLiteral("fixed-window");
    QCOMPARE(runCli(cli(wrong)).exitCode, 2);
    // Limits from a policy instead of flags.
    runCli(cli({QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("ext"), QStringLiteral("--match"), QStringLiteral("ext:*"),
                QStringLiteral("--algo"), QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("10"),
                QStringLiteral("--window"), QStringLiteral("10s")}));
    r = runCli(cli(
        {QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("ext:ms"), QStringLiteral("--now-us"), QString::number(kNow)}));
    QCOMPARE(r.exitCode, 0);
    o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o.value(QStringLiteral("limit")).toInt(), 10);
    QCOMPARE(o.value(QStringLiteral("used")).toInt(), 7); // 6 plus the one asked about
    // No policy, no flags: a clear usage error.
    r = runCli(cli({QStringLiteral("peek"), QStringLiteral("nothing:here")}));
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("no policy matches 'nothing:here': give --algo, --limit and --window"));
    // Some flags: the rest is named; a bad flag is named before any policy is looked up.
    r = runCli(cli({QStringLiteral("peek"), QStringLiteral("nothing:here"), QStringLiteral("--limit"), QStringLiteral("5")}));
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("also give --algo and --window"), r.err.constData());
    r = runCli(cli({QStringLiteral("peek"), QStringLiteral("nothing:here"), QStringLiteral("--limit"), QStringLiteral("5/1h")}));
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--limit must be an integer, not '5/1h'"), r.err.constData());
}

void TestInspection::inspectLogPagesAndNeverPrunes()
{
    // 30 entries one a second; window 20 s: 20 in the window, 10 expired but not pruned.
    writeLog("big", ScoreUnit::Milliseconds, QStringLiteral("ms-random"), 30, kSecond, 0);
    InspectOptions o;
    o.nowUs = kNow;
    o.spec = LimitSpec{Algorithm::SlidingLog, 25, 20 * kSecond, 1};
    o.entryOffset = 5;
    o.entryCount = 10;
    LimitResolver unresolved;
    const QJsonObject state = inspectKey(*m_conn, "big", unresolved, o);
    const QJsonObject s = state.value(QStringLiteral("state")).toObject();
    QCOMPARE(s.value(QStringLiteral("entries_total")).toInt(), 30);
    QCOMPARE(s.value(QStringLiteral("entries_in_window")).toInt(), 20);
    QCOMPARE(s.value(QStringLiteral("entries")).toArray().size(), 10);
    QCOMPARE(s.value(QStringLiteral("entries")).toArray().first().toObject().value(QStringLiteral("age_us")).toInteger(), 14 * kSecond);
    QCOMPARE(s.value(QStringLiteral("next_expiry_us")).toInteger(), kSecond); // the oldest in the window is 19 s old
    QCOMPARE(state.value(QStringLiteral("decision")).toObject().value(QStringLiteral("used_now")).toInt(), 20);
    QVERIFY(state.value(QStringLiteral("memory")).toInt() > 0);
    QCOMPARE(state.value(QStringLiteral("encoding")).toString(), QStringLiteral("listpack"));
    QCOMPARE(m_conn->command({"ZCARD", "big"}).integer(), 30);
}

void TestInspection::inspectOwnFormats()
{
    Limiter limiter(*m_conn);
    const qint64 w = 60 * kSecond;
    for (Algorithm a : kAllAlgorithms)
        for (int i = 0; i < 3; ++i)
            limiter.check("own:" + algorithmName(a).toUtf8(), {a, 10, w, 1}, kNow);
    for (Algorithm a : kAllAlgorithms) {
        InspectOptions o;
        o.nowUs = kNow;
        o.spec = LimitSpec{a, 10, w, 1};
        LimitResolver unresolved;
        const QJsonObject state = inspectKey(*m_conn, "own:" + algorithmName(a).toUtf8(), unresolved, o);
        QCOMPARE(state.value(QStringLiteral("algorithm")).toString(), algorithmName(a));
        QCOMPARE(state.value(QStringLiteral("decision")).toObject().value(QStringLiteral("used_now")).toInt(), 3);
        QVERIFY(state.contains(QStringLiteral("state")));
        QVERIFY(state.value(QStringLiteral("ttl_ms")).toInt() > 0);
    }
    // The CLI's human and JSON forms.
    CliResult r = runCli(cli({QStringLiteral("inspect"), QStringLiteral("own:gcra"), QStringLiteral("--now-us"), QString::number(kNow),
                              QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("10"),
                              QStringLiteral("--window"), QStringLiteral("60s")}));
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("state.tat_us"));
    r = runCli(cli({QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("missing-key")}));
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("exists")).toBool(), false);
}

void TestInspection::slidingBucketsAreRecognisedAndReadAsWritten()
{
    // A hash of 60 buckets and 5 fields of bookkeeping: HRANDFIELD's sample of 12 never shows
    // all of them, yet it is always Ratescope's, never another service's bucketed counter.
    const qint64 w = 60 * kSecond;
    const LimitSpec spec{Algorithm::SlidingBuckets, 1000, w, 1, 60};
    Limiter limiter(*m_conn);
    for (int i = 0; i < 60; ++i)
        QVERIFY(limiter.check("sb:big", spec, kNow - w + 1 + i * kSecond).allowed);
    QCOMPARE(m_conn->command({"HLEN", "sb:big"}).integer(), 65);
    for (int round = 0; round < 20; ++round)
        QCOMPARE(classifyKey(*m_conn, "sb:big", kNow).format, KeyFormat::SlidingBuckets);
    // A width that is no whole number of microseconds (60 s / 7). Read with other limits (the
    // default 60 buckets), it is what the script would answer: empty (the limits changed).
    const LimitSpec seven{Algorithm::SlidingBuckets, 10, w, 1, 7};
    for (int i = 0; i < 4; ++i)
        QVERIFY(limiter.check("sb:seven", seven, kNow - i * 9 * kSecond).allowed);
    QCOMPARE(classifyKey(*m_conn, "sb:seven", kNow).format, KeyFormat::SlidingBuckets);
    const Decision script = limiter.peek("sb:seven", seven, kNow);
    LimitSpec asked = seven;
    asked.buckets = kDefaultBuckets;
    const KeyKind kind = classifyKey(*m_conn, "sb:seven", kNow);
    const Usage read = peekAnyFormat(*m_conn, "sb:seven", kind, seven, kNow);
    QCOMPARE(read.decision, script);
    QCOMPARE(read.usedNow, 4);
    const Usage other = peekAnyFormat(*m_conn, "sb:seven", kind, asked, kNow);
    QCOMPARE(other.decision, limiter.peek("sb:seven", asked, kNow));
    QCOMPARE(other.usedNow, 0);
    // Plain reads (no script rights) give the script's answer, denials and retries included.
    for (qint64 at : {kNow, kNow + 5 * kSecond, kNow + 50 * kSecond, kNow + 61 * kSecond}) {
        const LimitSpec tight{Algorithm::SlidingBuckets, 4, w, 1, 7};
        QCOMPARE(*limiter.peekFromFields("sb:seven", tight, at), limiter.peek("sb:seven", tight, at));
    }
    // The CLI's human form puts the buckets on one line: each count for B = 60, a summary for
    // B = 3600 (its 3,601 counts stay in --json).
    auto inspectLines = [&](const QString &key, const QString &limit, const QString &buckets) {
        const CliResult r = runCli(cli({QStringLiteral("inspect"), key, QStringLiteral("--now-us"), QString::number(kNow),
                                        QStringLiteral("--algo"), QStringLiteral("sliding-buckets"), QStringLiteral("--limit"), limit,
                                        QStringLiteral("--window"), QStringLiteral("60s"), QStringLiteral("--sub-buckets"), buckets}));
        if (r.exitCode != 0)
            qWarning("%s", r.err.constData());
        return r.out.split('\n');
    };
    QList<QByteArray> lines = inspectLines(QStringLiteral("sb:big"), QStringLiteral("1000"), QStringLiteral("60"));
    auto lineOf = [&](const QByteArray &name) {
        for (const QByteArray &l : lines)
            if (l.startsWith(name))
                return l;
        return QByteArray();
    };
    QVERIFY2(lines.size() < 40, qPrintable(QString::number(lines.size())));
    const QList<QByteArray> counts = lineOf("state.bucket_counts").split(' ');
    QVERIFY2(lineOf("state.bucket_counts").endsWith("(oldest first)"), lineOf("state.bucket_counts").constData());
    qint64 sum = 0, numbers = 0;
    for (const QByteArray &c : counts) {
        bool ok = false;
        const qint64 n = c.toLongLong(&ok);
        if (ok)
            sum += n, ++numbers;
    }
    QCOMPARE(numbers, 61);
    QCOMPARE(sum, 60); // one request in each second of the window before now
    const LimitSpec fine{Algorithm::SlidingBuckets, 1000, w, 1, 3600};
    for (const qint64 at : {kNow - 30 * kSecond, kNow - 30 * kSecond, kNow - 1})
        QVERIFY(limiter.check("sb:fine", fine, at).allowed);
    lines = inspectLines(QStringLiteral("sb:fine"), QStringLiteral("1000"), QStringLiteral("3600"));
    QVERIFY2(lines.size() < 40, qPrintable(QString::number(lines.size())));
    QVERIFY2(lineOf("state.bucket_counts").contains("3601 buckets, oldest first; 2 hold requests, at most 2 in one: #1800 2, #3599 1"),
             lineOf("state.bucket_counts").constData());
    const CliResult json = runCli(cli(
        {QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("sb:fine"), QStringLiteral("--now-us"), QString::number(kNow),
         QStringLiteral("--algo"), QStringLiteral("sliding-buckets"), QStringLiteral("--limit"), QStringLiteral("1000"),
         QStringLiteral("--window"), QStringLiteral("60s"), QStringLiteral("--sub-buckets"), QStringLiteral("3600")}));
    QCOMPARE(QJsonDocument::fromJson(json.out)
                 .object()
                 .value(QStringLiteral("state"))
                 .toObject()
                 .value(QStringLiteral("bucket_counts"))
                 .toArray()
                 .size(),
             3601);

    // Another service's bucketed counter stays theirs.
    const qint64 s = kNow / kSecond;
    m_conn->command({"HSET", "theirs", QByteArray::number(s), "3", QByteArray::number(s - 1), "4"});
    QVERIFY(classifyKey(*m_conn, "theirs", kNow).format != KeyFormat::SlidingBuckets);
}

QTEST_GUILESS_MAIN(TestInspection)
#include "tst_inspection.moc"
