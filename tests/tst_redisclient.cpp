// The console's connection handle against a real redis-server: work on the worker thread and
// answers on the GUI thread, requests dropped with their owner or on cancel, server errors
// returned in place, a refused password, and a lost connection coming back with backoff.
#include "connection.h"
#include "errors.h"
#include "redisclient.h"
#include "sandboxserver.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>

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
    void reconnectsWithBackoff();
    void retireDoesNotWait();

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
    QVERIFY(client.status()->info.version.startsWith(QLatin1Char('7')) ||
            !client.status()->info.version.isEmpty());
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
            owner, [&ran](Connection &) { return ++ran; },
            [&answered](const Outcome<int> &) { ++answered; });
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
        &owner, [&ran](Connection &) { return ++ran; },
        [&answered](const Outcome<int> &) { ++answered; });
    client.cancel(&owner);
    // The owner still works for new requests.
    bool after = false;
    client.request(
        &owner, [](Connection &) { return 1; },
        [&after](const Outcome<int> &o) { after = o.ok(); });
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
    QVERIFY2(failure->message.startsWith(QStringLiteral("ERR wrong number of arguments")),
             qPrintable(failure->message));
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
    QVERIFY2(client.lastError().contains(QStringLiteral("WRONGPASS")),
             qPrintable(client.lastError()));
    QVERIFY(!client.lastError().contains(QStringLiteral("wrong-password")));
    QCOMPARE(client.secondsUntilRetry(), 0); // no retry storm against a refusal
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

QTEST_MAIN(TestRedisClient)
#include "tst_redisclient.moc"
