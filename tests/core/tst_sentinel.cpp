// Sentinel: a master, a replica and a sentinel; decisions through the sentinel, and after
// SENTINEL FAILOVER the next decisions go to the new master with the limiter state intact.
#include "redis/connection.h"
#include "base/errors.h"
#include "limiters/limiter.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

namespace {
constexpr qint64 kSecond = 1000000;
constexpr qint64 kT0 = 1735689600LL * kSecond;
const LimitSpec kSpec{Algorithm::SlidingLog, 100, 3600 * kSecond, 1};
} // namespace

class TestSentinel_ : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void decisionsSurviveFailover();
    void sentinelAuthAndDeadSentinels();
    void aSwitchWhileRepliesAreOwedKeepsThemInOrder();
    void theSwitchWatchIsRetriedOnTheClock();
};

void TestSentinel_::decisionsSurviveFailover()
{
    TestSentinel setup;
    Connection c(ConnectionOptions::fromUrl(setup.url()));
    Limiter limiter(c);
    for (int i = 1; i <= 5; ++i)
        QCOMPARE(limiter.check("fo:key", kSpec, kT0 + i).used, i);
    QCOMPARE(c.nodes().front().address.port, setup.master().port());
    Connection(setup.master().options()).command({"EXISTS", "fo:key"});

    setup.failover();

    // The same connection: its next decision reaches the new master, counted once.
    const Decision d = limiter.check("fo:key", kSpec, kT0 + 6);
    QCOMPARE(d.used, 6);
    QCOMPARE(c.nodes().front().address.port, setup.replica().port());
    Connection newMaster(setup.replica().options());
    QCOMPARE(newMaster.command({"ZCARD", "fo:key"}).integer(), 6);
    // A fresh connection, and the CLI, find the new master too.
    Connection fresh(ConnectionOptions::fromUrl(setup.url()));
    QCOMPARE(Limiter(fresh).check("fo:key", kSpec, kT0 + 7).used, 7);
    const CliResult r =
        runCli({QStringLiteral("--url"), setup.url(), QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("fo:key"),
                QStringLiteral("--algo"), QStringLiteral("sliding-log"), QStringLiteral("--limit"), QStringLiteral("100"),
                QStringLiteral("--window"), QStringLiteral("1h"), QStringLiteral("--now-us"), QString::number(kT0 + 8)});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("used")).toInt(), 8);
}

void TestSentinel_::sentinelAuthAndDeadSentinels()
{
    TestSentinel setup(QStringLiteral("s3ntinel"));
    // The first sentinel listed is dead: it is skipped.
    const quint16 dead = freeLoopbackPort();
    const QString url = QStringLiteral("redis-sentinel://127.0.0.1:%1,127.0.0.1:%2/mymaster?sentinel_password=s3ntinel")
                            .arg(dead)
                            .arg(setup.sentinel().port());
    Connection c(ConnectionOptions::fromUrl(url));
    QCOMPARE(Limiter(c).check("auth:key", kSpec, kT0).used, 1);
    // A wrong sentinel password, or none: refused credentials (not "unreachable", so the
    // console asks again instead of retrying), without the password in the message.
    for (const QString &query : {QStringLiteral("?sentinel_password=Wr0ng"), QString()}) {
        Connection wrong(
            ConnectionOptions::fromUrl(QStringLiteral("redis-sentinel://127.0.0.1:%1/mymaster%2").arg(setup.sentinel().port()).arg(query)));
        try {
            wrong.command({"PING"});
            QFAIL("a wrong sentinel password was accepted");
        } catch (const AuthError &e) {
            QVERIFY2(!e.message().contains(QStringLiteral("Wr0ng")), qPrintable(e.message()));
            QVERIFY2(e.message().startsWith(QStringLiteral("by the sentinels: ")), qPrintable(e.message()));
        }
    }
    // A dead sentinel besides a refusing one: it may be the network, not the password.
    Connection mixed(
        ConnectionOptions::fromUrl(QStringLiteral("redis-sentinel://127.0.0.1:%1,127.0.0.1:%2/mymaster?sentinel_password=Wr0ng")
                                       .arg(dead)
                                       .arg(setup.sentinel().port())));
    try {
        mixed.command({"PING"});
        QFAIL("a wrong sentinel password was accepted");
    } catch (const AuthError &) {
        QFAIL("a dead sentinel is no refused password");
    } catch (const ConnectionError &e) {
        QVERIFY2(e.message().contains(QStringLiteral("no sentinel named a master")), qPrintable(e.message()));
    }
    QVERIFY(!ConnectionOptions::fromUrl(url).toUrl().contains(QStringLiteral("s3ntinel")));
}

void TestSentinel_::aSwitchWhileRepliesAreOwedKeepsThemInOrder()
{
    // A window of requests (as the burst engine keeps) is open when the master changes: the
    // +switch-master message is read before the next send(). The replies owed are still
    // read, in order, from the old master's socket; the switch is made after them.
    TestSentinel setup;
    Connection c(ConnectionOptions::fromUrl(setup.url()));
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG")); // connected, watching
    c.send(std::vector<Command>{{"ECHO", "r1"}, {"ECHO", "r2"}, {"ECHO", "r3"}});
    setup.failover();
    QTest::qWait(300); // the message is on the watch's socket
    bool fourth = true;
    try {
        c.send(Command{"ECHO", "r4"});
    } catch (const ConnectionError &) {
        fourth = false; // the demoted master's socket may be closed by now: never repeated
    }
    for (const QByteArray expected : {"r1", "r2", "r3"}) {
        try {
            QCOMPARE(c.receive().bytes(), expected);
        } catch (const Error &e) {
            QFAIL(qPrintable(QStringLiteral("%1 lost: %2").arg(QString::fromLatin1(expected), e.message())));
        }
    }
    if (fourth) {
        try {
            QCOMPARE(c.receive().bytes(), QByteArray("r4"));
        } catch (const ConnectionError &) {
            // the old master closed its clients (sentinel does) before answering it
        }
    }
    // The next request goes to the new master.
    QCOMPARE(c.command({"SET", "after:switch", "1"}).text(), QStringLiteral("OK"));
    QCOMPARE(c.nodes().front().address.port, setup.replica().port());
}

void TestSentinel_::theSwitchWatchIsRetriedOnTheClock()
{
    // The sentinel goes away and comes back: the watch is subscribed again after
    // Connection::kWatchRetryMs on the connection's clock (here the test's), not after a
    // number of requests: many requests meanwhile do not bring the retry forward.
    TestSentinel setup;
    Connection c(ConnectionOptions::fromUrl(setup.url()));
    qint64 nowMs = 1000000;
    c.setClock([&nowMs] { return nowMs; });
    auto subscribers = [&] {
        const QByteArray list = Connection(setup.sentinel().options()).command({"CLIENT", "LIST"}).bytes();
        return int(list.count("cmd=subscribe"));
    };
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
    QCOMPARE(subscribers(), 1);
    setup.sentinel().stop();
    for (int i = 0; i < 5; ++i) // the watch is found lost, and a new one cannot be made
        QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
    setup.sentinel().restart();
    for (int i = 0; i < 300; ++i)
        QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
    QCOMPARE(subscribers(), 0);
    nowMs += Connection::kWatchRetryMs;
    QCOMPARE(c.command({"PING"}).text(), QStringLiteral("PONG"));
    QCOMPARE(subscribers(), 1);
}

QTEST_GUILESS_MAIN(TestSentinel_)
#include "tst_sentinel.moc"
