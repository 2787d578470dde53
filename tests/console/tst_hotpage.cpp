// The Hot tab against a real redis-server: a pass ranks the limiters by fill and lists those
// denying now exactly, ranked by rate it peeks the rows shown, the same rows as `ratescope-cli
// top`; a broken glob is refused before anything is read; Cancel stops a pass; double-click
// opens the key's bytes; hostile key names show as text. Models run under
// QAbstractItemModelTester.
#include "redis/connection.h"
#include "hotmodel.h"
#include "hotpage.h"
#include "limiters/limiter.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "redis/sandboxserver.h"
#include "testsupport.h"

#include <QAbstractItemModelTester>
#include <QTextDocument>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

#include <memory>

using namespace ratescope;
using namespace ratescope::ui;
using namespace ratescope::test;

namespace {

constexpr int kWaitMs = 20000;
constexpr qint64 kSecond = 1000000;

struct Tab {
    RedisClient client;
    HotPage page;
    std::unique_ptr<QAbstractItemModelTester> limiters, masters;

    Tab(const ConnectionOptions &options, const QByteArray &ns = "ratescope:")
        : client(options)
    {
        limiters = std::make_unique<QAbstractItemModelTester>(page.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        masters = std::make_unique<QAbstractItemModelTester>(page.masters(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        page.setIntervalUs(50000);
        page.resize(1000, 700);
        client.open();
        page.setClient(&client, ns);
    }
    // Shows the page (its first pass starts once connected) and waits for that pass.
    bool showAndWait()
    {
        QSignalSpy spy(&page, &HotPage::loaded);
        page.show();
        return page.isLoaded() || spy.wait(kWaitMs);
    }
    bool refreshAndWait()
    {
        QSignalSpy spy(&page, &HotPage::loaded);
        page.refresh();
        return page.isLoaded() || spy.wait(kWaitMs);
    }
    int rows() const { return page.view()->model()->rowCount(); }
    QByteArray key(int row) const
    {
        return page.view()->model()->index(row, HotLimiterModel::Key).data(HotLimiterModel::KeyBytesRole).toByteArray();
    }
    QString cell(int row, int column) const { return page.view()->model()->index(row, column).data().toString(); }
};

} // namespace

class TestHotPage : public QObject {
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
        Policy api;
        api.name = QStringLiteral("api");
        api.match = "api:*";
        api.spec = {Algorithm::SlidingLog, 10, 60 * kSecond, 1};
        PolicyStore(*m_conn, QStringLiteral("ratescope:")).set(api, 0, QStringLiteral("test"));
        Limiter limiter(*m_conn);
        const int used[] = {2, 10, 7, 10, 5};
        for (int k = 0; k < 5; ++k)
            for (int i = 0; i < used[k]; ++i)
                limiter.check("api:" + QByteArray::number(k), api.spec);
        m_conn->command({"SET", "app:setting", "blue"}); // no limiter
    }

    void fillAndDenyingNow();
    void byRateMatchesTheCli();
    void brokenGlobIsRefused();
    void cancelStopsAPass();
    void doubleClickOpensTheKeyBytes();
    void hostileNamesAreText();

private:
    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestHotPage::fillAndDenyingNow()
{
    Tab tab(m_server.options());
    tab.page.setOrder(HotOrder::Fill);
    QVERIFY(tab.showAndWait());
    QCOMPARE(tab.rows(), 5);
    const QByteArray byFill[] = {"api:1", "api:3", "api:2", "api:4", "api:0"};
    for (int i = 0; i < 5; ++i)
        QCOMPARE(tab.key(i), byFill[i]);
    QCOMPARE(tab.cell(0, HotLimiterModel::Used), QStringLiteral("10 / 10"));
    QVERIFY2(tab.cell(0, HotLimiterModel::Fill).contains(QStringLiteral("denying")), qPrintable(tab.cell(0, HotLimiterModel::Fill)));
    QCOMPARE(tab.cell(2, HotLimiterModel::Fill), QStringLiteral("70 %"));
    QVERIFY2(tab.page.statusText().contains(QStringLiteral("5 limiters in 7 keys")), qPrintable(tab.page.statusText()));
    QVERIFY(tab.page.view()->isColumnHidden(HotLimiterModel::Master)); // one server: no master column
    QCOMPARE(tab.page.masters()->rowCount(), 1);

    tab.page.setOrder(HotOrder::DenyingNow);
    QVERIFY(tab.refreshAndWait());
    QCOMPARE(tab.rows(), 2);
    QCOMPARE(tab.key(0), QByteArray("api:1"));
    QCOMPARE(tab.key(1), QByteArray("api:3"));
    QVERIFY(tab.page.statusText().contains(QStringLiteral("2 denying now")));
}

// Ranked by rate (nothing moves: every rate is 0, ties by key), the rows shown are peeked;
// the same rows, used and limits as `top --json`.
void TestHotPage::byRateMatchesTheCli()
{
    Tab tab(m_server.options());
    tab.page.setMaxRows(3);
    QVERIFY(tab.showAndWait());
    QCOMPARE(tab.rows(), 3);
    const CliResult r = runCli({QStringLiteral("--url"), m_server.url(), QStringLiteral("--json"), QStringLiteral("top"),
                                QStringLiteral("--max"), QStringLiteral("3"), QStringLiteral("--interval"), QStringLiteral("50ms")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 4);
    for (int i = 0; i < 3; ++i) {
        const QJsonObject o = QJsonDocument::fromJson(lines[i]).object();
        QCOMPARE(QString::fromUtf8(tab.key(i)), o.value(QStringLiteral("key")).toString());
        QCOMPARE(tab.cell(i, HotLimiterModel::Used),
                 QStringLiteral("%1 / %2").arg(o.value(QStringLiteral("used")).toInt()).arg(o.value(QStringLiteral("limit")).toInt()));
        QCOMPARE(tab.cell(i, HotLimiterModel::Rate), QStringLiteral("0.0"));
    }
}

void TestHotPage::brokenGlobIsRefused()
{
    Tab tab(m_server.options());
    tab.page.setMatch(QStringLiteral("api:["));
    QVERIFY(tab.showAndWait());
    QCOMPARE(tab.rows(), 0);
    QVERIFY2(tab.page.statusText().contains(QStringLiteral("unbalanced")), qPrintable(tab.page.statusText()));
    tab.page.setMatch(QStringLiteral("api:[13]"));
    QVERIFY(tab.refreshAndWait());
    QCOMPARE(tab.rows(), 2);
}

void TestHotPage::cancelStopsAPass()
{
    Tab tab(m_server.options());
    tab.page.setIntervalUs(60 * kSecond); // the pass then waits a minute between its reads
    tab.page.show();
    QTRY_VERIFY_WITH_TIMEOUT(tab.page.isRunning(), kWaitMs);
    QCOMPARE(tab.page.refreshButton()->text(), QStringLiteral("Cancel"));
    tab.page.refreshButton()->click();
    QVERIFY(!tab.page.isRunning());
    QCOMPARE(tab.page.statusText(), QStringLiteral("Cancelled."));
    QCOMPARE(tab.page.refreshButton()->text(), QStringLiteral("Refresh"));
    QCOMPARE(tab.rows(), 0);
}

void TestHotPage::doubleClickOpensTheKeyBytes()
{
    const QByteArray binary("api:\xff\x00z", 7);
    Limiter(*m_conn).check(binary, {Algorithm::SlidingLog, 10, 60 * kSecond, 1});
    Tab tab(m_server.options());
    tab.page.setMatch(QStringLiteral("api:?*z"));
    QVERIFY(tab.showAndWait());
    QCOMPARE(tab.rows(), 1);
    QSignalSpy opened(&tab.page, &HotPage::openKeyRequested);
    QTableView *view = tab.page.view();
    const QModelIndex index = view->model()->index(0, HotLimiterModel::Key);
    const QPoint at = view->visualRect(index).center();
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at); // a double click follows a click
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(opened.size(), 1);
    QCOMPARE(opened.first().first().toByteArray(), binary);
    QCOMPARE(tab.cell(0, HotLimiterModel::Key), QStringLiteral("\"api:\\xff\\x00z\"")); // as redis-cli shows it
}

void TestHotPage::hostileNamesAreText()
{
    const QByteArray hostile = "api:<img src=x><b>bold</b>";
    Limiter(*m_conn).check(hostile, {Algorithm::SlidingLog, 10, 60 * kSecond, 1});
    Tab tab(m_server.options());
    tab.page.setMatch(QStringLiteral("api:<*"));
    QVERIFY(tab.showAndWait());
    QCOMPARE(tab.rows(), 1);
    QCOMPARE(tab.cell(0, HotLimiterModel::Key), QString::fromUtf8(hostile));
    const QString tip = tab.page.view()->model()->index(0, HotLimiterModel::Key).data(Qt::ToolTipRole).toString();
    QVERIFY2(!Qt::mightBeRichText(tip) || tip.contains(QStringLiteral("&lt;img")), qPrintable(tip));
}

QTEST_MAIN(TestHotPage)
#include "tst_hotpage.moc"
