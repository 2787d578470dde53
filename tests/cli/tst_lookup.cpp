// The support desk: one customer's limiters found by an identifier as a whole key segment
// (core/keys/lookup.h), listed by `ratescope-cli lookup` with the values `peek` gives for each,
// reset and granted an override by `--lookup` (exactly those, no other key), every change
// carrying its --reason in the audit, and a namespace that requires a reason refusing changes
// without one before anything is written. Real servers (one, and a cluster); an explicit now.
#include "admin/audit.h"
#include "admin/policy.h"
#include "base/glob.h"
#include "base/keytext.h"
#include "keys/lookup.h"
#include "keys/keyscanner.h"
#include "redis/connection.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QJsonObject>
#include <QTest>

#include <map>
#include <set>

using namespace ratescope;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;

Policy policy(const QString &name, const QByteArray &match, Algorithm a, qint64 limit, qint64 windowUs, int shards = 0)
{
    Policy p;
    p.name = name;
    p.match = match;
    p.spec = {a, limit, windowUs, 1};
    p.shards = shards;
    return p;
}

} // namespace

class TestLookup : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_server.start();
        m_conn = std::make_unique<Connection>(m_server.options());
    }
    // Each test reads at one now: the server's clock when it starts (so that the commands that
    // read the clock themselves, reset and override, recognise the same counter windows).
    void init()
    {
        m_conn->command({"FLUSHALL"});
        kNow = serverTimeUs(*m_conn);
        kNowS = kNow / kSecond;
        kNowArg = QString::number(kNow);
    }

    void segments_data();
    void segments();
    void listsEveryFormatWithPeeksValues();
    void resetAndGrantTouchExactlyTheListed();
    void reasonsAreRequiredWhenTheNamespaceSaysSo();
    void auditFiltersByReason();
    void findsKeysOnEveryMaster();

private:
    QString url() const { return m_server.url(); }
    void setPolicy(const Policy &p) { PolicyStore(*m_conn, QStringLiteral("ratescope:")).set(p, 0, QStringLiteral("test")); }
    // `check` n times at the fixed now (a request each).
    void check(const QByteArray &key, int n)
    {
        for (int i = 0; i < n; ++i) {
            const CliResult r = runCli({QStringLiteral("--url"), url(), QStringLiteral("check"), QString::fromUtf8(key),
                                        QStringLiteral("--now-us"), kNowArg});
            QVERIFY2(r.exitCode == 0, r.err.constData());
        }
    }
    // The customer "acme" across formats, and keys that are not theirs or no limiter.
    void seedCustomer();
    std::map<QString, QJsonObject> lookupRows(const QString &id, const QStringList &extra = {});

    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
    qint64 kNow = 0, kNowS = 0;
    QString kNowArg;
};

void TestLookup::segments_data()
{
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("id");
    QTest::addColumn<bool>("holds");
    const QByteArray acme = "acme";
    // Whole segments, with every separator, at the start, the end and inside hash tags.
    for (const char sep : QByteArray(":/{}|.,;=@-_ ")) {
        QTest::addRow("sep %c inside", sep) << (QByteArray("api") + sep + "acme" + sep + "x") << acme << true;
        QTest::addRow("sep %c at the end", sep) << (QByteArray("api") + sep + "acme") << acme << true;
        QTest::addRow("sep %c at the start", sep) << (QByteArray("acme") + sep + "api") << acme << true;
    }
    QTest::newRow("the whole key") << QByteArray("acme") << acme << true;
    QTest::newRow("hash tag") << QByteArray("rl:{acme}:3") << acme << true;
    QTest::newRow("hash tag alone") << QByteArray("{acme}") << acme << true;
    QTest::newRow("path") << QByteArray("login:acme:/search") << acme << true;
    QTest::newRow("library prefix") << QByteArray("rlflx:acme") << acme << true;
    QTest::newRow("second occurrence whole") << QByteArray("acmecorp:acme") << acme << true;
    // Not whole segments.
    QTest::newRow("longer") << QByteArray("api:acmecorp") << acme << false;
    QTest::newRow("prefixed") << QByteArray("api:xacme") << acme << false;
    QTest::newRow("inside a word") << QByteArray("api:xacmex") << acme << false;
    QTest::newRow("case differs") << QByteArray("api:ACME") << acme << false;
    QTest::newRow("digits after") << QByteArray("api:acme1") << acme << false;
    QTest::newRow("not there") << QByteArray("api:globex") << acme << false;
    QTest::newRow("empty key") << QByteArray() << acme << false;
    QTest::newRow("empty id") << QByteArray("api:acme") << QByteArray() << false;
    // Bytes, and glob characters taken literally.
    QTest::newRow("binary around") << QByteArray("u:\xff:acme:\x00", 10) << acme << true;
    QTest::newRow("binary id") << QByteArray("u:\xff\xfe:x", 6) << QByteArray("\xff\xfe") << true;
    QTest::newRow("glob star literal") << QByteArray("api:a*b:x") << QByteArray("a*b") << true;
    QTest::newRow("glob star is no wildcard") << QByteArray("api:axxb:x") << QByteArray("a*b") << false;
    QTest::newRow("brackets literal") << QByteArray("api:[x]") << QByteArray("[x]") << true;
    QTest::newRow("brackets are no class") << QByteArray("api:x") << QByteArray("[x]") << false;
    QTest::newRow("id with a separator") << QByteArray("api:acme-eu:1") << QByteArray("acme-eu") << true;
    QTest::newRow("id with a separator, longer key") << QByteArray("api:acme-eu2:1") << QByteArray("acme-eu") << false;
}

void TestLookup::segments()
{
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, id);
    QFETCH(bool, holds);
    QCOMPARE(keyHoldsSegment(key, id), holds);
    if (!id.isEmpty()) // the server's coarse filter finds every key the exact test keeps
        QVERIFY(!holds || globMatch(lookupScanPattern(id), key));
}

void TestLookup::seedCustomer()
{
    setPolicy(policy(QStringLiteral("api"), "api:*", Algorithm::SlidingLog, 5, 60 * kSecond));
    // A day long: a fixed window's key expires at the window's end in real time, which for a
    // 10 s window could come between two reads of a slow (sanitizer) run.
    setPolicy(policy(QStringLiteral("login"), "login:*", Algorithm::FixedWindow, 3, 86400 * kSecond));
    setPolicy(policy(QStringLiteral("tb"), "tb:*", Algorithm::TokenBucket, 10, 60 * kSecond));
    setPolicy(policy(QStringLiteral("gcra"), "gcra:*", Algorithm::Gcra, 4, 60 * kSecond));
    setPolicy(policy(QStringLiteral("sc"), "sc:*", Algorithm::SlidingCounter, 8, 60 * kSecond));
    setPolicy(policy(QStringLiteral("sb"), "sb:*", Algorithm::SlidingBuckets, 8, 60 * kSecond));
    setPolicy(policy(QStringLiteral("rl"), "rl:*", Algorithm::TokenBucket, 12, 60 * kSecond, 4));
    setPolicy(policy(QStringLiteral("svc"), "svc:*", Algorithm::FixedWindow, 100, 60 * kSecond));
    check("api:acme", 6); // denying: 5 of 5, the sixth refused
    check("login:acme:/search", 2);
    check("tb:acme", 1);
    check("gcra:{acme}", 4);
    check("sc:acme", 3);
    check("sb:acme.eu", 2); // another id: acme.eu holds acme as a segment
    check("rl:{acme}:0", 2);
    check("rl:{acme}:2", 1);
    // Another service's counter windows: two windows of one limiter (one row).
    const QByteArray minute = QByteArray::number(kNowS / 60);
    m_conn->command({"SET", "svc:acme:" + minute, "7"});
    m_conn->command({"SET", "svc:acme:" + QByteArray::number(kNowS / 60 - 1), "40"});
    // Another library's limiter: Upstash's fixed window "<prefix>:<identifier>:<floor(ms / window)>".
    // A day long: the grant and reset below read it on the server's clock, a slow (sanitizer)
    // run a minute later, still in the same window.
    setPolicy(policy(QStringLiteral("up"), "@upstash/*", Algorithm::FixedWindow, 10, 86400 * kSecond));
    m_conn->command({"SET", "@upstash/ratelimit:acme:" + QByteArray::number(kNow / 1000 / 86400000), "4"});
    // Another service's log (ms scores), and not the customer's, and no limiters.
    m_conn->command({"ZADD", "rlflx:acme", QByteArray::number(kNow / 1000 - 5000), "a", QByteArray::number(kNow / 1000 - 2000), "b"});
    check("api:acmecorp", 1);
    check("api:xacme", 1);
    m_conn->command({"SET", "acme:profile", "{\"plan\":\"gold\"}"});
    m_conn->command({"HSET", "session:acme", "user", "42"});
}

std::map<QString, QJsonObject> TestLookup::lookupRows(const QString &id, const QStringList &extra)
{
    const CliResult r = runCli(QStringList{QStringLiteral("--url"), url(), QStringLiteral("--json"), QStringLiteral("lookup"), id,
                                           QStringLiteral("--now-us"), kNowArg} +
                               extra);
    if (r.exitCode != 0)
        qWarning() << r.err;
    std::map<QString, QJsonObject> rows;
    for (const QJsonObject &o : jsonObjects(r.out))
        if (!o.contains(QStringLiteral("lookup")))
            rows[o.value(QStringLiteral("key")).toString()] = o;
    return rows;
}

void TestLookup::listsEveryFormatWithPeeksValues()
{
    seedCustomer();
    const QByteArray before = keyspaceSnapshot(*m_conn);
    const auto rows = lookupRows(QStringLiteral("acme"));
    std::set<QString> keys;
    for (const auto &[k, o] : rows)
        keys.insert(k);
    const std::set<QString> expected = {QStringLiteral("api:acme"), QStringLiteral("login:acme:/search"), QStringLiteral("tb:acme"),
                                        QStringLiteral("gcra:{acme}"), QStringLiteral("sc:acme"), QStringLiteral("sb:acme.eu"),
                                        QStringLiteral("rl:{acme}"), QStringLiteral("svc:acme"), QStringLiteral("rlflx:acme"),
                                        QStringLiteral("@upstash/ratelimit:acme")};
    QCOMPARE(keys, expected);
    QCOMPARE(keyspaceSnapshot(*m_conn), before); // reading only

    // A sharded group is one row; counter windows one limiter.
    QCOMPARE(rows.at(QStringLiteral("rl:{acme}")).value(QStringLiteral("shards")).toInt(), 4);
    QCOMPARE(rows.at(QStringLiteral("rl:{acme}")).value(QStringLiteral("used")).toInteger(), 3);
    QCOMPARE(rows.at(QStringLiteral("rl:{acme}")).value(QStringLiteral("limit")).toInteger(), 12);
    QCOMPARE(rows.at(QStringLiteral("svc:acme")).value(QStringLiteral("used")).toInteger(), 7);
    QCOMPARE(rows.at(QStringLiteral("@upstash/ratelimit:acme")).value(QStringLiteral("format")).toString(),
             QStringLiteral("Upstash Ratelimit window"));
    QCOMPARE(rows.at(QStringLiteral("@upstash/ratelimit:acme")).value(QStringLiteral("used")).toInteger(), 4);

    // Each row says what peek says of that limiter at the same now.
    for (const auto &[key, row] : rows) {
        if (row.contains(QStringLiteral("shards")))
            continue; // peek reads a group's shards one by one
        if (row.value(QStringLiteral("limit")).isNull()) { // no policy: no limits, no figures
            QCOMPARE(key, QStringLiteral("rlflx:acme"));
            QVERIFY(row.value(QStringLiteral("used")).isNull());
            continue;
        }
        const CliResult p = runCli({QStringLiteral("--url"), url(), QStringLiteral("--json"), QStringLiteral("peek"), key,
                                    QStringLiteral("--now-us"), kNowArg});
        QVERIFY2(p.exitCode == 0, (key.toUtf8() + ": " + p.err).constData());
        const QJsonObject peek = jsonObjects(p.out).front();
        QCOMPARE(row.value(QStringLiteral("used")).toInteger(), peek.value(QStringLiteral("used_now")).toInteger());
        QCOMPARE(row.value(QStringLiteral("limit")).toInteger(), peek.value(QStringLiteral("limit")).toInteger());
        QCOMPARE(row.value(QStringLiteral("denying")).toBool(), !peek.value(QStringLiteral("allowed")).toBool());
        if (row.value(QStringLiteral("denying")).toBool())
            QCOMPARE(row.value(QStringLiteral("retry_after_ms")).toInteger(), peek.value(QStringLiteral("retry_after_ms")).toInteger());
    }

    // Denying first, with why in words and since when (a log).
    const CliResult human = runCli({QStringLiteral("--url"), url(), QStringLiteral("lookup"), QStringLiteral("acme"),
                                    QStringLiteral("--now-us"), kNowArg});
    QCOMPARE(human.exitCode, 0);
    const QList<QByteArray> lines = human.out.split('\n');
    QVERIFY(lines.size() > 3);
    QVERIFY2(lines[2].startsWith("! api:acme") || lines[2].startsWith("! gcra:{acme}"), lines[2].constData());
    QVERIFY2(human.out.contains("denied since") && human.out.contains("5 of 5 used in the last 1m; the next request passes in"),
             human.out.constData());
    // The wait as a person reads it: whole seconds from ten on, rounded up (54.5679 s is 55 s).
    const CliResult later = runCli({QStringLiteral("--url"), url(), QStringLiteral("lookup"), QStringLiteral("acme"),
                                    QStringLiteral("--now-us"), QString::number(kNow + 5432100)});
    QVERIFY2(later.out.contains("the next request passes in 55s (at "), later.out.constData());
    const QJsonObject api = rows.at(QStringLiteral("api:acme"));
    QCOMPARE(api.value(QStringLiteral("denied_since_us")).toInteger(), kNow); // the fifth entry filled it
    QCOMPARE(api.value(QStringLiteral("retry_after_ms")).toInteger(), 60000);

    // --match narrows; nothing found exits 0 and says so.
    QCOMPARE(lookupRows(QStringLiteral("acme"), {QStringLiteral("--match"), QStringLiteral("api:*")}).size(), size_t(1));
    const CliResult none = runCli({QStringLiteral("--url"), url(), QStringLiteral("lookup"), QStringLiteral("nobody")});
    QCOMPARE(none.exitCode, 0);
    QVERIFY(none.out.contains("no limiter holds nobody"));
    // An id with glob characters is taken literally.
    check("api:a*b", 1);
    QCOMPARE(lookupRows(QStringLiteral("a*b")).size(), size_t(1));
    QVERIFY(lookupRows(QStringLiteral("a?me")).empty());
}

void TestLookup::resetAndGrantTouchExactlyTheListed()
{
    seedCustomer();
    const QStringList base = {QStringLiteral("--url"), url(), QStringLiteral("--reason"), QStringLiteral("TICKET-7 acme gets 429s")};
    // A temporary limit for each of acme's limiters a policy covers (a group: on its base).
    const CliResult grant = runCli(base + QStringList{QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("--lookup"),
                                                      QStringLiteral("acme"), QStringLiteral("--limit"), QStringLiteral("50"),
                                                      QStringLiteral("--for"), QStringLiteral("1h")});
    QVERIFY2(grant.exitCode == 0, grant.err.constData());
    QVERIFY(grant.err.contains("skipped rlflx:acme")); // no policy: an override would change nothing
    for (const QByteArray k : {"api:acme", "login:acme:/search", "tb:acme", "gcra:{acme}", "sc:acme", "sb:acme.eu", "rl:{acme}", "svc:acme",
                               "@upstash/ratelimit:acme"})
        QVERIFY2(OverrideStore(*m_conn, QStringLiteral("ratescope:")).get(k), k.constData());
    QVERIFY(!OverrideStore(*m_conn, QStringLiteral("ratescope:")).get("api:acmecorp"));
    QCOMPARE(lookupRows(QStringLiteral("acme")).at(QStringLiteral("api:acme")).value(QStringLiteral("limit")).toInteger(), 50);

    const CliResult reset = runCli(base + QStringList{QStringLiteral("reset"), QStringLiteral("--lookup"), QStringLiteral("acme"),
                                                      QStringLiteral("--yes"), QStringLiteral("--json")});
    QVERIFY2(reset.exitCode == 0, reset.err.constData());
    QVERIFY(lookupRows(QStringLiteral("acme")).empty() || [&] {
        for (const auto &[k, o] : lookupRows(QStringLiteral("acme")))
            if (o.value(QStringLiteral("used")).toInteger() != 0)
                return false;
        return true;
    }());
    // Nothing else: not another customer's, not an application's keys.
    for (const QByteArray k : {"api:acmecorp", "api:xacme", "acme:profile", "session:acme"})
        QVERIFY2(m_conn->command({"EXISTS", k}).integer() == 1, k.constData());
    for (const QByteArray k : {"api:acme", "login:acme:/search", "rl:{acme}:0", "rlflx:acme"})
        QVERIFY2(m_conn->command({"EXISTS", k}).integer() == 0, k.constData());
    QCOMPARE(m_conn->command({"KEYS", "svc:acme:*"}).size(), size_t(0));
    QCOMPARE(m_conn->command({"KEYS", "@upstash/ratelimit:acme:*"}).size(), size_t(0));

    // Every change carries its reason; the reset is recorded under the customer.
    const auto entries = AuditLog(*m_conn, QStringLiteral("ratescope:")).list(20);
    int withReason = 0;
    for (const AuditEntry &e : entries) {
        if (e.action == QLatin1String("policy.set"))
            continue;
        QCOMPARE(e.reason, QStringLiteral("TICKET-7 acme gets 429s"));
        ++withReason;
        if (e.action == QLatin1String("reset"))
            QCOMPARE(e.target, QStringLiteral("lookup:acme"));
    }
    QCOMPARE(withReason, 9 + 2); // nine overrides, the reset's intent and outcome
}

void TestLookup::reasonsAreRequiredWhenTheNamespaceSaysSo()
{
    seedCustomer();
    const QStringList base = {QStringLiteral("--url"), url()};
    const CliResult on = runCli(base + QStringList{QStringLiteral("settings"), QStringLiteral("set"), QStringLiteral("require-reason"),
                                                   QStringLiteral("on")});
    QVERIFY2(on.exitCode == 0, on.err.constData());
    const CliResult shown = runCli(base + QStringList{QStringLiteral("--json"), QStringLiteral("settings")});
    QVERIFY(jsonObjects(shown.out).front().value(QStringLiteral("require_reason")).toBool());

    // Nothing may expire while the refusals are checked (a 10 s window would, on a slow machine).
    const Reply keys = m_conn->command({"KEYS", "*"});
    for (const Reply &k : keys.elements())
        m_conn->command({"PERSIST", k.bytes()});
    const QByteArray before = keyspaceSnapshot(*m_conn);
    const auto policyFields = [this] {
        const Reply all = m_conn->command({"HGETALL", "ratescope:policies"});
        std::map<QByteArray, QByteArray> fields;
        for (size_t i = 0; i + 1 < all.size(); i += 2)
            fields[all[i].bytes()] = all[i + 1].bytes();
        return fields;
    };
    const auto policiesBefore = policyFields();
    const QList<QStringList> changes = {
        {QStringLiteral("reset"), QStringLiteral("--lookup"), QStringLiteral("acme"), QStringLiteral("--yes")},
        {QStringLiteral("reset"), QStringLiteral("api:acme"), QStringLiteral("--yes")},
        {QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("api:acme"), QStringLiteral("--limit"), QStringLiteral("9"),
         QStringLiteral("--for"), QStringLiteral("1h")},
        {QStringLiteral("override"), QStringLiteral("set"), QStringLiteral("--lookup"), QStringLiteral("acme"), QStringLiteral("--limit"),
         QStringLiteral("9"), QStringLiteral("--for"), QStringLiteral("1h")},
        {QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("x"), QStringLiteral("--match"), QStringLiteral("x:*"),
         QStringLiteral("--algo"), QStringLiteral("gcra"), QStringLiteral("--limit"), QStringLiteral("1"), QStringLiteral("--window"),
         QStringLiteral("1s")},
        {QStringLiteral("policy"), QStringLiteral("delete"), QStringLiteral("api")},
        {QStringLiteral("settings"), QStringLiteral("set"), QStringLiteral("require-reason"), QStringLiteral("off")},
    };
    for (const QStringList &change : changes) {
        const CliResult r = runCli(base + change);
        QVERIFY2(r.exitCode == 2, qPrintable(change.join(' ') + QStringLiteral(": ") + QString::fromUtf8(r.err)));
        QVERIFY2(r.err.contains("requires a reason"), r.err.constData());
        const QByteArray after = keyspaceSnapshot(*m_conn);
        QByteArrayList differ;
        {
            const QByteArrayList a = before.split(';'), b = after.split(';');
            // The policies' hash is compared by its fields: its DUMP may change order while the
            // server rehashes it, which reads alone can move on.
            const auto counts = [](const QByteArray &x) { return !x.startsWith("ratescope:policies="); };
            for (const QByteArray &x : a)
                if (counts(x) && !b.contains(x))
                    differ << x.left(x.indexOf('='));
            for (const QByteArray &x : b)
                if (counts(x) && !a.contains(x))
                    differ << "+" + x.left(x.indexOf('='));
            if (policyFields() != policiesBefore)
                differ << "ratescope:policies";
        }
        QVERIFY2(differ.isEmpty(), qPrintable(change.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromUtf8(differ.join(' ')))); // nothing written, nothing audited
    }
    // With one, it goes through, and says why in the audit.
    const CliResult off = runCli(base + QStringList{QStringLiteral("--reason"), QStringLiteral("end of the audit window"),
                                                    QStringLiteral("settings"), QStringLiteral("set"), QStringLiteral("require-reason"),
                                                    QStringLiteral("off")});
    QVERIFY2(off.exitCode == 0, off.err.constData());
    const AuditEntry last = AuditLog(*m_conn, QStringLiteral("ratescope:")).list(1).front();
    QCOMPARE(last.action, QStringLiteral("settings.set"));
    QCOMPARE(last.reason, QStringLiteral("end of the audit window"));
    // A reason is text of at most 200 characters.
    const CliResult tooLong = runCli(base + QStringList{QStringLiteral("--reason"), QString(201, QLatin1Char('x')), QStringLiteral("audit")});
    QCOMPARE(tooLong.exitCode, 2);
    const CliResult control = runCli(base + QStringList{QStringLiteral("--reason"), QStringLiteral("a\nb"), QStringLiteral("audit")});
    QCOMPARE(control.exitCode, 2);
}

void TestLookup::auditFiltersByReason()
{
    setPolicy(policy(QStringLiteral("api"), "api:*", Algorithm::SlidingLog, 5, 60 * kSecond));
    const QStringList base = {QStringLiteral("--url"), url()};
    for (const QString &reason : {QStringLiteral("TICKET-1 first"), QStringLiteral("TICKET-2 second"), QString()}) {
        QStringList args = base;
        if (!reason.isEmpty())
            args << QStringLiteral("--reason") << reason;
        args << QStringLiteral("override") << QStringLiteral("set") << QStringLiteral("api:acme") << QStringLiteral("--limit")
             << QStringLiteral("7") << QStringLiteral("--for") << QStringLiteral("1h");
        QCOMPARE(runCli(args).exitCode, 0);
    }
    const CliResult all = runCli(base + QStringList{QStringLiteral("--json"), QStringLiteral("audit")});
    QCOMPARE(jsonObjects(all.out).size(), size_t(3));
    const CliResult one = runCli(base + QStringList{QStringLiteral("--json"), QStringLiteral("audit"), QStringLiteral("--reason"),
                                                    QStringLiteral("TICKET-2*")});
    const auto entries = jsonObjects(one.out);
    QCOMPARE(entries.size(), size_t(1));
    QCOMPARE(entries.front().value(QStringLiteral("reason")).toString(), QStringLiteral("TICKET-2 second"));
    const CliResult any = runCli(base + QStringList{QStringLiteral("audit"), QStringLiteral("--reason"), QStringLiteral("*")});
    QCOMPARE(any.out.count('\n'), 2); // the entry without a reason matches no reason filter
    QVERIFY(any.out.contains("reason: TICKET-1 first"));
}

void TestLookup::findsKeysOnEveryMaster()
{
    TestCluster cluster(3);
    Connection c(ConnectionOptions::fromUrl(cluster.url()));
    std::set<int> masters;
    std::set<QString> expected;
    // Keys of acme on every master: different slots until each master holds one.
    for (int i = 0; i < 200 && masters.size() < 3; ++i) {
        const QByteArray key = "api:" + QByteArray::number(i) + ":acme";
        const int owner = cluster.ownerOf(key);
        if (masters.insert(owner).second)
            expected.insert(QString::fromUtf8(key));
    }
    QCOMPARE(masters.size(), size_t(3));
    PolicyStore(c, QStringLiteral("ratescope:")).set(policy(QStringLiteral("api"), "api:*", Algorithm::SlidingLog, 5, 60 * kSecond), 0,
                                                     QStringLiteral("test"));
    for (const QString &k : expected)
        QCOMPARE(runCli({QStringLiteral("--url"), cluster.url(), QStringLiteral("check"), k, QStringLiteral("--now-us"), kNowArg}).exitCode, 0);
    const CliResult r = runCli({QStringLiteral("--url"), cluster.url(), QStringLiteral("--json"), QStringLiteral("lookup"),
                                QStringLiteral("acme"), QStringLiteral("--now-us"), kNowArg});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    std::set<QString> found;
    for (const QJsonObject &o : jsonObjects(r.out))
        if (!o.contains(QStringLiteral("lookup"))) {
            found.insert(o.value(QStringLiteral("key")).toString());
            QCOMPARE(o.value(QStringLiteral("used")).toInteger(), 1);
            QCOMPARE(o.value(QStringLiteral("limit")).toInteger(), 5);
        }
    QCOMPARE(found, expected);
}

QTEST_GUILESS_MAIN(TestLookup)
#include "tst_lookup.moc"
