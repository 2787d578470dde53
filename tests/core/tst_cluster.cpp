// Redis Cluster: three masters made by redis-cli --cluster create; decisions on keys of
// every slot, listings and resets that see every master, scripts per node, and MOVED and
// ASK followed while a slot migrates.
#include "load/burst.h"
#include "redis/cluster.h"
#include "redis/connection.h"
#include "base/errors.h"
#include "load/hotlimiters.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "redis/serverinfo.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

namespace {
constexpr qint64 kSecond = 1000000;
constexpr qint64 kT0 = 1735689600LL * kSecond;
} // namespace

class TestCluster_ : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void slotHashing_data();
    void slotHashing();
    void decisionsOnKeysOfEverySlot();
    void listingAndResetSeeEveryMaster();
    void scriptsAreLoadedPerNode();
    void askAndMovedDuringSlotMigration();
    void exactBurstOnOneKey();
    void cliInfoAndNodes();
    void aSlowMasterIsNeverAskedTwice();
    void aSilentMasterIsPausedNotWaitedFor();
    void aPipelineStaysInStepWhenOneMasterFails();
    void hotLimitersPerMaster();
    void hashTaggedShardsShareASlot();
    void aMasterDownLeavesTheOthersReadable(); // last: it kills a node

private:
    std::unique_ptr<TestCluster> m_cluster;
    std::unique_ptr<Connection> m_conn;
};

void TestCluster_::initTestCase()
{
    m_cluster = std::make_unique<TestCluster>(3);
    m_conn = std::make_unique<Connection>(ConnectionOptions::fromUrl(m_cluster->url()));
}

void TestCluster_::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestCluster_::slotHashing_data()
{
    QTest::addColumn<QByteArray>("key");
    for (const char *k : {"foo", "bar", "api:user:42", "{user1000}.following", "a{}b", "{}x", "x{y", "\xff\xfe", ""})
        QTest::newRow(k) << QByteArray(k);
}

void TestCluster_::slotHashing()
{
    QFETCH(QByteArray, key);
    // Our CRC16 slot equals the server's.
    QCOMPARE(qint64(keySlot(key)), m_conn->command({"CLUSTER", "KEYSLOT", key}).integer());
}

void TestCluster_::decisionsOnKeysOfEverySlot()
{
    Limiter limiter(*m_conn);
    QSet<int> owners;
    for (int i = 0; i < 300; ++i) {
        const QByteArray key = "cl:user:" + QByteArray::number(i);
        const LimitSpec spec{kAllAlgorithms[i % 5], 2, 60 * kSecond, 1};
        QVERIFY(limiter.check(key, spec, kT0).allowed);
        QVERIFY(limiter.check(key, spec, kT0).allowed);
        const Decision third = limiter.check(key, spec, kT0);
        QVERIFY(!third.allowed);
        QCOMPARE(third.used, 2);
        // The state lives on the node that owns the slot.
        const int owner = m_cluster->ownerOf(key);
        owners.insert(owner);
        Connection direct(m_cluster->node(owner).options());
        QCOMPARE(direct.command({"EXISTS", key}).integer(), 1);
    }
    QCOMPARE(owners.size(), 3);
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 300);
}

void TestCluster_::listingAndResetSeeEveryMaster()
{
    Limiter limiter(*m_conn);
    for (int i = 0; i < 200; ++i)
        limiter.check("ls:" + QByteArray::number(i), {Algorithm::SlidingLog, 10, 60 * kSecond, 1});
    for (int n = 0; n < 3; ++n)
        QVERIFY(Connection(m_cluster->node(n).options()).command({"DBSIZE"}).integer() > 0);
    CliResult r = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("keys"),
                          QStringLiteral("--match"), QStringLiteral("ls:*")});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out.count('\n'), 200);
    r = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("reset"), QStringLiteral("--match"),
                QStringLiteral("ls:*"), QStringLiteral("--yes")});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("deleted")).toInt(), 200);
    for (int n = 0; n < 3; ++n)
        QCOMPARE(Connection(m_cluster->node(n).options()).command({"KEYS", "ls:*"}).size(), size_t(0));
    // The reset left its audit entries (intent, then outcome), wherever that key lives.
    QCOMPARE(m_conn->command({"XLEN", "ratescope:audit"}).integer(), 2);
}

void TestCluster_::scriptsAreLoadedPerNode()
{
    const QByteArray key = "noscript:key";
    Limiter limiter(*m_conn);
    QCOMPARE(limiter.check(key, {Algorithm::Gcra, 5, 60 * kSecond, 1}, kT0).used, 1);
    // Forget the scripts on the owning node only: NOSCRIPT there, recovered once.
    Connection(m_cluster->node(m_cluster->ownerOf(key)).options()).command({"SCRIPT", "FLUSH"});
    QCOMPARE(limiter.check(key, {Algorithm::Gcra, 5, 60 * kSecond, 1}, kT0).used, 2);
}

void TestCluster_::askAndMovedDuringSlotMigration()
{
    const QByteArray key = "migrating:counter";
    const LimitSpec spec{Algorithm::FixedWindow, 100, 60 * kSecond, 1};
    Limiter limiter(*m_conn);
    QCOMPARE(limiter.check(key, spec, kT0).used, 1);
    const int from = m_cluster->ownerOf(key);
    const int to = (from + 1) % 3;
    const QByteArray slot = QByteArray::number(keySlot(key));
    Connection source(m_cluster->node(from).options()), target(m_cluster->node(to).options());
    target.command({"CLUSTER", "SETSLOT", slot, "IMPORTING", m_cluster->nodeId(from)});
    source.command({"CLUSTER", "SETSLOT", slot, "MIGRATING", m_cluster->nodeId(to)});

    // A key of the same slot that does not exist on the source yet: the source answers ASK.
    QByteArray sibling;
    for (int i = 0; i < 100000 && sibling.isEmpty(); ++i) {
        const QByteArray k = "sib:" + QByteArray::number(i);
        if (keySlot(k) == keySlot(key))
            sibling = k;
    }
    QVERIFY(!sibling.isEmpty());
    QCOMPARE(limiter.check(sibling, spec, kT0).used, 1);
    // It went to the importing node (after ASKING), not to the source.
    QCOMPARE(target.pipeline({{"ASKING"}, {"EXISTS", sibling}}).back().integer(), 1);
    const Reply atSource = source.pipeline({{"EXISTS", sibling}}).front(); // the source redirects: it does not have it
    QVERIFY2(atSource.isError() ? atSource.bytes().startsWith("ASK ") : atSource.integer() == 0, qPrintable(atSource.debugString()));

    // Move the existing key, hand the slot over, and our connection (stale map) is MOVED.
    source.command({"MIGRATE", "127.0.0.1", QByteArray::number(m_cluster->node(to).port()), "", "0", "5000", "KEYS", key});
    for (int n = 0; n < 3; ++n)
        Connection(m_cluster->node(n).options()).command({"CLUSTER", "SETSLOT", slot, "NODE", m_cluster->nodeId(to)});
    const Decision d = limiter.check(key, spec, kT0);
    QCOMPARE(d.used, 2); // state intact, counted once
    QCOMPARE(target.command({"EXISTS", key}).integer(), 1);
    QCOMPARE(m_cluster->ownerOf(key), to);
}

void TestCluster_::exactBurstOnOneKey()
{
    // Pipelines from 8 connections to the node that owns the key, and one next door.
    for (const QByteArray &key : {QByteArray("burst:{tenant7}"), QByteArray("burst:other")}) {
        BurstConfig config;
        config.key = key;
        config.spec = {Algorithm::SlidingLog, 500, 3600 * kSecond, 1};
        config.requests = 5000;
        config.connections = 8;
        config.pipeline = 16;
        const BurstSummary s = BurstEngine(ConnectionOptions::fromUrl(m_cluster->url()), config).run();
        QCOMPARE(s.errors, 0);
        QCOMPARE(s.sent, 5000);
        QCOMPARE(s.allowed, 500);
        QCOMPARE(Connection(m_cluster->node(m_cluster->ownerOf(key)).options()).command({"ZCARD", key}).integer(), 500);
    }
}

void TestCluster_::cliInfoAndNodes()
{
    const CliResult r = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("info")});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject info = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(info.value(QStringLiteral("mode")).toString(), QStringLiteral("cluster"));
    const QJsonArray listed = info.value(QStringLiteral("nodes")).toArray();
    QCOMPARE(listed.size(), 3);
    for (const QJsonValue &n : listed) {
        QCOMPARE(n.toObject().value(QStringLiteral("role")).toString(), QStringLiteral("master"));
        QVERIFY(!n.toObject().value(QStringLiteral("slots")).toString().isEmpty());
    }
    // inspect says where a key lives: its slot and the master serving it.
    Limiter(*m_conn).check("placed:key", {Algorithm::Gcra, 10, 60 * kSecond, 1}, kT0);
    const CliResult inspected = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("inspect"),
                                        QStringLiteral("placed:key"), QStringLiteral("--now-us"), QString::number(kT0)});
    QCOMPARE(inspected.exitCode, 0);
    const QJsonObject state = QJsonDocument::fromJson(inspected.out).object();
    QCOMPARE(state.value(QStringLiteral("slot")).toInt(), keySlot("placed:key"));
    QCOMPARE(state.value(QStringLiteral("node")).toString(),
             QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(m_cluster->ownerOf("placed:key")).port()));
    const auto nodes = m_conn->nodes();
    QCOMPARE(nodes.size(), size_t(3));
    for (const auto &n : nodes)
        QVERIFY(!n.slotRanges.isEmpty());
}

void TestCluster_::aSlowMasterIsNeverAskedTwice()
{
    // The owner of a key stops answering (CLIENT PAUSE) past the command timeout: the decision
    // fails with DOWN and is not sent again, here or elsewhere; the count moves at most once.
    const LimitSpec spec{Algorithm::SlidingLog, 100, 60 * kSecond, 1};
    const QByteArray key = "slow:user";
    Connection quick(ConnectionOptions::fromUrl(m_cluster->url() + QStringLiteral("?timeout=500ms")));
    Limiter limiter(quick);
    QCOMPARE(limiter.check(key, spec, kT0).used, 1);
    const SandboxServer &owner = m_cluster->node(m_cluster->ownerOf(key));
    Connection(owner.options()).command({"CLIENT", "PAUSE", "2000", "ALL"});
    try {
        limiter.check(key, spec, kT0 + 1);
        QFAIL("a paused master answered");
    } catch (const ReplyError &e) {
        QVERIFY2(e.message().startsWith(QStringLiteral("DOWN 127.0.0.1:%1: ").arg(owner.port())), qPrintable(e.message()));
    }
    // Once the pause is over (PING waits for it, bounded by the default timeout).
    Connection(owner.options()).command({"PING"});
    const qint64 after = Connection(owner.options()).command({"ZCARD", key}).integer();
    QVERIFY2(after == 1 || after == 2, qPrintable(QString::number(after)));
    QCOMPARE(limiter.check(key, spec, kT0 + 2).used, after + 1);
}

void TestCluster_::aSilentMasterIsPausedNotWaitedFor()
{
    // A master stops answering (SIGSTOP: its socket stays open, nothing answers). Its first
    // command waits for the timeout; then the node is paused on the router's clock (here the
    // test's): its commands answer DOWN at once, saying so, while the other masters answer;
    // the pause grows with each failure in a row and ends with an answer.
    const QByteArray key = "silent:user";
    const int owner = m_cluster->ownerOf(key);
    QByteArray elsewhere;
    for (int i = 0; elsewhere.isEmpty() && i < 1000; ++i)
        if (m_cluster->ownerOf("other:" + QByteArray::number(i)) != owner)
            elsewhere = "other:" + QByteArray::number(i);
    QVERIFY(!elsewhere.isEmpty());
    ClusterRouter router(ConnectionOptions::fromUrl(m_cluster->url() + QStringLiteral("?timeout=300ms")));
    qint64 nowMs = 1000000;
    router.setClock([&nowMs] { return nowMs; });
    QCOMPARE(router.command({"SET", key, "1"}).text(), QStringLiteral("OK"));
    const QString address = QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(owner).port());
    struct Resume { // whatever happens below, the node runs again
        SandboxServer &node;
        ~Resume() { node.resume(); }
    } resume{m_cluster->node(owner)};
    m_cluster->node(owner).pause();

    auto expectDown = [&](const Reply &r, bool paused) {
        QVERIFY2(r.isError() && r.text().startsWith(QStringLiteral("DOWN %1: ").arg(address)), qPrintable(r.text()));
        QVERIFY2(r.text().contains(QStringLiteral("not asked for another")) == paused, qPrintable(r.text()));
    };
    expectDown(router.command({"GET", key}), false); // waited for the timeout
    for (int i = 0; i < 3; ++i)
        expectDown(router.command({"GET", key}), true); // at once
    QVERIFY(router.command({"GET", elsewhere}).isNil());
    const std::vector<Reply> both = router.pipeline({{"GET", key}, {"GET", elsewhere}});
    expectDown(both[0], true);
    QVERIFY(both[1].isNil());
    QVERIFY(router.command({"PING"}).text() == QStringLiteral("PONG")); // keyless: another master

    // The first pause over, it is asked again, fails again: the next pause is longer.
    nowMs += ClusterRouter::kBackoffFirstMs;
    expectDown(router.command({"GET", key}), false);
    nowMs += ClusterRouter::kBackoffFirstMs;
    expectDown(router.command({"GET", key}), true);
    QVERIFY2(router.command({"GET", key}).text().contains(QStringLiteral("after 2 failures in a row")), "");

    // Running again: once the pause is over it answers, and the count starts afresh.
    m_cluster->node(owner).resume();
    nowMs += ClusterRouter::kBackoffMaxMs;
    QCOMPARE(router.command({"GET", key}).text(), QStringLiteral("1"));
    m_cluster->node(owner).pause();
    expectDown(router.command({"GET", key}), false);
    expectDown(router.command({"GET", key}), true);
    QVERIFY2(router.command({"GET", key}).text().contains(QStringLiteral("after 1 failure in a row")), "");
    m_cluster->node(owner).resume();
}

// A pipeline over three masters, one of them silent (SIGSTOP) in turn, so that it is read
// before, between and after the others: its share answers DOWN, every other reply is its
// own, and the next pipelines read each connection in step (nothing owed is left unread to be
// taken for a later reply), on the live masters at once and on the silent one once it runs.
void TestCluster_::aPipelineStaysInStepWhenOneMasterFails()
{
    QByteArray keys[3];
    for (int i = 0; i < 3000; ++i) {
        const QByteArray k = "step:" + QByteArray::number(i);
        QByteArray &slot = keys[m_cluster->ownerOf(k)];
        if (slot.isEmpty())
            slot = k;
    }
    for (const QByteArray &k : keys)
        QVERIFY(!k.isEmpty());
    for (int silent = 0; silent < 3; ++silent) {
        ClusterRouter router(ConnectionOptions::fromUrl(m_cluster->url() + QStringLiteral("?timeout=300ms")));
        qint64 nowMs = 1000000;
        router.setClock([&nowMs] { return nowMs; });
        for (const QByteArray &k : keys)
            QCOMPARE(router.command({"SET", k, "0"}).text(), QStringLiteral("OK"));
        struct Resume {
            SandboxServer &node;
            ~Resume() { node.resume(); }
        } resume{m_cluster->node(silent)};
        m_cluster->node(silent).pause();
        std::vector<Command> incr;
        for (int round = 0; round < 3; ++round)
            for (const QByteArray &k : keys)
                incr.push_back({"INCR", k});
        const std::vector<Reply> r = router.pipeline(incr);
        QCOMPARE(r.size(), size_t(9));
        for (int round = 0; round < 3; ++round) {
            for (int n = 0; n < 3; ++n) {
                const Reply &reply = r[size_t(round * 3 + n)];
                if (n == silent)
                    QVERIFY2(reply.isError() && reply.text().startsWith(QStringLiteral("DOWN ")), qPrintable(reply.text()));
                else
                    QVERIFY2(reply.isInteger() && reply.integer() == round + 1, qPrintable(reply.debugString()));
            }
        }
        // The live masters, read in step.
        std::vector<Command> get;
        for (int n = 0; n < 3; ++n)
            if (n != silent)
                get.push_back({"GET", keys[n]});
        for (const Reply &reply : router.pipeline(get))
            QCOMPARE(reply.bytes(), QByteArray("3"));
        // The silent master, once it runs again and its pause is over: a fresh connection, in
        // step (whatever the increments it finally ran).
        m_cluster->node(silent).resume();
        nowMs += ClusterRouter::kBackoffMaxMs;
        const std::vector<Reply> again =
            router.pipeline({{"SET", keys[silent], "fresh"}, {"GET", keys[silent]}, {"GET", keys[(silent + 1) % 3]}});
        QCOMPARE(again[0].text(), QStringLiteral("OK"));
        QCOMPARE(again[1].bytes(), QByteArray("fresh"));
        QCOMPARE(again[2].bytes(), QByteArray("3"));
    }
}

// `top` on a cluster: every master's keys are scanned, each limiter names its master, and the
// master whose limiters take the traffic shows as the hotspot.
void TestCluster_::hotLimitersPerMaster()
{
    Limiter limiter(*m_conn);
    const LimitSpec spec{Algorithm::FixedWindow, 1000000, 366LL * 86400 * kSecond, 1};
    std::vector<QByteArray> keys;
    for (int i = 0; i < 60; ++i) {
        keys.push_back("hot:" + QByteArray::number(i));
        QVERIFY(limiter.check(keys.back(), spec).allowed);
    }
    // Keys of the same shape that are no limiter: a guessed type proved wrong is typed on the
    // master's own pipeline, and they are left out.
    for (int i = 60; i < 72; ++i) {
        const QByteArray key = "hot:" + QByteArray::number(i);
        m_conn->command(i % 2 ? Command{"SET", key, "text"} : Command{"SADD", key, "member"});
    }
    // Counter windows (3-hour windows), whose two windows may be in two slots: read with two
    // GETs each, counted with the master of the current window. One, whose windows carry the
    // hash tag of a key on the hot master, grows by 6 between the reads; one is tagged to
    // another master; two are untagged.
    const int hotMaster = m_cluster->ownerOf(keys[0]);
    QByteArray cold;
    for (const QByteArray &k : keys)
        if (cold.isEmpty() && m_cluster->ownerOf(k) != hotMaster)
            cold = k;
    const QByteArray grows = "hot:cw{" + keys[0] + "}";
    const qint64 nowS = m_conn->command({"TIME"})[0].toInteger();
    const QByteArray id = QByteArray::number(nowS / 10800);
    for (const QByteArray &base : {grows, "hot:cw{" + cold + "}", QByteArray("hot:cw2"), QByteArray("hot:cw3")}) {
        m_conn->command({"SET", base + ":" + id, "2"});
        m_conn->command({"SET", base + ":" + QByteArray::number(nowS / 10800 - 1), "5"});
    }
    HotOptions options;
    options.match = "hot:*";
    HotPass pass = HotScanner(options).run(*m_conn, [&] {
        for (const QByteArray &k : keys)
            if (m_cluster->ownerOf(k) == hotMaster)
                for (int r = 0; r < 5; ++r)
                    limiter.check(k, spec);
        m_conn->command({"INCRBY", grows + ":" + id, "6"});
    });
    QCOMPARE(pass.scanned, 80);
    qint64 windowsOnHot = 0; // counted with the master of their current window
    std::map<QByteArray, qint64> windows, expectedWindows;
    for (auto l = pass.limiters.begin(); l != pass.limiters.end();) {
        if (l->kind.format != KeyFormat::CounterWindow) {
            ++l;
            continue;
        }
        windows[l->key] = l->admitted.value_or(-1);
        expectedWindows[l->key] = l->key == grows ? 6 : 0;
        const int owner = m_cluster->ownerOf(l->key + ":" + id);
        QCOMPARE(l->master, QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(owner).port()));
        windowsOnHot += owner == hotMaster ? 1 : 0;
        l = pass.limiters.erase(l);
    }
    QCOMPARE(windows.size(), size_t(4));
    QCOMPARE(windows, expectedWindows);
    QCOMPARE(pass.limiters.size(), size_t(60));
    QCOMPARE(pass.masters.size(), size_t(3));
    const QString hotAddress = QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(hotMaster).port());
    qint64 onHot = 0;
    for (const HotLimiter &l : pass.limiters) {
        const bool hot = m_cluster->ownerOf(l.key) == hotMaster;
        QCOMPARE(l.master, QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(m_cluster->ownerOf(l.key)).port()));
        QCOMPARE(*l.admitted, hot ? 5 : 0);
        onHot += hot ? 1 : 0;
    }
    QVERIFY(onHot > 0 && onHot < 60);
    qint64 limiters = 0;
    for (const HotMaster &m : pass.masters) {
        limiters += m.limiters;
        QVERIFY2(m.address == hotAddress ? m.rate > 0 : m.rate == 0, qPrintable(m.address));
        if (m.address == hotAddress)
            QCOMPARE(m.limiters, onHot + windowsOnHot);
    }
    QCOMPARE(limiters, 64);
}

// A sharded limiter whose key carries a hash tag: every shard lands in the tag's slot (one
// master), the group is listed as one row, and a reset deletes its shards on that master.
void TestCluster_::hashTaggedShardsShareASlot()
{
    BurstConfig c;
    c.key = "shard:{t42}";
    c.spec = {Algorithm::Gcra, 800, 3600 * kSecond, 1};
    c.requests = 400;
    c.shards = 8;
    c.connections = 2;
    c.pipeline = 8;
    const BurstSummary s = BurstEngine(ConnectionOptions::fromUrl(m_cluster->url()), c).run();
    QCOMPARE(s.allowed, 400);
    const int slot = keySlot("shard:{t42}");
    const int owner = m_cluster->ownerOf("shard:{t42}");
    for (int i = 0; i < 8; ++i) {
        const QByteArray key = c.shardKey(i);
        QCOMPARE(keySlot(key), slot);
        QCOMPARE(m_cluster->ownerOf(key), owner);
        QCOMPARE(Connection(m_cluster->node(owner).options()).command({"EXISTS", key}).integer(), 1);
    }
    const CliResult keys = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("keys"),
                                   QStringLiteral("--match"), QStringLiteral("shard:*")});
    QVERIFY2(keys.exitCode == 0, keys.err.constData());
    const QList<QByteArray> rows = keys.out.trimmed().split('\n');
    QCOMPARE(rows.size(), 1);
    QCOMPARE(QJsonDocument::fromJson(rows[0]).object().value(QStringLiteral("shards")).toInt(), 8);
    const CliResult reset = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("reset"),
                                    QStringLiteral("shard:{t42}"), QStringLiteral("--yes")});
    QVERIFY2(reset.exitCode == 0, reset.err.constData());
    QCOMPARE(QJsonDocument::fromJson(reset.out.split('\n').first()).object().value(QStringLiteral("deleted")).toInt(), 8);
}

void TestCluster_::aMasterDownLeavesTheOthersReadable()
{
    // Keys on every master; then one master dies, with no replica to take over.
    const LimitSpec spec{Algorithm::FixedWindow, 10, 60 * kSecond, 1};
    Limiter limiter(*m_conn);
    const int dead = m_cluster->ownerOf("down:user0");
    int onDead = 0;
    QByteArray elsewhere;
    for (int i = 0; i < 30; ++i) {
        const QByteArray key = "down:user" + QByteArray::number(i);
        QCOMPARE(limiter.check(key, spec, kT0).used, 1);
        if (m_cluster->ownerOf(key) == dead)
            ++onDead;
        else
            elsewhere = key;
    }
    QVERIFY(onDead > 0 && !elsewhere.isEmpty());
    const QString deadAddress = QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(dead).port());
    m_cluster->node(dead).kill();

    // The status of the others is still read; the missing master is named, not summed.
    const ServerInfo info = ServerInfo::fetch(*m_conn);
    QCOMPARE(info.mastersMissing, 1);
    QCOMPARE(info.dbSize, qint64(30 - onDead));
    QCOMPARE(info.masterCount(), 3);
    for (const Connection::Node &n : info.nodes)
        QCOMPARE(!n.problem.isEmpty(), n.address.toString() == deadAddress);

    // Keys of the live masters decide as before; those of the dead one fail, unrepeated.
    QCOMPARE(limiter.check(elsewhere, spec, kT0 + 1).used, 2);
    try {
        limiter.check("down:user0", spec, kT0 + 1);
        QFAIL("a decision on a dead master's key succeeded");
    } catch (const ReplyError &e) {
        QVERIFY2(e.message().startsWith(QStringLiteral("DOWN %1: ").arg(deadAddress)), qPrintable(e.message()));
    }
    // The CLI: a connection problem (exit 3), not a server reply.
    const CliResult decided = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("check"), QStringLiteral("down:user0"),
                                      QStringLiteral("--algo"), QStringLiteral("fixed-window"), QStringLiteral("--limit"),
                                      QStringLiteral("10"), QStringLiteral("--window"), QStringLiteral("60s")});
    QCOMPARE(decided.exitCode, 3);
    QCOMPARE(limiter.check(elsewhere, spec, kT0 + 2).used, 3);

    // A pipeline over every master: the dead one's commands answer DOWN in place, the others
    // theirs, and no connection is left out of step afterwards.
    std::vector<Command> batch;
    for (int i = 0; i < 30; ++i)
        batch.push_back({"EXISTS", "down:user" + QByteArray::number(i)});
    const std::vector<Reply> replies = m_conn->pipeline(batch);
    int down = 0;
    for (int i = 0; i < 30; ++i) {
        if (m_cluster->ownerOf(batch[size_t(i)][1]) == dead) {
            QVERIFY2(replies[size_t(i)].isError() && replies[size_t(i)].bytes().startsWith("DOWN "),
                     replies[size_t(i)].bytes().constData());
            ++down;
        } else {
            QCOMPARE(replies[size_t(i)].integer(), 1);
        }
    }
    QCOMPARE(down, onDead);
    // SCAN walks the masters in turn: the dead one is an error reply naming it, not a lost
    // connection (the cluster is still there).
    QByteArray cursor = "0";
    QString scanError;
    for (int pages = 0; pages < 1000 && scanError.isEmpty(); ++pages) {
        try {
            const Reply page = m_conn->command({"SCAN", cursor, "COUNT", "100"});
            cursor = page[0].bytes();
            if (cursor == "0")
                break;
        } catch (const ReplyError &e) {
            scanError = e.message();
        }
    }
    QVERIFY2(scanError.startsWith(QStringLiteral("DOWN %1: ").arg(deadAddress)), qPrintable(scanError));
    // Every live master still answers in turn: a key of each (by its slot's owner).
    QSet<int> probed;
    for (int i = 0; i < 30; ++i) {
        const QByteArray key = batch[size_t(i)][1];
        const int owner = m_cluster->ownerOf(key);
        if (owner == dead || probed.contains(owner))
            continue;
        probed.insert(owner);
        for (int round = 0; round < 3; ++round) {
            QCOMPARE(m_conn->command({"EXISTS", key}).integer(), 1);
            QVERIFY(m_conn->command({"GET", "{" + key + "}:none"}).isNil()); // the same slot
        }
    }
    QCOMPARE(probed.size(), 2);
    QCOMPARE(m_conn->command({"PING"}).text(), QStringLiteral("PONG")); // keyless: any master

    // A live master that lost its scripts loads them again, although another is down.
    Connection(m_cluster->node(m_cluster->ownerOf(elsewhere)).options()).command({"SCRIPT", "FLUSH"});
    QCOMPARE(limiter.check(elsewhere, spec, kT0 + 3).used, 4);

    const CliResult r = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("info")});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o.value(QStringLiteral("masters_not_answering")).toInt(), 1);
    QCOMPARE(o.value(QStringLiteral("db_size")).toInteger(), 30 - onDead);
}

QTEST_GUILESS_MAIN(TestCluster_)
#include "tst_cluster.moc"
