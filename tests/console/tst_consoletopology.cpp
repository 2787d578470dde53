// The console where one Redis is not enough: cluster and sentinel profiles in the profile
// dialog (checked as typed, tested against the real thing, passwords kept out of the settings
// file), and the main window on a 3-master cluster with a replica each (the status bar names
// the nodes and their roles, the key browser lists the keys of every master, the overview
// sums over the masters) and through a sentinel (the status bar follows a failover).
#include "redis/cluster.h"
#include "connectiondialog.h"
#include "base/errors.h"
#include "hotmodel.h"
#include "hotpage.h"
#include "keybrowser.h"
#include "keytreemodel.h"
#include "keyview.h"
#include "limiters/limiter.h"
#include "mainwindow.h"
#include "overviewpage.h"
#include "passwordvault.h"
#include "profilestore.h"
#include "serverstatusbar.h"
#include "testsupport.h"

#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

using namespace ratescope;
using namespace ratescope::ui;
using namespace ratescope::test;

namespace {

constexpr qint64 kSecond = 1000000;
constexpr qint64 kT0 = 1735689600LL * kSecond;
const LimitSpec kSpec{Algorithm::SlidingLog, 100, 3600 * kSecond, 1};
const QString kSentinelPassword = QStringLiteral("sentinel-Pa55");

QString seedsOf(const QString &url)
{
    // "redis-cluster://a:1,b:2" or "redis-sentinel://a:1/mymaster?..." -> "a:1, b:2"
    QString hosts = url.section(QStringLiteral("://"), 1).section(QLatin1Char('/'), 0, 0);
    return hosts.section(QLatin1Char('?'), 0, 0).replace(QLatin1Char(','), QStringLiteral(", "));
}

ConnectionProfile clusterProfile(const QStringList &seeds)
{
    ConnectionProfile p;
    p.name = QStringLiteral("cluster");
    p.transport = ConnectionProfile::Transport::Cluster;
    p.seeds = seeds;
    return p;
}

// RATESCOPE_TEST_SHOTS=DIR keeps a picture of a widget under test, to look at.
void keepShot(QWidget *w, const QString &name)
{
    const QString dir = qEnvironmentVariable("RATESCOPE_TEST_SHOTS");
    if (!dir.isEmpty())
        QVERIFY(w->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png")));
}

} // namespace

class TestConsoleTopology : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void clusterProfileInTheDialog();
    void sentinelProfileInTheDialog();
    void profilesRoundTrip();
    void consoleOnACluster();
    void consoleFollowsAClusterFailover();
    void consoleFollowsASentinelFailover();

private:
    void followClusterFailover();
    // The main window connected to a saved profile, once everything in view has loaded.
    std::unique_ptr<MainWindow> openConsole(const QString &profile);
    std::unique_ptr<TestCluster> m_cluster;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
    std::unique_ptr<ProfileStore> m_store;
    std::unique_ptr<PasswordVault> m_vault;
};

void TestConsoleTopology::initTestCase()
{
    m_cluster = std::make_unique<TestCluster>(3, 1);
}

void TestConsoleTopology::init()
{
    QFile::remove(m_dir.filePath(QStringLiteral("settings.ini")));
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    m_store = std::make_unique<ProfileStore>(m_settings.get());
    // No keychain service in CI: the session-only vault is the console's fallback then.
    m_vault = std::make_unique<PasswordVault>(PasswordVault::Backend::SessionOnly);
}

void TestConsoleTopology::cleanup()
{
    m_store.reset();
    m_settings.reset();
    m_vault.reset();
}

std::unique_ptr<MainWindow> TestConsoleTopology::openConsole(const QString &profile)
{
    auto window = std::make_unique<MainWindow>(*m_store, *m_vault);
    QSignalSpy settled(window.get(), &MainWindow::settled);
    if (!window->connectProfile(profile))
        return nullptr;
    window->show();
    return settled.wait(30000) ? std::move(window) : nullptr;
}

void TestConsoleTopology::clusterProfileInTheDialog()
{
    ConnectionDialog d(*m_store, *m_vault);
    d.show();
    d.nameEdit()->setText(QStringLiteral("cluster"));
    d.transportBox()->setCurrentIndex(int(ConnectionProfile::Transport::Cluster));
    QVERIFY(d.seedsEdit()->isVisible());
    QVERIFY(!d.hostEdit()->isVisible());
    QVERIFY(!d.dbEdit()->isVisible()); // a cluster has database 0 only
    QVERIFY(!d.masterNameEdit()->isVisible());
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("at least one node")));
    QVERIFY(!d.testButton()->isEnabled());

    d.seedsEdit()->setText(QStringLiteral("127.0.0.1:7000, 127.0.0.1:99999"));
    QVERIFY2(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("'127.0.0.1:99999': bad port")),
             qPrintable(d.problems().join(QLatin1Char('\n'))));
    d.seedsEdit()->setText(QStringLiteral("::1:7000"));
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("brackets")));
    d.seedsEdit()->setText(QStringLiteral("redis://default:Secr3t@127.0.0.1:7000"));
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("host:port only")));
    QVERIFY(!d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("Secr3t")));

    // One live seed is enough; the form takes commas or spaces.
    const QString seeds = seedsOf(m_cluster->url());
    d.seedsEdit()->setText(seeds.section(QStringLiteral(", "), 0, 0));
    QVERIFY2(d.problems().isEmpty(), qPrintable(d.problems().join(QLatin1Char('\n'))));
    QSignalSpy tested(&d, &ConnectionDialog::tested);
    QTest::mouseClick(d.testButton(), Qt::LeftButton);
    QVERIFY(tested.wait(15000));
    QVERIFY2(tested.first().at(0).toBool(), qPrintable(d.resultText()));
    QVERIFY2(d.resultText().startsWith(QStringLiteral("Connected to Redis 7")), qPrintable(d.resultText()));
    QVERIFY2(d.resultText().contains(QStringLiteral("(cluster: 3 masters · 3 replicas): 0 keys on all masters")),
             qPrintable(d.resultText()));

    d.seedsEdit()->setText(seeds);
    keepShot(&d, QStringLiteral("dialog-cluster"));
    QSignalSpy saved(&d, &ConnectionDialog::saved);
    QTest::mouseClick(d.saveButton(), Qt::LeftButton);
    QVERIFY(saved.wait(15000));
    const auto stored = m_store->find(QStringLiteral("cluster"));
    QVERIFY(stored);
    QCOMPARE(stored->transport, ConnectionProfile::Transport::Cluster);
    QCOMPARE(stored->seeds.size(), 6);
    QCOMPARE(stored->toOptions().toUrl(), m_cluster->url());
    QCOMPARE(stored->endpoint(), QStringLiteral("cluster via %1").arg(stored->seeds.first()));
}

void TestConsoleTopology::sentinelProfileInTheDialog()
{
    TestSentinel setup(kSentinelPassword);
    ConnectionDialog d(*m_store, *m_vault);
    d.show();
    d.nameEdit()->setText(QStringLiteral("failover"));
    d.transportBox()->setCurrentIndex(int(ConnectionProfile::Transport::Sentinel));
    QVERIFY(d.seedsEdit()->isVisible());
    QVERIFY(d.masterNameEdit()->isVisible());
    QVERIFY(d.sentinelPasswordEdit()->isVisible());
    QVERIFY(d.dbEdit()->isVisible());
    d.seedsEdit()->setText(seedsOf(setup.url()));
    QVERIFY(d.problems().join(QLatin1Char(' ')).contains(QStringLiteral("master name")));
    d.masterNameEdit()->setText(QStringLiteral("mymaster"));
    QVERIFY2(d.problems().isEmpty(), qPrintable(d.problems().join(QLatin1Char('\n'))));

    // The sentinels refuse a wrong password of their own: nothing is saved.
    d.sentinelPasswordEdit()->setText(QStringLiteral("not-it"));
    QSignalSpy tested(&d, &ConnectionDialog::tested);
    QTest::mouseClick(d.saveButton(), Qt::LeftButton);
    QVERIFY(tested.wait(15000));
    QCOMPARE(tested.first().at(0).toBool(), false);
    // Refused, not unreachable: no "Save anyway".
    QVERIFY2(d.resultText().startsWith(QStringLiteral("Credentials refused: by the sentinels: sentinel authentication")),
             qPrintable(d.resultText()));
    QCOMPARE(d.saveButton()->text(), QStringLiteral("Save"));
    QVERIFY(!d.resultText().contains(QStringLiteral("not-it")));
    keepShot(&d, QStringLiteral("dialog-sentinel-refused"));
    QVERIFY(m_store->list().isEmpty());
    QCOMPARE(m_vault->sessionCount(), 0);

    d.sentinelPasswordEdit()->setText(kSentinelPassword);
    QSignalSpy saved(&d, &ConnectionDialog::saved);
    QTest::mouseClick(d.saveButton(), Qt::LeftButton);
    QVERIFY(saved.wait(15000));
    QVERIFY2(d.result() == QDialog::Accepted, qPrintable(d.resultText()));
    const auto stored = m_store->find(QStringLiteral("failover"));
    QVERIFY(stored);
    QCOMPARE(stored->transport, ConnectionProfile::Transport::Sentinel);
    QCOMPARE(stored->masterName, QStringLiteral("mymaster"));
    QCOMPARE(stored->passwordStorage, ConnectionProfile::PasswordStorage::None);
    QCOMPARE(stored->sentinelPasswordStorage, ConnectionProfile::PasswordStorage::Ask);
    QVERIFY(m_vault->hasSessionPassword(QStringLiteral("failover"), PasswordVault::Secret::Sentinel));
    QVERIFY(!m_vault->hasSessionPassword(QStringLiteral("failover")));
    m_settings->sync();
    QFile file(m_settings->fileName());
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray contents = file.readAll();
    QVERIFY(contents.contains("mymaster"));
    QVERIFY2(!contents.contains(kSentinelPassword.toUtf8()), contents.constData());

    // Renamed: the sentinel password moves with it.
    ConnectionDialog edit(*m_store, *m_vault);
    edit.setProfile(*stored, true);
    QCOMPARE(edit.sentinelPasswordEdit()->placeholderText(), QStringLiteral("asked for when connecting (no keychain service)"));
    edit.nameEdit()->setText(QStringLiteral("failover eu"));
    QSignalSpy savedAgain(&edit, &ConnectionDialog::saved);
    QTest::mouseClick(edit.saveButton(), Qt::LeftButton); // tests with the kept password first
    QVERIFY(savedAgain.wait(15000));
    QVERIFY(m_store->contains(QStringLiteral("failover eu")));
    QVERIFY(!m_store->contains(QStringLiteral("failover")));
    QVERIFY(m_vault->hasSessionPassword(QStringLiteral("failover eu"), PasswordVault::Secret::Sentinel));
    QVERIFY(!m_vault->hasSessionPassword(QStringLiteral("failover"), PasswordVault::Secret::Sentinel));
}

void TestConsoleTopology::profilesRoundTrip()
{
    ConnectionProfile p;
    p.name = QStringLiteral("sentinels");
    p.transport = ConnectionProfile::Transport::Sentinel;
    p.seeds = ConnectionProfile::splitSeeds(QStringLiteral("10.0.0.1:26379 10.0.0.2;[::1]:26380,10.0.0.3:26381"));
    QCOMPARE(p.seeds.size(), 4);
    p.masterName = QStringLiteral("limits");
    p.sentinelUser = QStringLiteral("watcher");
    p.sentinelPasswordStorage = ConnectionProfile::PasswordStorage::Keychain;
    p.user = QStringLiteral("app");
    p.passwordStorage = ConnectionProfile::PasswordStorage::Keychain;
    p.db = 2;
    QVERIFY2(p.problems().isEmpty(), qPrintable(p.problems().join(QLatin1Char('\n'))));
    m_store->save(p);
    QCOMPARE(m_store->find(p.name), std::optional<ConnectionProfile>(p));
    const ConnectionOptions o = p.toOptions(QStringLiteral("pw"), QStringLiteral("spw"));
    QCOMPARE(o.transport, ConnectionOptions::Transport::Sentinel);
    QCOMPARE(o.seeds.size(), 4);
    QCOMPARE(o.seeds[1], (HostPort{QStringLiteral("10.0.0.2"), 26379})); // the sentinel port by default
    QCOMPARE(o.seeds[2], (HostPort{QStringLiteral("::1"), 26380}));
    QCOMPARE(o.masterName, QStringLiteral("limits"));
    QCOMPARE(o.sentinelUser, QStringLiteral("watcher"));
    QCOMPARE(o.sentinelPassword, QStringLiteral("spw"));
    QCOMPARE(o.db, 2);
    QVERIFY(!o.toUrl().contains(QStringLiteral("spw"))); // redacted
    // Back from a URL given on the command line; its passwords are not kept.
    const ConnectionProfile back = ConnectionProfile::fromOptions(o, p.name);
    QCOMPARE(back.seeds, (QStringList{QStringLiteral("10.0.0.1:26379"), QStringLiteral("10.0.0.2:26379"), QStringLiteral("[::1]:26380"),
                                      QStringLiteral("10.0.0.3:26381")}));
    QCOMPARE(back.sentinelPasswordStorage, ConnectionProfile::PasswordStorage::Ask);

    ConnectionProfile c;
    c.name = QStringLiteral("c");
    c.transport = ConnectionProfile::Transport::Cluster;
    c.seeds = {QStringLiteral("127.0.0.1:7000")};
    c.db = 1;
    QVERIFY(c.problems().join(QLatin1Char(' ')).contains(QStringLiteral("only database 0")));
}

void TestConsoleTopology::consoleOnACluster()
{
    // Keys whose slots belong to every master.
    Connection direct(ConnectionOptions::fromUrl(m_cluster->url()));
    Limiter limiter(direct);
    QSet<int> owners;
    for (int i = 0; i < 60; ++i) {
        const QByteArray key = "shop:api:user" + QByteArray::number(i);
        QCOMPARE(limiter.check(key, kSpec, kT0 + i).used, 1);
        owners.insert(m_cluster->ownerOf(key));
    }
    QCOMPARE(owners.size(), 3);

    const ConnectionProfile p = clusterProfile({QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(0).port())});
    m_store->save(p);
    const auto console = openConsole(p.name);
    QVERIFY(console);
    MainWindow &window = *console;

    // The key browser spans every master.
    QCOMPARE(window.keyBrowser()->model()->keyCount(), qint64(60));

    // The status bar: the nodes and their roles.
    const QString summary = window.serverStatus()->summary();
    QVERIFY2(summary.contains(QStringLiteral("3 masters · 3 replicas")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("cluster via 127.0.0.1:%1").arg(m_cluster->node(0).port())), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("60 keys")), qPrintable(summary));
    const QStringList nodes = window.serverStatus()->nodesText().split(QLatin1Char('\n'));
    QCOMPARE(nodes.size(), 6);
    QCOMPARE(nodes.filter(QStringLiteral(" master, slots ")).size(), 3);
    QCOMPARE(nodes.filter(QStringLiteral(" replica of 127.0.0.1:")).size(), 3);
    for (int i = 0; i < m_cluster->size(); ++i)
        QVERIFY2(window.serverStatus()->nodesText().contains(QStringLiteral("127.0.0.1:%1 ").arg(m_cluster->node(i).port())),
                 qPrintable(window.serverStatus()->nodesText()));

    // A key's page says where it lives.
    KeyView page(window.client(), "shop:api:user7", "ratescope:");
    QSignalSpy pageLoaded(&page, &KeyView::loaded);
    QVERIFY(pageLoaded.wait(15000));
    QCOMPARE(page.fieldText(QStringLiteral("Node")), QStringLiteral("slot %1 on 127.0.0.1:%2")
                                                         .arg(keySlot("shop:api:user7"))
                                                         .arg(m_cluster->node(m_cluster->ownerOf("shop:api:user7")).port()));

    // The overview adds up the masters: every limiter key has an expiry.
    QTRY_VERIFY_WITH_TIMEOUT(window.overview()->summaryText().contains(QStringLiteral("with an expiry")), 10000);
    const QString overview = window.overview()->summaryText();
    QVERIFY2(overview.contains(QStringLiteral("60 keys · 60 with an expiry (all masters)")), qPrintable(overview));
    QVERIFY2(overview.contains(QStringLiteral("3 masters · 3 replicas")), qPrintable(overview));

    // The Hot tab: every master's limiters, each row naming its master, and a row per master.
    window.tabs()->setCurrentWidget(window.hot());
    QTRY_VERIFY_WITH_TIMEOUT(window.hot()->isLoaded(), 15000);
    QCOMPARE(window.hot()->model()->rowCount(), 50); // the 50 shown of 60
    QVERIFY(!window.hot()->view()->isColumnHidden(HotLimiterModel::Master));
    QVERIFY2(window.hot()->statusText().contains(QStringLiteral("60 limiters in 60 keys")), qPrintable(window.hot()->statusText()));
    QCOMPARE(window.hot()->masters()->rowCount(), 3);
    QVERIFY(window.hot()->mastersView()->isVisibleTo(window.hot()));
    qint64 hotKeys = 0;
    for (int row = 0; row < 3; ++row)
        hotKeys += window.hot()->masters()->index(row, HotMasterModel::Keys).data().toString().toLongLong();
    QCOMPARE(hotKeys, 60);
    for (int row = 0; row < 50; ++row) {
        const QByteArray key = window.hot()->model()->index(row, HotLimiterModel::Key).data(HotLimiterModel::KeyBytesRole).toByteArray();
        QCOMPARE(window.hot()->model()->index(row, HotLimiterModel::Master).data().toString(),
                 QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(m_cluster->ownerOf(key)).port()));
    }
    window.tabs()->setCurrentWidget(window.overview());

    // The CLI tells the same story.
    const CliResult r = runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("--json"), QStringLiteral("info")});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject info = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(info.value(QStringLiteral("db_size")).toInteger(), 60);
    QCOMPARE(info.value(QStringLiteral("expires")).toInteger(), 60);
    const QJsonArray list = info.value(QStringLiteral("nodes")).toArray();
    QCOMPARE(list.size(), 6);
    int replicas = 0;
    for (const QJsonValue &n : list)
        if (n.toObject().value(QStringLiteral("role")).toString() == QStringLiteral("replica")) {
            ++replicas;
            QVERIFY(!n.toObject().value(QStringLiteral("master")).toString().isEmpty());
        }
    QCOMPARE(replicas, 3);

    // The scripts' state: once the library is deployed on every master, the overview says so;
    // the Deploy button is refused under the read-only lock, saying why.
    QTRY_VERIFY_WITH_TIMEOUT(window.overview()->scriptsText().startsWith(QStringLiteral("script cache only")), 10000);
    QVERIFY(window.overview()->deployButton()->isEnabled());
    QCOMPARE(runCli({QStringLiteral("--url"), m_cluster->url(), QStringLiteral("scripts"), QStringLiteral("deploy")}).exitCode, 0);
    window.overview()->refresh();
    const QString library = QStringLiteral("functions library ratescope %1 on 3 of 3 masters").arg(QStringLiteral(RATESCOPE_VERSION));
    QTRY_COMPARE_WITH_TIMEOUT(window.overview()->scriptsText(), library, 10000);
    window.client()->setReadOnly(true);
    QVERIFY(!window.overview()->deployButton()->isEnabled());
    QVERIFY2(window.overview()->deployButton()->toolTip().startsWith(QStringLiteral("Read-only")),
             qPrintable(window.overview()->deployButton()->toolTip()));
    window.client()->setReadOnly(false);
    QVERIFY(window.overview()->deployButton()->isEnabled());
    Connection(ConnectionOptions::fromUrl(m_cluster->url())).command({"DEL", "ratescope:audit"}); // the deploy's entry: keys stay 60
}

void TestConsoleTopology::consoleFollowsAClusterFailover()
{
    try {
        followClusterFailover();
    } catch (const std::exception &e) {
        QFAIL(e.what());
    }
}

void TestConsoleTopology::followClusterFailover()
{
    // A planned failover (CLUSTER FAILOVER on the replica), then a crash of the new master:
    // decisions go on against whichever node owns the slot, the count intact; the console
    // shows the new masters.
    const QByteArray key = "fo:{cluster}:user";
    const int first = m_cluster->ownerOf(key);
    const int second = m_cluster->replicaOf(first);
    QVERIFY(second >= 0);
    Connection direct(ConnectionOptions::fromUrl(m_cluster->url()));
    Limiter limiter(direct);
    for (int i = 1; i <= 3; ++i)
        QCOMPARE(limiter.check(key, kSpec, kT0 + i).used, i);

    const ConnectionProfile p = clusterProfile(ConnectionProfile::splitSeeds(seedsOf(m_cluster->url())));
    m_store->save(p);
    const auto console = openConsole(p.name);
    QVERIFY(console);
    MainWindow &window = *console;
    const QString firstAddress = QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(first).port());
    const QString secondAddress = QStringLiteral("127.0.0.1:%1").arg(m_cluster->node(second).port());
    QVERIFY2(window.serverStatus()->nodesText().contains(QStringLiteral("%1 replica of %2").arg(secondAddress, firstAddress)),
             qPrintable(window.serverStatus()->nodesText()));

    // Planned: the replica takes over once it has every write; the old master answers MOVED.
    Connection(m_cluster->node(second).options()).command({"CLUSTER", "FAILOVER"});
    m_cluster->waitUntilMaster(second);
    QCOMPARE(m_cluster->ownerOf(key), second);
    QCOMPARE(limiter.check(key, kSpec, kT0 + 4).used, 4);
    QTRY_VERIFY2_WITH_TIMEOUT(window.serverStatus()->nodesText().contains(QStringLiteral("%1 master, slots").arg(secondAddress)),
                              qPrintable(window.serverStatus()->nodesText()), 15000);

    // Crash: the new master dies once its replica has the writes; the cluster promotes the
    // replica (after cluster-node-timeout). The call that meets the dead node fails, unrepeated
    // (it cannot know whether the script ran); the next one goes to the new owner.
    QCOMPARE(Connection(m_cluster->node(second).options()).command({"WAIT", "1", "5000"}).integer(), 1);
    m_cluster->node(second).kill();
    m_cluster->waitUntilMaster(first);
    try {
        limiter.check(key, kSpec, kT0 + 5);
        QFAIL("a decision reached a dead node");
    } catch (const ReplyError &e) {
        QVERIFY2(e.message().startsWith(QStringLiteral("DOWN %1: ").arg(secondAddress)), qPrintable(e.message()));
    }
    QCOMPARE(limiter.check(key, kSpec, kT0 + 6).used, 5);
    QTRY_VERIFY2_WITH_TIMEOUT(window.serverStatus()->nodesText().contains(QStringLiteral("%1 master, slots").arg(firstAddress)),
                              qPrintable(window.serverStatus()->nodesText() + QLatin1Char('\n') + window.serverStatus()->summary() +
                                         QLatin1Char('\n') + window.client()->lastError()),
                              15000);
    QTRY_VERIFY2_WITH_TIMEOUT(window.serverStatus()->summary().contains(QStringLiteral("Connected")),
                              qPrintable(window.serverStatus()->summary()), 15000);
    QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("3 masters")));

    // No replica left to take over: the console stays connected to the other masters and
    // names the missing one; a listing keeps what it read and stops at it.
    m_cluster->node(first).kill();
    QTRY_VERIFY2_WITH_TIMEOUT(window.serverStatus()->summary().contains(QStringLiteral("3 masters (1 not answering)")),
                              qPrintable(window.serverStatus()->summary()), 15000);
    QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("Connected")));
    QVERIFY2(window.serverStatus()->nodesText().contains(QStringLiteral("%1 master, slots").arg(firstAddress)) &&
                 window.serverStatus()->nodesText().contains(QStringLiteral("not answering")),
             qPrintable(window.serverStatus()->nodesText()));
    QSignalSpy listed(window.keyBrowser(), &KeyBrowser::scanFinished);
    window.keyBrowser()->refresh();
    QVERIFY(listed.wait(15000));
    QVERIFY2(window.keyBrowser()->problemText().contains(QStringLiteral("DOWN %1").arg(firstAddress)),
             qPrintable(window.keyBrowser()->problemText()));
    QVERIFY2(window.keyBrowser()->progressText().startsWith(QStringLiteral("Listing stopped by an error")),
             qPrintable(window.keyBrowser()->progressText()));
    QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("Connected")));
    QTRY_VERIFY_WITH_TIMEOUT(window.overview()->summaryText().contains(QStringLiteral("(the 2 of 3 masters that answered)")), 15000);
}

void TestConsoleTopology::consoleFollowsASentinelFailover()
{
    TestSentinel setup(kSentinelPassword);
    Connection direct(ConnectionOptions::fromUrl(setup.url()));
    Limiter limiter(direct);
    for (int i = 1; i <= 3; ++i)
        QCOMPARE(limiter.check("fo:user", kSpec, kT0 + i).used, i);

    ConnectionProfile p;
    p.name = QStringLiteral("failover");
    p.transport = ConnectionProfile::Transport::Sentinel;
    p.seeds = {QStringLiteral("127.0.0.1:%1").arg(setup.sentinel().port())};
    p.masterName = QStringLiteral("mymaster");
    p.sentinelPasswordStorage = ConnectionProfile::PasswordStorage::Ask;
    m_store->save(p);
    m_vault->remember(p.name, kSentinelPassword, PasswordVault::Secret::Sentinel);
    const auto console = openConsole(p.name);
    QVERIFY(console);
    MainWindow &window = *console;

    const QString master = QStringLiteral("127.0.0.1:%1").arg(setup.master().port());
    const QString replica = QStringLiteral("127.0.0.1:%1").arg(setup.replica().port());
    QString summary = window.serverStatus()->summary();
    QVERIFY2(summary.contains(QStringLiteral("master %1 · 1 replica").arg(master)), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("sentinel mymaster via")), qPrintable(summary));
    QVERIFY2(window.serverStatus()->nodesText().contains(QStringLiteral("%1 replica of %2").arg(replica, master)),
             qPrintable(window.serverStatus()->nodesText()));
    QCOMPARE(window.keyBrowser()->model()->keyCount(), qint64(1));

    setup.failover();
    // The next heartbeat (every 2 s) reaches the new master; bounded wait.
    QTRY_VERIFY2_WITH_TIMEOUT(window.serverStatus()->summary().contains(QStringLiteral("master %1").arg(replica)),
                              qPrintable(window.serverStatus()->summary()), 30000);
    QVERIFY(window.serverStatus()->summary().contains(QStringLiteral("Connected")));
}

QTEST_MAIN(TestConsoleTopology)
#include "tst_consoletopology.moc"
