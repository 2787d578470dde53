// One truth per limiter: every command and every query a console view makes tells the same
// limit, used, remaining and denying for one limiter, against one real server and a matrix
// of states. The limits in force come from one place (admin/limitsinforce.h); this suite is
// what fails when a surface reads a limiter its own way.
//
// Surfaces: ratescope-cli keys, peek, inspect, top and watch; and the console's own queries
// (ui/queries, widget-free), each as its view asks it: the keys panel (readKeyDetails), the
// Monitor (classifyPins, then readMonitorRound), the Hot view (hotScanStep, hotFirstRead,
// hotSecondRead), the key view (readKey), the Reset preview (readResetDetails), the Burst
// page's preflight (readBurstPreflight under the limits in force), and the What-if prefill and
// the policy editor's "in force" (readLimitsInForceAt).
#include "admin/limitsinforce.h"
#include "admin/policy.h"
#include "keys/inspector.h"
#include "keys/keydetails.h"
#include "keys/keyscanner.h"
#include "limiters/limiter.h"
#include "load/hotlimiters.h"
#include "redis/connection.h"
#include "testsupport.h"

#include "burstqueries.h"
#include "hotqueries.h"
#include "keyviewqueries.h"
#include "limitqueries.h"
#include "monitorround.h"
#include "resetqueries.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <map>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;
const MetadataNamespace kNs("ratescope:");

// What one surface says of one limiter.
struct Said {
    qint64 limit = -1;
    qint64 used = -1;
    qint64 remaining = -1;
    bool denying = false;
    bool operator==(const Said &o) const
    {
        return limit == o.limit && used == o.used && remaining == o.remaining && denying == o.denying;
    }
};

QString text(const Said &s)
{
    return QStringLiteral("limit %1, used %2, remaining %3, %4")
        .arg(s.limit)
        .arg(s.used)
        .arg(s.remaining)
        .arg(s.denying ? QStringLiteral("denying") : QStringLiteral("admitting"));
}

Said said(qint64 limit, qint64 used, bool denying)
{
    return {limit, used, std::max<qint64>(0, limit - used), denying};
}

} // namespace

class TestConsistency : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_server.start();
        m_conn = std::make_unique<Connection>(m_server.options());
    }
    void init()
    {
        m_conn->command({"FLUSHALL"});
        const Reply t = m_conn->command({"TIME"});
        m_now = t[0].toInteger() * kSecond + t[1].toInteger();
    }

    void policyOnly();
    void policyAndOverride();
    void overrideOfAShardGroupsBase();
    void anInferredShardGroup();
    void aPinnedForeignLogWithAHugeScore();
    void aPolicyChangedByAnotherConnection();
    void aKeyThatExpired();
    void aCounterWindowTurningOver();

private:
    QStringList cli(const QStringList &a) const { return QStringList{QStringLiteral("--url"), m_server.url()} + a; }
    void setPolicy(Connection &c, const QString &name, const QByteArray &match, LimitSpec spec, int shards = 0,
                   ScoreUnit unit = ScoreUnit::Auto);
    void fill(const QByteArray &key, LimitSpec spec, int requests);
    // Every surface's word on `key` (the limiter `subject` it belongs to), compared with each
    // other and with what is expected.
    // listed false: a key that no longer exists, which the listings (keys, top, the Hot view,
    // the keys panel, the Reset preview) leave out while the one-key surfaces read it as empty.
    // stored: the key the console's one-key views open for it (a counter's current window),
    // when that is not `key` itself (the limiter, as the CLI and the listings name it).
    void everySurfaceSays(const QByteArray &key, const Said &expected, bool listed = true, const QByteArray &stored = {});

    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
    qint64 m_now = 0; // the server's clock when the test began: the explicit now of every read
};

void TestConsistency::setPolicy(Connection &c, const QString &name, const QByteArray &match, LimitSpec spec, int shards, ScoreUnit unit)
{
    PolicyStore store(c, kNs);
    const auto existing = store.get(name);
    Policy p = existing.value_or(Policy{});
    p.name = name;
    p.match = match;
    p.spec = spec;
    p.shards = shards;
    p.scoreUnit = unit;
    store.set(p, existing ? existing->version : 0, QStringLiteral("test"));
}

void TestConsistency::fill(const QByteArray &key, LimitSpec spec, int requests)
{
    Limiter limiter(*m_conn);
    spec.limit = std::max<qint64>(spec.limit, requests); // every request admitted, whatever the limit in force
    for (int i = 0; i < requests; ++i)
        QVERIFY(limiter.check(key, spec, m_now - 10 * kSecond + i).allowed);
}

void TestConsistency::everySurfaceSays(const QByteArray &limiter, const Said &expected, bool listed, const QByteArray &stored)
{
    const QByteArray &key = limiter;                             // what the CLI and the listings name
    const QByteArray &opened = stored.isEmpty() ? limiter : stored; // what the console's views open
    std::vector<std::pair<QString, Said>> surfaces;
    const QString now = QString::number(m_now);
    const QString shown = QString::fromUtf8(key);

    // ratescope-cli peek: used_now is what is used before the request it asks about.
    {
        const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("peek"), shown, QStringLiteral("--now-us"), now}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = jsonObjects(r.out).back();
        surfaces.emplace_back(QStringLiteral("cli peek"), said(o.value(QStringLiteral("limit")).toInteger(),
                                                               o.value(QStringLiteral("used_now")).toInteger(),
                                                               !o.value(QStringLiteral("allowed")).toBool()));
    }
    // ratescope-cli inspect
    {
        const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("inspect"), shown, QStringLiteral("--now-us"), now}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = jsonObjects(r.out).back();
        const QJsonObject d = o.value(QStringLiteral("decision")).toObject();
        surfaces.emplace_back(QStringLiteral("cli inspect"),
                              said(o.value(QStringLiteral("limits")).toObject().value(QStringLiteral("limit")).toInteger(),
                                   d.value(QStringLiteral("used_now")).toInteger(), !d.value(QStringLiteral("allowed")).toBool()));
    }
    // ratescope-cli keys (a shard is listed in its group's row: compared in the test)
    if (!key.startsWith("sh:")) {
        const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--now-us"), now}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        bool found = false;
        for (const QJsonObject &o : jsonObjects(r.out))
            if (o.value(QStringLiteral("key")).toString() == shown) {
                found = true;
                const qint64 limit = o.value(QStringLiteral("limit")).toInteger();
                const qint64 remaining = o.value(QStringLiteral("remaining")).toInteger();
                surfaces.emplace_back(QStringLiteral("cli keys"),
                                      Said{limit, o.value(QStringLiteral("used")).toInteger(), remaining, expected.denying});
            }
        QVERIFY2(found == listed, r.out.constData());
    }
    // ratescope-cli top (a snapshot at the same now)
    {
        const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("top"), QStringLiteral("--by"), QStringLiteral("fill"),
                                        QStringLiteral("--now-us"), now}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        bool found = false;
        for (const QJsonObject &o : jsonObjects(r.out))
            if (o.value(QStringLiteral("key")).toString() == shown) {
                found = true;
                surfaces.emplace_back(QStringLiteral("cli top"), said(o.value(QStringLiteral("limit")).toInteger(),
                                                                      o.value(QStringLiteral("used")).toInteger(),
                                                                      o.value(QStringLiteral("denying")).toBool()));
            }
        QVERIFY2(found == listed, r.out.constData());
    }
    // ratescope-cli watch, one reading (on the server's clock: the states are seconds old in
    // windows of a minute)
    {
        const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("watch"), shown, QStringLiteral("--count"), QStringLiteral("1")}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = jsonObjects(r.out).back();
        surfaces.emplace_back(QStringLiteral("cli watch"),
                              Said{o.value(QStringLiteral("limit")).toInteger(), o.value(QStringLiteral("used")).toInteger(),
                                   o.value(QStringLiteral("remaining")).toInteger(),
                                   o.value(QStringLiteral("retry_after_ms")).toInteger() > 0});
    }
    const std::vector<Policy> policies = PolicyStore(*m_conn, kNs).list();
    auto fromDetails = [](const KeyDetails &d) { return Said{d.limit(), d.used(), d.remaining(), !d.usage->decision.allowed}; };
    // The keys panel's rows (a key gone leaves the panel).
    {
        const KeyDetails d = readKeyDetails(*m_conn, {opened}, policies, kNs).front();
        QCOMPARE(d.exists(), listed);
        if (listed) {
            QVERIFY2(d.usage, qPrintable(d.problem));
            surfaces.emplace_back(QStringLiteral("keys panel"), fromDetails(d));
        }
    }
    // The Monitor: a pin classified, then one round at the same now.
    {
        const ui::PinClassification pinned = ui::classifyPins(*m_conn, {opened}, kNs.bytes());
        const KeyDetails &d = pinned.details.front();
        QVERIFY2(d.spec, opened.constData());
        const KeyKind kind = ui::pinKind(d);
        const ui::MonitorRound round = ui::readMonitorRound(*m_conn, {{kind.subject(opened), kind, *d.spec}}, m_now);
        QVERIFY2(round.usage.front(), qPrintable(round.problems.front()));
        const Usage &u = *round.usage.front();
        surfaces.emplace_back(QStringLiteral("monitor"), said(u.decision.limit, u.usedNow, !u.decision.allowed));
    }
    // The Hot view: its steps, a snapshot at the same now.
    {
        HotOptions o;
        o.policies = ui::readPolicies(*m_conn, kNs);
        o.nowUs = m_now;
        o.ns = kNs.bytes();
        HotScanner scanner(o);
        for (int step = 0; step < 1000 && !ui::hotScanStep(*m_conn, scanner, 10, {}).done; ++step) {
        }
        ui::hotFirstRead(*m_conn, scanner);
        const auto [found, pass] = ui::hotSecondRead(*m_conn, scanner, HotOrder::Fill, 1000);
        bool hotListed = false;
        for (const HotLimiter &l : pass.limiters)
            if (l.key == key) {
                hotListed = true;
                QVERIFY2(l.usage, key.constData());
                surfaces.emplace_back(QStringLiteral("hot view"), said(l.usage->decision.limit, l.usage->usedNow, l.denyingNow()));
            }
        QVERIFY2(hotListed == listed, qPrintable(QStringLiteral("%1 among the %2 found: %3").arg(shown).arg(found).arg(hotListed)));
    }
    // The key view.
    {
        const ui::KeyRead r = ui::readKey(*m_conn, opened, kNs.bytes(), m_now);
        const QJsonObject d = r.inspected.value(QStringLiteral("decision")).toObject();
        surfaces.emplace_back(QStringLiteral("key view"),
                              said(r.inspected.value(QStringLiteral("limits")).toObject().value(QStringLiteral("limit")).toInteger(),
                                   d.value(QStringLiteral("used_now")).toInteger(), !d.value(QStringLiteral("allowed")).toBool()));
    }
    // The Reset preview's rows.
    {
        ui::ResetProgress progress;
        const ui::DetailsOutcome out = ui::readResetDetails(*m_conn, kNs, {opened}, true, {}, progress);
        const KeyDetails &d = out.details.front();
        QCOMPARE(d.exists(), listed);
        if (listed) {
            QVERIFY2(d.usage, qPrintable(d.problem));
            surfaces.emplace_back(QStringLiteral("reset preview"), fromDetails(d));
        }
    }
    // The What-if prefill and the policy editor's "in force"; the Burst page's preflight
    // under those limits.
    {
        const EffectiveLimits e = ui::readLimitsInForceAt(*m_conn, kNs, key);
        QVERIFY(e.spec);
        QCOMPARE(e.spec->limit, expected.limit);
        if (!key.startsWith("sh:")) { // a shard's limits are its share: the burst fires at the group's
            // (Another service's log is refused, not read: a burst never writes into it.)
            const ui::BurstPreflight pre = ui::readBurstPreflight(*m_conn, kNs, opened, *e.spec);
            if (pre.refusal.isEmpty() && listed) {
                QVERIFY2(pre.details.usage, qPrintable(pre.details.problem));
                surfaces.emplace_back(QStringLiteral("burst preflight"), fromDetails(pre.details));
            } else if (pre.refusal.isEmpty()) {
                // Nothing there: the page's quota line starts from the whole limit.
                QVERIFY(!pre.details.exists());
                surfaces.emplace_back(QStringLiteral("burst preflight"), said(e.spec->limit, 0, false));
            }
        }
    }
    QStringList disagree;
    for (const auto &[surface, s] : surfaces)
        if (!(s == expected))
            disagree << QStringLiteral("%1 says %2").arg(surface, text(s));
    QVERIFY2(disagree.isEmpty(), qPrintable(QStringLiteral("on %1, expected %2: %3").arg(shown, text(expected), disagree.join(QStringLiteral("; ")))));
}

void TestConsistency::policyOnly()
{
    const LimitSpec api{Algorithm::SlidingLog, 20, 60 * kSecond, 1};
    setPolicy(*m_conn, QStringLiteral("api"), "api:*", api);
    fill("api:acme", api, 5);
    everySurfaceSays("api:acme", said(20, 5, false));
    fill("api:full", api, 20);
    everySurfaceSays("api:full", said(20, 20, true));
}

void TestConsistency::policyAndOverride()
{
    // 30 used: over the policy's 20, within the override's 100.
    const LimitSpec api{Algorithm::SlidingLog, 20, 60 * kSecond, 1};
    setPolicy(*m_conn, QStringLiteral("api"), "api:*", api);
    fill("api:globex", api, 30);
    Override o;
    o.key = "api:globex";
    o.limit = 100;
    OverrideStore(*m_conn, kNs).set(o, 3600 * kSecond, QStringLiteral("test"));
    everySurfaceSays("api:globex", said(100, 30, false));
    // A token bucket under an override of its limit alike: refilling over a day, so that the
    // surfaces reading on the server's clock (watch, key details) a moment later see the same.
    const LimitSpec upload{Algorithm::TokenBucket, 20, 86400 * kSecond, 1};
    setPolicy(*m_conn, QStringLiteral("upload"), "upload:*", upload);
    fill("upload:acme", upload, 40);
    o.key = "upload:acme";
    o.limit = 40;
    OverrideStore(*m_conn, kNs).set(o, 3600 * kSecond, QStringLiteral("test"));
    const KeyDetails d = readKeyDetails(*m_conn, {"upload:acme"}, PolicyStore(*m_conn, kNs).list(), kNs).front();
    QVERIFY(d.usage);
    QCOMPARE(d.limit(), 40);
    everySurfaceSays("upload:acme", said(40, d.used(), d.usage->decision.allowed == false));
}

void TestConsistency::overrideOfAShardGroupsBase()
{
    // sh:grp:0..3 share 40; the group's override makes it 80, 20 a shard.
    const LimitSpec sh{Algorithm::SlidingLog, 40, 60 * kSecond, 1};
    setPolicy(*m_conn, QStringLiteral("sh"), "sh:*", sh, 4);
    for (int i = 0; i < 4; ++i)
        fill("sh:grp:" + QByteArray::number(i), sh, 7);
    Override o;
    o.key = "sh:grp";
    o.limit = 80;
    OverrideStore(*m_conn, kNs).set(o, 3600 * kSecond, QStringLiteral("test"));
    everySurfaceSays("sh:grp:1", said(20, 7, false));
    // keys lists the group: its limit is the override's, used the shards' sum.
    const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--now-us"), QString::number(m_now)}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    bool found = false;
    for (const QJsonObject &row : jsonObjects(r.out))
        if (row.value(QStringLiteral("key")).toString() == QLatin1String("sh:grp")) {
            found = true;
            QCOMPARE(row.value(QStringLiteral("limit")).toInteger(), 80);
            QCOMPARE(row.value(QStringLiteral("used")).toInteger(), 28);
        }
    QVERIFY2(found, r.out.constData());
}

// sh:inf:0..3 under a policy of 10 that does not declare shards: nothing says the service
// shares the 10 out, so each shard has it whole, as a check of the shard's key is told, and
// the group's row sums the four (40). An override of the base names no key a check reads:
// it changes neither.
void TestConsistency::anInferredShardGroup()
{
    const LimitSpec each{Algorithm::SlidingLog, 10, 60 * kSecond, 1};
    setPolicy(*m_conn, QStringLiteral("inf"), "sh:inf:*", each);
    const int used[] = {7, 7, 3, 10};
    for (int i = 0; i < 4; ++i)
        fill("sh:inf:" + QByteArray::number(i), each, used[i]);
    Override o;
    o.key = "sh:inf";
    o.limit = 80;
    OverrideStore(*m_conn, kNs).set(o, 3600 * kSecond, QStringLiteral("test"));
    everySurfaceSays("sh:inf:1", said(10, 7, false));
    everySurfaceSays("sh:inf:3", said(10, 10, true));

    const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys"), QStringLiteral("--now-us"), QString::number(m_now)}));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    bool found = false;
    for (const QJsonObject &row : jsonObjects(r.out))
        if (row.value(QStringLiteral("key")).toString() == QLatin1String("sh:inf")) {
            found = true;
            QCOMPARE(row.value(QStringLiteral("shards")).toInt(), 4);
            QCOMPARE(row.value(QStringLiteral("limit")).toInteger(), 40);
            QCOMPARE(row.value(QStringLiteral("used")).toInteger(), 27);
            QCOMPARE(row.value(QStringLiteral("remaining")).toInteger(), 13);
        }
    QVERIFY2(found, r.out.constData());
    // inspect of the base and the console's key view of it: each shard against its key's 10.
    const CliResult inspect = runCli(cli({QStringLiteral("--json"), QStringLiteral("inspect"), QStringLiteral("sh:inf"),
                                          QStringLiteral("--now-us"), QString::number(m_now)}));
    QVERIFY2(inspect.exitCode == 0, inspect.err.constData());
    const QJsonObject sharded = jsonObjects(inspect.out).back().value(QStringLiteral("sharded")).toObject();
    QCOMPARE(sharded.value(QStringLiteral("declared")).toBool(), false);
    QCOMPARE(sharded.value(QStringLiteral("overridden")).toBool(), false);
    QCOMPARE(sharded.value(QStringLiteral("limit")).toInteger(), 40);
    const QJsonArray shards = sharded.value(QStringLiteral("shards")).toArray();
    QCOMPARE(shards.size(), 4);
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(shards[i].toObject().value(QStringLiteral("limit")).toInteger(), 10);
        QCOMPARE(shards[i].toObject().value(QStringLiteral("used")).toInteger(), used[i]);
    }
    const ui::KeyRead view = ui::readKey(*m_conn, "sh:inf", kNs.bytes(), m_now);
    QVERIFY(view.shards);
    QCOMPARE(view.shards->sum.limit, 40);
    for (int i = 0; i < 4; ++i) {
        QVERIFY(view.shards->usage[size_t(i)]);
        QCOMPARE(view.shards->usage[size_t(i)]->decision.limit, 10);
    }
}

void TestConsistency::aPinnedForeignLogWithAHugeScore()
{
    // Another service's log in milliseconds, one entry pinned at 1e300: counted alike by all,
    // read without overflow (the sanitizer run checks the conversions).
    setPolicy(*m_conn, QStringLiteral("partner"), "partner:*", {Algorithm::SlidingLog, 10, 60 * kSecond, 1}, 0, ScoreUnit::Milliseconds);
    const qint64 ms = m_now / 1000;
    m_conn->command({"ZADD", "partner:x", QByteArray::number(ms - 3000), "a", QByteArray::number(ms - 2000), "b",
                     QByteArray::number(ms - 1000), "c", "1e300", "pinned"});
    const KeyDetails d = readKeyDetails(*m_conn, {"partner:x"}, PolicyStore(*m_conn, kNs).list(), kNs).front();
    QVERIFY2(d.usage, qPrintable(d.problem));
    QCOMPARE(d.limit(), 10);
    everySurfaceSays("partner:x", said(10, d.used(), !d.usage->decision.allowed));
}

void TestConsistency::aPolicyChangedByAnotherConnection()
{
    const LimitSpec api{Algorithm::SlidingLog, 60, 60 * kSecond, 1};
    setPolicy(*m_conn, QStringLiteral("api"), "api:*", api);
    fill("api:acme", api, 25);
    everySurfaceSays("api:acme", said(60, 25, false));
    // Someone else lowers it: every surface says so at once.
    Connection other(m_server.options());
    setPolicy(other, QStringLiteral("api"), "api:*", {Algorithm::SlidingLog, 20, 60 * kSecond, 1});
    everySurfaceSays("api:acme", said(20, 25, true));
}

void TestConsistency::aKeyThatExpired()
{
    // Its window passed with no request and its TTL removed it (DEL leaves the same state
    // without a wait): every one-key surface reads the policy's limit with nothing used, and
    // the listings leave it out.
    const LimitSpec api{Algorithm::SlidingLog, 20, 60 * kSecond, 1};
    setPolicy(*m_conn, QStringLiteral("api"), "api:*", api);
    fill("api:here", api, 3);
    fill("api:gone", api, 5);
    m_conn->command({"DEL", "api:gone"});
    everySurfaceSays("api:gone", said(20, 0, false), false);
    everySurfaceSays("api:here", said(20, 3, false));
}

void TestConsistency::aCounterWindowTurningOver()
{
    // Another service's counters, a key per 3-hour window (<base>:<epoch seconds / 10800>): the
    // window turned a moment ago, the previous one holds 8 and the new one 3. Under a fixed
    // window of 10 the limiter has used 3, whether asked by its base (the CLI, the listings)
    // or by the window key the console's views open.
    constexpr qint64 window = 10800;
    const qint64 seconds = m_now / kSecond;
    if (seconds % window > window - 60)
        QSKIP("a 3-hour window ends within the minute: its reads could straddle the boundary");
    const QByteArray current = "cw:acme:" + QByteArray::number(seconds / window);
    m_conn->command({"SET", "cw:acme:" + QByteArray::number(seconds / window - 1), "8", "EX", "30000"});
    m_conn->command({"SET", current, "3", "EX", "30000"});
    setPolicy(*m_conn, QStringLiteral("cw"), "cw:*", {Algorithm::FixedWindow, 10, window * kSecond, 1});
    everySurfaceSays("cw:acme", said(10, 3, false), true, current);
}

QTEST_GUILESS_MAIN(TestConsistency)
#include "tst_consistency.moc"
