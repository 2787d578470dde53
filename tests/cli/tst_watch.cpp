// `ratescope-cli watch` against a real redis-server: exactly N readings per key in JSON with
// the values Limiter::peek gives at each reading's time, the human table as appended lines
// when stdout is no terminal, limits from flags, nothing written, and exit 2 for bad
// arguments and for keys it cannot read without limits.
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "admin/policy.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"
#include "formats/usage.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QThread>

#include <thread>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kYearUs = 365LL * 86400 * 1000000;

struct Watched {
    QByteArray key;
    LimitSpec spec;
};

const std::vector<Watched> kKeys = {
    {"w:log", {Algorithm::SlidingLog, 10, kYearUs, 1}},
    {"w:bucket", {Algorithm::TokenBucket, 20, 60LL * 1000000, 1}},
    {"w:gcra", {Algorithm::Gcra, 4, 10LL * 1000000, 1}},
};

// Calls of the command that succeeded (a NOSCRIPT answer, which the caller follows with the
// script, counts among the calls and the failed calls).
qint64 commandCalls(Connection &c, const QByteArray &command)
{
    for (const QByteArray &line : c.command({"INFO", "commandstats"}).bytes().split('\n')) {
        if (!line.startsWith("cmdstat_" + command + ":"))
            continue;
        qint64 calls = 0, failed = 0;
        for (const QByteArray &field : line.mid(line.indexOf(':') + 1).trimmed().split(',')) {
            if (field.startsWith("calls="))
                calls = field.mid(6).toLongLong();
            else if (field.startsWith("failed_calls="))
                failed = field.mid(13).toLongLong();
        }
        return calls - failed;
    }
    return 0;
}

} // namespace

class TestWatch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void jsonReadingsMatchPeek();
    void humanLines();
    void limitsFromFlags();
    void badArguments();
    void unreadableKeys();
    void aKeyTurningUnreadableIsAnErrorObject();

private:
    QStringList cli(const QStringList &args) const { return QStringList{QStringLiteral("--url"), m_server.url()} + args; }
    SandboxServer m_server;
};

void TestWatch::initTestCase()
{
    m_server.start();
    Connection c(m_server.options());
    PolicyStore store(c, QStringLiteral("ratescope:"));
    const qint64 now = QDateTime::currentMSecsSinceEpoch() * 1000;
    for (const Watched &w : kKeys) {
        Policy p;
        p.name = QString::fromUtf8(w.key).replace(QLatin1Char(':'), QLatin1Char('-'));
        p.match = w.key;
        p.spec = w.spec;
        store.set(p, 0, QStringLiteral("test"));
        for (int i = 0; i < 4; ++i)
            Limiter(c).check(w.key, w.spec, now - 100000); // the GCRA is denied now
    }
    // A partner's log in milliseconds, 3 entries, with a policy saying so.
    Policy partner;
    partner.name = QStringLiteral("partner");
    partner.match = "partner:*";
    partner.spec = {Algorithm::SlidingLog, 5, kYearUs, 1};
    partner.scoreUnit = ScoreUnit::Milliseconds;
    store.set(partner, 0, QStringLiteral("test"));
    for (int i = 0; i < 3; ++i)
        c.command({"ZADD", "partner:log", QByteArray::number(now / 1000 - 1000 * i), "r" + QByteArray::number(i)});
    c.command({"SET", "w:string", "hello"});
    c.command({"HSET", "w:hash", "colour", "blue"});
}

void TestWatch::jsonReadingsMatchPeek()
{
    Connection c(m_server.options());
    const qint64 dbsize = c.command({"DBSIZE"}).toInteger();
    const qint64 writes = commandCalls(c, "evalsha") + commandCalls(c, "zadd") + commandCalls(c, "hset");
    const CliResult r =
        runCli(cli({QStringLiteral("--read-only"), QStringLiteral("--json"), QStringLiteral("watch"), QStringLiteral("w:log"),
                    QStringLiteral("w:bucket"), QStringLiteral("w:gcra"), QStringLiteral("partner:log"), QStringLiteral("--count"),
                    QStringLiteral("4"), QStringLiteral("--interval"), QStringLiteral("100ms")}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 4 * 4);
    qint64 previous = 0;
    for (int i = 0; i < lines.size(); ++i) {
        const QJsonObject o = QJsonDocument::fromJson(lines[i]).object();
        QCOMPARE(o.keys(), (QStringList{QStringLiteral("key"), QStringLiteral("limit"), QStringLiteral("remaining"),
                                        QStringLiteral("retry_after_ms"), QStringLiteral("time_us"), QStringLiteral("used")}));
        const qint64 at = o.value(QStringLiteral("time_us")).toInteger();
        if (i % 4 == 0) {
            QVERIFY(at > previous); // a reading per tick, keys in the order given
            previous = at;
        }
        QCOMPARE(at, previous);
        const QString key = o.value(QStringLiteral("key")).toString();
        Usage expected;
        if (key == QStringLiteral("partner:log")) {
            KeyKind kind;
            kind.format = KeyFormat::ForeignSlidingLog;
            kind.unit = ScoreUnit::Milliseconds;
            expected = peekAnyFormat(c, "partner:log", kind, {Algorithm::SlidingLog, 5, kYearUs, 1}, at);
        } else {
            const Watched &w = kKeys[size_t(i % 4)];
            QCOMPARE(key, QString::fromUtf8(w.key));
            const Decision d = Limiter(c).peek(w.key, w.spec, at);
            expected = {d.used - (d.allowed ? 1 : 0), d};
        }
        QCOMPARE(o.value(QStringLiteral("used")).toInteger(), expected.usedNow);
        QCOMPARE(o.value(QStringLiteral("limit")).toInteger(), expected.decision.limit);
        QCOMPARE(o.value(QStringLiteral("remaining")).toInteger(), expected.decision.limit - expected.usedNow);
        QCOMPARE(o.value(QStringLiteral("retry_after_ms")).toInteger(), (expected.decision.retryAfterUs + 999) / 1000);
    }
    // The GCRA's four requests of a limit of 4 per 10 s: denied at the first reading.
    QCOMPARE(QJsonDocument::fromJson(lines[2]).object().value(QStringLiteral("remaining")).toInteger(), 0);
    QVERIFY(QJsonDocument::fromJson(lines[2]).object().value(QStringLiteral("retry_after_ms")).toInteger() > 0);
    // Read-only: nothing written, nothing added.
    QCOMPARE(c.command({"DBSIZE"}).toInteger(), dbsize);
    QCOMPARE(commandCalls(c, "evalsha") + commandCalls(c, "zadd") + commandCalls(c, "hset"), writes);
}

void TestWatch::humanLines()
{
    const CliResult r = runCli(cli({QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("partner:log"),
                                    QStringLiteral("--count"), QStringLiteral("3"), QStringLiteral("--interval"), QStringLiteral("50ms")}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    // Not a terminal: the header once, then appended lines (no cursor movement).
    QCOMPARE(lines.size(), 1 + 3 * 2);
    QVERIFY(!r.out.contains('\x1b'));
    QCOMPARE(lines[0].simplified(), QByteArray("TIME KEY USED LIMIT REMAINING RETRY AFTER"));
    for (int i = 1; i < lines.size(); ++i) {
        const QList<QByteArray> cells = lines[i].simplified().split(' ');
        QVERIFY2(QDateTime::fromString(QString::fromLatin1(cells[0]), QStringLiteral("HH:mm:ss.zzz")).isValid(), lines[i].constData());
        if (i % 2 == 1)
            QCOMPARE(cells.mid(1), (QList<QByteArray>{"w:log", "4", "10", "6", "-"}));
        else
            QCOMPARE(cells.mid(1), (QList<QByteArray>{"partner:log", "3", "5", "2", "-"}));
    }
}

void TestWatch::limitsFromFlags()
{
    // A key no policy covers: the flags say what it is, and it reads as a fresh limiter.
    const CliResult r = runCli(
        cli({QStringLiteral("--json"), QStringLiteral("watch"), QStringLiteral("flagged:none"), QStringLiteral("--algo"),
             QStringLiteral("fixed-window"), QStringLiteral("--limit"), QStringLiteral("7"), QStringLiteral("--window"),
             QStringLiteral("1m"), QStringLiteral("--count"), QStringLiteral("2"), QStringLiteral("--interval"), QStringLiteral("10ms")}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    for (const QByteArray &l : lines) {
        const QJsonObject o = QJsonDocument::fromJson(l).object();
        QCOMPARE(o.value(QStringLiteral("used")).toInteger(), 0);
        QCOMPARE(o.value(QStringLiteral("remaining")).toInteger(), 7);
    }
}

void TestWatch::badArguments()
{
    const QList<QStringList> cases = {
        {QStringLiteral("watch")},
        {QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("--count"), QStringLiteral("0")},
        {QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("--count"), QStringLiteral("many")},
        {QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("--interval"), QStringLiteral("1ms")},
        {QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("--interval"), QStringLiteral("soon")},
        {QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("--algo"), QStringLiteral("leaky")},
        {QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("--limit"), QStringLiteral("0")},
        {QStringLiteral("watch"), QStringLiteral("w:log"), QStringLiteral("--bogus")},
    };
    for (const QStringList &args : cases) {
        const CliResult r = runCli(cli(args));
        QVERIFY2(r.exitCode == 2, qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::number(r.exitCode)));
        QVERIFY(!r.err.isEmpty());
    }
}

void TestWatch::unreadableKeys()
{
    struct Case {
        QString key;
        QByteArray says;
    };
    const QList<Case> cases = {
        {QStringLiteral("w:string"), "'w:string' is a string, not a limiter key"},
        {QStringLiteral("w:hash"), "'w:hash' is a hash, not a limiter key"},
        {QStringLiteral("w:nothing"), "'w:nothing' does not exist and no policy matches it"},
    };
    for (const Case &c : cases) {
        const CliResult r =
            runCli(cli({QStringLiteral("watch"), QStringLiteral("w:log"), c.key, QStringLiteral("--count"), QStringLiteral("1")}));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(c.says), r.err.constData());
        QVERIFY(r.out.isEmpty()); // nothing printed before every key is known
    }
}

// A key whose type changes during the watch: its readings from then on carry the documented
// error object, {"error":{"kind","message"}} as every --json error, not a bare string.
void TestWatch::aKeyTurningUnreadableIsAnErrorObject()
{
    Connection c(m_server.options());
    const LimitSpec spec{Algorithm::SlidingLog, 10, kYearUs, 1};
    Limiter(c).check("w:turns", spec);
    const auto reads = [&] {
        qint64 n = 0;
        for (const QByteArray command : {"evalsha_ro", "evalsha", "eval_ro", "eval", "fcall_ro", "fcall"})
            n += commandCalls(c, command);
        return n;
    };
    const qint64 before = reads();
    // Once the first reading was made, the log becomes a string.
    std::thread changer([&] {
        Connection other(m_server.options());
        for (int i = 0; i < 500 && reads() == before; ++i)
            QThread::msleep(10);
        other.command({"DEL", "w:turns"});
        other.command({"SET", "w:turns", "now a string"});
    });
    const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("watch"), QStringLiteral("w:turns"), QStringLiteral("--algo"),
                                    QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("10"),
                                    QStringLiteral("--window"), QStringLiteral("365d"), QStringLiteral("--count"), QStringLiteral("3"),
                                    QStringLiteral("--interval"), QStringLiteral("500ms")}));
    changer.join();
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    QCOMPARE(QJsonDocument::fromJson(lines[0]).object().value(QStringLiteral("used")).toInteger(), 1);
    const QJsonObject last = QJsonDocument::fromJson(lines[2]).object();
    QCOMPARE(last.value(QStringLiteral("key")).toString(), QStringLiteral("w:turns"));
    QVERIFY2(last.value(QStringLiteral("error")).isObject(), lines[2].constData());
    const QJsonObject error = last.value(QStringLiteral("error")).toObject();
    QCOMPARE(error.value(QStringLiteral("kind")).toString(), QStringLiteral("usage")); // as peek's WRONGTYPE is
    QVERIFY2(error.value(QStringLiteral("message")).toString().startsWith(
                 QStringLiteral("'w:turns' is not readable as sliding-log (its type changed?): WRONGTYPE")),
             lines[2].constData());
    QVERIFY(!last.contains(QStringLiteral("used")));
}

QTEST_MAIN(TestWatch)
#include "tst_watch.moc"
