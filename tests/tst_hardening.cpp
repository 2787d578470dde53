// The CLI and core under hostile input and faults: replies this build cannot use, exit codes,
// mutations whose audit entry cannot be written, deletes of what no limiter is, loose input.
#include "audit.h"
#include "connection.h"
#include "errors.h"
#include "policy.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

namespace {

const QString kNs = QStringLiteral("ratescope:");

QStringList args(std::initializer_list<const char *> list)
{
    QStringList out;
    for (const char *a : list)
        out << QString::fromUtf8(a);
    return out;
}

QJsonObject lastJsonLine(const QByteArray &out)
{
    const QList<QByteArray> lines = out.trimmed().split('\n');
    return QJsonDocument::fromJson(lines.last()).object();
}

} // namespace

class TestHardening : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();

    // Errors in their classes, exit codes.
    void badPolicyRecordIsSkipped();
    void wrongFieldsExitTwo();
    void conflictsHaveTheirOwnExitCode();

private:
    ConnectionOptions as(const char *user, const char *password) const
    {
        ConnectionOptions o = m_server->options();
        o.user = QString::fromLatin1(user);
        o.password = QString::fromLatin1(password);
        return o;
    }
    QStringList cli(const QStringList &a, const char *user = "admin", const char *password = "adminpw") const
    {
        return QStringList{QStringLiteral("--url"), as(user, password).toUrl(true)} + a;
    }
    qint64 auditLength(const QByteArray &stream = "ratescope:audit") { return m_conn->command({"XLEN", stream}).integer(); }
    QByteArray snapshot()
    {
        QByteArray all;
        const Reply keys = m_conn->command({"KEYS", "*"}); // test-only, tiny keyspace
        QByteArrayList names;
        for (const Reply &k : keys.elements())
            names << k.bytes();
        std::sort(names.begin(), names.end());
        for (const QByteArray &k : names)
            all += k + "=" + m_conn->command({"DUMP", k}).bytes().toHex() + ";";
        return all;
    }

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestHardening::initTestCase()
{
    m_server = std::make_unique<SandboxServer>(aclConfig());
    m_server->start();
    m_conn = std::make_unique<Connection>(as("admin", "adminpw"));
}

void TestHardening::init()
{
    m_conn->command({"FLUSHALL"});
}

void TestHardening::badPolicyRecordIsSkipped()
{
    m_conn->command({"HSET", "ratescope:policies", "future", R"({"name":"future","match":"f:*","algorithm":"quantum","limit":5,"window_us":1000000})"});
    m_conn->command({"HSET", "ratescope:policies", "garbage", "not json at all"});
    Policy p;
    p.name = QStringLiteral("api");
    p.match = "api:*";
    p.spec = {Algorithm::Gcra, 5, 1000000, 1};
    PolicyStore(*m_conn, kNs).set(p, 0, QStringLiteral("t"));

    QStringList skipped;
    const auto policies = PolicyStore(*m_conn, kNs).list(&skipped);
    QCOMPARE(policies.size(), size_t(1));
    QCOMPARE(skipped.size(), 2);

    // The other policies keep working; the bad records are named on stderr.
    const CliResult check = runCli(cli({QStringLiteral("--json"), QStringLiteral("check"), QStringLiteral("api:1")}));
    QVERIFY2(check.exitCode == 0, check.err.constData());
    QVERIFY2(check.err.contains("warning: policy record 'future' skipped"), check.err.constData());
    QCOMPARE(lastJsonLine(check.out).value(QStringLiteral("limit")).toInt(), 5);
    const CliResult list = runCli(cli({QStringLiteral("policy"), QStringLiteral("list")}));
    QCOMPARE(list.exitCode, 0);
    QVERIFY(list.out.contains("api:*"));
    QVERIFY(list.err.contains("'garbage' skipped"));

    // Asking for the bad one itself: the server answered, with content this build cannot
    // use: exit 4, not a connection error (3).
    const CliResult get = runCli(cli({QStringLiteral("--json"), QStringLiteral("policy"), QStringLiteral("get"), QStringLiteral("future")}));
    QCOMPARE(get.exitCode, 4);
    QCOMPARE(lastJsonLine(get.out).value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(),
             QStringLiteral("unexpected-reply"));
}

void TestHardening::wrongFieldsExitTwo()
{
    m_conn->command({"HSET", "h:1", "foo", "bar"});
    m_conn->command({"SET", "s:1", "x"});
    // The wrong type and the right type with the wrong fields are the same mistake: exit 2.
    const CliResult type = runCli(cli(args({"check", "s:1", "--algo", "gcra", "--limit", "5", "--window", "1s"})));
    QCOMPARE(type.exitCode, 2);
    const CliResult fields = runCli(cli(args({"check", "h:1", "--algo", "gcra", "--limit", "5", "--window", "1s"})));
    QVERIFY2(fields.exitCode == 2, fields.err.constData());
    QVERIFY(fields.err.contains("is not a ratescope"));
}

void TestHardening::conflictsHaveTheirOwnExitCode()
{
    const QStringList set = args({"policy", "set", "p", "--match", "p:*", "--algo", "gcra", "--limit", "5", "--window", "1s"});
    // Based on a version of a policy that never existed: refused, without claiming someone deleted it.
    const CliResult never = runCli(cli(set + args({"--based-on", "999"})));
    QCOMPARE(never.exitCode, 6);
    QVERIFY2(never.err.contains("does not exist"), never.err.constData());
    QVERIFY(!never.err.contains("deleted"));
    QCOMPARE(m_conn->command({"EXISTS", "ratescope:policies"}).integer(), 0);

    QCOMPARE(runCli(cli(set)).exitCode, 0);
    QCOMPARE(runCli(cli(set)).exitCode, 0); // now version 2
    const CliResult stale = runCli(cli(QStringList{QStringLiteral("--json")} + set + args({"--based-on", "1"})));
    QCOMPARE(stale.exitCode, 6);
    QCOMPARE(lastJsonLine(stale.out).value(QStringLiteral("error")).toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("conflict"));
    const CliResult exists = runCli(cli(set + args({"--based-on", "0"})));
    QCOMPARE(exists.exitCode, 6);
    QVERIFY(exists.err.contains("already exists"));
}

QTEST_GUILESS_MAIN(TestHardening)
#include "tst_hardening.moc"
