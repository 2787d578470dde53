// The Audit tab against a real redis-server: mutations made through the core appear without a
// refresh (one row each), filters by action, actor, target and time, paging back through 1,000
// entries, the details pane's before/after, CSV export, hostile values shown as text, and a
// trail that does not exist yet, is of the wrong type or may not be read. Models run under
// QAbstractItemModelTester; the clock is frozen.
#include "admin/audit.h"
#include "auditdetails.h"
#include "auditformat.h"
#include "auditmodel.h"
#include "auditpage.h"
#include "redis/connection.h"
#include "base/keytext.h"
#include "admin/policy.h"
#include "redisclient.h"
#include "keys/reset.h"
#include "redis/sandboxserver.h"

#include <QAbstractItemModelTester>
#include <QClipboard>
#include <QComboBox>
#include <QFile>
#include <QGuiApplication>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <set>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

// The frozen "now" of every page in this test (entry times are given relative to it).
const QDateTime kNow = QDateTime(QDate(2026, 1, 15), QTime(12, 0), Qt::UTC);
constexpr int kWaitMs = 15000;

QString compact(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

// No control, bidi or zero-width character: what a plain-text cell may hold.
bool isInert(const QString &s)
{
    for (QChar c : s) {
        const char16_t u = c.unicode();
        if (u < 0x20 || u == 0x7F || (u >= 0x80 && u < 0xA0) || (u >= 0x200B && u <= 0x200F) || (u >= 0x202A && u <= 0x202E) ||
            (u >= 0x2060 && u <= 0x2069))
            return false;
    }
    return true;
}

// A page on its own client, shown, with a frozen clock and its models under the tester.
struct Tab {
    RedisClient client;
    AuditPage page;
    std::unique_ptr<QAbstractItemModelTester> modelTester, filterTester;

    Tab(const ConnectionOptions &options, const QByteArray &ns)
        : client(options)
    {
        modelTester = std::make_unique<QAbstractItemModelTester>(page.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        filterTester = std::make_unique<QAbstractItemModelTester>(page.filtered(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        page.setClock([] { return kNow; });
        page.setPollInterval(100);
        page.resize(1280, 800);
        page.show();
        client.open();
        page.setClient(&client, ns);
    }
    bool waitLoaded() { return page.isLoaded() || QSignalSpy(&page, &AuditPage::loaded).wait(kWaitMs); }
    // Bounded: n more reads of the trail (polls or pages).
    bool waitReads(int n)
    {
        QSignalSpy spy(&page, &AuditPage::updated);
        for (int i = 0; i < 100 && spy.size() < n; ++i)
            spy.wait(kWaitMs / 10);
        return spy.size() >= n;
    }
    int rows() const { return page.filtered()->rowCount(); }
    QString cell(int row, int column) const { return page.filtered()->index(row, column).data().toString(); }
};

// With RATESCOPE_SCREENSHOT_DIR set, the page as it looks now, for a person to look at.
void saveShot(QWidget &page, const QString &name)
{
    const QString dir = qEnvironmentVariable("RATESCOPE_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    QCoreApplication::sendPostedEvents(); // lay out what changed
    QVERIFY(page.grab().save(dir + QLatin1Char('/') + name));
}

} // namespace

class TestAuditPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void coreReadsPages();
    void mutationsAppearWithoutRefresh();
    void filters();
    void selectionStaysWithItsEntryThroughFilters();
    void filterFieldsShowWhatToType();
    void tableFitsItsWidth();
    void pagingBackThrough1000Entries();
    void detailsShowBeforeAndAfter();
    void detailsFitTheirWidth();
    void reasonsShownAndFound();
    void csvExport();
    void hostileValuesRenderAsText();
    void missingStream();
    void wrongTypeSaysSoAndRecovers();
    void refusedByAcl();
    void disconnectedKeepsRowsMarkedStale();
    void lostConnectionMarksStaleThenResumes();
    void screens();

private:
    QString append(const QByteArray &ns, const QString &action, const QString &target, const QString &actor, qint64 secondsAgo,
                   const QString &before = {}, const QString &after = {}, qint64 count = 1, const QString &osUser = {},
                   const QString &host = {}, const QString &reason = {});

    std::unique_ptr<SandboxServer> m_server;
    std::unique_ptr<Connection> m_conn;
};

void TestAuditPage::initTestCase()
{
    SandboxServer::Config config;
    // A user that may do anything but read streams: the trail's NOPERM case.
    config.configLines << QStringLiteral("user blind on >blindpw ~* &* +@all -xrange -xrevrange -xread");
    m_server = std::make_unique<SandboxServer>(config);
    m_server->start();
    m_conn = std::make_unique<Connection>(m_server->options());
}

QString TestAuditPage::append(const QByteArray &ns, const QString &action, const QString &target, const QString &actor, qint64 secondsAgo,
                              const QString &before, const QString &after, qint64 count, const QString &osUser, const QString &host,
                              const QString &reason)
{
    AuditEntry e;
    e.reason = reason;
    e.time = kNow.addSecs(-secondsAgo);
    e.action = action;
    e.target = target;
    e.before = before;
    e.after = after;
    e.count = count;
    e.osUser = osUser;
    e.host = host;
    return AuditLog(*m_conn, QString::fromUtf8(ns)).append(e, actor);
}

void TestAuditPage::coreReadsPages()
{
    const QByteArray ns = "core:";
    QStringList ids;
    for (int i = 0; i < 7; ++i)
        ids << append(ns, QStringLiteral("reset"), QStringLiteral("k%1").arg(i), QStringLiteral("dana"), 100 - i);
    AuditLog log(*m_conn, QString::fromUtf8(ns));
    QCOMPARE(log.list(3).front().id, ids[6]);
    const auto older = log.olderThan(ids[4], 10); // newest first, strictly older
    QCOMPARE(older.size(), size_t(4));
    QCOMPARE(older.front().id, ids[3]);
    QCOMPARE(older.back().id, ids[0]);
    const auto newer = log.newerThan(ids[2], 3); // oldest first, strictly newer
    QCOMPARE(newer.size(), size_t(3));
    QCOMPARE(newer.front().id, ids[3]);
    QCOMPARE(newer.back().id, ids[5]);
    QCOMPARE(newer.front().target, QStringLiteral("k3"));
    QCOMPARE(newer.front().actor, QStringLiteral("dana"));
    QCOMPARE(newer.front().time, kNow.addSecs(-97));
    QVERIFY(log.newerThan(ids[6], 10).empty());
    QVERIFY(AuditLog(*m_conn, QStringLiteral("nothing:")).olderThan(QString(), 10).empty());
}

void TestAuditPage::mutationsAppearWithoutRefresh()
{
    const QByteArray ns = "live:";
    const QString nsText = QString::fromUtf8(ns);
    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.page.messageText().contains(QStringLiteral("live:audit")), true);
    QCOMPARE(tab.rows(), 0);

    // Real mutations through the core, each audited as ratescope-cli audits it.
    PolicyStore policies(*m_conn, nsText);
    Policy p;
    p.name = QStringLiteral("api");
    p.match = "api:*";
    p.spec = {Algorithm::SlidingLog, 100, 60000000, 1};
    const Policy stored = policies.set(p, 0, QStringLiteral("Dana (support)"));
    AuditEntry e;
    e.action = QStringLiteral("policy.set");
    e.target = p.name;
    e.after = compact(stored.toJson());
    e.count = 1;
    AuditLog log(*m_conn, nsText);
    log.append(e, QStringLiteral("Dana (support)"));
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 1, kWaitMs);
    QCOMPARE(tab.cell(0, AuditModel::ActionColumn), QStringLiteral("policy.set"));
    QVERIFY(tab.page.messageText().isEmpty()); // the table is back in place

    OverrideStore overrides(*m_conn, nsText);
    Override o;
    o.key = "api:customer42";
    o.limit = 200;
    overrides.set(o, 7200LL * 1000000, QStringLiteral("Dana (support)"));
    e = {};
    e.action = QStringLiteral("override.set");
    e.target = QStringLiteral("api:customer42");
    e.after = compact(overrides.get(o.key)->toJson());
    e.count = 1;
    log.append(e, QStringLiteral("Dana (support)"));
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 2, kWaitMs);

    for (const char *k : {"api:customer42", "api:customer42:minute"})
        m_conn->command({"SET", k, "1"});
    Resetter resetter(*m_conn, nsText);
    const ResetPlan plan = resetter.planKeys({"api:customer42", "api:customer42:minute"});
    const qint64 deleted = resetter.execute(plan);
    QCOMPARE(deleted, 2);
    e = {};
    e.action = QStringLiteral("reset");
    e.target = QStringLiteral("api:customer42 api:customer42:minute");
    e.before = compact({{QStringLiteral("keys"), QJsonArray{QStringLiteral("api:customer42"), QStringLiteral("api:customer42:minute")}},
                        {QStringLiteral("count"), 2}});
    e.after = compact({{QStringLiteral("deleted"), deleted}});
    e.count = deleted;
    log.append(e); // no operator name: the OS user
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 3, kWaitMs);

    // Exactly one row per mutation, newest first, even after more polls.
    QVERIFY(tab.waitReads(3));
    QCOMPARE(tab.rows(), 3);
    QCOMPARE(tab.cell(0, AuditModel::ActionColumn), QStringLiteral("reset"));
    QCOMPARE(tab.cell(0, AuditModel::CountColumn), QStringLiteral("2"));
    QCOMPARE(tab.cell(0, AuditModel::ActorColumn), AuditLog::osUser());
    QCOMPARE(tab.cell(1, AuditModel::ActionColumn), QStringLiteral("override.set"));
    QCOMPARE(tab.cell(1, AuditModel::ActorColumn), QStringLiteral("Dana (support) · %1").arg(AuditLog::osUser()));
    QCOMPARE(tab.cell(2, AuditModel::ActionColumn), QStringLiteral("policy.set"));
    QCOMPARE(tab.cell(2, AuditModel::HostColumn), AuditLog::hostName());
    std::set<QString> ids;
    for (int r = 0; r < tab.page.model()->size(); ++r)
        ids.insert(tab.page.model()->entry(r).id);
    QCOMPARE(ids.size(), size_t(3));
    QCOMPARE(tab.page.model()->newestId(), log.list(1).front().id);

    // The action filter offers the actions seen.
    QStringList offered;
    for (int i = 1; i < tab.page.actionBox()->count(); ++i)
        offered << tab.page.actionBox()->itemText(i);
    QCOMPARE(offered, (QStringList{QStringLiteral("override.set"), QStringLiteral("policy.set"), QStringLiteral("reset")}));
    QVERIFY2(tab.page.statusText().contains(QStringLiteral("3 entries read")), qPrintable(tab.page.statusText()));
}

void TestAuditPage::filters()
{
    const QByteArray ns = "filter:";
    // Times relative to the frozen now: 30 min, 3 h, 2 days and 10 days ago.
    append(ns, QStringLiteral("reset"), QStringLiteral("api:customer42:minute"), QStringLiteral("Dana (support)"), 1800, {}, {}, 1,
           QStringLiteral("dana"));
    append(ns, QStringLiteral("reset"), QStringLiteral("api:customer7:minute"), QStringLiteral("bob"), 3 * 3600);
    append(ns, QStringLiteral("policy.set"), QStringLiteral("api"), QStringLiteral("Carol"), 2 * 86400);
    append(ns, QStringLiteral("override.set"), QStringLiteral("api:customer42"), QStringLiteral("bob"), 10 * 86400);
    append(ns, QStringLiteral("burst"), QStringLiteral("test:customer42"), QStringLiteral("eve"), 60, {}, {}, 500);

    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 5);
    auto targets = [&tab] {
        QStringList t;
        for (int r = 0; r < tab.rows(); ++r)
            t << tab.cell(r, AuditModel::TargetColumn);
        return t;
    };

    // Rows come in the stream's order, newest first: burst, override, policy, reset, reset.
    tab.page.setActionFilter(QStringLiteral("reset"));
    QCOMPARE(targets(), (QStringList{QStringLiteral("api:customer7:minute"), QStringLiteral("api:customer42:minute")}));
    tab.page.setActionFilter({});
    QCOMPARE(tab.rows(), 5);

    // Actor: part of the operator name or of the OS user, any case; or a glob.
    tab.page.setActorFilter(QStringLiteral("DANA"));
    QCOMPARE(targets(), QStringList{QStringLiteral("api:customer42:minute")});
    tab.page.setActorFilter(QStringLiteral("b?b"));
    QCOMPARE(targets(), (QStringList{QStringLiteral("api:customer42"), QStringLiteral("api:customer7:minute")}));
    tab.page.setActorFilter({});

    // Target: contains, or a glob matching the whole target.
    tab.page.setTargetFilter(QStringLiteral("customer42"));
    QCOMPARE(targets(),
             (QStringList{QStringLiteral("test:customer42"), QStringLiteral("api:customer42"), QStringLiteral("api:customer42:minute")}));
    tab.page.setTargetFilter(QStringLiteral("api:customer42*"));
    QCOMPARE(targets(), (QStringList{QStringLiteral("api:customer42"), QStringLiteral("api:customer42:minute")}));
    tab.page.setTargetFilter(QStringLiteral("api:*:minute"));
    QCOMPARE(targets(), (QStringList{QStringLiteral("api:customer7:minute"), QStringLiteral("api:customer42:minute")}));
    tab.page.setTargetFilter({});

    // Time, against the frozen clock.
    tab.page.setTimeRange(AuditPage::TimeRange::LastHour);
    QCOMPARE(targets(), (QStringList{QStringLiteral("test:customer42"), QStringLiteral("api:customer42:minute")}));
    tab.page.setTimeRange(AuditPage::TimeRange::LastDay);
    QCOMPARE(tab.rows(), 3);
    tab.page.setTimeRange(AuditPage::TimeRange::LastWeek);
    QCOMPARE(tab.rows(), 4);
    tab.page.setTimeRange(AuditPage::TimeRange::Custom, kNow.addDays(-3), kNow.addSecs(-3600));
    QCOMPARE(targets(), (QStringList{QStringLiteral("api"), QStringLiteral("api:customer7:minute")}));

    // Combined: who reset customer 42's key yesterday?
    tab.page.setTimeRange(AuditPage::TimeRange::LastDay);
    tab.page.setActionFilter(QStringLiteral("reset"));
    tab.page.setTargetFilter(QStringLiteral("customer42"));
    QCOMPARE(tab.rows(), 1);
    QCOMPARE(tab.cell(0, AuditModel::ActorColumn), QStringLiteral("Dana (support) · dana"));
    QVERIFY2(tab.page.statusText().startsWith(QStringLiteral("1 of 5 entries read match the filter")), qPrintable(tab.page.statusText()));
    tab.page.setActorFilter(QStringLiteral("nobody"));
    QCOMPARE(tab.rows(), 0);
    QCOMPARE(tab.page.messageText(), QStringLiteral("Searched 5 entries (the whole trail). Clear a filter or widen the time range."));
    tab.page.setActorFilter({});

    // A live entry that matches appears under the filter; one that does not, does not.
    append(ns, QStringLiteral("reset"), QStringLiteral("api:customer42:hour"), QStringLiteral("frank"), 10);
    append(ns, QStringLiteral("reset"), QStringLiteral("api:customer9:hour"), QStringLiteral("frank"), 10);
    QTRY_COMPARE_WITH_TIMEOUT(tab.page.model()->size(), 7, kWaitMs);
    QCOMPARE(tab.rows(), 2);
    QCOMPARE(tab.cell(0, AuditModel::TargetColumn), QStringLiteral("api:customer42:hour"));
}

// The entry selected stays selected, and in view, while filters change around it; one a filter
// hides is selected again once a filter shows it; the operator clearing it forgets it.
void TestAuditPage::selectionStaysWithItsEntryThroughFilters()
{
    const QByteArray ns = "selection:";
    for (int i = 0; i < 60; ++i) // enough rows that the table scrolls
        append(ns, i % 2 ? QStringLiteral("reset") : QStringLiteral("override.set"), QStringLiteral("api:customer%1").arg(i),
               i % 3 ? QStringLiteral("bob") : QStringLiteral("dana"), 3600 - i * 10);
    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 60);
    QTableView *view = tab.page.view();
    AuditDetails *d = tab.page.details();
    auto selectedTarget = [&]() -> QString {
        const QModelIndexList rows = view->selectionModel()->selectedRows();
        return rows.size() == 1 ? tab.cell(rows.front().row(), AuditModel::TargetColumn) : QString();
    };
    auto inView = [&] {
        const QModelIndexList rows = view->selectionModel()->selectedRows();
        return rows.size() == 1 && view->viewport()->rect().contains(view->visualRect(rows.front()));
    };
    // Newest first: row 56 holds customer3 (reset, by dana), near the bottom.
    view->selectRow(56);
    QCOMPARE(selectedTarget(), QStringLiteral("api:customer3"));
    view->scrollTo(tab.page.filtered()->index(56, 0));

    // Filters that keep it: it stays selected, at its new row, in view, its details shown.
    tab.page.setActionFilter(QStringLiteral("reset"));
    QCOMPARE(selectedTarget(), QStringLiteral("api:customer3"));
    QVERIFY(inView());
    tab.page.setActorFilter(QStringLiteral("dana"));
    QCOMPARE(selectedTarget(), QStringLiteral("api:customer3"));
    QVERIFY(inView());
    QCOMPARE(d->headline(), QStringLiteral("reset · api:customer3"));

    // One that hides it: nothing selected, no other entry's details.
    tab.page.setTargetFilter(QStringLiteral("customer5*"));
    QVERIFY(view->selectionModel()->selectedRows().isEmpty());
    QCOMPARE(d->headline(), QStringLiteral("No entry selected"));
    // Shown again: selected again, in view.
    tab.page.setTargetFilter({});
    QCOMPARE(selectedTarget(), QStringLiteral("api:customer3"));
    QVERIFY(inView());
    tab.page.setActionFilter({});
    tab.page.setActorFilter({});
    QCOMPARE(tab.rows(), 60);
    QCOMPARE(selectedTarget(), QStringLiteral("api:customer3"));
    QVERIFY(inView());
    QCOMPARE(d->headline(), QStringLiteral("reset · api:customer3"));

    // Cleared by the operator: a filter brings nothing back.
    view->clearSelection();
    tab.page.setActionFilter(QStringLiteral("reset"));
    tab.page.setActionFilter({});
    QVERIFY(view->selectionModel()->selectedRows().isEmpty());
}

// The filter fields are wide enough for their placeholders at the widths the tab has beside the
// keys panel (about 620 px at 1024x700, 820 px at 1280x800), and the bar asks for no more.
void TestAuditPage::filterFieldsShowWhatToType()
{
    Tab tab(m_server->options(), "placeholders:");
    QVERIFY(tab.waitLoaded());
    QVERIFY2(tab.page.minimumSizeHint().width() <= 600, qPrintable(QString::number(tab.page.minimumSizeHint().width())));
    for (const int width : {600, 820, 1200}) {
        tab.page.resize(width, 700);
        QCoreApplication::sendPostedEvents();
        QCOMPARE(tab.page.width(), width);
        for (QLineEdit *edit : {tab.page.actorEdit(), tab.page.targetEdit()}) {
            const QFontMetrics fm = edit->fontMetrics();
            const int around = edit->sizeHint().width() - 17 * fm.horizontalAdvance(QLatin1Char('x')); // QLineEdit's hint: 17 x
            QVERIFY2(edit->width() >= fm.horizontalAdvance(edit->placeholderText()) + around,
                     qPrintable(QStringLiteral("%1 px wide: \"%2\" in %3 px").arg(width).arg(edit->placeholderText()).arg(edit->width())));
        }
    }
    // Between…: the two dates join the second row; the fields keep their width.
    tab.page.resize(600, 700);
    tab.page.setTimeRange(AuditPage::TimeRange::Custom, kNow.addDays(-1), kNow);
    QCoreApplication::sendPostedEvents();
    QVERIFY2(tab.page.minimumSizeHint().width() <= 600, qPrintable(QString::number(tab.page.minimumSizeHint().width())));
    saveShot(tab.page, QStringLiteral("audit-filter-600.png"));
}

// The table fits the tab's width with no horizontal scroll bar: the time, the action and the
// target always, the target whole when there is room; the other columns while they fit, never cut.
// The first entry of an empty trail, made while the tab is open, is selected as it comes.
void TestAuditPage::tableFitsItsWidth()
{
    const QByteArray ns = "fit:";
    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 0);
    append(ns, QStringLiteral("burst"), QStringLiteral("demo:api:newcustomer"), QStringLiteral("Dana (support)"), 60, {}, {}, 200,
           QStringLiteral("dana"), QStringLiteral("support-07"));
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 1, kWaitMs);
    QCOMPARE(tab.page.details()->headline(), QStringLiteral("burst · demo:api:newcustomer"));
    append(ns, QStringLiteral("override.set"), QStringLiteral("login:acme:/search/advanced/with/a/long/path"), QStringLiteral("bob"), 30,
           {}, {}, 1, QStringLiteral("bob"), QStringLiteral("bob-laptop"), QStringLiteral("TICKET-4711 acme gets 429s"));
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 2, kWaitMs);
    QTableView *table = tab.page.view();
    QHeaderView *header = table->horizontalHeader();
    const int em = table->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    for (const int width : {600, 820, 1200}) {
        tab.page.resize(width, 700);
        QCoreApplication::sendPostedEvents();
        const QString at = QStringLiteral("%1 px").arg(width);
        QVERIFY2(header->length() <= table->viewport()->width(), qPrintable(at));
        for (const int c : {AuditModel::TimeColumn, AuditModel::ActionColumn, AuditModel::TargetColumn})
            QVERIFY2(!header->isSectionHidden(c), qPrintable(at));
        QVERIFY2(header->sectionSize(AuditModel::TargetColumn) >= 14 * em, qPrintable(at));
        for (int c = 0; c < AuditModel::ColumnCount; ++c) {
            if (header->isSectionHidden(c) || c == AuditModel::ReasonColumn || c == AuditModel::TargetColumn)
                continue;
            for (int r = 0; r < tab.rows(); ++r) {
                const QModelIndex index = tab.page.filtered()->index(r, c);
                QVERIFY2(table->sizeHintForIndex(index).width() + 1 <= header->sectionSize(c),
                         qPrintable(QStringLiteral("%1: '%2' in %3 px").arg(at, index.data().toString()).arg(header->sectionSize(c))));
            }
        }
    }
    // Wide: every column, the target whole.
    QVERIFY(!header->isSectionHidden(AuditModel::ReasonColumn) && !header->isSectionHidden(AuditModel::HostColumn));
    QVERIFY(table->sizeHintForIndex(tab.page.filtered()->index(0, AuditModel::TargetColumn)).width() + 1 <=
            header->sectionSize(AuditModel::TargetColumn));
}

void TestAuditPage::pagingBackThrough1000Entries()
{
    const QByteArray ns = "paging:";
    std::vector<Command> batch;
    for (int i = 0; i < 1000; ++i)
        batch.push_back({"XADD",   ns + "audit", "*",       "time",   QByteArray::number(kNow.addSecs(-10000 + i).toMSecsSinceEpoch()),
                         "actor",  "dana",       "os_user", "dana",   "host",
                         "ops1",   "action",     "reset",   "target", "api:c" + QByteArray::number(i),
                         "before", "",           "after",   "",       "count",
                         "1"});
    for (const Reply &r : m_conn->pipeline(batch))
        QVERIFY(!r.isError());

    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), AuditPage::kPageSize);
    QVERIFY(tab.page.model()->hasOlder());
    QCOMPARE(tab.cell(0, AuditModel::TargetColumn), QStringLiteral("api:c999"));

    // Scrolling to the end reads the page before the oldest row, until the trail ends.
    for (int round = 0; round < 20 && tab.page.model()->hasOlder(); ++round) {
        const int before = tab.rows();
        // (again until the view has laid the new rows out and its scroll bar reaches them)
        // (the last read finds nothing more: the trail ends there)
        QTRY_VERIFY_WITH_TIMEOUT((tab.page.view()->scrollToBottom(), tab.rows() > before || !tab.page.model()->hasOlder()), kWaitMs);
    }
    QCOMPARE(tab.rows(), 1000);
    QVERIFY(!tab.page.model()->hasOlder());
    QVERIFY(!tab.page.model()->canFetchMore({}));
    for (int r = 0; r < 1000; ++r)
        QCOMPARE(tab.page.model()->entry(r).target, QStringLiteral("api:c%1").arg(999 - r));
    QVERIFY2(tab.page.statusText().contains(QStringLiteral("1,000 entries read (the whole trail)")), qPrintable(tab.page.statusText()));

    // Still following the live end after paging back; someone reading the old end of the
    // table keeps the rows they are reading in view.
    QTableView *view = tab.page.view();
    view->scrollTo(tab.page.filtered()->index(500, 0), QAbstractItemView::PositionAtTop);
    const QString reading = view->indexAt(QPoint(2, 2)).siblingAtColumn(AuditModel::TargetColumn).data().toString();
    QCOMPARE(reading, QStringLiteral("api:c499"));
    append(ns, QStringLiteral("policy.set"), QStringLiteral("api"), QStringLiteral("dana"), 0);
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 1001, kWaitMs);
    QCOMPARE(tab.cell(0, AuditModel::TargetColumn), QStringLiteral("api"));
    QCOMPARE(view->indexAt(QPoint(2, 2)).siblingAtColumn(AuditModel::TargetColumn).data().toString(), reading);

    // A filter matching only old entries pages back by itself until the view is full or the
    // trail ends: a fresh tab finds the 5 oldest entries without being scrolled.
    Tab search(m_server->options(), ns);
    QVERIFY(search.waitLoaded());
    search.page.setTargetFilter(QStringLiteral("api:c[0-4]"));
    QTRY_COMPARE_WITH_TIMEOUT(search.rows(), 5, kWaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(!search.page.model()->hasOlder(), kWaitMs);
    QCOMPARE(search.cell(4, AuditModel::TargetColumn), QStringLiteral("api:c0"));
}

void TestAuditPage::reasonsShownAndFound()
{
    const QByteArray ns = "reasons:";
    append(ns, QStringLiteral("override.set"), QStringLiteral("api:acme"), QStringLiteral("dana"), 300, {},
           compact({{QStringLiteral("limit"), 120}, {QStringLiteral("expires_at"), 1795521600000.0}}), 1, {}, {},
           QStringLiteral("TICKET-4711 acme gets 429s"));
    append(ns, QStringLiteral("burst"), QStringLiteral("api:acme"), QStringLiteral("bob"), 120, compact({{QStringLiteral("requests"), 50}}),
           compact({{QStringLiteral("allowed"), 20}}), 50);
    append(ns, QStringLiteral("reset"), QStringLiteral("lookup:acme"), QStringLiteral("dana"), 60, {}, {}, 3, {}, {},
           QStringLiteral("TICKET-4711 acme gets 429s"));

    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 3);
    QCOMPARE(tab.cell(0, AuditModel::ReasonColumn), QStringLiteral("TICKET-4711 acme gets 429s"));
    QCOMPARE(tab.cell(1, AuditModel::ReasonColumn), QString());
    // A ticket number in the target field finds what was done for the ticket.
    tab.page.setTargetFilter(QStringLiteral("TICKET-4711*"));
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 2, kWaitMs);
    tab.page.setTargetFilter(QString());
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 3, kWaitMs);

    AuditDetails *d = tab.page.details();
    tab.page.view()->selectRow(2);
    QVERIFY2(d->facts().contains(QStringLiteral("Reason: TICKET-4711 acme gets 429s")), qPrintable(d->facts()));
    // A record's time in milliseconds reads as a time.
    QCOMPARE(d->changes()->item(0, 0)->text(), QStringLiteral("expires_at"));
    QCOMPARE(d->changes()->item(0, 2)->text(), QStringLiteral("2026-11-24 12:00:00.000 UTC (1795521600000)"));
    // A burst: what was asked for and what came of it.
    tab.page.view()->selectRow(1);
    QVERIFY(!d->facts().contains(QStringLiteral("Reason")));
    QCOMPARE(d->changes()->horizontalHeaderItem(1)->text(), QStringLiteral("Parameters"));
    QCOMPARE(d->changes()->horizontalHeaderItem(2)->text(), QStringLiteral("Results"));
    tab.page.view()->selectRow(0);
    QCOMPARE(d->changes()->horizontalHeaderItem(1)->text(), QStringLiteral("Before"));
}

void TestAuditPage::detailsShowBeforeAndAfter()
{
    const QByteArray ns = "details:";
    const QString before = compact({{QStringLiteral("name"), QStringLiteral("api")},
                                    {QStringLiteral("limit"), 100},
                                    {QStringLiteral("window_us"), 60000000},
                                    {QStringLiteral("description"), QStringLiteral("public API")},
                                    {QStringLiteral("keys"), QStringLiteral("api:acme-corporation-eu-west-1")}});
    const QString after = compact({{QStringLiteral("name"), QStringLiteral("api")},
                                   {QStringLiteral("limit"), 250},
                                   {QStringLiteral("window_us"), 60000000},
                                   {QStringLiteral("enforced"), false},
                                   {QStringLiteral("keys"), QStringLiteral("api:acme-corporation-eu-west-1")}});
    append(ns, QStringLiteral("policy.set"), QStringLiteral("api"), QStringLiteral("Dana (support)"), 7200, before, after, 1,
           QStringLiteral("dana"), QStringLiteral("ops-laptop"));
    append(ns, QStringLiteral("override.set"), QStringLiteral("api:customer42"), QStringLiteral("bob"), 60, {},
           compact({{QStringLiteral("limit"), 200}}));

    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    AuditDetails *d = tab.page.details();
    QCOMPARE(d->headline(), QStringLiteral("override.set · api:customer42")); // the newest, selected as the trail loads
    tab.page.view()->clearSelection();
    QCOMPARE(d->headline(), QStringLiteral("No entry selected"));
    tab.page.view()->selectRow(1);
    QCOMPARE(d->headline(), QStringLiteral("policy.set · api"));
    QVERIFY2(d->facts().contains(QStringLiteral("By Dana (support), OS user dana, on host ops-laptop")), qPrintable(d->facts()));
    QVERIFY2(d->facts().contains(QStringLiteral("2 h 00 m ago")), qPrintable(d->facts()));
    QVERIFY2(d->beforeText().contains(QStringLiteral("\n  \"limit\": 100,\n")), qPrintable(d->beforeText()));
    QVERIFY2(d->afterText().contains(QStringLiteral("\n  \"limit\": 250,\n")), qPrintable(d->afterText()));
    // Never wrapped after a hyphen (a word joiner follows each), and copied as recorded.
    QVERIFY(d->beforeText().contains(QStringLiteral("\"api:acme-corporation-eu-west-1\"")));
    QPlainTextEdit *beforeView = d->findChildren<QPlainTextEdit *>().value(0);
    QVERIFY(beforeView && beforeView->toPlainText().contains(QStringLiteral("acme-\u2060corporation")));
    beforeView->selectAll();
    beforeView->copy();
    QCOMPARE(QGuiApplication::clipboard()->text(), d->beforeText());
    // The changed fields only: description removed, enforced added, limit changed.
    QTableWidget *changes = d->changes();
    QCOMPARE(changes->rowCount(), 3);
    QMap<QString, QPair<QString, QString>> changed;
    for (int r = 0; r < changes->rowCount(); ++r)
        changed[changes->item(r, 0)->text()] = {changes->item(r, 1)->text(), changes->item(r, 2)->text()};
    QCOMPARE(changed.value(QStringLiteral("limit")), qMakePair(QStringLiteral("100"), QStringLiteral("250")));
    QCOMPARE(changed.value(QStringLiteral("description")), qMakePair(QStringLiteral("\"public API\""), QStringLiteral("—")));
    QCOMPARE(changed.value(QStringLiteral("enforced")), qMakePair(QStringLiteral("—"), QStringLiteral("false")));

    // Created by the change: no before state.
    tab.page.view()->selectRow(0);
    QCOMPARE(d->headline(), QStringLiteral("override.set · api:customer42"));
    QCOMPARE(d->beforeText(), QStringLiteral("(none)"));
    QCOMPARE(changes->rowCount(), 1);

    // Nested objects are compared by path.
    const auto nested = changedFields(QStringLiteral(R"({"spec":{"limit":1,"cost":1},"keys":["a"]})"),
                                      QStringLiteral(R"({"spec":{"limit":2,"cost":1},"keys":["a","b"]})"));
    QCOMPARE(nested.size(), size_t(2));
    QCOMPARE(nested[0].field, QStringLiteral("keys"));
    QCOMPARE(nested[0].after, QStringLiteral("[\"a\",\"b\"]"));
    QCOMPARE(nested[1].field, QStringLiteral("spec.limit"));
}

// The details beside the trail at a desk's widths (the tab is about 620 px wide at 1024x700):
// the before and after states wrap to their panes and the changed fields fit theirs, so that no
// pane of them scrolls sideways, however long a value.
void TestAuditPage::detailsFitTheirWidth()
{
    const QByteArray ns = "detailsfit:";
    const QString description =
        QStringLiteral("Public API for partners and the mobile apps: 100 requests per minute per client, raised for INC-2041");
    const QString before = compact({{QStringLiteral("name"), QStringLiteral("api")},
                                    {QStringLiteral("match"), QStringLiteral("api:*")},
                                    {QStringLiteral("limit"), 60},
                                    {QStringLiteral("description"), description}});
    const QString after = compact({{QStringLiteral("name"), QStringLiteral("api")},
                                   {QStringLiteral("match"), QStringLiteral("api:*")},
                                   {QStringLiteral("limit"), 100},
                                   {QStringLiteral("description"), description + QStringLiteral(" (resolved)")},
                                   {QStringLiteral("keys"), QJsonArray{QStringLiteral("api:partner:acme-corporation-eu-west-1"),
                                                                       QStringLiteral("api:partner:globex-industries-us-east-2")}}});
    append(ns, QStringLiteral("policy.set"), QStringLiteral("api"), QStringLiteral("Carol (SRE)"), 60, before, after, 1);
    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    AuditDetails *d = tab.page.details();
    QCOMPARE(d->headline(), QStringLiteral("policy.set · api"));
    const QList<QPlainTextEdit *> states = d->findChildren<QPlainTextEdit *>();
    QCOMPARE(states.size(), 2);
    QTableWidget *changes = d->changes();
    for (const int width : {600, 820, 1200}) {
        tab.page.resize(width, 700);
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        const QString at = QStringLiteral("%1 px").arg(width);
        for (QPlainTextEdit *state : states) {
            QVERIFY2(
                state->horizontalScrollBar()->maximum() == 0,
                qPrintable(QStringLiteral("%1: a state %2 px wider than its pane").arg(at).arg(state->horizontalScrollBar()->maximum())));
            QVERIFY2(!state->horizontalScrollBar()->isVisible(), qPrintable(at));
        }
        QTRY_VERIFY2(changes->horizontalHeader()->length() <= changes->viewport()->width(),
                     qPrintable(QStringLiteral("%1: changed fields %2 px in %3")
                                    .arg(at)
                                    .arg(changes->horizontalHeader()->length())
                                    .arg(changes->viewport()->width())));
        QVERIFY2(!changes->horizontalScrollBar()->isVisible(), qPrintable(at));
        saveShot(tab.page, QStringLiteral("audit-details-%1.png").arg(width));
    }
    // Wrapped, not changed: the text is the indented JSON still.
    QVERIFY2(d->afterText().contains(QStringLiteral("\n  \"limit\": 100,\n")), qPrintable(d->afterText()));
}

void TestAuditPage::csvExport()
{
    const QByteArray ns = "csv:";
    append(ns, QStringLiteral("reset"), QStringLiteral("api:customer42"), QStringLiteral("Dana \"the admin\""), 120,
           QStringLiteral(R"({"keys":["api:customer42"],"count":1})"), QStringLiteral(R"({"deleted":1})"), 1, QStringLiteral("dana"),
           QStringLiteral("ops1"));
    append(ns, QStringLiteral("policy.set"), QStringLiteral("api"), QStringLiteral("bob"), 60);
    append(ns, QStringLiteral("reset"), QStringLiteral("=HYPERLINK(\"http://x\")"), QStringLiteral("bob"), 30, {}, {}, 0,
           QStringLiteral("bob"), QStringLiteral("ops2"));

    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    tab.page.setActionFilter(QStringLiteral("reset"));
    QCOMPARE(tab.rows(), 2);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("audit.csv"));
    QCOMPARE(tab.page.exportCsv(path), QString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    QCOMPARE(lines.size(), 4); // header, 2 entries, and the empty rest after the last CRLF
    QCOMPARE(lines[0], QByteArray("time_utc,id,actor,os_user,host,action,target,count,before,after,reason\r"));
    const AuditEntry &newest = tab.page.model()->entry(0);
    QCOMPARE(lines[1], "\"" + newest.time.toString(Qt::ISODateWithMs).toUtf8() + "\",\"" + newest.id.toUtf8() +
                           "\",\"bob\",\"bob\",\"ops2\",\"reset\",\"'=HYPERLINK(\"\"http://x\"\")\",0,\"\",\"\",\"\"\r");
    QCOMPARE(lines[2].mid(lines[2].indexOf(",\"Dana")),
             QByteArray(",\"Dana \"\"the admin\"\"\",\"dana\",\"ops1\",\"reset\",\"api:customer42\",1,"
                        "\"{\"\"count\"\":1,\"\"keys\"\":[\"\"api:customer42\"\"]}\",\"{\"\"deleted\"\":1}\",\"\"\r"));
    QVERIFY(lines[2].startsWith("\"" + kNow.addSecs(-120).toString(Qt::ISODateWithMs).toUtf8() + "\""));
    QVERIFY(!tab.page.exportCsv(dir.filePath(QStringLiteral("no/such/dir/audit.csv"))).isEmpty());
}

void TestAuditPage::hostileValuesRenderAsText()
{
    const QByteArray ns = "hostile:";
    const QString actor = QStringLiteral("<b>Mallory</b>\n\x1b[31mroot");
    const QString target = QStringLiteral("api:<img src=x onerror=alert(1)>\x1b]8;;http://evil\x07\u202Egnp.exe");
    const QString host = QStringLiteral("ops\r\nforged line");
    const QString before = QStringLiteral(R"({"note":"<i>x</i>\u001b[2J\u202e","limit":1})");
    append(ns, QStringLiteral("reset\x1b[0m"), target, actor, 60, before, QStringLiteral("not json\n\x1b[2Jreally"), 1,
           QStringLiteral("mallory\t"), host);

    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 1);
    QCOMPARE(tab.cell(0, AuditModel::TargetColumn), displayKey(target.toUtf8()));
    for (int c = 0; c < AuditModel::ColumnCount; ++c)
        QVERIFY2(isInert(tab.cell(0, c)), qPrintable(tab.cell(0, c)));
    QVERIFY(tab.cell(0, AuditModel::ActorColumn).contains(QStringLiteral("<b>Mallory</b>\\n\\x1b[31mroot")));
    QCOMPARE(tab.cell(0, AuditModel::HostColumn), QStringLiteral("\"ops\\r\\nforged line\""));
    // Tooltips are rich text to Qt when they look like it: they come escaped.
    const QString tip = tab.page.filtered()->index(0, AuditModel::ActorColumn).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("&lt;b&gt;Mallory&lt;/b&gt;")) && !tip.contains(QStringLiteral("<b>")), qPrintable(tip));

    tab.page.view()->selectRow(0);
    AuditDetails *d = tab.page.details();
    for (QLabel *l : d->findChildren<QLabel *>())
        if (l->text().contains(QStringLiteral("Mallory")) || l->text().contains(QStringLiteral("img")))
            QCOMPARE(l->textFormat(), Qt::PlainText);
    QVERIFY2(isInert(d->headline()), qPrintable(d->headline()));
    for (const QString &line : d->facts().split(QLatin1Char('\n')))
        QVERIFY2(isInert(line), qPrintable(line));
    QCOMPARE(d->facts().count(QLatin1Char('\n')), 1); // the host cannot add a line
    for (const QString &text : {d->beforeText(), d->afterText()})
        for (const QString &line : text.split(QLatin1Char('\n')))
            QVERIFY2(isInert(line), qPrintable(line));
    QVERIFY2(d->beforeText().contains(QStringLiteral("\"<i>x</i>\\x1b[2J\\xe2\\x80\\xae\"")), qPrintable(d->beforeText()));
    QCOMPARE(d->afterText(), QStringLiteral("not json\n\"\\x1b[2Jreally\""));
    QTableWidget *changes = d->changes();
    for (int r = 0; r < changes->rowCount(); ++r)
        for (int c = 0; c < 3; ++c)
            QVERIFY2(isInert(changes->item(r, c)->text()), qPrintable(changes->item(r, c)->text()));

    // CSV: one line per entry; no raw control character anywhere.
    QTemporaryDir dir;
    QCOMPARE(tab.page.exportCsv(dir.filePath(QStringLiteral("h.csv"))), QString());
    QFile f(dir.filePath(QStringLiteral("h.csv")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray csv = f.readAll();
    QCOMPARE(csv.count("\r\n"), 2);
    for (const QByteArray &line : csv.split('\n'))
        QVERIFY2(isInert(QString::fromUtf8(line.endsWith('\r') ? line.chopped(1) : line)), line.constData());

    // A target filter finds it by what the table shows, escapes included.
    tab.page.setTargetFilter(QStringLiteral("\\x1b]8;;http"));
    QCOMPARE(tab.rows(), 1);
    tab.page.setTargetFilter({});

    // The whole page renders (nothing to crash on).
    QVERIFY(!tab.page.grab().isNull());
}

void TestAuditPage::missingStream()
{
    Tab tab(m_server->options(), "empty:");
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 0);
    const QString title = tab.page.findChild<QLabel *>(QStringLiteral("title"))->text();
    QCOMPARE(title, QStringLiteral("No changes recorded yet"));
    QVERIFY2(tab.page.messageText().contains(QStringLiteral("empty:audit")), qPrintable(tab.page.messageText()));
    saveShot(tab.page, QStringLiteral("audit-empty.png"));
    // The first change made anywhere shows up by itself.
    append("empty:", QStringLiteral("reset"), QStringLiteral("api:x"), QStringLiteral("dana"), 5);
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 1, kWaitMs);
    QCOMPARE(tab.page.messageText(), QString());
}

void TestAuditPage::wrongTypeSaysSoAndRecovers()
{
    m_conn->command({"SET", "wrong:audit", "not a stream"});
    Tab tab(m_server->options(), "wrong:");
    QTRY_VERIFY_WITH_TIMEOUT(tab.page.messageText().contains(QStringLiteral("is a string, not a stream")), kWaitMs);
    QVERIFY(tab.page.messageText().contains(QStringLiteral("RENAME wrong:audit wrong:audit.old")));
    QCOMPARE(tab.page.findChild<QLabel *>(QStringLiteral("title"))->text(), QStringLiteral("The audit trail cannot be read"));
    saveShot(tab.page, QStringLiteral("audit-wrongtype.png"));
    m_conn->command({"DEL", "wrong:audit"});
    append("wrong:", QStringLiteral("reset"), QStringLiteral("api:x"), QStringLiteral("dana"), 5);
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 1, kWaitMs);
    QCOMPARE(tab.page.messageText(), QString());
}

void TestAuditPage::refusedByAcl()
{
    append("acl:", QStringLiteral("reset"), QStringLiteral("api:x"), QStringLiteral("dana"), 5);
    ConnectionOptions blind = m_server->options();
    blind.user = QStringLiteral("blind");
    blind.password = QStringLiteral("blindpw");
    Tab tab(blind, "acl:");
    QTRY_VERIFY_WITH_TIMEOUT(tab.page.messageText().contains(QStringLiteral("may not read the audit trail")), kWaitMs);
    // In the words every page uses for a refusal (ui/queries/refusal.h).
    QVERIFY2(tab.page.messageText().contains(QStringLiteral("user 'blind' may not run XREVRANGE; ask for +xrevrange")),
             qPrintable(tab.page.messageText()));
    QVERIFY(tab.page.messageText().contains(QStringLiteral("+xrange +xrevrange ~acl:audit")));
    QVERIFY(!tab.page.messageText().contains(QStringLiteral("blindpw")));
}

void TestAuditPage::disconnectedKeepsRowsMarkedStale()
{
    const QByteArray ns = "stale:";
    append(ns, QStringLiteral("reset"), QStringLiteral("api:a"), QStringLiteral("dana"), 5);
    append(ns, QStringLiteral("reset"), QStringLiteral("api:b"), QStringLiteral("dana"), 4);
    Tab tab(m_server->options(), ns);
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 2);
    QVERIFY(!tab.page.isStale());
    tab.page.setClient(nullptr, {});
    QCOMPARE(tab.rows(), 2);
    QVERIFY(tab.page.isStale());
    QVERIFY2(tab.page.statusText().contains(QStringLiteral("Not updating: disconnected")), qPrintable(tab.page.statusText()));
    // Back on the same connection: followed again from where it was, the rows kept meanwhile.
    append(ns, QStringLiteral("reset"), QStringLiteral("api:c"), QStringLiteral("dana"), 3);
    QSignalSpy resets(tab.page.model(), &QAbstractItemModel::modelReset);
    tab.page.setClient(&tab.client, ns);
    QCOMPARE(tab.rows(), 2);
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 3, kWaitMs);
    QCOMPARE(resets.size(), 0);
    QCOMPARE(tab.cell(0, AuditModel::TargetColumn), QStringLiteral("api:c"));
    QVERIFY(!tab.page.isStale());
}

void TestAuditPage::lostConnectionMarksStaleThenResumes()
{
    auto resetOf = [](const QString &key) {
        AuditEntry e;
        e.action = QStringLiteral("reset");
        e.target = key;
        return e;
    };
    SandboxServer server;
    server.start();
    {
        Connection c(server.options());
        AuditLog(c, QStringLiteral("ratescope:")).append(resetOf(QStringLiteral("api:a")));
    }
    Tab tab(server.options(), "ratescope:");
    QVERIFY(tab.waitLoaded());
    QCOMPARE(tab.rows(), 1);
    server.stop();
    QTRY_VERIFY_WITH_TIMEOUT(tab.page.isStale(), kWaitMs);
    QVERIFY2(tab.page.statusText().startsWith(QStringLiteral("Not updating: the connection is lost")), qPrintable(tab.page.statusText()));
    QCOMPARE(tab.rows(), 1);
    QVERIFY(tab.page.messageText().isEmpty()); // the rows stay in view; the banner is the window's business
    server.restart();
    {
        Connection c(server.options());
        AuditLog(c, QStringLiteral("ratescope:")).append(resetOf(QStringLiteral("api:b")));
    }
    // The client reconnects by itself (0.5 s, 1 s, 2 s ... backoff); the page follows on.
    QTRY_COMPARE_WITH_TIMEOUT(tab.rows(), 2, 30000);
    QVERIFY(!tab.page.isStale());
    QCOMPARE(tab.cell(0, AuditModel::TargetColumn), QStringLiteral("api:b"));
}

void TestAuditPage::screens()
{
    // About 30 entries of every kind, as an operator would meet them.
    const QByteArray ns = "shots:";
    const QStringList people = {QStringLiteral("Dana (support)"), QStringLiteral("bob"), QStringLiteral("Carol (SRE)"),
                                QStringLiteral("eve")};
    const QStringList users = {QStringLiteral("dana"), QStringLiteral("bob"), QStringLiteral("carol"), QStringLiteral("eve")};
    const QStringList hosts = {QStringLiteral("support-07"), QStringLiteral("bob-laptop"), QStringLiteral("sre-bastion"),
                               QStringLiteral("ci-runner-3")};
    for (int i = 0; i < 30; ++i) {
        const int who = i % 4;
        const qint64 ago = (30 - i) * 97 * 60; // from two days ago up to now
        const QString customer = QStringLiteral("customer%1").arg(40 + i % 7);
        if (i == 18) // yesterday afternoon, support reset customer 42's key
            append(ns, QStringLiteral("reset"), QStringLiteral("api:customer42:minute"), people[0], 20 * 3600,
                   compact({{QStringLiteral("keys"), QJsonArray{QStringLiteral("api:customer42:minute")}}, {QStringLiteral("count"), 1}}),
                   compact({{QStringLiteral("deleted"), 1}}), 1, users[0], hosts[0]);
        switch (i % 5) {
        case 0:
            append(ns, QStringLiteral("reset"), QStringLiteral("api:%1:minute").arg(customer), people[who], ago,
                   compact(
                       {{QStringLiteral("keys"), QJsonArray{QStringLiteral("api:%1:minute").arg(customer)}}, {QStringLiteral("count"), 1}}),
                   compact({{QStringLiteral("deleted"), 1}}), 1, users[who], hosts[who]);
            break;
        case 1:
            append(ns, QStringLiteral("override.set"), QStringLiteral("api:%1").arg(customer), people[who], ago, {},
                   compact({{QStringLiteral("key"), QStringLiteral("api:%1").arg(customer)},
                            {QStringLiteral("limit"), 200 + i},
                            {QStringLiteral("set_by"), people[who]}}),
                   1, users[who], hosts[who]);
            break;
        case 2:
            append(ns, QStringLiteral("policy.set"), QStringLiteral("api"), people[who], ago,
                   compact({{QStringLiteral("name"), QStringLiteral("api")},
                            {QStringLiteral("match"), QStringLiteral("api:*")},
                            {QStringLiteral("algorithm"), QStringLiteral("sliding-log")},
                            {QStringLiteral("limit"), 100 + i},
                            {QStringLiteral("window_us"), 60000000},
                            {QStringLiteral("version"), i}}),
                   compact({{QStringLiteral("name"), QStringLiteral("api")},
                            {QStringLiteral("match"), QStringLiteral("api:*")},
                            {QStringLiteral("algorithm"), QStringLiteral("sliding-log")},
                            {QStringLiteral("limit"), 120 + i},
                            {QStringLiteral("window_us"), 60000000},
                            {QStringLiteral("version"), i + 1}}),
                   1, users[who], hosts[who]);
            break;
        case 3:
            append(
                ns, QStringLiteral("burst"), QStringLiteral("test:api"), people[who], ago,
                compact(
                    {{QStringLiteral("algorithm"), QStringLiteral("gcra")}, {QStringLiteral("limit"), 100}, {QStringLiteral("rate"), 500}}),
                compact({{QStringLiteral("sent"), 5000}, {QStringLiteral("allowed"), 1000}, {QStringLiteral("denied"), 4000}}), 5000,
                users[who], hosts[who]);
            break;
        case 4:
            append(ns, QStringLiteral("reset"), QStringLiteral("match:api:trial:*"), people[who], ago,
                   compact({{QStringLiteral("keys"), QJsonArray{QStringLiteral("api:trial:1"), QStringLiteral("api:trial:2")}},
                            {QStringLiteral("count"), 37}}),
                   compact({{QStringLiteral("deleted"), 37}}), 37, users[who], hosts[who]);
            break;
        }
    }
    // And a hostile entry at the top.
    append(ns, QStringLiteral("reset"), QStringLiteral("api:<b>x</b>\x1b[2J"), QStringLiteral("mallory\n<i>"), 30);

    const QString dir = qEnvironmentVariable("RATESCOPE_SCREENSHOT_DIR");
    for (const bool dark : {false, true}) {
        Tab tab(m_server->options(), ns);
        if (dark) {
            QPalette p;
            p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
            p.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
            p.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
            p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
            p.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
            p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
            p.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
            p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
            p.setColor(QPalette::HighlightedText, Qt::white);
            p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
            tab.page.setPalette(p);
        }
        QVERIFY(tab.waitLoaded());
        QCOMPARE(tab.rows(), 32);
        tab.page.view()->selectRow(3);
        QCOMPARE(tab.page.details()->headline().isEmpty(), false);
        QCoreApplication::sendPostedEvents(); // lay out what changed
        const QPixmap shot = tab.page.grab();
        QVERIFY(!shot.isNull());
        if (!dir.isEmpty())
            QVERIFY(shot.save(dir + (dark ? QStringLiteral("/audit-dark.png") : QStringLiteral("/audit-light.png"))));
        if (dark && !dir.isEmpty()) {
            tab.page.setClient(nullptr, {});
            saveShot(tab.page, QStringLiteral("audit-dark-stale.png"));
        }
        if (!dark && !dir.isEmpty()) {
            tab.page.setTimeRange(AuditPage::TimeRange::LastDay);
            tab.page.setActionFilter(QStringLiteral("reset"));
            tab.page.setTargetFilter(QStringLiteral("customer42"));
            QCOMPARE(tab.rows(), 1);
            tab.page.view()->selectRow(0);
            QCoreApplication::sendPostedEvents();
            QVERIFY(tab.page.grab().save(dir + QStringLiteral("/audit-filtered.png")));
            tab.page.setClient(nullptr, {});
            QCoreApplication::sendPostedEvents();
            QVERIFY(tab.page.grab().save(dir + QStringLiteral("/audit-stale.png")));
            tab.page.setActorFilter(QStringLiteral("nobody"));
            QCoreApplication::sendPostedEvents();
            QVERIFY(tab.page.grab().save(dir + QStringLiteral("/audit-nomatch.png")));
        }
    }
}

QTEST_MAIN(TestAuditPage)
#include "tst_auditpage.moc"
