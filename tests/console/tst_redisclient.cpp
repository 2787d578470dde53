// The console's connection handle against a real redis-server: work on the worker thread and
// answers on the GUI thread, requests dropped with their owner or on cancel, server errors
// returned in place, a refused password, a lost connection coming back with backoff, and
// interactive requests overtaking a queue of background ones (each owner's still in order), and
// the event log (--event-log) of a connection lost and found again.
#include "redis/connection.h"
#include "base/errors.h"
#include "connectionbanner.h"
#include "connectioneventlog.h"
#include "redisclient.h"
#include "ticktimer.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QDateTime>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <QMutex>

#include <atomic>
#include <map>
#include <cstdlib>

using namespace ratescope;
using namespace ratescope::ui;

class TestRedisClient : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void workOnWorkerAnswerOnGuiThread();
    void ownerGoneSkipsWorkAndDropsAnswers();
    void cancelDropsQueuedWork();
    void serverErrorsAreAnswers();
    void wrongPasswordFailsForGood();
    void noAuthNeedsCredentials();
    void reconnectsWithBackoff();
    void aFirstAttemptThatFailsIsNotALoss();
    void eventLogFollowsALossAndTheReturn();
    void eventLogNamesTheMasterAFailoverLeadsTo();
    void retireDoesNotWait();
    void interactiveOvertakesBackground();
    void backgroundWorkSeesInteractiveWaiting();
    void readsRunBetweenBackgroundRequests();
    void tickTimersKeepTheirPeriods();
    void ownerOrderAcrossLanes();
    void cancelAndOwnerGoneInBothLanes();
    void backgroundFailsInPlaceWhileDisconnected();
    void destroyingGivesUpAWaitOnASilentClusterMaster();

private:
    SandboxServer m_server;
};

void TestRedisClient::initTestCase()
{
    m_server.start();
}

void TestRedisClient::workOnWorkerAnswerOnGuiThread()
{
    RedisClient client(m_server.options());
    QSignalSpy connected(&client, &RedisClient::stateChanged);
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    QVERIFY(client.status());
    QVERIFY(client.status()->info.version.startsWith(QLatin1Char('7')) || !client.status()->info.version.isEmpty());
    QVERIFY(client.status()->roundTripMs >= 0);

    QObject owner;
    QThread *workThread = nullptr, *answerThread = nullptr;
    QString pong;
    client.request(
        &owner,
        [&workThread](Connection &c) {
            workThread = QThread::currentThread();
            return c.command({"PING"}).text();
        },
        [&](const Outcome<QString> &o) {
            answerThread = QThread::currentThread();
            pong = o.ok() ? o.value() : o.failure().message;
        });
    QTRY_COMPARE_WITH_TIMEOUT(pong, QStringLiteral("PONG"), 5000);
    QVERIFY(workThread && workThread != QThread::currentThread());
    QCOMPARE(answerThread, QThread::currentThread());
}

void TestRedisClient::ownerGoneSkipsWorkAndDropsAnswers()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);

    // Hold the worker with a slow request, queue two from an owner, then destroy the owner.
    QObject blocker;
    bool blockerDone = false;
    client.request(
        &blocker,
        [](Connection &) {
            QThread::msleep(300);
            return 1;
        },
        [&](const Outcome<int> &) { blockerDone = true; });
    auto *owner = new QObject;
    std::atomic<int> ran{0};
    int answered = 0;
    for (int i = 0; i < 2; ++i)
        client.request(
            owner, [&ran](Connection &) { return ++ran; }, [&answered](const Outcome<int> &) { ++answered; });
    delete owner;
    QTRY_VERIFY_WITH_TIMEOUT(blockerDone, 5000);
    QTest::qWait(100);
    QCOMPARE(ran.load(), 0);
    QCOMPARE(answered, 0);

    // The owner goes while its work runs: the answer is dropped.
    auto *late = new QObject;
    std::atomic<bool> working{false}, release{false};
    client.request(
        late,
        [&](Connection &) {
            working = true;
            while (!release.load())
                QThread::msleep(5);
            return 1;
        },
        [&answered](const Outcome<int> &) { ++answered; });
    QTRY_VERIFY_WITH_TIMEOUT(working.load(), 5000);
    delete late;
    release = true;
    QTest::qWait(200);
    QCOMPARE(answered, 0);
}

void TestRedisClient::cancelDropsQueuedWork()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    QObject owner;
    std::atomic<int> ran{0};
    int answered = 0;
    client.request(
        &owner,
        [](Connection &) {
            QThread::msleep(200);
            return 0;
        },
        [](const Outcome<int> &) {});
    client.request(
        &owner, [&ran](Connection &) { return ++ran; }, [&answered](const Outcome<int> &) { ++answered; });
    client.cancel(&owner);
    // The owner still works for new requests.
    bool after = false;
    client.request(
        &owner, [](Connection &) { return 1; }, [&after](const Outcome<int> &o) { after = o.ok(); });
    QTRY_VERIFY_WITH_TIMEOUT(after, 5000);
    QCOMPARE(ran.load(), 0);
    QCOMPARE(answered, 0);
}

void TestRedisClient::serverErrorsAreAnswers()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    QObject owner;
    std::optional<Failure> failure;
    client.request(
        &owner,
        [](Connection &c) {
            return c.command({"HGET", "no-such-hash-field-command-typo"}).text();
        },
        [&failure](const Outcome<QString> &o) {
            if (!o.ok())
                failure = o.failure();
        });
    QTRY_VERIFY_WITH_TIMEOUT(failure.has_value(), 5000);
    QCOMPARE(failure->kind, Failure::Kind::Reply);
    QVERIFY2(failure->message.startsWith(QStringLiteral("ERR wrong number of arguments")), qPrintable(failure->message));
    QCOMPARE(client.state(),
             RedisClient::State::Connected); // an error reply is not a lost connection
}

void TestRedisClient::wrongPasswordFailsForGood()
{
    SandboxServer::Config config;
    config.configLines << QStringLiteral("requirepass right-password");
    SandboxServer guarded(config);
    guarded.start();
    ConnectionOptions options = guarded.options();
    options.password = QStringLiteral("wrong-password");
    RedisClient client(options);
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Failed, 10000);
    QVERIFY2(client.lastError().contains(QStringLiteral("WRONGPASS")), qPrintable(client.lastError()));
    QVERIFY(!client.lastError().contains(QStringLiteral("wrong-password")));
    QCOMPARE(client.secondsUntilRetry(), 0); // no retry storm against a refusal
    QVERIFY(client.needsCredentials());
    QVERIFY(!client.passwordMissing()); // a password was given: it was refused
}

// No password to a server that wants one: NOAUTH is a login to ask for, not a retry.
void TestRedisClient::noAuthNeedsCredentials()
{
    SandboxServer::Config config;
    config.configLines << QStringLiteral("requirepass right-password");
    SandboxServer guarded(config);
    guarded.start();
    RedisClient client(guarded.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Failed, 10000);
    QVERIFY(client.needsCredentials());
    QVERIFY(client.passwordMissing());
    QVERIFY2(client.lastError().startsWith(QStringLiteral("NOAUTH")), qPrintable(client.lastError()));
    QCOMPARE(client.secondsUntilRetry(), 0);
    QVERIFY(!client.hasConnected());
}

void TestRedisClient::reconnectsWithBackoff()
{
    SandboxServer server;
    server.start();
    RedisClient client(server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);

    server.kill();
    // The heartbeat (every 2 s) notices.
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Reconnecting, 8000);
    QVERIFY(!client.lastError().isEmpty());
    // Requests meanwhile fail at once, in place, instead of each waiting for a timeout.
    QObject owner;
    std::optional<Failure> failure;
    QElapsedTimer t;
    t.start();
    client.request(
        &owner, [](Connection &c) { return c.command({"PING"}).text(); },
        [&failure](const Outcome<QString> &o) {
            if (!o.ok())
                failure = o.failure();
        });
    QTRY_VERIFY_WITH_TIMEOUT(failure.has_value(), 5000);
    QVERIFY(failure->isConnectionLoss());
    QVERIFY(t.elapsed() < 1000);

    server.restart(); // same port
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 40000);
    QString pong;
    client.request(
        &owner, [](Connection &c) { return c.command({"PING"}).text(); },
        [&pong](const Outcome<QString> &o) { pong = o.ok() ? o.value() : o.failure().message; });
    QTRY_COMPARE_WITH_TIMEOUT(pong, QStringLiteral("PONG"), 5000);
}

// The banner says "lost" only of a connection that was there: a server that was never reached
// "could not connect"; once connected and then gone, "lost".
void TestRedisClient::aFirstAttemptThatFailsIsNotALoss()
{
    SandboxServer server;
    server.start();
    const ConnectionOptions options = server.options();
    server.kill(); // its port, with nothing listening
    RedisClient client(options);
    ConnectionBanner banner;
    banner.setClient(&client);
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Reconnecting, 10000);
    QVERIFY(!client.hasConnected());
    QVERIFY2(banner.text().contains(QStringLiteral("Could not connect to")), qPrintable(banner.text()));
    QVERIFY2(!banner.text().contains(QStringLiteral("lost")), qPrintable(banner.text()));
    // The address once, the reason a sentence of its own: "... 127.0.0.1:port. Connection refused."
    QVERIFY2(banner.text().count(client.endpoint()) == 1 && banner.text().contains(QStringLiteral(" Connection refused.")) &&
                 !banner.text().contains(QStringLiteral("could not connect")),
             qPrintable(banner.text()));

    server.restart(); // same port
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 40000);
    QVERIFY(client.hasConnected());
    server.kill();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Reconnecting, 8000);
    QVERIFY2(banner.text().contains(QStringLiteral("lost")), qPrintable(banner.text()));
}

// --event-log: one JSON line per change of state, with how long the connection was away; a
// retry line per failed attempt; "closed" when the console lets go; never the password.
void TestRedisClient::eventLogFollowsALossAndTheReturn()
{
    SandboxServer::Config config;
    config.configLines = {QStringLiteral("requirepass s3cret-pw")};
    SandboxServer server(config);
    server.start();
    ConnectionOptions options = server.options();
    options.password = QStringLiteral("s3cret-pw");
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("events.log"));
    {
        QFile old(path); // appended to, never truncated
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("{\"state\":\"earlier\"}\n");
    }
    {
        ConnectionEventLog log;
        QVERIFY(log.open(path));
        RedisClient client(options);
        log.setClient(&client);
        client.open();
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
        server.kill();
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Reconnecting, 8000);
        QTRY_VERIFY_WITH_TIMEOUT(client.failedAttempts() >= 2, 10000); // an attempt failed meanwhile
        server.restart();
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 40000);
        log.setClient(nullptr);
        client.retryNow(); // nothing more is written once it is let go
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY(!text.contains("s3cret-pw"));
    const QList<QByteArray> lines = text.trimmed().split('\n');
    QCOMPARE(lines.first(), QByteArray("{\"state\":\"earlier\"}"));
    std::vector<QJsonObject> events;
    QStringList states;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        QJsonParseError error;
        events.push_back(QJsonDocument::fromJson(lines[i], &error).object());
        QVERIFY2(error.error == QJsonParseError::NoError, lines[i].constData());
        states << events.back().value(QStringLiteral("state")).toString();
        const qint64 us = events.back().value(QStringLiteral("time_us")).toInteger();
        QVERIFY(events.size() == 1 || us >= events[events.size() - 2].value(QStringLiteral("time_us")).toInteger());
        QCOMPARE(QDateTime::fromString(events.back().value(QStringLiteral("time")).toString(), Qt::ISODateWithMs).toMSecsSinceEpoch(),
                 us / 1000);
    }
    // connecting, connected, reconnecting (the loss, then each failed attempt), connected, closed
    QVERIFY2(states.size() >= 6, qPrintable(states.join(QLatin1Char(' '))));
    QCOMPARE(states.first(), QStringLiteral("connecting"));
    QCOMPARE(states[1], QStringLiteral("connected"));
    QCOMPARE(states[states.size() - 2], QStringLiteral("connected"));
    QCOMPARE(states.last(), QStringLiteral("closed"));
    for (qsizetype i = 2; i < states.size() - 2; ++i)
        QCOMPARE(states[i], QStringLiteral("reconnecting"));
    QVERIFY2(events[0].value(QStringLiteral("url")).toString().contains(QStringLiteral(":***@")), lines[1].constData());
    const QString node = QStringLiteral("127.0.0.1:%1").arg(server.port());
    QCOMPARE(events[1].value(QStringLiteral("node")).toString(), node);
    QVERIFY(events[1].value(QStringLiteral("connect_ms")).toInteger() >= 0);
    const QJsonObject &lost = events[2];
    QVERIFY(lost.value(QStringLiteral("lost")).toBool());
    QVERIFY(!lost.value(QStringLiteral("error")).toString().isEmpty());
    QCOMPARE(lost.value(QStringLiteral("next_attempt")).toInt(), 1);
    QVERIFY(lost.value(QStringLiteral("retry_in_ms")).toInt() > 0 && lost.value(QStringLiteral("retry_in_ms")).toInt() <= 500);
    const QJsonObject &retry = events[3];
    QVERIFY(!retry.contains(QStringLiteral("lost")));
    QCOMPARE(retry.value(QStringLiteral("next_attempt")).toInt(), 2);
    QVERIFY(retry.value(QStringLiteral("away_ms")).toInteger() >= 400);
    const QJsonObject &back = events[events.size() - 2];
    QCOMPARE(back.value(QStringLiteral("node")).toString(), node);
    const qint64 awayMs = back.value(QStringLiteral("away_ms")).toInteger();
    const qint64 betweenMs = (back.value(QStringLiteral("time_us")).toInteger() - lost.value(QStringLiteral("time_us")).toInteger()) / 1000;
    QVERIFY2(std::abs(awayMs - betweenMs) <= 50, qPrintable(QStringLiteral("away %1 ms, lines %2 ms apart").arg(awayMs).arg(betweenMs)));
    QVERIFY(!back.contains(QStringLiteral("connect_ms")));

    // A client destroyed while followed is closed once; a log that cannot be opened says why.
    const QString second = dir.filePath(QStringLiteral("second.log"));
    {
        ConnectionEventLog log;
        QVERIFY(log.open(second));
        {
            RedisClient client(options);
            log.setClient(&client);
            client.open();
            QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
        }
    }
    QFile secondFile(second);
    QVERIFY(secondFile.open(QIODevice::ReadOnly));
    QCOMPARE(secondFile.readAll().count("\"state\":\"closed\""), 1);
    ConnectionEventLog nowhere;
    QVERIFY(!nowhere.open(dir.filePath(QStringLiteral("missing/events.log"))));
    QVERIFY(!nowhere.errorString().isEmpty());
}

// A sentinel's failover followed without a loss: one "connected" line naming the new master and
// the one it moved from, seen by the status poll.
void TestRedisClient::eventLogNamesTheMasterAFailoverLeadsTo()
{
    test::TestSentinel setup;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("events.log"));
    ConnectionEventLog log;
    QVERIFY(log.open(path));
    RedisClient client(ConnectionOptions::fromUrl(setup.url()));
    log.setClient(&client);
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    setup.failover();
    auto lines = [&path] {
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        std::vector<QJsonObject> events;
        for (const QByteArray &line : f.readAll().trimmed().split('\n'))
            events.push_back(QJsonDocument::fromJson(line).object());
        return events;
    };
    auto moved = [&] {
        for (const QJsonObject &o : lines())
            if (o.contains(QStringLiteral("moved_from")))
                return o;
        return QJsonObject();
    };
    QTRY_VERIFY_WITH_TIMEOUT(!moved().isEmpty(), 3 * RedisClient::kHeartbeatMs + 5000);
    const QJsonObject o = moved();
    QCOMPARE(o.value(QStringLiteral("state")).toString(), QStringLiteral("connected"));
    QCOMPARE(o.value(QStringLiteral("node")).toString(), QStringLiteral("127.0.0.1:%1").arg(setup.replica().port()));
    QCOMPARE(o.value(QStringLiteral("moved_from")).toString(), QStringLiteral("127.0.0.1:%1").arg(setup.master().port()));
    QCOMPARE(lines()[1].value(QStringLiteral("node")).toString(), QStringLiteral("127.0.0.1:%1").arg(setup.master().port()));
}

void TestRedisClient::retireDoesNotWait()
{
    auto *client = new RedisClient(m_server.options());
    client->open();
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), RedisClient::State::Connected, 10000);
    QObject owner;
    client->request(
        &owner,
        [](Connection &) {
            QThread::msleep(500);
            return 0;
        },
        [](const Outcome<int> &) {});
    QPointer<RedisClient> guard(client);
    QElapsedTimer t;
    t.start();
    client->retire();
    QVERIFY(t.elapsed() < 100);
    QTRY_VERIFY_WITH_TIMEOUT(guard.isNull(), 5000); // gone once the worker finished
}

namespace {

// What ran on the worker, in order (the worker writes, the test reads once it is idle).
class RunLog {
public:
    void add(const QString &what)
    {
        QMutexLocker lock(&m_mutex);
        m_ran << what;
    }
    QStringList ran() const
    {
        QMutexLocker lock(&m_mutex);
        return m_ran;
    }

private:
    mutable QMutex m_mutex;
    QStringList m_ran;
};

// Holds the worker until released: what is queued meanwhile is ordered by the lanes alone.
struct Gate {
    std::atomic<bool> holding{false}, release{false};
    // The work: waits for release (bounded: 10 s, then the test fails on what follows).
    auto work()
    {
        return [this](Connection &) {
            holding = true;
            for (int i = 0; i < 2000 && !release.load(); ++i)
                QThread::msleep(5);
            return 0;
        };
    }
};

} // namespace

void TestRedisClient::interactiveOvertakesBackground()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);

    // A long chain of background work (a SCAN walk of 200 pages) queued behind a gate, then
    // one interactive read: it runs as soon as the gate opens, before the chain.
    QObject scanner, view;
    Gate gate;
    client.request(&scanner, RedisClient::Lane::Background, gate.work(), [](const Outcome<int> &) {});
    QTRY_VERIFY_WITH_TIMEOUT(gate.holding.load(), 5000);
    std::atomic<int> backgroundRan{0};
    int backgroundAnswered = 0;
    for (int i = 0; i < 200; ++i)
        client.request(
            &scanner, RedisClient::Lane::Background,
            [&backgroundRan](Connection &c) {
                c.command({"SCAN", "0", "COUNT", "10"});
                return ++backgroundRan;
            },
            [&backgroundAnswered](const Outcome<int> &) { ++backgroundAnswered; });
    int backgroundDoneWhenInteractiveRan = -1, answeredBeforeInteractive = -1;
    QString pong;
    client.request(
        &view,
        [&](Connection &c) {
            backgroundDoneWhenInteractiveRan = backgroundRan.load();
            return c.command({"PING"}).text();
        },
        [&](const Outcome<QString> &o) {
            answeredBeforeInteractive = backgroundAnswered;
            pong = o.ok() ? o.value() : o.failure().message;
        });
    QVERIFY(client.interactiveWaiting());
    gate.release = true;
    QTRY_COMPARE_WITH_TIMEOUT(pong, QStringLiteral("PONG"), 5000);
    QCOMPARE(backgroundDoneWhenInteractiveRan, 0); // not one page ran first
    QCOMPARE(answeredBeforeInteractive, 0);
    QVERIFY(!client.interactiveWaiting());
    // The chain still runs to the end, in order.
    QTRY_COMPARE_WITH_TIMEOUT(backgroundAnswered, 200, 10000);
    QCOMPARE(backgroundRan.load(), 200);
}

void TestRedisClient::backgroundWorkSeesInteractiveWaiting()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);

    // Background work that loops (as a SCAN page does) stops early once an interactive
    // request waits, and that request runs next.
    QObject scanner, view;
    std::atomic<bool> looping{false};
    std::atomic<int> calls{0};
    RunLog log;
    bool yielded = false;
    client.request(
        &scanner, RedisClient::Lane::Background,
        [&, client = &client](Connection &c) {
            looping = true;
            for (int i = 0; i < 20000; ++i) { // bounded: about 10 s of PINGs at most
                c.command({"PING"});
                ++calls;
                if (client->interactiveWaiting())
                    break;
            }
            log.add(QStringLiteral("background"));
            return client->interactiveWaiting();
        },
        [&yielded](const Outcome<bool> &o) { yielded = o.ok() && o.value(); });
    client.request(
        &scanner, RedisClient::Lane::Background,
        [&log](Connection &) {
            log.add(QStringLiteral("next background"));
            return 0;
        },
        [](const Outcome<int> &) {});
    QTRY_VERIFY_WITH_TIMEOUT(looping.load(), 5000);
    bool answered = false;
    client.request(
        &view,
        [&log](Connection &) {
            log.add(QStringLiteral("interactive"));
            return 0;
        },
        [&answered](const Outcome<int> &) { answered = true; });
    QTRY_VERIFY_WITH_TIMEOUT(answered, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(log.ran().size(), 3, 5000);
    QVERIFY(yielded); // the loop ended because the read was waiting, not at its bound
    QVERIFY(calls.load() < 20000);
    QCOMPARE(log.ran(), (QStringList{QStringLiteral("background"), QStringLiteral("interactive"), QStringLiteral("next background")}));
}

// betweenRequests(): background work that loops lets the reads waiting run between two of its
// requests, on the same connection, and goes on where it was; its own owner's reads stay behind
// it.
void TestRedisClient::readsRunBetweenBackgroundRequests()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    QObject scanner, view;
    std::atomic<bool> looping{false};
    std::atomic<int> calls{0};
    std::atomic<int> servedAt{-1}; // the walk's requests when the view's read ran
    RunLog log;
    client.request(
        &scanner, RedisClient::Lane::Background,
        [&, between = client.betweenRequests()](Connection &c) {
            looping = true;
            for (int i = 0; i < 20000; ++i) { // bounded: about 10 s of PINGs at most
                c.command({"PING"});
                ++calls;
                if (between())
                    return -1;
                if (servedAt.load() >= 0 && calls.load() >= servedAt.load() + 10)
                    break; // the read ran inside: ten requests more show the walk went on
            }
            log.add(QStringLiteral("background"));
            return calls.load();
        },
        [](const Outcome<int> &) {});
    QTRY_VERIFY_WITH_TIMEOUT(looping.load(), 5000);
    bool answered = false;
    client.request(
        &scanner, [&log](Connection &) {
            log.add(QStringLiteral("own"));
            return 0;
        },
        [](const Outcome<int> &) {});
    client.request(
        &view,
        [&log, &servedAt, &calls](Connection &c) {
            log.add(QStringLiteral("view"));
            servedAt = calls.load();
            return c.command({"PING"}).text();
        },
        [&answered](const Outcome<QString> &o) { answered = o.ok() && o.value() == QLatin1String("PONG"); });
    QTRY_VERIFY_WITH_TIMEOUT(answered, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(log.ran().size(), 3, 10000);
    QVERIFY(calls.load() < 20000);
    // The view's read inside the walk; the walk's own owner's read after it.
    QCOMPARE(log.ran(), (QStringList{QStringLiteral("view"), QStringLiteral("background"), QStringLiteral("own")}));
}

// Every period a view offers is whole ticks of the shared tick: a second of ticks fires a 100 ms
// timer 10 times, a 250 ms one 4 times (the Monitor's default), a second's once; periods that
// meet fire on the same tick.
void TestRedisClient::tickTimersKeepTheirPeriods()
{
    RedisClient client(m_server.options());
    client.setManualTicks(true);
    std::map<int, std::vector<qint64>> fired;
    std::vector<std::unique_ptr<TickTimer>> timers;
    for (int ms : {100, 250, 1000}) {
        auto t = std::make_unique<TickTimer>();
        t->setClient(&client);
        t->start(ms);
        QCOMPARE(t->interval(), ms);
        connect(t.get(), &TickTimer::timeout, this, [&fired, &client, ms] { fired[ms].push_back(client.ticks()); });
        timers.push_back(std::move(t));
    }
    for (int i = 0; i < RedisClient::kTicksPerSecond; ++i)
        client.tickNow();
    QCOMPARE(fired[100].size(), size_t(10));
    QCOMPARE(fired[250].size(), size_t(4));
    QCOMPARE(fired[1000].size(), size_t(1));
    QCOMPARE(fired[1000].front(), fired[250].back()); // the second's tick is the 250 ms timer's too
    QCOMPARE(fired[1000].front(), fired[100].back());
    timers[1]->stop();
    client.tickNow();
    for (int i = 1; i < RedisClient::kTicksPerSecond; ++i)
        client.tickNow();
    QCOMPARE(fired[250].size(), size_t(4)); // stopped
}

void TestRedisClient::ownerOrderAcrossLanes()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);

    // Behind a gate: owner a mixes both lanes, owner b reads interactively. b overtakes a's
    // background work; a's own requests run in the order a made them; answers come in the
    // order the work ran.
    QObject gateOwner, a, b;
    Gate gate;
    client.request(&gateOwner, RedisClient::Lane::Background, gate.work(), [](const Outcome<int> &) {});
    QTRY_VERIFY_WITH_TIMEOUT(gate.holding.load(), 5000);
    RunLog ran;
    QStringList answered;
    auto queue = [&](QObject *owner, RedisClient::Lane lane, const QString &name) {
        client.request(
            owner, lane,
            [&ran, name](Connection &c) {
                c.command({"PING"});
                ran.add(name);
                return name;
            },
            [&answered](const Outcome<QString> &o) { answered << (o.ok() ? o.value() : o.failure().message); });
    };
    using L = RedisClient::Lane;
    queue(&a, L::Background, QStringLiteral("a1 background"));
    queue(&a, L::Interactive, QStringLiteral("a2 interactive"));
    queue(&a, L::Background, QStringLiteral("a3 background"));
    queue(&a, L::Interactive, QStringLiteral("a4 interactive"));
    queue(&b, L::Interactive, QStringLiteral("b1 interactive"));
    queue(&b, L::Background, QStringLiteral("b2 background"));
    queue(&b, L::Interactive, QStringLiteral("b3 interactive"));
    gate.release = true;
    QTRY_COMPARE_WITH_TIMEOUT(answered.size(), 7, 10000);
    const QStringList expected{
        QStringLiteral("b1 interactive"), // a2 waits for a1: the only interactive one free
        QStringLiteral("a1 background"),  // the oldest background work
        QStringLiteral("a2 interactive"), // free now, and interactive first
        QStringLiteral("a3 background"),  // a4 waits for it; b3 waits for b2, queued later
        QStringLiteral("a4 interactive"), QStringLiteral("b2 background"), QStringLiteral("b3 interactive"),
    };
    QCOMPARE(ran.ran(), expected);
    QCOMPARE(answered, expected);
}

void TestRedisClient::cancelAndOwnerGoneInBothLanes()
{
    RedisClient client(m_server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);

    QObject gateOwner, cancelled;
    auto *gone = new QObject;
    Gate gate;
    client.request(&gateOwner, RedisClient::Lane::Background, gate.work(), [](const Outcome<int> &) {});
    QTRY_VERIFY_WITH_TIMEOUT(gate.holding.load(), 5000);
    std::atomic<int> ran{0};
    int answered = 0;
    for (QObject *owner : {static_cast<QObject *>(&cancelled), gone})
        for (auto lane : {RedisClient::Lane::Background, RedisClient::Lane::Interactive})
            client.request(
                owner, lane, [&ran](Connection &) { return ++ran; }, [&answered](const Outcome<int> &) { ++answered; });
    client.cancel(&cancelled);
    delete gone;
    // The cancelled owner still works afterwards, in either lane, and in order.
    QStringList after;
    client.request(
        &cancelled, RedisClient::Lane::Background, [](Connection &) { return 1; },
        [&after](const Outcome<int> &o) { after << QStringLiteral("background %1").arg(o.ok()); });
    client.request(
        &cancelled, [](Connection &) { return 1; },
        [&after](const Outcome<int> &o) { after << QStringLiteral("interactive %1").arg(o.ok()); });
    gate.release = true;
    QTRY_COMPARE_WITH_TIMEOUT(after.size(), 2, 5000);
    QCOMPARE(after, (QStringList{QStringLiteral("background 1"), QStringLiteral("interactive 1")}));
    QCOMPARE(ran.load(), 0);
    QCOMPARE(answered, 0);
    QVERIFY(!client.interactiveWaiting()); // skipped work no longer counts as waiting
}

void TestRedisClient::backgroundFailsInPlaceWhileDisconnected()
{
    SandboxServer server;
    server.start();
    RedisClient client(server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    server.kill();
    // The first request to meet the dead socket notices; background work fails like the rest.
    QObject owner;
    std::optional<Failure> first, second;
    client.request(
        &owner, RedisClient::Lane::Background, [](Connection &c) { return c.command({"PING"}).text(); },
        [&first](const Outcome<QString> &o) {
            if (!o.ok())
                first = o.failure();
        });
    QTRY_VERIFY_WITH_TIMEOUT(first.has_value(), 10000);
    QVERIFY(first->isConnectionLoss());
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Reconnecting, 5000);
    client.request(
        &owner, RedisClient::Lane::Background, [](Connection &c) { return c.command({"PING"}).text(); },
        [&second](const Outcome<QString> &o) {
            if (!o.ok())
                second = o.failure();
        });
    QTRY_VERIFY_WITH_TIMEOUT(second.has_value(), 5000);
    QVERIFY(second->isConnectionLoss());
    QVERIFY2(second->message.contains(QStringLiteral("not connected")), qPrintable(second->message));
}

void TestRedisClient::destroyingGivesUpAWaitOnASilentClusterMaster()
{
    // A cluster master stops (SIGSTOP: its socket stays open, nothing answers) while a request
    // waits on it with a long timeout. Destroying the client (the window closing) gives the
    // wait up instead of sitting out the timeout: the request ends with "given up", not with
    // "no reply within 60000 ms".
    test::TestCluster cluster(3);
    const QByteArray key = "closing:user";
    const int owner = cluster.ownerOf(key);
    struct Resume { // whatever happens below, the node runs again before the cluster stops
        SandboxServer &node;
        ~Resume() { node.resume(); }
    } resume{cluster.node(owner)};
    auto *client = new RedisClient(ConnectionOptions::fromUrl(cluster.url() + QStringLiteral("?timeout=60s")));
    client->open();
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), RedisClient::State::Connected, 10000);
    auto started = std::make_shared<std::atomic<bool>>(false);
    auto ended = std::make_shared<QString>();
    QObject requester;
    cluster.node(owner).pause();
    client->request(
        &requester,
        [key, started, ended](Connection &c) {
            started->store(true);
            try {
                return c.command({"GET", key}).text();
            } catch (const Error &e) {
                *ended = e.message(); // read after the worker has been joined
                throw;
            }
        },
        [](const Outcome<QString> &) {});
    QTRY_VERIFY_WITH_TIMEOUT(started->load(), 10000);
    QTest::qWait(200); // the request is on the wire, waiting
    delete client;     // joins the worker
    QVERIFY2(ended->contains(QStringLiteral("given up")), qPrintable(*ended));
    QVERIFY2(!ended->contains(QStringLiteral("within")), qPrintable(*ended));
}

QTEST_MAIN(TestRedisClient)
#include "tst_redisclient.moc"
