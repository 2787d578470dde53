// The console over a slow link: the round trips of a key view's reads, counted through the
// delay proxy (tests/support/delayproxy.h) on one connection, as the console's worker holds it.
// Exact counts: they do not depend on timing.
#include "admin/audit.h"
#include "admin/policy.h"
#include "base/errors.h"
#include "delayproxy.h"
#include "browserqueries.h"
#include "keys/keydetails.h"
#include "keys/keyscanner.h"
#include "keyviewqueries.h"
#include "limiters/limiter.h"
#include "logqueries.h"
#include "keybrowser.h"
#include "keyview.h"
#include "mainwindow.h"
#include "monitorpage.h"
#include "passwordvault.h"
#include "profilestore.h"
#include "redisclient.h"
#include "serverstatusbar.h"
#include "redis/connection.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;
using namespace ratescope::ui;

namespace {
constexpr qint64 kSecond = 1000000;
constexpr qint64 kWindowUs = 3600 * kSecond;
const QByteArray kNs = "ratescope:";
} // namespace

class TestConsoleLink : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void keyViewOfALog();
    void keyViewOfAGcraAndACounter();
    void openingALogKeyWithItsLog();
    void logViewReadsInOneRound();
    void logViewOverTheEntryCap();
    void nothingReadAheadAnswersLater();
    void changesFollowedInOneRound();
    void statusPollInOneRound();
    void keysPanelRowsInTwoRounds();
    void slowLinkPacesTheViews();
    void aTickIsOneRound();
    void idleWithAKeyViewOpen();
    void listingWhileAKeyViewRefreshes();
    void firstPictureOfAKey();

private:
    // Round trips `read` made on the connection (opened and with the scripts' presence known
    // beforehand, as the console's worker connection is after its first read).
    template <typename Read> int roundTripsOf(Read read);
    // The test's own connection through the proxy closed, the counts reset: the next
    // connection is the proxy's only one.
    void linkAlone();
    // What a log view's first read asks after the key view read the key.
    LogReadRequest logRequest(const KeyRead &viewed) const;

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<DelayProxy> m_proxy;
    std::unique_ptr<Connection> m_direct;
    std::unique_ptr<Connection> m_link; // through the proxy
    qint64 m_now = 0;
};

void TestConsoleLink::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    // A few milliseconds each way: a pipeline that leaves in several writes (10,000 ZCOUNTs)
    // is one wait, as on a real link, even on a loaded machine.
    m_proxy = std::make_unique<DelayProxy>(m_server->port(), 5);
    m_direct = std::make_unique<Connection>(m_server->options());
}

void TestConsoleLink::init()
{
    m_direct->command({"FLUSHALL"});
    PolicyStore policies(*m_direct, QString::fromUtf8(kNs));
    Policy log;
    log.name = QStringLiteral("log");
    log.match = "app:log:*";
    log.spec = {Algorithm::SlidingLog, 10, kWindowUs, 1};
    policies.set(log, 0, QStringLiteral("test"));
    Policy gcra;
    gcra.name = QStringLiteral("gcra");
    gcra.match = "app:gcra:*";
    gcra.spec = {Algorithm::Gcra, 10, kWindowUs, 1};
    policies.set(gcra, 0, QStringLiteral("test"));
    const Reply t = m_direct->command({"TIME"});
    m_now = t[0].bytes().toLongLong() * kSecond + t[1].bytes().toLongLong();
    Limiter limiter(*m_direct);
    for (int i = 0; i < 4; ++i)
        limiter.check("app:log:alice", log.spec, m_now - 1000 * (4 - i));
    limiter.check("app:gcra:bob", gcra.spec, m_now - 1000);
    m_link = std::make_unique<Connection>(m_proxy->options(m_server->options()));
    m_link->connect();
    readKey(*m_link, "app:gcra:bob", kNs, m_now); // the scripts' presence asked once, as the console's worker does
    QVERIFY(m_link->scriptCalls());
}

void TestConsoleLink::cleanup()
{
    linkAlone();
}

void TestConsoleLink::linkAlone()
{
    m_link.reset();
    QVERIFY(m_proxy->waitQuiet(10000, int(m_proxy->connections().size())));
    m_proxy->reset();
}

template <typename Read> int TestConsoleLink::roundTripsOf(Read read)
{
    m_proxy->waitQuiet(5000);
    m_proxy->reset();
    read();
    m_proxy->waitQuiet(5000);
    const std::vector<LinkStats> links = m_proxy->connections();
    if (links.size() != 1)
        return -1;
    if (qEnvironmentVariableIsSet("ROUNDS"))
        for (const QByteArray &round : links[0].rounds)
            qInfo("  %s", round.constData());
    return links[0].roundTrips;
}

LogReadRequest TestConsoleLink::logRequest(const KeyRead &viewed) const
{
    LogReadRequest r;
    r.key = "app:log:alice";
    r.spec = viewed.spec;
    r.unit = viewed.kind.unit;
    r.nowUs = viewed.nowUs;
    r.expected = viewed.kind;
    return r;
}

// The key view of a sliding log: the clock, policies, overrides, the key's type, samples and
// facts in one round; then the log's state with the decision's script read along.
void TestConsoleLink::keyViewOfALog()
{
    KeyRead read;
    QCOMPARE(roundTripsOf([&] { read = readKey(*m_link, "app:log:alice", kNs, m_now); }), 2);
    QCOMPARE(read.kind.format, KeyFormat::SlidingLog);
    QVERIFY(read.spec);
    QCOMPARE(read.spec->limit, 10);
    QCOMPARE(read.inspected.value(QStringLiteral("decision")).toObject().value(QStringLiteral("used_now")).toInteger(), 4);
    // The same read on the server's clock (no frozen now) is no dearer.
    QCOMPARE(roundTripsOf([&] { read = readKey(*m_link, "app:log:alice", kNs, std::nullopt); }), 2);
}

// A GCRA (a hash): the first round, then the hash's fields read within a bound (HSCAN, HLEN,
// HMGET: a hash may be huge) with the decision. A counter's base (key-per-window strings): the first
// round answers whether its windows exist, then the windows, which the state and the decision
// read alike (one reply answers both).
void TestConsoleLink::keyViewOfAGcraAndACounter()
{
    KeyRead read;
    QCOMPARE(roundTripsOf([&] { read = readKey(*m_link, "app:gcra:bob", kNs, m_now); }), 2);
    QCOMPARE(read.kind.format, KeyFormat::Gcra);
    QCOMPARE(read.spec->limit, 10);

    PolicyStore policies(*m_direct, QString::fromUtf8(kNs));
    Policy cw;
    cw.name = QStringLiteral("cw");
    cw.match = "cw:*";
    cw.spec = {Algorithm::FixedWindow, 10, 60 * kSecond, 1};
    policies.set(cw, 0, QStringLiteral("test"));
    const qint64 id = m_now / (60 * kSecond);
    m_direct->command({"SET", "cw:acme:" + QByteArray::number(id), "3"});
    QCOMPARE(roundTripsOf([&] { read = readKey(*m_link, "cw:acme", kNs, m_now); }), 2);
    QCOMPARE(read.kind.format, KeyFormat::CounterWindow);
    QCOMPARE(read.inspected.value(QStringLiteral("decision")).toObject().value(QStringLiteral("used_now")).toInteger(), 3);
}

// Opening a sliding log: the key view's read takes its log view's along (window, peeks, page)
// with the key's state: 2 round trips for all that is drawn, none more for the log.
void TestConsoleLink::openingALogKeyWithItsLog()
{
    KeyRead read;
    QCOMPARE(roundTripsOf([&] { read = readKey(*m_link, "app:log:alice", kNs, m_now, LogReadRequest{}); }), 2);
    QVERIFY(read.log);
    QCOMPARE(read.log->window.total, 4);
    QCOMPARE(read.log->page.total, 4);
    QVERIFY(read.log->forOne);
    QCOMPARE(read.log->forOne->usedNow, 4);
    QCOMPARE(read.inspected.value(QStringLiteral("decision")).toObject().value(QStringLiteral("used_now")).toInteger(), 4);
    // The same as the log view reads on its own.
    const LogRead alone = readLog(*m_link, logRequest(read));
    QCOMPARE(alone.window.total, read.log->window.total);
    QCOMPARE(alone.page.entries.size(), read.log->page.entries.size());
    QCOMPARE(alone.forOne->decision.remaining, read.log->forOne->decision.remaining);
    // A key that is no log: nothing read for a log view.
    QCOMPARE(roundTripsOf([&] { read = readKey(*m_link, "app:gcra:bob", kNs, m_now, LogReadRequest{}); }), 2);
    QVERIFY(!read.log);
}

// The log view's read after the key view's: its type, classification, window, peeks and page
// in one round; without knowing the key, two (the peek waits for the classification).
void TestConsoleLink::logViewReadsInOneRound()
{
    const KeyRead viewed = readKey(*m_link, "app:log:alice", kNs, m_now);
    LogRead log;
    QCOMPARE(roundTripsOf([&] { log = readLog(*m_link, logRequest(viewed)); }), 1);
    QCOMPARE(log.window.total, 4);
    QCOMPARE(log.page.total, 4);
    QVERIFY(log.forOne);
    QCOMPARE(log.forOne->usedNow, 4);
    // With a cost of 3 as well: both peeks in the same round.
    LogReadRequest costly = logRequest(viewed);
    costly.spec->cost = 3;
    QCOMPARE(roundTripsOf([&] { log = readLog(*m_link, costly); }), 1);
    QVERIFY(log.forCost);
    QCOMPARE(log.forCost->decision.remaining, 3);

    LogReadRequest blind = logRequest(viewed);
    blind.expected.reset();
    LogRead unaided;
    QCOMPARE(roundTripsOf([&] { unaided = readLog(*m_link, blind); }), 2);
    QCOMPARE(unaided.window.total, log.window.total);
    QCOMPARE(unaided.forOne->usedNow, 4);

    // The key turned into something else since: the guess is wrong, the answer right.
    m_direct->command({"DEL", "app:log:alice"});
    m_direct->command({"SET", "app:log:alice", "x"});
    QVERIFY_THROWS_EXCEPTION(UsageError, readLog(*m_link, logRequest(viewed)));
}

// More entries than a chart reads: the buckets' counts, read ahead when the last read was over
// the cap too; a wrong guess costs one round more, never a wrong picture.
void TestConsoleLink::logViewOverTheEntryCap()
{
    const KeyRead viewed = readKey(*m_link, "app:log:alice", kNs, m_now);
    Command add{"ZADD", "app:log:alice"};
    for (qint64 i = 0; i < LogReadRequest::kEntryCap + 10; ++i)
        add << QByteArray::number(m_now - 2 * kSecond - i) << "m" + QByteArray::number(i);
    m_direct->command(add);
    LogReadRequest r = logRequest(viewed);
    LogRead guessedWrong;
    QCOMPARE(roundTripsOf([&] { guessedWrong = readLog(*m_link, r); }), 2);
    QVERIFY(guessedWrong.window.bucketed);
    r.expectBucketed = true;
    LogRead guessedRight;
    QCOMPARE(roundTripsOf([&] { guessedRight = readLog(*m_link, r); }), 1);
    QVERIFY(guessedRight.window.bucketed);
    QCOMPARE(guessedRight.window.total, guessedWrong.window.total);
    qint64 sum = 0;
    for (const LogBucket &b : guessedRight.window.buckets)
        sum += b.count;
    QCOMPARE(sum, guessedRight.window.total);
}

// Replies read ahead and not asked for are dropped at the end of the read: the connection
// lives on, and a later read of the same command gets the server's answer of its own time.
void TestConsoleLink::nothingReadAheadAnswersLater()
{
    KeyRead read = readKey(*m_link, "app:log:carol", kNs, m_now); // missing: its samples unused
    QCOMPARE(read.inspected.value(QStringLiteral("exists")).toBool(), false);
    m_direct->command({"SET", "app:log:carol", "not a log"});
    QCOMPARE(m_link->command({"TYPE", "app:log:carol"}).text(), QStringLiteral("string"));
    QCOMPARE(m_link->command({"GETRANGE", "app:log:carol", "0", "40"}).bytes(), QByteArray("not a log"));
    read = readKey(*m_link, "app:log:carol", kNs, m_now);
    QCOMPARE(read.inspected.value(QStringLiteral("type")).toString(), QStringLiteral("string"));
}

// What every open view polls to follow changes made elsewhere (the policies and the newest
// audit entry): one round trip.
void TestConsoleLink::changesFollowedInOneRound()
{
    AuditEntry change;
    change.action = QStringLiteral("policy.set");
    change.target = QStringLiteral("log");
    const QString id = AuditLog(*m_direct, MetadataNamespace(QString::fromUtf8(kNs))).append(change);
    ChangeMarks marks;
    QCOMPARE(roundTripsOf([&] { marks = readChangeMarks(*m_link, MetadataNamespace(QString::fromUtf8(kNs))); }), 1);
    QCOMPARE(marks.policies.size(), size_t(2));
    QCOMPARE(marks.lastChange, id);
}

// The status bar's poll (the heartbeat): PING, INFO and DBSIZE in one timed round trip.
void TestConsoleLink::statusPollInOneRound()
{
    RedisClient::Status status;
    QCOMPARE(roundTripsOf([&] { status = RedisClient::probe(*m_link); }), 1);
    QVERIFY(status.roundTripMs >= 0);
    QVERIFY(!status.info.version.isEmpty());
    QCOMPARE(status.info.dbSize, m_direct->command({"DBSIZE"}).integer());
}

// The keys panel's rows in view, read again each second: their type, TTL, memory, overrides
// and every type's samples in one round, then their usage.
void TestConsoleLink::keysPanelRowsInTwoRounds()
{
    const std::vector<Policy> policies = PolicyStore(*m_direct, QString::fromUtf8(kNs)).list();
    const MetadataNamespace ns(QString::fromUtf8(kNs));
    std::vector<KeyDetails> rows;
    const std::vector<QByteArray> keys{"app:log:alice", "app:gcra:bob", "app:log:nobody"};
    QCOMPARE(roundTripsOf([&] { rows = readKeyDetails(*m_link, keys, policies, ns); }), 2);
    QCOMPARE(rows.size(), size_t(3));
    QCOMPARE(rows[0].kind.format, KeyFormat::SlidingLog);
    QCOMPARE(rows[0].used(), 4);
    QCOMPARE(rows[1].kind.format, KeyFormat::Gcra);
    QVERIFY(!rows[2].exists());
    // The same rows as a direct connection reads.
    const std::vector<KeyDetails> direct = readKeyDetails(*m_direct, keys, policies, ns);
    for (size_t i = 0; i < keys.size(); ++i) {
        QCOMPARE(rows[i].kind.format, direct[i].kind.format);
        QCOMPARE(rows[i].limit(), direct[i].limit());
        QCOMPARE(rows[i].type, direct[i].type);
    }
}

// On a slow link the views read less often, and the status bar says so: at a round trip of
// 120 ms or more a key view set to 1 s reads every 2.4 s or more; back on a fast link, every
// second again.
void TestConsoleLink::slowLinkPacesTheViews()
{
    m_proxy->setDelayMs(60);
    RedisClient client(m_proxy->options(m_server->options()));
    client.open();
    QTRY_VERIFY_WITH_TIMEOUT(client.status() && client.status()->roundTripMs >= 120, 20000);
    const int paced = client.pacedMs(1000);
    QVERIFY2(paced >= 2400 && paced % 100 == 0, qPrintable(QString::number(paced)));
    QCOMPARE(client.pacedMs(0), 0);          // off stays off
    QCOMPARE(client.pacedMs(600000), 600000); // slower than the pace: as chosen
    KeyView view(&client, "app:log:alice", kNs);
    view.setRefreshInterval(1000);
    view.show();
    QCOMPARE(view.effectiveRefreshMs(), paced);
    ServerStatusBar bar;
    bar.setClient(&client);
    QVERIFY2(bar.summary().contains(QStringLiteral("views every")), qPrintable(bar.summary()));

    m_proxy->setDelayMs(0);
    QTRY_VERIFY_WITH_TIMEOUT(client.pacedMs(1000) == 1000, 20000); // the next heartbeats measure the fast link
    QTRY_COMPARE_WITH_TIMEOUT(view.effectiveRefreshMs(), 1000, 5000);
    QVERIFY2(!bar.summary().contains(QStringLiteral("views every")), qPrintable(bar.summary()));
    m_proxy->setDelayMs(5);
}

namespace {

// The client's link through the proxy: its one connection's round trips so far.
int clientRounds(DelayProxy &proxy)
{
    proxy.waitQuiet(5000);
    const std::vector<LinkStats> links = proxy.connections();
    if (links.size() != 1)
        return -1;
    static int shown = 0;
    if (qEnvironmentVariableIsSet("ROUNDS"))
        for (; shown < int(links[0].rounds.size()); ++shown)
            qInfo("  round %d: %s", shown, links[0].rounds[size_t(shown)].left(1500).constData());
    return links[0].roundTrips;
}

// Ticks the client to its next whole second, then waits until `answered`.
template <typename Answered> bool nextSecond(RedisClient &client, Answered answered)
{
    do
        client.tickNow();
    while (client.ticks() % RedisClient::kTicksPerSecond != 0);
    return QTest::qWaitFor(answered, 20000);
}

} // namespace

// One tick with a key view (a log, with its log view), the Monitor with 5 pins and the status
// bar's poll all due: one round between them, once each has read once (what it asks is then
// rehearsed from its last read and sent together; the key view reads for the time the round
// reaches the server).
void TestConsoleLink::aTickIsOneRound()
{
    Limiter limiter(*m_direct);
    const LimitSpec spec{Algorithm::Gcra, 10, kWindowUs, 1};
    for (int i = 0; i < 3; ++i)
        limiter.check(QByteArray("app:gcra:m") + QByteArray::number(i), spec, m_now - 1000);
    linkAlone();
    RedisClient client(m_proxy->options(m_server->options()));
    client.setManualTicks(true);
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    KeyView view(&client, "app:log:alice", kNs);
    view.setRefreshInterval(1000);
    view.show();
    QTRY_VERIFY_WITH_TIMEOUT(view.isLoaded(), 10000);
    MonitorPage monitor;
    monitor.setClient(&client, kNs);
    monitor.setIntervalMs(1000);
    for (const char *key : {"app:log:alice", "app:gcra:bob", "app:gcra:m0", "app:gcra:m1", "app:gcra:m2"})
        monitor.pin(key);
    QTRY_VERIFY_WITH_TIMEOUT(!monitor.isBusy(), 10000);
    ServerStatusBar bar;
    bar.setClient(&client);
    QSignalSpy statuses(&client, &RedisClient::statusChanged);
    QSignalSpy drawn(&monitor, &MonitorPage::ticked);
    QSignalSpy viewed(&view, &KeyView::refreshed);
    // The key view and the Monitor every second, the heartbeat every 2 s.
    for (int second = 1; second <= 8; ++second) {
        const int before = clientRounds(*m_proxy);
        const bool heartbeat = client.ticks() % (2 * RedisClient::kTicksPerSecond) == RedisClient::kTicksPerSecond;
        const qsizetype s0 = statuses.size();
        QVERIFY(nextSecond(client, [&] {
            return viewed.size() >= second && drawn.size() >= second && (!heartbeat || statuses.size() > s0);
        }));
        if (second > 2 && heartbeat) // each has read on the tick once: all three due, one round
            QCOMPARE(clientRounds(*m_proxy) - before, 1);
    }
    QCOMPARE(statuses.size(), 4);
    QVERIFY(monitor.isLoaded());
    QVERIFY(client.status() && client.status()->roundTripMs > 0);
}

// Idle with one key view open beside the keys panel: at most 2 round trips a second. The key
// view and the panel's change poll every second, the panel's rows and the heartbeat every 2 s:
// 3 rounds in 2 s (the rows' usage, read for the time their first round read, is the one round
// of its own).
void TestConsoleLink::idleWithAKeyViewOpen()
{
    linkAlone();
    RedisClient client(m_proxy->options(m_server->options()));
    client.setManualTicks(true);
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    KeyBrowser browser;
    browser.model()->setClock([&client] { return client.ticks() * RedisClient::kTickMs; }); // a row's age in ticks
    browser.resize(600, 500);
    browser.show();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, kNs, ":");
    QVERIFY(finished.wait(20000));
    QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 10000);
    KeyView view(&client, "app:log:alice", kNs);
    view.setRefreshInterval(1000);
    view.show();
    QTRY_VERIFY_WITH_TIMEOUT(view.isLoaded(), 10000);
    QSignalSpy viewed(&view, &KeyView::refreshed);
    QSignalSpy statuses(&client, &RedisClient::statusChanged);
    auto answered = [&](int second) {
        return [&, second] { return viewed.size() >= second && browser.isSettled() && statuses.size() >= second / 2; };
    };
    int second = 0;
    while (client.ticks() % (2 * RedisClient::kTicksPerSecond) != 0 || second < 2) // every reader has read once on the tick
        QVERIFY(nextSecond(client, answered(++second)));
    const int before = clientRounds(*m_proxy);
    for (int i = 0; i < 10; ++i)
        QVERIFY(nextSecond(client, answered(++second)));
    QTest::qWait(200); // the last answers (the change poll) are in
    const int rounds = clientRounds(*m_proxy) - before;
    qInfo("idle, a key view open beside the keys panel: %d round trips in 10 s of ticks", rounds);
    QCOMPARE(rounds, 15);
}

// Listing 600,000 keys through a 50 ms link with a key view set to refresh every 250 ms (paced
// to 20 round trips, 1 s, on this link): every key listed once, in SCAN calls sized from the
// round trip; the view keeps refreshing while the scan runs (its reads run between two SCAN
// calls of a page, which goes on after them: the listing takes the scan's rounds and the
// reads' own, never a page cut short). The walk takes 61 rounds of 50 ms at least, three of
// the view's periods: a refresh falls well inside it however the ticks fall.
void TestConsoleLink::listingWhileAKeyViewRefreshes()
{
    constexpr int kKeys = 600000;
    std::vector<Command> batch;
    for (int i = 0; i < kKeys; ++i) {
        batch.push_back({"SET", "big:t" + QByteArray::number(i % 100) + ":u" + QByteArray::number(i), "1"});
        if (batch.size() == 10000) {
            m_direct->pipeline(batch);
            batch.clear();
        }
    }
    const qint64 total = m_direct->command({"DBSIZE"}).toInteger();
    linkAlone();
    m_proxy->setDelayMs(25); // a 50 ms link: the walk takes three seconds at least
    RedisClient client(m_proxy->options(m_server->options()));
    client.open();
    QTRY_VERIFY_WITH_TIMEOUT(client.status().has_value(), 10000); // the round trip is measured: pages sized from it
    KeyView view(&client, "app:log:alice", kNs);
    view.setRefreshInterval(250);
    view.show();
    QTRY_VERIFY_WITH_TIMEOUT(view.isLoaded(), 10000);
    QSignalSpy viewed(&view, &KeyView::refreshed);
    KeyBrowser browser;
    browser.resize(600, 500);
    browser.show();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    auto scans = [this] { return Connection(m_server->options()).command({"INFO", "commandstats"}).text(); };
    auto scanCalls = [](const QString &stats) {
        const QRegularExpression calls(QStringLiteral("cmdstat_scan:calls=(\\d+)"));
        const auto m = calls.match(stats);
        return m.hasMatch() ? m.captured(1).toLongLong() : 0;
    };
    const qint64 scans0 = scanCalls(scans());
    const qsizetype viewed0 = viewed.size();
    browser.setClient(&client, kNs, ":");
    QVERIFY(finished.wait(120000));
    const qint64 walked = scanCalls(scans()) - scans0;
    const qsizetype refreshes = viewed.size() - viewed0;
    QCOMPARE(browser.model()->keyCount(), total);
    QCOMPARE(browser.scannedCount(), total);
    // A call asked for 1,000 keys per 2 ms of the round trip (at most 10,000), so the walk took
    // about 61 calls, not the 600 of the base COUNT of 1,000.
    const int count = KeyScanner::countFor(qint64(client.status()->roundTripMs * 1000), 1000);
    qInfo("%lld keys listed in %lld SCAN calls (COUNT %d at the end) while the key view refreshed %lld times", total, walked, count,
          qint64(refreshes));
    QVERIFY2(walked <= 75, qPrintable(QString::number(walked)));
    // At least one 250 ms tick fell inside the walk, and its read did not wait for the walk.
    QVERIFY2(refreshes >= 1, qPrintable(QString::number(refreshes)));
    m_proxy->setDelayMs(5);
}

QTEST_MAIN(TestConsoleLink)
#include "tst_consolelink.moc"

// The console started on a key (--open-key): the handshake (CLIENT SETNAME here) goes out with
// the first reads of every view in one write: the status probe, the keys panel's start (DBSIZE,
// the policies, the audit's newest entry, its first SCAN call) and the key's first round. Then
// the key's state (its picture is drawn), and the panel's rows in two rounds. With the
// connection's own round trip, 5 until every view has its picture. The ticks are held, so that
// no refresh is counted, however slow the machine.
void TestConsoleLink::firstPictureOfAKey()
{
    linkAlone();
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    ProfileStore store(&settings);
    PasswordVault vault(PasswordVault::Backend::SessionOnly);
    MainWindow window(store, vault);
    MainWindow::StartupView startup;
    startup.openKeys = {"app:log:alice"};
    window.setStartupView(startup);
    const ConnectionOptions options = m_proxy->options(m_server->options());
    const ConnectionProfile profile = ConnectionProfile::fromOptions(options, options.toUrl());
    window.addSessionProfile(profile, options);
    QSignalSpy settled(&window, &MainWindow::settled);
    window.connectProfile(profile.name);
    QVERIFY(window.client());
    window.client()->setManualTicks(true);
    window.resize(1280, 800);
    window.show();
    QVERIFY(settled.wait(30000));
    QCOMPARE(clientRounds(*m_proxy), 5);
    const QByteArrayList first = m_proxy->connections().front().rounds.front().split(' ');
    for (const char *asked : {"CLIENT", "PING", "DBSIZE", "HGETALL", "XREVRANGE", "SCAN", "TIME", "TYPE"})
        QVERIFY2(first.contains(asked), asked);
}
