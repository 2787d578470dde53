// The keys panel against real redis-servers: 10,000 limiters of all five algorithms grouped
// with the right counts and columns (under QAbstractItemModelTester while it scans), the glob
// filter, stopping a scan, and the GUI thread never stalling while 200,000 keys are read.
#include "connection.h"
#include "keybrowser.h"
#include "limiter.h"
#include "limiterscript.h"
#include "policy.h"
#include "redisclient.h"
#include "sandboxserver.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
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
                batch.push_back(script.command(
                    key, Limiter::arguments(key, p.spec, std::nullopt, false), false));
            if (batch.size() >= 5000)
                flush();
        }
    }
    for (int i = 0; i < kOthers; ++i)
        batch.push_back({"SET", "t:other:s" + QByteArray::number(i), "x"});
    flush();
}

QModelIndex childNamed(const QAbstractItemModel *m, const QModelIndex &parent,
                       const QString &prefix)
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

private:
    SandboxServer m_mixed;
    SandboxServer m_large;
};

void TestKeyBrowser::initTestCase()
{
    m_mixed.start();
    Connection c(m_mixed.options());
    fillMixed(c);
    QCOMPARE(c.command({"DBSIZE"}).toInteger(),
             5 * kPerAlgorithm + kOthers + 1); // + the policies hash
}

void TestKeyBrowser::mixedKeyspace()
{
    RedisClient client(m_mixed.options());
    client.open();
    KeyBrowser browser;
    QAbstractItemModelTester tester(browser.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    browser.resize(1100, 700);
    browser.show();
    QVERIFY(QTest::qWaitForWindowExposed(&browser));
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, "ratescope:", ":");
    QVERIFY(finished.wait(60000));
    QVERIFY2(browser.problemText().isEmpty(), qPrintable(browser.problemText()));
    const KeyTreeModel *m = browser.model();
    QCOMPARE(m->keyCount(), 5 * kPerAlgorithm + kOthers + 1);
    QVERIFY2(browser.progressText().startsWith(QStringLiteral("10,101 keys")),
             qPrintable(browser.progressText()));

    // Groups and counts: t (10,100) holding one group per algorithm and the others.
    const QModelIndex t = childNamed(m, {}, QStringLiteral("t ("));
    QCOMPARE(t.data().toString(), QStringLiteral("t (10,100)"));
    QCOMPARE(m->rowCount(t), 6);
    QCOMPARE(childNamed(m, {}, QStringLiteral("ratescope")).data().toString(),
             QStringLiteral("ratescope (1)"));
    QCOMPARE(childNamed(m, t, QStringLiteral("other")).data().toString(),
             QStringLiteral("other (100)"));
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
            QCOMPARE(text(KeyTreeModel::UsageColumn),
                     QStringLiteral("%1 / %2").arg(uses).arg(kLimit));
            QCOMPARE(text(KeyTreeModel::RemainingColumn), QString::number(kLimit - uses));
            QVERIFY2(QRegularExpression(QStringLiteral("^\\d+ d \\d+ h$"))
                             .match(text(KeyTreeModel::TtlColumn))
                             .hasMatch() ||
                         text(KeyTreeModel::TtlColumn) == QStringLiteral("no expiry"),
                     qPrintable(text(KeyTreeModel::TtlColumn)));
            QVERIFY2(text(KeyTreeModel::MemoryColumn).endsWith(QLatin1Char('B')),
                     qPrintable(text(KeyTreeModel::MemoryColumn)));
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
    QCOMPARE(m->index(0, KeyTreeModel::AlgorithmColumn, others).data().toString(),
             QStringLiteral("string"));
    QCOMPARE(m->index(0, KeyTreeModel::UsageColumn, others).data().toString(), QString());
}

void TestKeyBrowser::filter()
{
    RedisClient client(m_mixed.options());
    client.open();
    KeyBrowser browser;
    QAbstractItemModelTester tester(browser.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    browser.show();
    QSignalSpy finished(&browser, &KeyBrowser::scanFinished);
    browser.setClient(&client, "ratescope:", ":");
    QVERIFY(finished.wait(60000));

    browser.setFilter(QStringLiteral("t:gcra:*"));
    QCOMPARE(browser.matchPattern(), QByteArray("t:gcra:*"));
    QVERIFY(finished.wait(60000));
    QCOMPARE(browser.model()->keyCount(), kPerAlgorithm);
    QVERIFY2(browser.progressText().contains(QStringLiteral("matching t:gcra:*")),
             qPrintable(browser.progressText()));

    // Plain text matches keys that contain it: c19, c190..c199, c1900..c1999 in each group.
    browser.setFilter(QStringLiteral("c19"));
    QCOMPARE(browser.matchPattern(), QByteArray("*c19*"));
    QVERIFY(finished.wait(60000));
    QCOMPARE(browser.model()->keyCount(), 5 * 111);

    browser.setFilter(QStringLiteral("no-such-key*"));
    QVERIFY(finished.wait(60000));
    QCOMPARE(browser.model()->keyCount(), 0);
}

void TestKeyBrowser::guiNeverStallsOn200000Keys()
{
    m_large.start();
    {
        Connection c(m_large.options());
        std::vector<Command> batch;
        for (int i = 0; i < 200000; ++i) {
            batch.push_back({"SET",
                             "svc" + QByteArray::number(i % 50) + ":tenant" +
                                 QByteArray::number(i % 400) + ":user" + QByteArray::number(i),
                             "1"});
            if (batch.size() == 10000) {
                c.pipeline(batch);
                batch.clear();
            }
        }
        QCOMPARE(c.command({"DBSIZE"}).toInteger(), 200000);
    }
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
    QCOMPARE(m->index(49, 0).data().toString(), QStringLiteral("svc9 (4,000)"));
    const QModelIndex first = m->index(0, 0);
    browser.view()->expand(first);
    const QModelIndex tenant = m->index(0, 0, first);
    QCOMPARE(tenant.data().toString(), QStringLiteral("tenant0 (500)"));
    browser.view()->expand(tenant);
    QStringList names;
    for (int r = 0; r < m->rowCount(tenant); ++r)
        names << m->index(r, 0, tenant).data().toString();
    QStringList sorted = names;
    std::sort(sorted.begin(), sorted.end());
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
    QVERIFY2(worst < 100,
             qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(worst)));
}

void TestKeyBrowser::stopKeepsWhatWasFound()
{
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
    QVERIFY2(browser.progressText().startsWith(QStringLiteral("Stopped")),
             qPrintable(browser.progressText()));
}

QTEST_MAIN(TestKeyBrowser)
#include "tst_keybrowser.moc"
