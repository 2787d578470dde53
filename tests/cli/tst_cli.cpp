// ratescope-cli end to end: global options, exit codes, JSON, against a private server.
#include "testsupport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ratescope;
using namespace ratescope::test;

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void infoJson();
    void infoHuman();
    void urlFromEnvironment();
    void exitCodes_data();
    void exitCodes();
    void helpAndVersion();

private:
    std::unique_ptr<SandboxServer> m_server;
};

void TestCli::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
}

void TestCli::infoJson()
{
    const CliResult r = runCli({QStringLiteral("--url"), m_server->url(), QStringLiteral("--json"), QStringLiteral("info")});
    QCOMPARE(r.exitCode, 0);
    QJsonParseError error;
    const QJsonObject o = QJsonDocument::fromJson(r.out, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QVERIFY(o.value(QStringLiteral("version")).toString().startsWith(QStringLiteral("7.")));
    QCOMPARE(o.value(QStringLiteral("mode")).toString(), QStringLiteral("standalone"));
    QCOMPARE(o.value(QStringLiteral("role")).toString(), QStringLiteral("master"));
    QVERIFY(o.value(QStringLiteral("db_size")).isDouble());
    QVERIFY(o.value(QStringLiteral("used_memory")).toDouble() > 0);
}

void TestCli::infoHuman()
{
    const CliResult r = runCli({QStringLiteral("info"), QStringLiteral("--url"), m_server->url()}); // options after the command
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("version"));
    QVERIFY(r.out.contains("used_memory"));
}

void TestCli::urlFromEnvironment()
{
    qputenv("RATESCOPE_URL", m_server->url().toUtf8());
    const CliResult r = runCli({QStringLiteral("--json"), QStringLiteral("info")});
    qunsetenv("RATESCOPE_URL");
    QCOMPARE(r.exitCode, 0);
}

void TestCli::exitCodes_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    const quint16 closedPort = freeLoopbackPort();
    QTest::newRow("no command") << QStringList{} << 2;
    QTest::newRow("unknown command") << QStringList{QStringLiteral("frobnicate")} << 2;
    QTest::newRow("unknown option") << QStringList{QStringLiteral("info"), QStringLiteral("--colour")} << 2;
    QTest::newRow("bad url") << QStringList{QStringLiteral("--url"), QStringLiteral("redis://h:0"), QStringLiteral("info")} << 2;
    QTest::newRow("unknown scheme") << QStringList{QStringLiteral("--url"), QStringLiteral("mysql://h"), QStringLiteral("info")} << 2;
    QTest::newRow("refused") << QStringList{QStringLiteral("--url"), QStringLiteral("redis://127.0.0.1:%1").arg(closedPort),
                                            QStringLiteral("info")}
                             << 3;
    QTest::newRow("no sentinel") << QStringList{QStringLiteral("--url"), QStringLiteral("redis-sentinel://127.0.0.1:%1/m").arg(closedPort),
                                                QStringLiteral("info")}
                                 << 3;
}

void TestCli::exitCodes()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, code);
    QVERIFY(!r.err.isEmpty());
}

void TestCli::helpAndVersion()
{
    const CliResult v = runCli({QStringLiteral("--version")});
    QCOMPARE(v.exitCode, 0);
    QVERIFY(v.out.startsWith("ratescope-cli "));
    const CliResult h = runCli({QStringLiteral("--help")});
    QCOMPARE(h.exitCode, 0);
    QVERIFY(h.out.contains("Exit codes"));
    // One line per command (its first sentence), no escape sequences shown literally.
    QVERIFY(!h.out.contains("\\n"));
    const QByteArray commands = h.out.mid(h.out.indexOf("Commands:\n") + 10);
    const QList<QByteArray> lines = commands.left(commands.indexOf("\n\n")).split('\n');
    QVERIFY2(lines.size() >= 10, h.out.constData());
    for (const QByteArray &line : lines)
        QVERIFY2(line.startsWith("  ") && line.endsWith('.'), line.constData());
    const CliResult ch = runCli({QStringLiteral("info"), QStringLiteral("--help")});
    QCOMPARE(ch.exitCode, 0);
    QVERIFY(ch.out.contains("Usage: ratescope-cli [global options] info"));
    const CliResult kh = runCli({QStringLiteral("keys"), QStringLiteral("--help")});
    QVERIFY(kh.out.contains("(SCAN, never KEYS).\nUsed and limit"));
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
