// Administration against a real server: policy precedence and versioned edits, overrides
// that expire, resets that delete exactly their preview, read-only mode and a read-only ACL
// user, and one audit entry per mutation.
#include "admin/audit.h"
#include "redis/connection.h"
#include "base/errors.h"
#include "base/glob.h"
#include "admin/policy.h"
#include "keys/reset.h"
#include "limiters/limiter.h"
#include "testsupport.h"

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QThread>

#include <atomic>
#include <thread>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;
const QString kNs = QStringLiteral("ratescope:");

Policy makePolicy(const QString &name, const QByteArray &match, qint64 limit)
{
    Policy p;
    p.name = name;
    p.match = match;
    p.spec = {Algorithm::SlidingLog, limit, 60 * kSecond, 1};
    return p;
}

} // namespace

class TestAdmin : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void globSemantics_data();
    void globSemantics();
    void globTimeIsBoundedOnHostilePatterns();
    void policyPrecedence();
    void policyValidation();
    void staleVersionIsRejected();
    void policyChangesArePublished();
    void overridesApplyAndExpire();
    void resetDeletesExactlyThePreview();
    void globCharactersInKeysAreLiteral();
    void patternResetSparesMetadata();
    void counterBaseResetTakesItsWindows();
    void resetNeedsConsent();
    void readOnlyModeRefusesMutations();
    void readOnlyAclUser();
    void everyMutationLeavesItsAuditEntry();

private:
    ConnectionOptions as(const char *user, const char *password) const
    {
        ConnectionOptions o = m_server->options();
        o.user = QString::fromLatin1(user);
        o.password = QString::fromLatin1(password);
        return o;
    }
    QStringList cli(const QStringList &args, const char *user = "admin", const char *password = "adminpw") const
    {
        return QStringList{QStringLiteral("--url"), as(user, password).toUrl(true)} + args;
    }
    qint64 auditLength() { return m_conn->command({"XLEN", "ratescope:audit"}).integer(); }
    QByteArray snapshot() { return keyspaceSnapshot(*m_conn); }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestAdmin::initTestCase()
{
    m_server = std::make_unique<SandboxServer>(aclConfig());
    m_server->start();
    m_conn = std::make_unique<Connection>(as("admin", "adminpw"));
}

void TestAdmin::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestAdmin::globSemantics_data()
{
    QTest::addColumn<QByteArray>("pattern");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("matches");
    QTest::newRow("star") << QByteArray("api:*") << QByteArray("api:user:1") << true;
    QTest::newRow("star crosses slashes") << QByteArray("a*") << QByteArray("a/b/c") << true;
    QTest::newRow("question") << QByteArray("u?") << QByteArray("u1") << true;
    QTest::newRow("question needs one") << QByteArray("u?") << QByteArray("u") << false;
    QTest::newRow("class") << QByteArray("k[abc]") << QByteArray("kb") << true;
    QTest::newRow("negated class") << QByteArray("k[^abc]") << QByteArray("kb") << false;
    QTest::newRow("range") << QByteArray("k[0-9]") << QByteArray("k7") << true;
    QTest::newRow("escaped star") << QByteArray("a\\*") << QByteArray("a*") << true;
    QTest::newRow("escaped star literal only") << QByteArray("a\\*") << QByteArray("ab") << false;
    QTest::newRow("literal") << QByteArray("exact") << QByteArray("exact") << true;
    QTest::newRow("literal prefix") << QByteArray("exact") << QByteArray("exactly") << false;
    QTest::newRow("star takes more") << QByteArray("*a*b") << QByteArray("xaxaxb") << true;
    QTest::newRow("last star takes more") << QByteArray("a*b*c") << QByteArray("abcbcbc") << true;
    QTest::newRow("stars around a class") << QByteArray("*[0-9]*x") << QByteArray("ab12y3x") << true;
    QTest::newRow("no tail after stars") << QByteArray("*a*a*b") << QByteArray("aaaaaa") << false;
    QTest::newRow("escaped class in star") << QByteArray("*\\[x*") << QByteArray("ab[xy") << true;
    QTest::newRow("question after star") << QByteArray("*?c") << QByteArray("abc") << true;
    QTest::newRow("question after star needs one") << QByteArray("*?c") << QByteArray("c") << false;
}

void TestAdmin::globSemantics()
{
    QFETCH(QByteArray, pattern);
    QFETCH(QByteArray, text);
    QFETCH(bool, matches);
    QCOMPARE(globMatch(pattern, text), matches);
    // The same as Redis's own matcher.
    m_conn->command({"SET", text, "1"});
    const Reply r = m_conn->command({"SCAN", "0", "MATCH", pattern, "COUNT", "1000"});
    QCOMPARE(r[1].size() == 1, matches);
    QVERIFY(globMatch(escapeGlob(text), text));
}

void TestAdmin::globTimeIsBoundedOnHostilePatterns()
{
    // Patterns that make a matcher recursing at every '*' take exponential time: each must
    // answer (O(pattern x key)) on a 64 KiB key, the same as Redis's own matcher does.
    const QByteArray key = "dos:" + QByteArray(64 * 1024, 'a');
    QByteArray manyStars = "dos:";
    for (int i = 0; i < 18; ++i)
        manyStars += "*a";
    const QByteArray patterns[] = {manyStars + "*b", manyStars + "b", QByteArray("*a").repeated(200) + "*b",
                                   QByteArray("*?").repeated(100) + "b", QByteArray("*[a-z]").repeated(100) + "[0-9]"};
    m_conn->command({"SET", key, "1"});
    for (const QByteArray &pattern : patterns) {
        QVERIFY2(!globMatch(pattern, key), pattern.left(40).constData());
        QVERIFY(globMatch(pattern.chopped(pattern.endsWith("]") ? 5 : 1) + "a", key));
        const Reply r = m_conn->command({"SCAN", "0", "MATCH", pattern, "COUNT", "1000"});
        QCOMPARE(r[1].size(), size_t(0));
    }
}

void TestAdmin::policyPrecedence()
{
    const std::vector<Policy> policies = {
        makePolicy(QStringLiteral("all-api"), "api:*", 100), makePolicy(QStringLiteral("users"), "api:user:*", 50),
        makePolicy(QStringLiteral("vip"), "api:user:42", 500), makePolicy(QStringLiteral("short"), "api:u*", 75)};
    QCOMPARE(matchPolicy(policies, "api:user:42")->name, QStringLiteral("vip"));  // exact beats every glob
    QCOMPARE(matchPolicy(policies, "api:user:7")->name, QStringLiteral("users")); // longest glob
    QCOMPARE(matchPolicy(policies, "api:usage")->name, QStringLiteral("short"));
    QCOMPARE(matchPolicy(policies, "api:orders")->name, QStringLiteral("all-api"));
    QVERIFY(!matchPolicy(policies, "web:home"));
    // Through the store, and with an override on top.
    PolicyStore store(*m_conn, kNs);
    for (const Policy &p : policies)
        store.set(p, 0, QStringLiteral("test"));
    const EffectiveLimits e = effectiveLimits(store.list(), Override{"api:user:7", 999, 0, {}, {}, {}}, "api:user:7");
    QCOMPARE(e.policy->name, QStringLiteral("users"));
    QCOMPARE(e.spec->limit, 999);
    QCOMPARE(e.spec->windowUs, 60 * kSecond);
}

void TestAdmin::policyValidation()
{
    PolicyStore store(*m_conn, kNs);
    Policy bad = makePolicy(QStringLiteral("bad"), "x:*", 0);
    QVERIFY_THROWS_EXCEPTION(UsageError, store.set(bad, 0, QStringLiteral("t")));
    bad = makePolicy(QString(), "x:*", 5);
    QVERIFY_THROWS_EXCEPTION(UsageError, store.set(bad, 0, QStringLiteral("t")));
    bad = makePolicy(QStringLiteral("nomatch"), QByteArray(), 5);
    QVERIFY_THROWS_EXCEPTION(UsageError, store.set(bad, 0, QStringLiteral("t")));
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 0);
    const CliResult r = runCli(cli({QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("p"), QStringLiteral("--match"),
                                    QStringLiteral("x:*"), QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"),
                                    QStringLiteral("5"), QStringLiteral("--window"), QStringLiteral("0")}));
    QCOMPARE(r.exitCode, 2);
    QCOMPARE(m_conn->command({"DBSIZE"}).integer(), 0);
}

void TestAdmin::staleVersionIsRejected()
{
    Connection aliceConn(as("admin", "adminpw")), bobConn(as("admin", "adminpw"));
    PolicyStore alice(aliceConn, kNs), bob(bobConn, kNs);
    alice.set(makePolicy(QStringLiteral("api"), "api:*", 100), 0, QStringLiteral("alice"));
    // Both open the editor on version 1.
    Policy a = *alice.get(QStringLiteral("api"));
    Policy b = *bob.get(QStringLiteral("api"));
    QCOMPARE(a.version, 1);
    a.spec.limit = 200;
    QCOMPARE(alice.set(a, a.version, QStringLiteral("alice")).version, 2);
    b.spec.limit = 50;
    try {
        bob.set(b, b.version, QStringLiteral("bob"));
        QFAIL("a stale edit overwrote a newer one");
    } catch (const ConflictError &e) {
        QVERIFY2(e.message().contains(QStringLiteral("changed by alice at")), qPrintable(e.message()));
        QVERIFY2(e.message().contains(QStringLiteral("version 2")), qPrintable(e.message()));
    }
    QCOMPARE(bob.get(QStringLiteral("api"))->spec.limit, 200); // alice's edit stands
    // Creating what exists, deleting from a stale version: refused too.
    QVERIFY_THROWS_EXCEPTION(ConflictError, bob.set(b, 0, QStringLiteral("bob")));
    QVERIFY_THROWS_EXCEPTION(ConflictError, bob.remove(QStringLiteral("api"), 1, QStringLiteral("bob")));
    // After reloading, bob's edit goes through.
    b = *bob.get(QStringLiteral("api"));
    b.spec.limit = 50;
    QCOMPARE(bob.set(b, b.version, QStringLiteral("bob")).version, 3);

    // Concurrent editors racing on one version: exactly one wins each round.
    std::atomic<int> wins{0}, conflicts{0};
    std::vector<std::thread> editors;
    for (int t = 0; t < 4; ++t)
        editors.emplace_back([&, t] {
            Connection c(as("admin", "adminpw"));
            PolicyStore s(c, kNs);
            Policy p = *s.get(QStringLiteral("api"));
            p.spec.limit = 1000 + t;
            try {
                s.set(p, 3, QStringLiteral("editor%1").arg(t));
                ++wins;
            } catch (const ConflictError &) {
                ++conflicts;
            }
        });
    for (auto &e : editors)
        e.join();
    QCOMPARE(wins.load(), 1);
    QCOMPARE(conflicts.load(), 3);
    QCOMPARE(alice.get(QStringLiteral("api"))->version, 4);

    // The CLI reports the conflict (exit 6, its own code) and changes nothing.
    const CliResult r = runCli(
        cli({QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("api"), QStringLiteral("--match"), QStringLiteral("api:*"),
             QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("5"), QStringLiteral("--window"),
             QStringLiteral("1s"), QStringLiteral("--based-on"), QStringLiteral("2")}));
    QCOMPARE(r.exitCode, 6);
    QVERIFY2(r.err.contains("was changed by"), r.err.constData());
    QCOMPARE(alice.get(QStringLiteral("api"))->version, 4);
}

void TestAdmin::policyChangesArePublished()
{
    Connection subscriber(as("admin", "adminpw"));
    subscriber.send(Command{"SUBSCRIBE", "ratescope:events"});
    QCOMPARE(subscriber.receive()[0].bytes(), QByteArray("subscribe"));
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("api"), "api:*", 10), 0, QStringLiteral("alice"));
    const Reply message = subscriber.receive();
    QCOMPARE(message[0].bytes(), QByteArray("message"));
    const QJsonObject event = QJsonDocument::fromJson(message[2].bytes()).object();
    QCOMPARE(event.value(QStringLiteral("type")).toString(), QStringLiteral("policy.set"));
    QCOMPARE(event.value(QStringLiteral("name")).toString(), QStringLiteral("api"));
    QCOMPARE(event.value(QStringLiteral("version")).toInt(), 1);
}

void TestAdmin::overridesApplyAndExpire()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("api"), "api:*", 10), 0, QStringLiteral("t"));
    OverrideStore overrides(*m_conn, kNs);
    QVERIFY(!overrides.set({"api:cust1", 20, 0, {}, {}, {}}, 300000, QStringLiteral("support")));
    const auto o = overrides.get("api:cust1");
    QVERIFY(o);
    QCOMPARE(o->limit, 20);
    QCOMPARE(o->setBy, QStringLiteral("support"));
    const qint64 pttl = m_conn->command({"PTTL", overrides.storageKey("api:cust1")}).integer();
    QVERIFY2(pttl > 0 && pttl <= 300, qPrintable(QString::number(pttl)));
    QCOMPARE(effectiveLimits(PolicyStore(*m_conn, kNs).list(), overrides.get("api:cust1"), "api:cust1").spec->limit, 20);
    QCOMPARE(overrides.list().size(), size_t(1));
    // It expires by itself (Redis' expiry; bounded wait, no fixed sleep).
    const QDeadlineTimer deadline(10000);
    while (overrides.get("api:cust1") && !deadline.hasExpired())
        QThread::msleep(20);
    QVERIFY(!overrides.get("api:cust1"));
    QCOMPARE(effectiveLimits(PolicyStore(*m_conn, kNs).list(), overrides.get("api:cust1"), "api:cust1").spec->limit, 10);
    // Validation happens before writing.
    QVERIFY_THROWS_EXCEPTION(UsageError, overrides.set({"api:x", 0, 0, {}, {}, {}}, kSecond, QStringLiteral("t")));
    QVERIFY_THROWS_EXCEPTION(UsageError, overrides.set({"api:x", 5, 0, {}, {}, {}}, 0, QStringLiteral("t")));
    QVERIFY(!overrides.get("api:x"));
}

void TestAdmin::resetDeletesExactlyThePreview()
{
    std::vector<Command> writes;
    for (int i = 0; i < 2000; ++i)
        writes.push_back({"SET", "tenant:a:" + QByteArray::number(i), "1"});
    m_conn->pipeline(writes);
    // Another client keeps creating matching keys during preview and deletion.
    std::atomic<bool> stop{false};
    std::atomic<int> created{0};
    std::thread writer([&] {
        Connection c(as("admin", "adminpw"));
        for (int i = 0; i < 100000 && !stop; ++i) {
            c.command({"SET", "tenant:a:new:" + QByteArray::number(i), "1"});
            ++created;
        }
    });
    Resetter resetter(*m_conn, kNs);
    const ResetPlan plan = resetter.planPattern("tenant:a:*");
    const QDeadlineTimer deadline(10000);
    while (created < plan.keys.size() / 10 + 50 && !deadline.hasExpired())
        QThread::msleep(1); // make sure new keys appear between preview and deletion
    const qint64 deleted = resetter.execute(plan);
    stop = true;
    writer.join();

    QCOMPARE(deleted, qint64(plan.keys.size()));
    QVERIFY(plan.keys.size() >= 2000);
    QSet<QByteArray> planned(plan.keys.begin(), plan.keys.end());
    // Every key that still matches was not in the preview; every planned key is gone.
    const Reply left = m_conn->command({"KEYS", "tenant:a:*"});
    for (const Reply &k : left.elements())
        QVERIFY2(!planned.contains(k.bytes()), k.bytes().constData());
    QCOMPARE(qint64(left.size()) + qint64(plan.keys.size()), qint64(2000) + created.load());
}

void TestAdmin::globCharactersInKeysAreLiteral()
{
    for (const char *k : {"a*", "a?", "a[1]", "ab", "a1", "a\\x"})
        m_conn->command({"SET", k, "1"});
    for (const char *k : {"a*", "a?", "a[1]", "a\\x"}) {
        const CliResult r = runCli(cli({QStringLiteral("reset"), QString::fromLatin1(k), QStringLiteral("--yes")}));
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("deleted 1 key"), r.out.constData());
        QCOMPARE(m_conn->command({"EXISTS", k}).integer(), 0);
    }
    QCOMPARE(m_conn->command({"EXISTS", "ab", "a1"}).integer(), 2);
}

void TestAdmin::patternResetSparesMetadata()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("api"), "api:*", 10), 0, QStringLiteral("t"));
    QVERIFY(Limiter(*m_conn).check("api:1", LimitSpec{Algorithm::FixedWindow, 10, 60000000, 1}).allowed);
    CliResult r = runCli(
        cli({QStringLiteral("--json"), QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("*"), QStringLiteral("--yes")}));
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("deleted")).toInt(), 1);
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 1);
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:audit"}).integer(), 1);
    // Named explicitly, metadata goes too, but only with --include-metadata.
    r = runCli(cli({QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("ratescope:pol*"), QStringLiteral("--yes")}));
    QCOMPARE(r.exitCode, 2);
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 1);
    r = runCli(cli({QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("ratescope:pol*"), QStringLiteral("--yes"),
                    QStringLiteral("--include-metadata")}));
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 0);
}

void TestAdmin::counterBaseResetTakesItsWindows()
{
    for (const char *k : {"rl:bob:29000000", "rl:bob:29000001", "rl:bobby:29000001", "rl:bob:x"})
        m_conn->command({"SET", k, "3"});
    const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("reset"), QStringLiteral("rl:bob"), QStringLiteral("--yes")}));
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("deleted")).toInt(), 2);
    QCOMPARE(m_conn->command({"EXISTS", "rl:bobby:29000001", "rl:bob:x"}).integer(), 2);
}

void TestAdmin::resetNeedsConsent()
{
    QVERIFY(Limiter(*m_conn).check("k1", LimitSpec{Algorithm::Gcra, 10, 60000000, 1}).allowed);
    const qint64 audits = auditLength();
    CliResult r = runCli(cli({QStringLiteral("reset"), QStringLiteral("k1")})); // stdin is no terminal
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("--yes"));
    r = runCli(cli({QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("k*"), QStringLiteral("--dry-run")}));
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("1 key would be deleted"));
    QCOMPARE(m_conn->command({"EXISTS", "k1"}).integer(), 1);
    QCOMPARE(auditLength(), audits);
    r = runCli(cli({QStringLiteral("reset"), QStringLiteral("k1"), QStringLiteral("--match"), QStringLiteral("k*")}));
    QCOMPARE(r.exitCode, 2);
}

void TestAdmin::readOnlyModeRefusesMutations()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("api"), "api:*", 10), 0, QStringLiteral("t"));
    m_conn->command({"SET", "api:1", "1"});
    const QByteArray before = snapshot();
    const QString ro = QStringLiteral("--read-only");
    const QList<QStringList> mutations = {
        {ro, QStringLiteral("reset"), QStringLiteral("api:1"), QStringLiteral("--yes")},
        {ro, QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("*"), QStringLiteral("--yes")},
        {ro, QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("p2"), QStringLiteral("--match"), QStringLiteral("x"),
         QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("1"), QStringLiteral("--window"),
         QStringLiteral("1s")},
        {ro, QStringLiteral("policy"), QStringLiteral("delete"), QStringLiteral("api")},
        {ro, QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("api:1"), QStringLiteral("--limit"), QStringLiteral("5"),
         QStringLiteral("--for"), QStringLiteral("1h")},
        {ro, QStringLiteral("override"), QStringLiteral("clear"), QStringLiteral("api:1")},
        {ro, QStringLiteral("check"), QStringLiteral("api:1"), QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"),
         QStringLiteral("1"), QStringLiteral("--window"), QStringLiteral("1s")},
    };
    for (const QStringList &m : mutations) {
        const CliResult r = runCli(cli(m));
        QVERIFY2(r.exitCode == 5, qPrintable(m.join(QLatin1Char(' ')) + QStringLiteral(" -> ") + QString::number(r.exitCode)));
        QVERIFY(r.err.contains("read-only"));
    }
    QCOMPARE(snapshot(), before);
    // Reading still works in read-only mode.
    for (const QStringList &q :
         QList<QStringList>{{ro, QStringLiteral("keys")},
                            {ro, QStringLiteral("policy"), QStringLiteral("list")},
                            {ro, QStringLiteral("audit")},
                            {ro, QStringLiteral("inspect"), QStringLiteral("api:1")},
                            {ro, QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("*"), QStringLiteral("--dry-run")}})
        QCOMPARE(runCli(cli(q)).exitCode, 0);
    QCOMPARE(snapshot(), before);
}

void TestAdmin::readOnlyAclUser()
{
    PolicyStore(*m_conn, kNs).set(makePolicy(QStringLiteral("api"), "api:*", 10), 0, QStringLiteral("t"));
    runCli(cli({QStringLiteral("check"), QStringLiteral("api:1")}));
    const QByteArray before = snapshot();
    // Inspection as the reader: all of it works.
    for (const QStringList &q :
         QList<QStringList>{{QStringLiteral("keys")},
                            {QStringLiteral("--json"), QStringLiteral("peek"), QStringLiteral("api:1")},
                            {QStringLiteral("inspect"), QStringLiteral("api:1")},
                            {QStringLiteral("policy"), QStringLiteral("list")},
                            {QStringLiteral("audit")},
                            {QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("api:*"), QStringLiteral("--dry-run")}}) {
        const CliResult r = runCli(cli(q, "reader", "readerpw"));
        QVERIFY2(r.exitCode == 0, qPrintable(q.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromUtf8(r.err)));
    }
    const CliResult keys = runCli(cli({QStringLiteral("--json"), QStringLiteral("keys")}, "reader", "readerpw"));
    QVERIFY(keys.out.contains("\"used\":1"));
    // Mutations as the reader: refused by the server, with its words, nothing changed.
    for (const QStringList &m :
         QList<QStringList>{{QStringLiteral("reset"), QStringLiteral("api:1"), QStringLiteral("--yes")},
                            {QStringLiteral("check"), QStringLiteral("api:1")},
                            {QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("api:1"), QStringLiteral("--limit"),
                             QStringLiteral("5"), QStringLiteral("--for"), QStringLiteral("1h")}}) {
        const CliResult r = runCli(cli(m, "reader", "readerpw"));
        QVERIFY2(r.exitCode == 4, qPrintable(m.join(QLatin1Char(' ')) + QStringLiteral(" -> ") + QString::number(r.exitCode)));
        QVERIFY2(r.err.contains("NOPERM"), r.err.constData());
    }
    QCOMPARE(snapshot(), before);
}

void TestAdmin::everyMutationLeavesItsAuditEntry()
{
    for (const char *k : {"api:1", "api:2"})
        QVERIFY(Limiter(*m_conn).check(k, LimitSpec{Algorithm::Gcra, 10, 60000000, 1}).allowed);
    const QString op = QStringLiteral("--operator");
    const QList<std::pair<QStringList, QString>> steps = {
        {{op, QStringLiteral("Dana"), QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("api"), QStringLiteral("--match"),
          QStringLiteral("api:*"), QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("5"),
          QStringLiteral("--window"), QStringLiteral("1m")},
         QStringLiteral("policy.set")},
        {{op, QStringLiteral("Dana"), QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("api:1"), QStringLiteral("--limit"),
          QStringLiteral("10"), QStringLiteral("--for"), QStringLiteral("2h")},
         QStringLiteral("override.set")},
        {{op, QStringLiteral("Dana"), QStringLiteral("override"), QStringLiteral("clear"), QStringLiteral("api:1")},
         QStringLiteral("override.clear")},
        {{op, QStringLiteral("Dana"), QStringLiteral("reset"), QStringLiteral("api:1"), QStringLiteral("--yes")}, QStringLiteral("reset")},
        {{op, QStringLiteral("Dana"), QStringLiteral("reset"), QStringLiteral("--match"), QStringLiteral("api:*"), QStringLiteral("--yes")},
         QStringLiteral("reset")},
        {{op, QStringLiteral("Dana"), QStringLiteral("policy"), QStringLiteral("delete"), QStringLiteral("api")},
         QStringLiteral("policy.delete")},
    };
    for (const auto &[args, action] : steps) {
        const qint64 before = auditLength();
        const CliResult r = runCli(cli(args));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        // A reset records its intent before deleting, then its outcome.
        QCOMPARE(auditLength(), before + (action == QLatin1String("reset") ? 2 : 1));
        const AuditEntry newest = AuditLog(*m_conn, kNs).list(1).front();
        QCOMPARE(newest.action, action);
        QCOMPARE(newest.actor, QStringLiteral("Dana"));
        QVERIFY(!newest.osUser.isEmpty());
        QVERIFY(!newest.host.isEmpty());
        QCOMPARE(newest.version, QStringLiteral(RATESCOPE_VERSION)); // the release that wrote it
    }
    // Listed newest first, through the CLI.
    const CliResult r = runCli(cli({QStringLiteral("--json"), QStringLiteral("audit"), QStringLiteral("--max"), QStringLiteral("2")}));
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    QCOMPARE(QJsonDocument::fromJson(lines[0]).object().value(QStringLiteral("action")).toString(), QStringLiteral("policy.delete"));
    QCOMPARE(QJsonDocument::fromJson(lines[0]).object().value(QStringLiteral("version")).toString(), QStringLiteral(RATESCOPE_VERSION));
    QCOMPARE(QJsonDocument::fromJson(lines[1]).object().value(QStringLiteral("count")).toInt(), 1); // the pattern reset found api:2
    // The password appears in no audit entry.
    QVERIFY(!m_conn->command({"XRANGE", "ratescope:audit", "-", "+"}).debugString().contains(QStringLiteral("adminpw")));
}

QTEST_GUILESS_MAIN(TestAdmin)
#include "tst_admin.moc"
