// Demo mode and the main window: the demo shows its limiters with filled columns, the banner
// comes and goes with the connection, and the built `ratescope --demo` leaves no redis-server
// behind after a normal exit, after SIGTERM, or when it is killed with SIGKILL.
#include "builtpaths.h"
#include "redis/connection.h"
#include "redis/sandboxserver.h"
#include "admin/policy.h"
#include "connectionbanner.h"
#include "demosession.h"
#include "demotraffic.h"
#include "keybrowser.h"
#include "mainwindow.h"
#include "overviewpage.h"
#include "passwordvault.h"
#include "policytablemodel.h"
#include "profilestore.h"
#include "serverstatusbar.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include <csignal>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

// Gone: no such process, or a zombie nobody reaped yet (it runs nothing and holds no port).
bool processGone(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray s = stat.readAll();
    const qsizetype close = s.lastIndexOf(')');
    return close > 0 && s.mid(close + 2, 1) == "Z";
}

bool isRedisServer(qint64 pid)
{
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
    return cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains("redis-server");
}

// Starts the built console in demo mode and waits for the line naming its server (and the
// server's directory, into *dir).
qint64 startDemo(QProcess &p, const QStringList &extra, QString *dir = nullptr)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(BuiltPaths::gui(), QStringList{QStringLiteral("--demo")} + extra);
    if (!p.waitForStarted(10000))
        return 0;
    QByteArray out;
    QDeadlineTimer deadline(30000);
    while (!deadline.hasExpired() && !out.contains('\n')) {
        p.waitForReadyRead(200);
        out += p.readAllStandardOutput();
        if (p.state() != QProcess::Running)
            break;
    }
    const auto m = QRegularExpression(QStringLiteral("redis-server \\(pid (\\d+)\\).* data in (\\S+);")).match(QString::fromUtf8(out));
    if (dir)
        *dir = m.captured(2);
    return m.hasMatch() ? m.captured(1).toLongLong() : 0;
}

} // namespace

class TestDemo : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void demoShowsLimiters();
    void servicesFollowThePolicies();
    void bannerWhileConnectionIsLost();
    void readOnlyLock();
    void screenshotExitsAndStopsTheServer();
    void eventLogAndPacingOptions();
    void sigtermStopsTheServer();
    void sigkillLeavesNoServer();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
};

void TestDemo::initTestCase()
{
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
}

void TestDemo::demoShowsLimiters()
{
    qint64 pid = 0;
    {
        DemoSession demo;
        demo.start();
        pid = demo.serverPid();
        QVERIFY(pid > 0);
        ProfileStore profiles(m_settings.get());
        PasswordVault vault(PasswordVault::Backend::SessionOnly);
        MainWindow window(profiles, vault);
        window.addSessionProfile(demo.profile(), demo.options());
        QSignalSpy settled(&window, &MainWindow::settled);
        QVERIFY(window.connectProfile(QStringLiteral("Demo")));
        window.show();
        QVERIFY(settled.wait(30000));

        const KeyTreeModel *m = window.keyBrowser()->model();
        QVERIFY2(m->keyCount() >= 40, qPrintable(QString::number(m->keyCount())));
        QModelIndex demoGroup;
        for (int r = 0; r < m->rowCount(); ++r)
            if (m->index(r, 0).data().toString().startsWith(QStringLiteral("demo (")))
                demoGroup = m->index(r, 0);
        QVERIFY(demoGroup.isValid());
        QVERIFY(window.keyBrowser()->view()->isExpanded(demoGroup));
        // Every algorithm shows up, with used / limit filled in.
        QSet<QString> algorithms;
        int withUsage = 0;
        for (quint32 id : window.keyBrowser()->visibleKeyIds()) {
            const QModelIndex key = m->indexOfKey(id);
            algorithms.insert(key.siblingAtColumn(KeyTreeModel::AlgorithmColumn).data().toString());
            if (key.siblingAtColumn(KeyTreeModel::UsageColumn).data().toString().contains(QStringLiteral(" / ")))
                ++withUsage;
        }
        QVERIFY2(withUsage >= 20, qPrintable(QString::number(withUsage)));
        for (const char *a : {"sliding-log", "sliding-counter", "fixed-window"})
            QVERIFY2(algorithms.contains(QLatin1String(a)), qPrintable(QStringList(algorithms.values()).join(QLatin1Char(','))));
        QCOMPARE(window.overview()->policies()->rowCount(), 10); // six services, two legacy ones, a gateway, a Node.js login
        QVERIFY2(window.serverStatus()->summary().contains(QStringLiteral("Connected")), qPrintable(window.serverStatus()->summary()));
        QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("Round trip")));
        QVERIFY(demo.traffic()->allowed() + demo.traffic()->denied() > 0);

        // Opening a key shows it in a tab of its own, after the pages (overview, monitor,
        // burst, policies, what if, hot, audit, lookup).
        const int pages = window.tabs()->count();
        QCOMPARE(pages, 8);
        window.openKey("demo:api:mallory");
        QCOMPARE(window.tabs()->count(), pages + 1);
        QCOMPARE(window.tabs()->tabText(pages), QStringLiteral("mallory"));
        QCOMPARE(window.tabs()->currentIndex(), pages);
    }
    QVERIFY(processGone(pid));
}

void TestDemo::bannerWhileConnectionIsLost()
{
    SandboxServer server;
    server.start();
    ProfileStore profiles(m_settings.get());
    PasswordVault vault(PasswordVault::Backend::SessionOnly);
    MainWindow window(profiles, vault);
    ConnectionProfile p = ConnectionProfile::fromOptions(server.options(), QStringLiteral("flaky"));
    window.addSessionProfile(p, server.options());
    window.connectProfile(QStringLiteral("flaky"));
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.client() && window.client()->state() == RedisClient::State::Connected, 10000);
    QVERIFY(window.banner()->isHidden());

    server.kill();
    QTRY_VERIFY_WITH_TIMEOUT(!window.banner()->isHidden(), 10000);
    QVERIFY2(window.banner()->text().contains(QStringLiteral("lost")), qPrintable(window.banner()->text()));
    QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("Reconnecting")));

    server.restart();
    QTRY_VERIFY_WITH_TIMEOUT(window.banner()->isHidden(), 40000);
    QTRY_VERIFY_WITH_TIMEOUT(window.serverStatus()->summary().contains(QStringLiteral("Connected")), 5000);
}

void TestDemo::readOnlyLock()
{
    SandboxServer server;
    server.start();
    ProfileStore profiles(m_settings.get());
    PasswordVault vault(PasswordVault::Backend::SessionOnly);
    MainWindow window(profiles, vault);
    ConnectionProfile p = ConnectionProfile::fromOptions(server.options(), QStringLiteral("locked"));
    p.readOnly = true;
    window.addSessionProfile(p, server.options());
    window.connectProfile(QStringLiteral("locked"));
    QVERIFY(window.client()->isReadOnly());
    QVERIFY(window.lockAction()->isChecked());
    QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("Read-only")));
    window.lockAction()->trigger(); // unlock: asked first, and recorded before it opens
    QVERIFY(window.client()->isReadOnly());
    auto *question = window.findChild<QMessageBox *>(QStringLiteral("unlockQuestion"));
    QVERIFY(question);
    question->button(QMessageBox::Yes)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!window.client()->isReadOnly(), 10000);
    QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("Writable")));
    window.setReadOnly(true); // --read-only: locked for the session
    QVERIFY(window.client()->isReadOnly());
    QVERIFY(!window.lockAction()->isEnabled());
}

void TestDemo::screenshotExitsAndStopsTheServer()
{
    const QString file = m_dir.filePath(QStringLiteral("shot.png"));
    QProcess p;
    const qint64 pid = startDemo(p, {QStringLiteral("--screenshot"), file});
    QVERIFY2(pid > 0, p.readAllStandardError().constData());
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const QImage shot(file);
    QVERIFY(!shot.isNull());
    QVERIFY(shot.width() >= 800);
    QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), 10000);
}

// --event-log, --monitor-interval and --hot-every on the built console: the log's lines from the
// first attempt to the exit; values out of range refused before anything starts.
void TestDemo::eventLogAndPacingOptions()
{
    const QString log = m_dir.filePath(QStringLiteral("events.log"));
    const QString file = m_dir.filePath(QStringLiteral("hot.png"));
    QProcess p;
    const qint64 pid = startDemo(p, {QStringLiteral("--event-log"), log, QStringLiteral("--monitor-interval"), QStringLiteral("100ms"),
                                     QStringLiteral("--hot-every"), QStringLiteral("1s"), QStringLiteral("--tab"), QStringLiteral("hot"),
                                     QStringLiteral("--pin"), QStringLiteral("demo:api:acme"), QStringLiteral("--screenshot"), file});
    QVERIFY2(pid > 0, p.readAllStandardError().constData());
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QFile events(log);
    QVERIFY(events.open(QIODevice::ReadOnly));
    QStringList states;
    for (const QByteArray &line : events.readAll().trimmed().split('\n'))
        states << QJsonDocument::fromJson(line).object().value(QStringLiteral("state")).toString();
    QCOMPARE(states, (QStringList{QStringLiteral("connecting"), QStringLiteral("connected"), QStringLiteral("closed")}));

    auto refused = [](const QStringList &args) {
        QProcess bad;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        bad.setProcessEnvironment(env);
        bad.start(BuiltPaths::gui(), args);
        bad.waitForFinished(30000);
        return std::pair(bad.exitCode(), QString::fromUtf8(bad.readAllStandardError()));
    };
    auto [code, err] = refused({QStringLiteral("--monitor-interval"), QStringLiteral("300ms")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("--monitor-interval must be one of 100ms, 250ms, 500ms, 1s, 2s, 5s, 10s, not '300ms'")),
             qPrintable(err));
    std::tie(code, err) = refused({QStringLiteral("--hot-every"), QStringLiteral("10ms")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("--hot-every must be a duration from 250ms to 1m")), qPrintable(err));
    std::tie(code, err) = refused({QStringLiteral("--event-log"), m_dir.filePath(QStringLiteral("missing/events.log"))});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("--event-log: cannot open")), qPrintable(err));
    // --burst takes the CLI's words: one key, known options, an algorithm it knows.
    std::tie(code, err) = refused({QStringLiteral("--burst"), QStringLiteral("test:api --algo leaky --limit 5 --window 1s")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("--burst: ")), qPrintable(err));
    std::tie(code, err) = refused({QStringLiteral("--burst"), QStringLiteral("a b")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("--burst: give one KEY")), qPrintable(err));
    std::tie(code, err) = refused({QStringLiteral("--burst"), QStringLiteral("test:api --limit 5")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("--limit and --window go with --algo")), qPrintable(err));
    std::tie(code, err) = refused({QStringLiteral("--burst"), QStringLiteral("test:api --connections 0")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("--connections must be a whole number from 1 to")), qPrintable(err));
    std::tie(code, err) = refused({QStringLiteral("--burst"), QStringLiteral("test:api"), QStringLiteral("--boundary-test")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QStringLiteral("give one of them")), qPrintable(err));
}

void TestDemo::sigtermStopsTheServer()
{
    QProcess p;
    QString dir;
    const qint64 pid = startDemo(p, {}, &dir);
    QVERIFY2(pid > 0, p.readAllStandardError().constData());
    QVERIFY(isRedisServer(pid));
    ::kill(pid_t(p.processId()), SIGTERM);
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), 10000);
    QVERIFY(!QDir(dir).exists()); // a clean exit leaves nothing behind
}

void TestDemo::sigkillLeavesNoServer()
{
    QProcess p;
    QString dir;
    const qint64 pid = startDemo(p, {}, &dir);
    QVERIFY2(pid > 0, p.readAllStandardError().constData());
    QVERIFY(isRedisServer(pid));
    QVERIFY(QDir(dir).exists());
    QTest::qWait(500); // traffic flowing, the window connected
    ::kill(pid_t(p.processId()), SIGKILL);
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitStatus(), QProcess::CrashExit);
    QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), 10000);
    // Nobody was left to remove the server's directory: the test does.
    QVERIFY(dir.contains(QStringLiteral("ratescope-redis-")));
    QVERIFY(QDir(dir).removeRecursively());
}

// The demo's services enforce what is in force, as a service using Ratescope does: a policy
// lowered in the console (here through the store) is what their next requests are checked
// against; an override stays the key's limit.
void TestDemo::servicesFollowThePolicies()
{
    SandboxServer server;
    server.start();
    Connection c(server.options());
    DemoTraffic::seed(c);
    std::vector<DemoTraffic::Client> clients = DemoTraffic::clients();
    auto limits = limitsInForce(c, clients);
    QCOMPARE(limits.at("demo:api:mallory").limit, 60);
    QCOMPARE(limits.at("demo:upload:acme").limit, 40); // the override
    QCOMPARE(limits.at("demo:upload:globex").limit, 20);

    PolicyStore store(c, QStringLiteral("ratescope:"));
    Policy api = *store.get(QStringLiteral("api"));
    api.spec.limit = 20;
    store.set(api, api.version, QStringLiteral("test"));
    limits = limitsInForce(c, clients);
    QCOMPARE(limits.at("demo:api:mallory").limit, 20);
    QCOMPARE(limits.at("demo:api:acme").limit, 20);
    QCOMPARE(limits.at("demo:upload:acme").limit, 40);

    // Their requests from now on are checked against 20: a log emptied admits 20, not 60.
    for (const QByteArray &key : {QByteArray("demo:api:mallory"), QByteArray("demo:api:acme")})
        c.command({"DEL", key});
    std::atomic<qint64> allowed{0}, denied{0};
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (int tick = 0; tick < 40; ++tick) // the abusive client asks five times its share: 40 requests
        simulateTick(c, clients, limits, now + tick * DemoTraffic::kTickMs, allowed, denied);
    QVERIFY(denied.load() > 0);
    // The abusive client's log holds what was admitted: the lowered limit, not more.
    QCOMPARE(c.command({"ZCARD", "demo:api:mallory"}).toInteger(), 20);
}

QTEST_MAIN(TestDemo)
#include "tst_demo.moc"
