// Sharded limiters against a real redis-server: a group of 8 shards written by a sharded burst
// is listed as one row with the right sum, a policy declares shards (missing ones count as
// empty), keys per numeric id are no shards, and a reset of the group deletes exactly its
// shards. Grouping rules unit-tested on classified keys.
#include "load/burst.h"
#include "redis/connection.h"
#include "limiters/limiter.h"
#include "admin/policy.h"
#include "keys/shards.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <map>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;

KeyKind classOf(KeyFormat f)
{
    KeyKind k;
    k.format = f;
    return k;
}

} // namespace

class TestShards : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_server.start();
        m_conn = std::make_unique<Connection>(m_server.options());
    }
    void init() { m_conn->command({"FLUSHALL"}); }

    void groupingRules();
    void shareOfTheLimit();
    void eightShardsAreOneRow();
    void declaredShardsCountMissingOnesAsEmpty();
    void declaredShardsFromOneAgreeWithTheirKeys();
    void slidingBucketsShardsAreOneGroup();
    void resetOfTheGroupDeletesExactlyItsShards();

private:
    // `keys --json`, one object per row, by key.
    std::map<QString, QJsonObject> keysJson(const QStringList &extra = {}) { return keysRows(m_server.url(), extra); }
    void shardedBurst(const QByteArray &key, qint64 requests, qint64 limit)
    {
        BurstConfig c;
        c.key = key;
        c.spec = {Algorithm::SlidingLog, limit, 3600 * kSecond, 1};
        c.requests = requests;
        c.shards = 8;
        c.shardBy = BurstConfig::ShardRouting::RoundRobin;
        QCOMPARE(BurstEngine(m_server.options(), c).run().sent, requests);
    }

    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestShards::groupingRules()
{
    using K = KeyFormat;
    std::vector<std::pair<QByteArray, KeyKind>> keys;
    for (int i = 0; i < 4; ++i)
        keys.emplace_back("a:" + QByteArray::number(i), classOf(K::Gcra)); // 0..3: a group
    for (int i = 1; i <= 3; ++i)
        keys.emplace_back("b:" + QByteArray::number(i), classOf(K::SlidingLog)); // 1..3: ids, unless a policy says shards
    keys.emplace_back("c:0", classOf(K::Gcra));                                  // mixed formats: none
    keys.emplace_back("c:1", classOf(K::TokenBucket));
    keys.emplace_back("d:0", classOf(K::FixedWindow)); // a gap: none
    keys.emplace_back("d:2", classOf(K::FixedWindow));
    keys.emplace_back("e:0", classOf(K::Gcra)); // one alone: none
    for (int i = 1; i <= 100; ++i)
        keys.emplace_back("user:" + QByteArray::number(i), classOf(K::Gcra)); // per-user limiters: none
    keys.emplace_back("f:01", classOf(K::Gcra));                              // not a shard number
    keys.emplace_back("f:1", classOf(K::Gcra));
    keys.emplace_back("g:0", classOf(K::CounterWindow)); // window ids, not shards
    keys.emplace_back("g:1", classOf(K::CounterWindow));
    const auto groups = findShardGroups(keys, {});
    QCOMPARE(groups.size(), size_t(1));
    QCOMPARE(groups[0].base, QByteArray("a"));
    QCOMPARE(groups[0].from, 0);
    QCOMPARE(groups[0].count, 4);
    // Declared by a policy, b:1..3 are shards numbered from 1.
    Policy b;
    b.name = QStringLiteral("b");
    b.match = "b:*";
    b.spec = {Algorithm::SlidingLog, 30, kSecond, 1};
    b.shards = 3;
    const auto declaredB = findShardGroups(keys, {b});
    QCOMPARE(declaredB.size(), size_t(2));
    QCOMPARE(declaredB[1].base, QByteArray("b"));
    QCOMPARE(declaredB[1].from, 1);
    QCOMPARE(declaredB[1].count, 3);
    QCOMPARE(declaredB[1].shardKey(0), QByteArray("b:1"));

    // A policy declares 8 shards of user:*: the 100 per-user keys are still no group (numbers
    // beyond the declared shards), its 8 are.
    Policy p;
    p.name = QStringLiteral("u");
    p.match = "user:*";
    p.spec = {Algorithm::Gcra, 80, kSecond, 1};
    p.shards = 8;
    std::vector<std::pair<QByteArray, KeyKind>> declared;
    for (int i = 0; i < 8; i += 2)
        declared.emplace_back("user:" + QByteArray::number(i), classOf(K::Gcra)); // 0, 2, 4, 6 of 8
    const auto withPolicy = findShardGroups(declared, {p});
    QCOMPARE(withPolicy.size(), size_t(1));
    QVERIFY(withPolicy[0].declared);
    QCOMPARE(withPolicy[0].count, 8);
    QCOMPARE(withPolicy[0].keys.size(), size_t(4));
    QCOMPARE(findShardGroups(keys, {p}).size(), size_t(1)); // user:1..100 exceed the declared 8
}

void TestShards::shareOfTheLimit()
{
    qint64 sum = 0;
    for (int i = 0; i < 8; ++i)
        sum += shardShare(403, 8, i);
    QCOMPARE(sum, 403);
    QCOMPARE(shardShare(403, 8, 0), 51);
    QCOMPARE(shardShare(403, 8, 3), 50);
    QCOMPARE(shardShare(10, 0, 0), 10);
}

void TestShards::eightShardsAreOneRow()
{
    shardedBurst("rl:{t42}", 300, 400);
    Limiter limiter(*m_conn);
    limiter.check("rl:{t42}x:0", {Algorithm::SlidingLog, 5, 60 * kSecond, 1}); // another base
    m_conn->command({"SET", "rl:{t42}:extra", "1"});                           // no shard number
    auto rows = keysJson(QStringList{QStringLiteral("--all")});
    QVERIFY(rows.count(QStringLiteral("rl:{t42}")));
    QJsonObject group = rows[QStringLiteral("rl:{t42}")];
    QCOMPARE(group.value(QStringLiteral("shards")).toInt(), 8);
    QVERIFY(!group.contains(QStringLiteral("used"))); // no policy: no limits
    for (int i = 0; i < 8; ++i)
        QVERIFY(!rows.count(QStringLiteral("rl:{t42}:%1").arg(i)));
    QVERIFY(rows.count(QStringLiteral("rl:{t42}x:0")));
    QVERIFY(rows.count(QStringLiteral("rl:{t42}:extra")));

    Policy p;
    p.name = QStringLiteral("rl");
    p.match = "rl:{t42}:*";
    p.spec = {Algorithm::SlidingLog, 400, 3600 * kSecond, 1};
    PolicyStore(*m_conn, QStringLiteral("ratescope:")).set(p, 0, QStringLiteral("test"));
    rows = keysJson();
    group = rows[QStringLiteral("rl:{t42}")];
    QCOMPARE(group.value(QStringLiteral("shards")).toInt(), 8);
    // Inferred (the policy does not say `shards`): each shard has the policy's 400, as a
    // check of its key is told; the group enforces the eight together.
    QCOMPARE(group.value(QStringLiteral("used")).toInt(), 300);
    QCOMPARE(group.value(QStringLiteral("limit")).toInt(), 3200);
    QCOMPARE(group.value(QStringLiteral("remaining")).toInt(), 2900);
    QVERIFY(group.value(QStringLiteral("busiest")).toString().startsWith(QStringLiteral("rl:{t42}:")));
    QVERIFY(group.value(QStringLiteral("skew")).toDouble() >= 1.0);

    const CliResult human = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("keys")});
    QVERIFY2(human.out.contains("rl:{t42} · 8 shards"), human.out.constData());
}

void TestShards::declaredShardsCountMissingOnesAsEmpty()
{
    Policy p;
    p.name = QStringLiteral("hot");
    p.match = "hot:*";
    p.spec = {Algorithm::FixedWindow, 40, 3600 * kSecond, 1};
    p.shards = 4;
    QCOMPARE(runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("hot"),
                     QStringLiteral("--match"), QStringLiteral("hot:*"), QStringLiteral("--algo"), QStringLiteral("fixed-window"),
                     QStringLiteral("--limit"), QStringLiteral("40"), QStringLiteral("--window"), QStringLiteral("1h"),
                     QStringLiteral("--shards"), QStringLiteral("4")})
                 .exitCode,
             0);
    QCOMPARE(PolicyStore(*m_conn, QStringLiteral("ratescope:")).get(QStringLiteral("hot"))->shards, 4);
    Limiter limiter(*m_conn);
    const int used[] = {3, 7, 0, 10};
    for (int i = 0; i < 4; ++i)
        for (int r = 0; r < used[i]; ++r)
            QVERIFY(limiter.check("hot:{a}:" + QByteArray::number(i), {Algorithm::FixedWindow, 10, 3600 * kSecond, 1}).allowed);
    const auto rows = keysJson();
    const QJsonObject group = rows.at(QStringLiteral("hot:{a}"));
    QCOMPARE(group.value(QStringLiteral("shards")).toInt(), 4);
    QCOMPARE(group.value(QStringLiteral("used")).toInt(), 20);
    QCOMPARE(group.value(QStringLiteral("limit")).toInt(), 40);
    QCOMPARE(group.value(QStringLiteral("busiest")).toString(), QStringLiteral("hot:{a}:3"));
    QCOMPARE(group.value(QStringLiteral("skew")).toDouble(), 2.0); // 10 of 20 on one shard of 4
    // inspect BASE: the group shard by shard (the missing shard 2 is empty), each with its share.
    const CliResult inspect =
        runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("hot:{a}")});
    QVERIFY2(inspect.exitCode == 0, inspect.err.constData());
    const QJsonObject sharded = QJsonDocument::fromJson(inspect.out).object().value(QStringLiteral("sharded")).toObject();
    QCOMPARE(sharded.value(QStringLiteral("count")).toInt(), 4);
    QCOMPARE(sharded.value(QStringLiteral("used")).toInt(), 20);
    QCOMPARE(sharded.value(QStringLiteral("limit")).toInt(), 40);
    QCOMPARE(sharded.value(QStringLiteral("busiest")).toInt(), 3);
    const QJsonArray shards = sharded.value(QStringLiteral("shards")).toArray();
    QCOMPARE(shards.size(), 4);
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(shards[i].toObject().value(QStringLiteral("used")).toInt(), used[i]);
        QCOMPARE(shards[i].toObject().value(QStringLiteral("limit")).toInt(), 10);
    }
    // A shard's own check runs against its share.
    const CliResult shard =
        runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("hot:{a}:1")});
    QCOMPARE(QJsonDocument::fromJson(shard.out).object().value(QStringLiteral("limit")).toInt(), 10);
    // Refused: shards that leave a shard less than the cost, or out of range.
    for (const char *n : {"1", "41", "2000"})
        QCOMPARE(runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("bad"),
                         QStringLiteral("--match"), QStringLiteral("bad:*"), QStringLiteral("--algo"), QStringLiteral("gcra"),
                         QStringLiteral("--limit"), QStringLiteral("40"), QStringLiteral("--window"), QStringLiteral("1h"),
                         QStringLiteral("--shards"), QLatin1String(n)})
                     .exitCode,
                 2);

    // An override of the base is the whole group's limit: 80 shared out, 20 per shard; the
    // keys row, inspect of the base and a shard's own decisions all say so.
    const QStringList url{QStringLiteral("--url"), m_server.url()};
    const CliResult set =
        runCli(url + QStringList{QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("hot:{a}"), QStringLiteral("--limit"),
                                 QStringLiteral("80"), QStringLiteral("--for"), QStringLiteral("1h")});
    QVERIFY2(set.exitCode == 0, set.err.constData());
    QCOMPARE(keysJson().at(QStringLiteral("hot:{a}")).value(QStringLiteral("limit")).toInt(), 80);
    // inspect of the base: its `sharded` object.
    auto groupState = [&] {
        const CliResult r = runCli(url + QStringList{QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("hot:{a}")});
        return QJsonDocument::fromJson(r.out).object().value(QStringLiteral("sharded")).toObject();
    };
    const QJsonObject overridden = groupState();
    QCOMPARE(overridden.value(QStringLiteral("limit")).toInt(), 80);
    QCOMPARE(overridden.value(QStringLiteral("overridden")).toBool(), true);
    for (const QJsonValue &one : overridden.value(QStringLiteral("shards")).toArray())
        QCOMPARE(one.toObject().value(QStringLiteral("limit")).toInt(), 20);
    auto shardLimit = [&](const char *key) {
        const CliResult r = runCli(url + QStringList{QStringLiteral("--json"), QStringLiteral("peek"), QLatin1String(key)});
        return QJsonDocument::fromJson(r.out).object().value(QStringLiteral("limit")).toInt();
    };
    QCOMPARE(shardLimit("hot:{a}:1"), 20);
    // A shard's own override beats its group's.
    QCOMPARE(runCli(url + QStringList{QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("hot:{a}:1"),
                                      QStringLiteral("--limit"), QStringLiteral("5"), QStringLiteral("--for"), QStringLiteral("1h")})
                 .exitCode,
             0);
    QCOMPARE(shardLimit("hot:{a}:1"), 5);
    QCOMPARE(shardLimit("hot:{a}:2"), 20);
    // The group then enforces 20 + 5 + 20 + 20, and says so shard by shard.
    const QJsonObject mixed = groupState();
    QCOMPARE(mixed.value(QStringLiteral("limit")).toInt(), 65);
    QCOMPARE(mixed.value(QStringLiteral("shards_overridden")).toInt(), 1);
    QCOMPARE(mixed.value(QStringLiteral("shards")).toArray()[1].toObject().value(QStringLiteral("limit")).toInt(), 5);
    QCOMPARE(keysJson().at(QStringLiteral("hot:{a}")).value(QStringLiteral("limit")).toInt(), 65);
}

// Shards numbered 1..N of a declared group, a limit that does not divide evenly: the group read
// whole (inspect of the base) gives each shard the limit its own key is checked against (peek).
void TestShards::declaredShardsFromOneAgreeWithTheirKeys()
{
    const QStringList url{QStringLiteral("--url"), m_server.url()};
    QCOMPARE(runCli(url + QStringList{QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("odd"), QStringLiteral("--match"),
                                      QStringLiteral("odd:*"), QStringLiteral("--algo"), QStringLiteral("sliding-log"),
                                      QStringLiteral("--limit"), QStringLiteral("10"), QStringLiteral("--window"), QStringLiteral("1h"),
                                      QStringLiteral("--shards"), QStringLiteral("3")})
                 .exitCode,
             0);
    Limiter limiter(*m_conn);
    for (int n = 1; n <= 3; ++n)
        QVERIFY(limiter.check("odd:{g}:" + QByteArray::number(n), {Algorithm::SlidingLog, 3, 3600 * kSecond, 1}).allowed);
    const CliResult r = runCli(url + QStringList{QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("odd:{g}")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject sharded = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("sharded")).toObject();
    const QJsonArray shards = sharded.value(QStringLiteral("shards")).toArray();
    QCOMPARE(shards.size(), 3);
    qint64 sum = 0;
    for (int i = 0; i < 3; ++i) {
        const QString key = QStringLiteral("odd:{g}:%1").arg(i + 1);
        const CliResult peek = runCli(url + QStringList{QStringLiteral("--json"), QStringLiteral("peek"), key});
        const qint64 own = QJsonDocument::fromJson(peek.out).object().value(QStringLiteral("limit")).toInteger();
        QCOMPARE(shards[i].toObject().value(QStringLiteral("limit")).toInteger(), own);
        sum += own;
    }
    QCOMPARE(sum, 10);
    QCOMPARE(sharded.value(QStringLiteral("limit")).toInt(), 10);
}

void TestShards::slidingBucketsShardsAreOneGroup()
{
    Policy p;
    p.name = QStringLiteral("sbg");
    p.match = "sbg:*";
    p.spec = {Algorithm::SlidingBuckets, 80, 60 * kSecond, 1, 12};
    PolicyStore(*m_conn, QStringLiteral("ratescope:")).set(p, 0, QStringLiteral("tst_shards"));
    Limiter limiter(*m_conn);
    const LimitSpec share{Algorithm::SlidingBuckets, 20, 60 * kSecond, 1, 12};
    const int used[] = {4, 1, 6, 2};
    for (int i = 0; i < 4; ++i)
        for (int r = 0; r < used[i]; ++r)
            QVERIFY(limiter.check("sbg:{x}:" + QByteArray::number(i), share).allowed);
    const QJsonObject group = keysJson().at(QStringLiteral("sbg:{x}"));
    QCOMPARE(group.value(QStringLiteral("shards")).toInt(), 4);
    QCOMPARE(group.value(QStringLiteral("used")).toInt(), 13);
    QCOMPARE(group.value(QStringLiteral("limit")).toInt(), 4 * 80); // inferred: each shard has the policy's 80
    QCOMPARE(group.value(QStringLiteral("busiest")).toString(), QStringLiteral("sbg:{x}:2"));
}

void TestShards::resetOfTheGroupDeletesExactlyItsShards()
{
    shardedBurst("grp:{t7}", 80, 400);
    Limiter limiter(*m_conn);
    limiter.check("grp:{t7}x:0", {Algorithm::SlidingLog, 5, 60 * kSecond, 1});
    limiter.check("grp:{t8}:0", {Algorithm::SlidingLog, 5, 60 * kSecond, 1});
    m_conn->command({"SET", "grp:{t7}:extra", "1"});
    const CliResult r = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("reset"),
                                QStringLiteral("grp:{t7}"), QStringLiteral("--yes")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(QJsonDocument::fromJson(r.out.split('\n').first()).object().value(QStringLiteral("deleted")).toInt(), 8);
    for (int i = 0; i < 8; ++i)
        QCOMPARE(m_conn->command({"EXISTS", "grp:{t7}:" + QByteArray::number(i)}).integer(), 0);
    for (const char *kept : {"grp:{t7}x:0", "grp:{t8}:0", "grp:{t7}:extra"})
        QCOMPARE(m_conn->command({"EXISTS", kept}).integer(), 1);
}

QTEST_GUILESS_MAIN(TestShards)
#include "tst_shards.moc"
