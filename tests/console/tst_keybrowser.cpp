// The keys panel against real redis-servers: 10,000 limiters of all five algorithms grouped
// with the right counts and columns (under QAbstractItemModelTester while it scans), the glob
// filter, stopping a scan, the GUI thread never stalling while 200,000 keys are read, the rows
// in view getting their columns while those 200,000 keys are still being read, and the
// context menu: pinning keys to the monitor, acting on the right group while the scan goes on.
#include "admin/audit.h"
#include "admin/policy.h"
#include "base/keytext.h"
#include "keybrowser.h"
#include "limiters/limiter.h"
#include "limiters/limiterscript.h"
#include "redis/connection.h"
#include "redis/sandboxserver.h"
#include "redisclient.h"
#include "usagebardelegate.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QLabel>
#include <QMenu>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr int kPerAlgorithm = 2000;
constexpr int kOthers = 100;
constexpr qint64 kLimit = 100;
// A window of a year: nothing refills or expires while the test looks.
constexpr qint64 kWindowUs = 366LL * 86400 * 1000000;

int usesOf(int i)
{
    return i % 5 + 1;
}

void fillMixed(Connection &c)
{
    PolicyStore policies(c, QStringLiteral("ratescope:"));
    std::vector<Command> batch;
    auto flush = [&] {
        for (const Reply &r : c.pipeline(batch))
            if (r.isError())
                throw std::runtime_error(r.text().toStdString());
        batch.clear();
    };
    for (Algorithm a : kAllAlgorithms) {
        const QString name = algorithmName(a);
        Policy p;
        p.name = name;
        p.match = "t:" + name.toUtf8() + ":*";
        p.spec = {a, kLimit, kWindowUs, 1};
        policies.set(p, 0, QStringLiteral("test"));
        const LimiterScript &script = LimiterScript::forAlgorithm(a);
        script.load(c);
        for (int i = 0; i < kPerAlgorithm; ++i) {
            const QByteArray key = "t:" + name.toUtf8() + ":c" + QByteArray::number(i);
            for (int u = 0; u < usesOf(i); ++u)
                batch.push_back(script.command(key, Limiter::arguments(key, p.spec, std::nullopt, false), false));
            if (batch.size() >= 5000)
                flush();
        }
    }
    for (int i = 0; i < kOthers; ++i)
        batch.push_back({"SET", "t:other:s" + QByteArray::number(i), "x"});
    flush();
}

QModelIndex childNamed(const QAbstractItemModel *m, const QModelIndex &parent, const QString &prefix)
{
    for (int r = 0; r < m->rowCount(parent); ++r) {
        const QModelIndex i = m->index(r, 0, parent);
        if (i.data().toString().startsWith(prefix))
            return i;
    }
    return {};
}

} // namespace

class TestKeyBrowser : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void mixedKeyspace();
    void filter();
    void guiNeverStallsOn200000Keys();
    void stopKeepsWhatWasFound();
    void aLostConnectionStartsTheWalkOver_data();
    void aLostConnectionStartsTheWalkOver();
    void aLostConnectionGreysTheColumns();
    void columnsInViewArriveWhileScanning();
    void pinKeysToMonitor();
    void contextMenuFollowsItsGroupDuringScan();
    void contextMenuActsOnItsOwnRowsAfterTheModelWasCleared();
    void followsChangesMadeElsewhere();
    void followsTheKeyspace();
    void keysChangedHereAreReadAtOnce();
    void aShardGroupOpensAsItsLimiter();

private:
    void startLarge();

    SandboxServer m_mixed;
    SandboxServer m_large;
    bool m_largeFilled = false;
};

namespace {

constexpr int kLargeKeys = 200000;

// The browser's context menu for the row at `index`, as a right click opens it.
QMenu *openContextMenu(KeyBrowser &browser, const QModelIndex &index)
{
    for (QMenu *old : browser.findChildren<QMenu *>())
        delete old;
    QTreeView *view = browser.view();
    emit view->customContextMenuRequested(view->visualRect(index).center());
    const auto menus = browser.findChildren<QMenu *>();
    return menus.size() == 1 ? menus.front() : nullptr;
}

QAction *actionNamed(QMenu *menu, const QString &text)
{
    for (QAction *a : menu->actions())
        if (a->text() == text)
            return a;
    return nullptr;
}

// Shows the browser at a desk's size and lists the client's keyspace; false if it never ends.
bool listInWindow(KeyBrowser &browser, RedisClient &client)
{
    browser.resize(1100, 700);
    browser.show();
    if (!QTest::qWaitForWindowExposed(&browser))
        return false;
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, "ratescope:", ":");
    return finished.wait(60000);
}

QStringList actionTexts(QMenu *menu)
{
    QStringList texts;
    for (QAction *a : menu->actions())
        if (!a->isSeparator())
            texts << a->text();
    return texts;
}

} // namespace

void TestKeyBrowser::initTestCase()
{
    m_mixed.start();
    Connection c(m_mixed.options());
    fillMixed(c);
    QCOMPARE(c.command({"DBSIZE"}).toInteger(),
             int(std::size(kAllAlgorithms)) * kPerAlgorithm + kOthers + 1); // + the policies hash
}

void TestKeyBrowser::mixedKeyspace()
{
    RedisClient client(m_mixed.options());
    client.open();
    KeyBrowser browser;
    QAbstractItemModelTester tester(browser.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(listInWindow(browser, client));
    QVERIFY2(browser.problemText().isEmpty(), qPrintable(browser.problemText()));
    const KeyTreeModel *m = browser.model();
    QCOMPARE(m->keyCount(), int(std::size(kAllAlgorithms)) * kPerAlgorithm + kOthers + 1);
    QVERIFY2(browser.progressText().startsWith(QStringLiteral("12,101 keys")), qPrintable(browser.progressText()));

    // Groups and counts: t (12,100) holding one group per algorithm and the others.
    const QModelIndex t = childNamed(m, {}, QStringLiteral("t ("));
    QCOMPARE(t.data().toString(), QStringLiteral("t (12,100)"));
    QCOMPARE(m->rowCount(t), 7); // an algorithm each, and other
    QCOMPARE(childNamed(m, {}, QStringLiteral("ratescope")).data().toString(), QStringLiteral("ratescope (1)"));
    QCOMPARE(childNamed(m, t, QStringLiteral("other")).data().toString(), QStringLiteral("other (100)"));
    QVERIFY(browser.view()->isExpanded(t)); // small enough to open by itself

    for (Algorithm a : kAllAlgorithms) {
        const QString name = algorithmName(a);
        const QModelIndex group = childNamed(m, t, name + QStringLiteral(" ("));
        QCOMPARE(group.data().toString(), QStringLiteral("%1 (2,000)").arg(name));
        // Open it at the top of the view; the rows in view get their columns.
        browser.view()->collapseAll();
        browser.view()->expand(t);
        browser.view()->expand(group);
        browser.view()->scrollTo(m->index(0, 0, group), QAbstractItemView::PositionAtTop);
        QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 15000);
        const auto visible = browser.visibleKeyIds();
        QVERIFY(visible.size() >= 10);
        int checked = 0;
        for (quint32 id : visible) {
            const QModelIndex key = m->indexOfKey(id);
            if (key.parent() != group)
                continue;
            const QString leaf = key.data().toString(); // "c123"
            QVERIFY2(leaf.startsWith(QLatin1Char('c')), qPrintable(leaf));
            const int uses = usesOf(leaf.mid(1).toInt());
            auto text = [&](int column) { return key.siblingAtColumn(column).data().toString(); };
            QCOMPARE(text(KeyTreeModel::AlgorithmColumn), name);
            QCOMPARE(text(KeyTreeModel::UsageColumn), QStringLiteral("%1 / %2").arg(uses).arg(kLimit));
            QCOMPARE(text(KeyTreeModel::RemainingColumn), QString::number(kLimit - uses));
            QVERIFY2(QRegularExpression(QStringLiteral("^\\d+ d \\d+ h$")).match(text(KeyTreeModel::TtlColumn)).hasMatch() ||
                         text(KeyTreeModel::TtlColumn) == QStringLiteral("no expiry"),
                     qPrintable(text(KeyTreeModel::TtlColumn)));
            QVERIFY2(text(KeyTreeModel::MemoryColumn).endsWith(QLatin1Char('B')), qPrintable(text(KeyTreeModel::MemoryColumn)));
            ++checked;
        }
        QVERIFY2(checked >= 10, qPrintable(QString::number(checked)));
    }

    // Keys that are no limiters say what they are.
    const QModelIndex others = childNamed(m, t, QStringLiteral("other"));
    browser.view()->collapseAll();
    browser.view()->expand(t);
    browser.view()->expand(others);
    browser.view()->scrollTo(m->index(0, 0, others), QAbstractItemView::PositionAtTop);
    QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 15000);
    QCOMPARE(m->index(0, KeyTreeModel::AlgorithmColumn, others).data().toString(), QStringLiteral("string"));
    QCOMPARE(m->index(0, KeyTreeModel::UsageColumn, others).data().toString(), QString());
}

void TestKeyBrowser::filter()
{
    RedisClient client(m_mixed.options());
    client.open();
    KeyBrowser browser;
    QAbstractItemModelTester tester(browser.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    browser.show();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, "ratescope:", ":");
    QVERIFY(finished.wait(60000));

    browser.setFilter(QStringLiteral("t:gcra:*"));
    QCOMPARE(browser.matchPattern(), QByteArray("t:gcra:*"));
    QVERIFY(finished.wait(60000));
    QCOMPARE(browser.model()->keyCount(), kPerAlgorithm);
    QVERIFY2(browser.progressText().contains(QStringLiteral("matching t:gcra:*")), qPrintable(browser.progressText()));

    // Plain text matches keys that contain it: c19, c190..c199, c1900..c1999 in each group.
    browser.setFilter(QStringLiteral("c19"));
    QCOMPARE(browser.matchPattern(), QByteArray("*c19*"));
    QVERIFY(finished.wait(60000));
    QCOMPARE(browser.model()->keyCount(), int(std::size(kAllAlgorithms)) * 111);

    browser.setFilter(QStringLiteral("no-such-key*"));
    QVERIFY(finished.wait(60000));
    QCOMPARE(browser.model()->keyCount(), 0);
}

void TestKeyBrowser::startLarge()
{
    if (m_largeFilled)
        return;
    m_large.start();
    Connection c(m_large.options());
    std::vector<Command> batch;
    for (int i = 0; i < kLargeKeys; ++i) {
        batch.push_back(
            {"SET", "svc" + QByteArray::number(i % 50) + ":tenant" + QByteArray::number(i % 400) + ":user" + QByteArray::number(i), "1"});
        if (batch.size() == 10000) {
            c.pipeline(batch);
            batch.clear();
        }
    }
    QCOMPARE(c.command({"DBSIZE"}).toInteger(), kLargeKeys);
    m_largeFilled = true;
}

void TestKeyBrowser::guiNeverStallsOn200000Keys()
{
    startLarge();
    RedisClient client(m_large.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    KeyBrowser browser;
    browser.resize(1100, 700);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    QTest::qWait(50);

    // The stall probe: a 10 ms timer; the longest gap between its ticks is how long the GUI
    // thread was busy (or blocked) at a stretch.
    QElapsedTimer clock;
    qint64 last = 0, worst = 0;
    QTimer probe;
    probe.setInterval(10);
    connect(&probe, &QTimer::timeout, this, [&] {
        const qint64 now = clock.elapsed();
        worst = std::max(worst, now - last);
        last = now;
    });
    clock.start();
    probe.start();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, "ratescope:", ":");
    QVERIFY(finished.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 15000);
    // Open a group (too big a keyspace to sort at once: each group is sorted as it opens)
    // and scroll through it while columns fill.
    const KeyTreeModel *m = browser.model();
    QCOMPARE(m->index(0, 0).data().toString(), QStringLiteral("svc0 (4,000)"));
    QCOMPARE(m->index(9, 0).data().toString(), QStringLiteral("svc9 (4,000)")); // natural order: svc9 before svc10
    QCOMPARE(m->index(49, 0).data().toString(), QStringLiteral("svc49 (4,000)"));
    const QModelIndex first = m->index(0, 0);
    browser.view()->expand(first);
    const QModelIndex tenant = m->index(0, 0, first);
    QCOMPARE(tenant.data().toString(), QStringLiteral("tenant0 (500)"));
    browser.view()->expand(tenant);
    QStringList names;
    for (int r = 0; r < m->rowCount(tenant); ++r)
        names << m->index(r, 0, tenant).data().toString();
    QStringList sorted = names;
    std::sort(sorted.begin(), sorted.end(), [](const QString &a, const QString &b) { return naturalLess(a.toUtf8(), b.toUtf8()); });
    QCOMPARE(names, sorted);
    for (int i = 0; i < 10; ++i) {
        browser.view()->verticalScrollBar()->setValue(i * 40);
        QTest::qWait(30);
    }
    QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 15000);
    probe.stop();
    const qint64 elapsed = clock.elapsed();
    QCOMPARE(browser.model()->keyCount(), 200000);
    qInfo("200,000 keys read in %lld ms; longest GUI-thread stall %lld ms", elapsed, worst);
    QVERIFY2(worst < 100, qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(worst)));
}

void TestKeyBrowser::stopKeepsWhatWasFound()
{
    startLarge();
    RedisClient client(m_large.options());
    client.open();
    KeyBrowser browser;
    browser.show();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, "ratescope:", ":");
    QTRY_VERIFY_WITH_TIMEOUT(browser.model()->keyCount() > 0, 20000);
    browser.cancelScan();
    QCOMPARE(finished.size(), 1);
    QVERIFY(!browser.isScanning());
    const qint64 listed = browser.model()->keyCount();
    QTest::qWait(300); // nothing more arrives
    QVERIFY(browser.model()->keyCount() >= listed);
    QVERIFY(browser.model()->keyCount() < 200000);
    QVERIFY2(browser.progressText().startsWith(QStringLiteral("Stopped")), qPrintable(browser.progressText()));
}

void TestKeyBrowser::aLostConnectionStartsTheWalkOver_data()
{
    QTest::addColumn<bool>("restart");
    QTest::newRow("connection killed") << false;
    QTest::newRow("server restarted") << true;
}

void TestKeyBrowser::aLostConnectionStartsTheWalkOver()
{
    QFETCH(bool, restart);
    // The server goes away mid-walk (pages asked for ahead of the one coming): the walk
    // pauses, and once the connection is back starts over, since a cursor is good only on the
    // server that gave it: the restarted server holds the same keys in another order, and
    // carrying on from the old cursor skipped about a tenth of them. Every key listed once.
    startLarge();
    RedisClient client(m_large.options());
    client.open();
    KeyBrowser browser;
    browser.show();
    QStringList whenInterrupted;
    connect(&browser, &KeyBrowser::scanFinished, &browser, [&] { whenInterrupted << browser.problemText(); });
    browser.setClient(&client, "ratescope:", ":");
    QElapsedTimer waited;
    waited.start();
    while (browser.scannedCount() < 10000 && waited.elapsed() < 20000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    QVERIFY(browser.isScanning());
    if (restart) {
        {
            Connection admin(m_large.options());
            QCOMPARE(admin.command({"SAVE"}).text(), QStringLiteral("OK"));
        }
        m_large.stop();
        QTRY_VERIFY_WITH_TIMEOUT(!whenInterrupted.isEmpty(), 20000);
        QVERIFY2(whenInterrupted.front().contains(QStringLiteral("resumes when the connection is back")),
                 qPrintable(whenInterrupted.front()));
        QVERIFY(browser.progressText().startsWith(QStringLiteral("Paused")));
        QVERIFY(browser.model()->keyCount() < kLargeKeys);
        m_large.restart(); // the same port and directory: the saved keys
        client.retryNow();
    } else {
        // The same server: the console's connection is cut under the walk. The page under way
        // is read again on a new connection, or the listing pauses and starts over.
        Connection admin(m_large.options());
        QVERIFY(admin.command({"CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal"}).toInteger() >= 1);
        QTRY_VERIFY_WITH_TIMEOUT(browser.listingMs() >= 0 || client.state() == RedisClient::State::Reconnecting, 20000);
        client.retryNow();
    }
    QTRY_VERIFY_WITH_TIMEOUT(browser.listingMs() >= 0, 60000);
    QCOMPARE(browser.model()->keyCount(), kLargeKeys);
    QVERIFY2(browser.progressText().startsWith(QStringLiteral("200,000 keys")), qPrintable(browser.progressText()));
    QVERIFY(browser.problemText().isEmpty());
}

void TestKeyBrowser::aLostConnectionGreysTheColumns()
{
    // Lost, the panel says it no longer updates, and the columns in view stay as read, greyed
    // (a grey bar), their tooltip saying since when. Back, each row is live again once read.
    SandboxServer server;
    server.start();
    {
        Connection c(server.options());
        fillMixed(c);
        QCOMPARE(c.command({"SAVE"}).text(), QStringLiteral("OK"));
    }
    RedisClient client(server.options());
    client.open();
    KeyBrowser browser;
    QAbstractItemModelTester tester(browser.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(listInWindow(browser, client));
    const KeyTreeModel *m = browser.model();
    const QModelIndex t = childNamed(m, {}, QStringLiteral("t ("));
    const QModelIndex group = childNamed(m, t, algorithmName(Algorithm::SlidingLog) + QStringLiteral(" ("));
    browser.view()->expand(group);
    browser.view()->scrollTo(m->index(0, 0, group), QAbstractItemView::PositionAtTop);
    QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 15000);
    const QModelIndex usage = m->index(0, KeyTreeModel::UsageColumn, group);
    const QString figures = usage.data().toString();
    QCOMPARE(figures, QStringLiteral("%1 / %2").arg(usesOf(0)).arg(kLimit));
    QVERIFY(!usage.data(UsageBarDelegate::StaleRole).toBool());
    QVERIFY(!usage.data(Qt::ForegroundRole).isValid());
    QVERIFY(!browser.progressText().startsWith(QStringLiteral("Not updating")));

    server.stop();
    QTRY_VERIFY_WITH_TIMEOUT(client.state() != RedisClient::State::Connected, 20000);
    QVERIFY2(browser.progressText().startsWith(QStringLiteral("Not updating: the connection is lost · 12,101 keys")),
             qPrintable(browser.progressText()));
    QVERIFY(browser.progressLabel()->autoFillBackground()); // on amber
    QCOMPARE(usage.data().toString(), figures);             // kept
    QVERIFY(usage.data(UsageBarDelegate::StaleRole).toBool());
    QVERIFY(usage.data(Qt::ForegroundRole).isValid()); // greyed
    QVERIFY2(usage.siblingAtColumn(KeyTreeModel::KeyColumn)
                 .data(Qt::ToolTipRole)
                 .toString()
                 .contains(QStringLiteral("Not live: the connection is lost")),
             qPrintable(usage.siblingAtColumn(KeyTreeModel::KeyColumn).data(Qt::ToolTipRole).toString()));

    server.restart(); // the same port and directory: the saved keys
    client.retryNow();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 40000);
    QVERIFY(!browser.progressText().startsWith(QStringLiteral("Not updating")));
    QVERIFY(!browser.progressLabel()->autoFillBackground());
    QTRY_VERIFY_WITH_TIMEOUT(!usage.data(UsageBarDelegate::StaleRole).toBool(), 20000); // read again
    QVERIFY(!usage.data(Qt::ForegroundRole).isValid());
    QCOMPARE(usage.data().toString(), figures);
}

void TestKeyBrowser::columnsInViewArriveWhileScanning()
{
    startLarge();
    RedisClient client(m_large.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    KeyBrowser browser;
    browser.resize(1100, 700);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));

    // At the first rows, open svc0 > its first tenant: keys come into view, and more keep
    // arriving in that group as the scan walks the rest of the 200,000.
    const KeyTreeModel *m = browser.model();
    QStringList events;
    bool opened = false;
    qint64 scannedAtColumns = -1;
    QString columnAlgorithm;
    connect(m, &QAbstractItemModel::rowsInserted, &browser, [&] {
        if (opened || m->keyCount() == 0)
            return;
        opened = true;
        QTimer::singleShot(0, &browser, [&] { // not from inside the model's signal
            const QModelIndex svc = m->index(0, 0);
            browser.view()->expand(svc);
            browser.view()->expand(m->index(0, 0, svc));
            events << QStringLiteral("keys in view");
        });
    });
    connect(m, &QAbstractItemModel::dataChanged, &browser, [&] {
        if (!events.contains(QStringLiteral("keys in view")) || events.contains(QStringLiteral("columns")))
            return;
        const std::vector<quint32> visible = browser.visibleKeyIds();
        if (visible.empty())
            return;
        for (quint32 id : visible)
            if (!m->details(id))
                return;
        events << QStringLiteral("columns");
        scannedAtColumns = browser.isScanning() ? browser.scannedCount() : -1;
        columnAlgorithm = m->indexOfKey(visible.front(), KeyTreeModel::AlgorithmColumn).data().toString();
    });
    connect(&browser, &KeyBrowser::scanFinished, &browser, [&] { events << QStringLiteral("scan finished"); });
    browser.setClient(&client, "ratescope:", ":");
    QTRY_VERIFY_WITH_TIMEOUT(events.contains(QStringLiteral("scan finished")), 60000);
    QVERIFY2(browser.problemText().isEmpty(), qPrintable(browser.problemText()));
    QCOMPARE(m->keyCount(), kLargeKeys);
    // The columns came while the scan was still running, far from its end: they did not wait
    // for the pages behind them.
    QVERIFY2(events == (QStringList{QStringLiteral("keys in view"), QStringLiteral("columns"), QStringLiteral("scan finished")}),
             qPrintable(events.join(QStringLiteral(", "))));
    QVERIFY2(scannedAtColumns > 0 && scannedAtColumns < kLargeKeys / 2,
             qPrintable(QStringLiteral("%1 keys scanned when the columns came").arg(scannedAtColumns)));
    QCOMPARE(columnAlgorithm, QStringLiteral("string"));
    qInfo("the rows in view had their columns after %lld of %d keys were scanned", scannedAtColumns, kLargeKeys);
}

void TestKeyBrowser::pinKeysToMonitor()
{
    RedisClient client(m_mixed.options());
    client.open();
    KeyBrowser browser;
    browser.resize(1100, 700);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    QSignalSpy pinned(&browser, &KeyBrowser::pinKeyRequested);
    browser.setClient(&client, "ratescope:", ":");
    QVERIFY(finished.wait(60000));
    const KeyTreeModel *m = browser.model();
    const QModelIndex t = childNamed(m, {}, QStringLiteral("t ("));
    const QModelIndex gcra = childNamed(m, t, QStringLiteral("gcra ("));
    QVERIFY(gcra.isValid());
    browser.view()->collapseAll();
    browser.view()->expand(t);
    browser.view()->expand(gcra);
    browser.view()->scrollTo(m->index(0, 0, gcra), QAbstractItemView::PositionAtTop);
    const QModelIndex k0 = m->index(0, 0, gcra), k1 = m->index(1, 0, gcra), k2 = m->index(2, 0, gcra), k3 = m->index(3, 0, gcra);
    auto keyOf = [](const QModelIndex &i) { return i.data(KeyTreeModel::KeyRole).toByteArray(); };
    QCOMPARE(keyOf(k0), QByteArray("t:gcra:c0"));

    // One key row: pinned alone. (A menu deletes itself when it closes.)
    QPointer<QMenu> menu = openContextMenu(browser, k1);
    QVERIFY(menu);
    QCOMPARE(actionTexts(menu), (QStringList{QStringLiteral("Open"), QStringLiteral("Look up this customer: c1"),
                                             QStringLiteral("Pin to monitor"), QStringLiteral("Burst…"),
                                             QStringLiteral("Change this key's limit…"), QStringLiteral("Edit its policy…"),
                                             QStringLiteral("What if…"), QStringLiteral("Reset…"), QStringLiteral("Copy name")}));
    actionNamed(menu, QStringLiteral("Pin to monitor"))->trigger();
    QCOMPARE(pinned.size(), 1);
    QCOMPARE(pinned.takeFirst().at(0).toByteArray(), keyOf(k1));

    // A selection of three keys and a group (groups are left out): one signal per key, top
    // to bottom, from a right click on any of them.
    QItemSelectionModel *selection = browser.view()->selectionModel();
    const auto rows = QItemSelectionModel::Select | QItemSelectionModel::Rows;
    selection->select(k3, rows);
    selection->select(k0, rows);
    selection->select(k2, rows);
    selection->select(gcra, rows);
    QCOMPARE(browser.selectedKeys(), (QList<QByteArray>{keyOf(k0), keyOf(k2), keyOf(k3)}));
    menu = openContextMenu(browser, k2);
    QVERIFY(menu);
    QAction *pinAll = actionNamed(menu, QStringLiteral("Pin 3 keys to monitor"));
    QVERIFY2(pinAll, qPrintable(actionTexts(menu).join(QStringLiteral(", "))));
    // The same selection is what a reset takes: one request with the three keys.
    QSignalSpy acted(&browser, &KeyBrowser::keyActionRequested);
    QAction *resetAll = actionNamed(menu, QStringLiteral("Reset 3 keys…"));
    QVERIFY2(resetAll && resetAll->isEnabled(), qPrintable(actionTexts(menu).join(QStringLiteral(", "))));
    QVERIFY(!actionNamed(menu, QStringLiteral("Burst…"))->isEnabled()); // one key at a time
    resetAll->trigger();
    QCOMPARE(acted.size(), 1);
    QCOMPARE(acted.first().at(0).value<KeyAction>(), KeyAction::Reset);
    QCOMPARE(acted.first().at(1).value<QList<QByteArray>>(), (QList<QByteArray>{keyOf(k0), keyOf(k2), keyOf(k3)}));
    menu = openContextMenu(browser, k2);
    QVERIFY(menu);
    pinAll = actionNamed(menu, QStringLiteral("Pin 3 keys to monitor"));
    pinAll->trigger();
    QCOMPARE(pinned.size(), 3);
    QCOMPARE(pinned.at(0).at(0).toByteArray(), keyOf(k0));
    QCOMPARE(pinned.at(1).at(0).toByteArray(), keyOf(k2));
    QCOMPARE(pinned.at(2).at(0).toByteArray(), keyOf(k3));
    pinned.clear();

    // A right click outside the selection pins that key only.
    menu = openContextMenu(browser, k1);
    QVERIFY(menu);
    actionNamed(menu, QStringLiteral("Pin to monitor"))->trigger();
    QCOMPARE(pinned.size(), 1);
    QCOMPARE(pinned.takeFirst().at(0).toByteArray(), keyOf(k1));

    // More keys than the monitor's chart can tell apart: refused, none pinned.
    selection->select(QItemSelection(m->index(0, 0, gcra), m->index(20, 0, gcra)),
                      QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    menu = openContextMenu(browser, k2);
    QVERIFY(menu);
    QAction *tooMany = actionNamed(menu, QStringLiteral("Pin to monitor: select at most 20 keys"));
    QVERIFY2(tooMany, qPrintable(actionTexts(menu).join(QStringLiteral(", "))));
    QVERIFY(!tooMany->isEnabled());
    menu->grab().save(QStringLiteral("/tmp/br-pin-menu-too-many.png"));
    selection->select(QItemSelection(m->index(0, 0, gcra), m->index(2, 0, gcra)),
                      QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);

    // A group has nothing to pin; it can be reset as a whole (the dialog previews its pattern).
    menu = openContextMenu(browser, gcra);
    QVERIFY(menu);
    for (const QString &text : actionTexts(menu))
        QVERIFY2(!text.startsWith(QStringLiteral("Pin")), qPrintable(text));
    QSignalSpy groupReset(&browser, &KeyBrowser::resetGroupRequested);
    QAction *resetGroup = actionNamed(menu, QStringLiteral("Reset all keys of this group…"));
    QVERIFY(resetGroup && resetGroup->isEnabled());
    resetGroup->trigger();
    QCOMPARE(groupReset.size(), 1);
    QCOMPARE(groupReset.first().at(0).toByteArray(), QByteArray("t:gcra:*"));
    if (menu)
        menu->close();
    // Under the read-only lock the changes are offered disabled, saying why.
    client.setReadOnly(true);
    QPointer<QMenu> lockedMenu = openContextMenu(browser, gcra);
    QVERIFY(lockedMenu);
    QAction *lockedReset = actionNamed(lockedMenu, QStringLiteral("Reset all keys of this group…"));
    QVERIFY(lockedReset && !lockedReset->isEnabled());
    QVERIFY(lockedReset->toolTip().contains(QStringLiteral("Read-only")));
    lockedMenu->close();
    client.setReadOnly(false);
    menu = openContextMenu(browser, gcra);
    QVERIFY(menu);
    QVERIFY(menu->isVisible());
    menu->grab().save(QStringLiteral("/tmp/br-pin-menu-group.png"));
    menu->close(); // deletes itself
    QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 15000);
    browser.grab().save(QStringLiteral("/tmp/br-pin-browser.png"));
    menu = openContextMenu(browser, k2);
    QVERIFY(menu);
    QVERIFY(actionNamed(menu, QStringLiteral("Pin 3 keys to monitor")));
    menu->grab().save(QStringLiteral("/tmp/br-pin-menu-keys.png"));
    menu->close();
    QCOMPARE(pinned.size(), 0);
}

void TestKeyBrowser::contextMenuFollowsItsGroupDuringScan()
{
    // One group per key (as user:<id>:minute makes): groups keep arriving page after page,
    // each page's in name order after those before, and all are sorted by name at the end.
    SandboxServer server;
    server.start();
    {
        Connection c(server.options());
        std::vector<Command> batch;
        for (int i = 0; i < 20000; ++i)
            batch.push_back({"SET", "user" + QByteArray::number(i) + ":minute", "1"});
        c.pipeline(batch);
        QCOMPARE(c.command({"DBSIZE"}).toInteger(), 20000);
    }
    RedisClient client(server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    KeyBrowser browser;
    browser.resize(1100, 700);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    const KeyTreeModel *m = browser.model();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);

    // At the first rows, a right click on the sixth group while the scan goes on.
    constexpr int kRow = 5;
    QPointer<QMenu> menu;
    QString name;
    bool scanningAtMenu = false;
    connect(m, &QAbstractItemModel::rowsInserted, &browser, [&] {
        if (!name.isEmpty() || m->rowCount() <= kRow)
            return;
        name = m->index(kRow, 0).data().toString().section(QLatin1Char(' '), 0, 0); // "user123"
        QTimer::singleShot(0, &browser, [&] {                                       // not from inside the model's signal
            scanningAtMenu = browser.isScanning();
            menu = openContextMenu(browser, m->index(kRow, 0));
        });
    });
    browser.setClient(&client, "ratescope:", ":");
    QVERIFY(finished.wait(60000));
    QVERIFY(menu);
    QVERIFY(scanningAtMenu);
    QAction *expand = actionNamed(menu, QStringLiteral("Expand"));
    QVERIFY2(expand, qPrintable(actionTexts(menu).join(QStringLiteral(", "))));
    // The rows that came later, and the sort at the end, have moved that group: the row the
    // menu was opened on holds another one now. The menu still acts on its own group.
    QCOMPARE(m->keyCount(), 20000);
    const QModelIndex nowAtRow = m->index(kRow, 0);
    QVERIFY2(!nowAtRow.data().toString().startsWith(name + QStringLiteral(" (")), qPrintable(name));
    expand->trigger();
    const QModelIndex group = childNamed(m, {}, name + QStringLiteral(" ("));
    QVERIFY(group.isValid());
    QVERIFY(browser.view()->isExpanded(group));
    QVERIFY(!browser.view()->isExpanded(nowAtRow));
    menu->close();
}

void TestKeyBrowser::contextMenuActsOnItsOwnRowsAfterTheModelWasCleared()
{
    // Menus opened on a group and on a key; then the keyspace is read again (the model is
    // cleared and filled anew, in scan order, then sorted) before their actions are chosen.
    // The group's Expand acts on no group (its group is gone), the key's Open on its key.
    SandboxServer server;
    server.start();
    {
        Connection c(server.options());
        std::vector<Command> batch;
        for (int g = 0; g < 6; ++g)
            for (int i = 0; i < 100; ++i) // too many to open by themselves
                batch.push_back({"SET", "grp" + QByteArray::number(g) + ":k" + QByteArray::number(i), "1"});
        c.pipeline(batch);
    }
    RedisClient client(server.options());
    client.open();
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), RedisClient::State::Connected, 10000);
    KeyBrowser browser;
    browser.resize(1100, 700);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    const KeyTreeModel *m = browser.model();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, "ratescope:", ":");
    QVERIFY(finished.wait(30000));
    QCOMPARE(browser.scanState(), KeyBrowser::ScanState::Complete);

    auto menuAt = [&](const QModelIndex &index) -> QMenu * {
        const auto before = browser.findChildren<QMenu *>();
        emit browser.view()->customContextMenuRequested(browser.view()->visualRect(index).center());
        for (QMenu *menu : browser.findChildren<QMenu *>())
            if (!before.contains(menu))
                return menu;
        return nullptr;
    };
    const QModelIndex group1 = childNamed(m, {}, QStringLiteral("grp1 ("));
    QVERIFY(group1.isValid());
    browser.view()->expand(group1);
    QModelIndex key;
    for (int r = 0; r < m->rowCount(group1) && !key.isValid(); ++r)
        if (m->index(r, 0, group1).data(KeyTreeModel::KeyRole).toByteArray() == "grp1:k5")
            key = m->index(r, 0, group1);
    QVERIFY(key.isValid());
    QPointer<QMenu> keyMenu = menuAt(key);
    QVERIFY(keyMenu);
    browser.view()->collapse(group1);
    const QModelIndex group3 = childNamed(m, {}, QStringLiteral("grp3 ("));
    QVERIFY(group3.isValid());
    QPointer<QMenu> groupMenu = menuAt(group3);
    QVERIFY(groupMenu);

    finished.clear();
    browser.refresh();
    QVERIFY(finished.wait(30000));
    QCOMPARE(m->rowCount(), 6);
    for (int r = 0; r < m->rowCount(); ++r)
        QVERIFY(!browser.view()->isExpanded(m->index(r, 0)));

    QAction *expand = actionNamed(groupMenu, QStringLiteral("Expand"));
    QVERIFY2(expand, qPrintable(actionTexts(groupMenu).join(QStringLiteral(", "))));
    expand->trigger();
    for (int r = 0; r < m->rowCount(); ++r)
        QVERIFY2(!browser.view()->isExpanded(m->index(r, 0)), qPrintable(m->index(r, 0).data().toString()));
    QSignalSpy opened(&browser, &KeyBrowser::openKeyRequested);
    QAction *open = actionNamed(keyMenu, QStringLiteral("Open"));
    QVERIFY(open);
    open->trigger();
    QCOMPARE(opened.size(), 1);
    QCOMPARE(opened.front().front().toByteArray(), QByteArray("grp1:k5"));
    groupMenu->close();
    keyMenu->close();
}

namespace {

// A keys panel on its own against `server`, shown at 1100x700 under the model tester.
struct ShownBrowser {
    explicit ShownBrowser(const SandboxServer &server)
        : client(server.options())
    {
        client.open();
        browser.resize(1100, 700);
        browser.show();
    }
    // Exposed, connected and its first listing complete.
    bool listed()
    {
        if (!QTest::qWaitForWindowExposed(&browser))
            return false;
        QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
        browser.setClient(&client, "ratescope:", ":");
        return finished.wait(60000);
    }
    RedisClient client;
    KeyBrowser browser;
    QAbstractItemModelTester tester{browser.model(), QAbstractItemModelTester::FailureReportingMode::QtTest};
};

} // namespace

// A policy changed, an override set, by another client (another console, the CLI): the rows
// in view say so by themselves, with no refresh asked for (the panel checks every second).
void TestKeyBrowser::followsChangesMadeElsewhere()
{
    SandboxServer server;
    server.start();
    Connection other(server.options());
    const LimitSpec spec{Algorithm::SlidingLog, 60, 60LL * 1000000, 1};
    Policy p;
    p.name = QStringLiteral("api");
    p.match = "api:*";
    p.spec = spec;
    PolicyStore policies(other, "ratescope:");
    const Policy stored = policies.set(p, 0, QStringLiteral("test"));
    Limiter limiter(other);
    for (int i = 0; i < 5; ++i)
        QVERIFY(limiter.check("api:acme", spec).allowed);

    ShownBrowser shown(server);
    QVERIFY(shown.listed());
    KeyBrowser &browser = shown.browser;
    const KeyTreeModel *m = browser.model();
    const QModelIndex api = childNamed(m, {}, QStringLiteral("api"));
    QVERIFY(api.isValid());
    browser.view()->expand(api);
    const QModelIndex acme = childNamed(m, api, QStringLiteral("acme"));
    QVERIFY(acme.isValid());
    auto usage = [&] { return m->index(acme.row(), KeyTreeModel::UsageColumn, api).data().toString(); };
    QTRY_COMPARE_WITH_TIMEOUT(usage(), QStringLiteral("5 / 60"), 15000);

    p.spec.limit = 20;
    policies.set(p, stored.version, QStringLiteral("someone else"));
    QTRY_COMPARE_WITH_TIMEOUT(usage(), QStringLiteral("5 / 20"), 10000);

    Override o;
    o.key = "api:acme";
    o.limit = 100;
    OverrideStore(other, "ratescope:").set(o, 3600LL * 1000000, QStringLiteral("someone else"));
    AuditLog(other, "ratescope:").append(overrideSetAuditEntry(o.key, std::nullopt, o), QStringLiteral("someone else"));
    QTRY_COMPARE_WITH_TIMEOUT(usage(), QStringLiteral("5 / 100"), 10000);
}

// Keys come and go on their own: a counter's next window is listed as soon as it exists, a key
// that expired leaves the listing (and its emptied group with it), and one that comes back
// (a limiter reset, then used again) is listed again, all with no refresh asked for.
void TestKeyBrowser::followsTheKeyspace()
{
    SandboxServer server;
    server.start();
    Connection other(server.options());
    const qint64 window = other.command({"TIME"})[0].toInteger() / 60; // 1-minute windows
    const QByteArray current = "ctr:acme:" + QByteArray::number(window);
    const QByteArray next = "ctr:acme:" + QByteArray::number(window + 1);
    other.command({"SET", current, "7", "EX", "120"});
    other.command({"SET", "solo:once", "1"});
    for (const char *k : {"keep:a", "keep:b", "keep:c"})
        other.command({"SET", k, "1"});

    ShownBrowser shown(server);
    QVERIFY(shown.listed());
    KeyBrowser &browser = shown.browser;
    const KeyTreeModel *m = browser.model();
    QCOMPARE(m->keyCount(), 5);
    for (const char *group : {"ctr", "solo", "keep"})
        browser.view()->expand(childNamed(m, {}, QString::fromLatin1(group)));
    const QModelIndex ctr = childNamed(m, {}, QStringLiteral("ctr"));
    browser.view()->expand(childNamed(m, ctr, QStringLiteral("acme")));
    const quint32 currentId = m->findKey(current);
    QVERIFY(currentId != KeyTreeModel::kNoKey);
    QTRY_VERIFY_WITH_TIMEOUT(m->details(currentId) != nullptr, 10000);
    QCOMPARE(m->details(currentId)->kind.format, KeyFormat::CounterWindow);

    // The window turns: the service writes the next one.
    other.command({"SET", next, "1", "EX", "120"});
    QTRY_VERIFY_WITH_TIMEOUT(m->findKey(next) != KeyTreeModel::kNoKey, 10000);

    // A key expires: it leaves, and so does the group it leaves empty.
    other.command({"PEXPIRE", "solo:once", "1"});
    QTRY_VERIFY_WITH_TIMEOUT(m->findKey("solo:once") == KeyTreeModel::kNoKey, 10000);
    QVERIFY(!childNamed(m, {}, QStringLiteral("solo")).isValid());
    QCOMPARE(m->keyCount(), 5); // the two windows and keep:a, b, c

    // It comes back: listed again.
    other.command({"SET", "solo:once", "2"});
    QTRY_VERIFY_WITH_TIMEOUT(m->findKey("solo:once") != KeyTreeModel::kNoKey, 10000);
    QCOMPARE(m->keyCount(), 6);

    // A key that comes back takes its place in the sorted listing.
    QTRY_VERIFY_WITH_TIMEOUT(m->details(m->findKey("keep:a")) != nullptr, 10000);
    other.command({"DEL", "keep:a"});
    QTRY_VERIFY_WITH_TIMEOUT(m->findKey("keep:a") == KeyTreeModel::kNoKey, 10000);
    other.command({"SET", "keep:a", "1"});
    QTRY_VERIFY_WITH_TIMEOUT(m->findKey("keep:a") != KeyTreeModel::kNoKey, 10000);
    const QModelIndex keepNow = childNamed(m, {}, QStringLiteral("keep"));
    QCOMPARE(m->index(0, 0, keepNow).data().toString(), QStringLiteral("a"));
}

// A key this console has just changed (a burst fired from it) is read again at once: its row
// shows the new usage without waiting for the rows' refresh (the panel's clock is frozen here,
// so they would never be read again by age), and a key the burst created is listed.
void TestKeyBrowser::keysChangedHereAreReadAtOnce()
{
    SandboxServer server;
    server.start();
    Connection other(server.options());
    const LimitSpec spec{Algorithm::SlidingLog, 60, kWindowUs, 1};
    Policy p;
    p.name = QStringLiteral("api");
    p.match = "api:*";
    p.spec = spec;
    PolicyStore(other, "ratescope:").set(p, 0, QStringLiteral("test"));
    Limiter limiter(other);
    for (int i = 0; i < 5; ++i)
        QVERIFY(limiter.check("api:acme", spec).allowed);

    ShownBrowser shown(server);
    shown.browser.model()->setClock([] { return qint64(1000000); }); // rows never age
    QVERIFY(shown.listed());
    KeyBrowser &browser = shown.browser;
    const KeyTreeModel *m = browser.model();
    const QModelIndex api = childNamed(m, {}, QStringLiteral("api"));
    browser.view()->expand(api);
    const QModelIndex acme = childNamed(m, api, QStringLiteral("acme"));
    QVERIFY(acme.isValid());
    auto usage = [&] { return m->index(acme.row(), KeyTreeModel::UsageColumn, api).data().toString(); };
    QTRY_COMPARE_WITH_TIMEOUT(usage(), QStringLiteral("5 / 60"), 15000);

    // The limiter is used (no audit entry: nothing for the panel's change check to see), and a
    // new one is made.
    for (int i = 0; i < 55; ++i)
        QVERIFY(limiter.check("api:acme", spec).allowed);
    QVERIFY(limiter.check("api:fresh", spec).allowed);
    QCOMPARE(usage(), QStringLiteral("5 / 60"));
    browser.refreshKeys({"api:acme", "api:fresh"});
    QTRY_COMPARE_WITH_TIMEOUT(usage(), QStringLiteral("60 / 60"), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(m->findKey("api:fresh") != KeyTreeModel::kNoKey, 10000);
    // A key the filter leaves out is not listed for it.
    QVERIFY(limiter.check("other:x", spec).allowed);
    browser.setFilter(QStringLiteral("api:*"));
    QTRY_VERIFY_WITH_TIMEOUT(browser.scanState() == KeyBrowser::ScanState::Complete, 10000);
    browser.refreshKeys({"other:x"});
    QTRY_VERIFY_WITH_TIMEOUT(browser.isSettled(), 10000);
    QCOMPARE(m->findKey("other:x"), KeyTreeModel::kNoKey);
}

// A group holding one limiter's shards 0..N-1 opens, from its menu, as that limiter (its base,
// the shards side by side in one key view); a group of other keys offers no such thing.
void TestKeyBrowser::aShardGroupOpensAsItsLimiter()
{
    SandboxServer server;
    server.start();
    {
        Connection c(server.options());
        for (int i = 0; i < 4; ++i)
            c.command({"HSET", "rl:{t1}:" + QByteArray::number(i), "w", "1", "n", QByteArray::number(i + 1)});
        c.command({"SET", "app:a", "1"});
        c.command({"SET", "app:b", "2"});
    }
    ShownBrowser shown(server);
    QVERIFY(shown.listed());
    KeyBrowser &browser = shown.browser;
    const KeyTreeModel *m = browser.model();
    const QModelIndex rl = childNamed(m, {}, QStringLiteral("rl"));
    QVERIFY(rl.isValid());
    browser.view()->expand(rl);
    QModelIndex group;
    for (int r = 0; r < m->rowCount(rl); ++r)
        if (m->index(r, 0, rl).data(KeyTreeModel::IsGroupRole).toBool())
            group = m->index(r, 0, rl);
    QVERIFY(group.isValid());
    QTRY_COMPARE(group.data(KeyTreeModel::ShardBaseRole).toByteArray(), QByteArray("rl:{t1}"));
    QSignalSpy opened(&browser, &KeyBrowser::openKeyRequested);
    QPointer<QMenu> menu = openContextMenu(browser, group);
    QVERIFY(menu);
    QAction *open = menu->findChild<QAction *>(QStringLiteral("openShardedLimiter"));
    QVERIFY2(open, qPrintable(actionTexts(menu).join(QLatin1String(", "))));
    open->trigger();
    QCOMPARE(opened.size(), 1);
    QCOMPARE(opened.front().front().toByteArray(), QByteArray("rl:{t1}"));
    delete menu;
    const QModelIndex app = childNamed(m, {}, QStringLiteral("app"));
    QVERIFY(app.isValid());
    QVERIFY(!app.data(KeyTreeModel::ShardBaseRole).isValid());
    menu = openContextMenu(browser, app);
    QVERIFY(menu);
    QVERIFY(!menu->findChild<QAction *>(QStringLiteral("openShardedLimiter")));
    delete menu;
}

QTEST_MAIN(TestKeyBrowser)
#include "tst_keybrowser.moc"
