// The Lookup tab against a real redis-server: the same rows as `ratescope-cli --json lookup`
// (every format, a sharded group as one row, counter windows as one limiter, denying first);
// a reset from the page goes through the reset dialog's preview of exactly the rows' keys, is
// audited with the page's reason, and the rows show it within a second; a temporary limit
// granted to the rows is audited one entry each; with require-reason on, a change without a
// reason is refused and nothing is written; the summary for the ticket holds every row; the
// key segment "Look up this customer" takes. The model runs under QAbstractItemModelTester.
#include "admin/audit.h"
#include "admin/policy.h"
#include "connectionprofile.h"
#include "keyactions.h"
#include "limiters/limiter.h"
#include "lookupmodel.h"
#include "lookuppage.h"
#include "mainwindow.h"
#include "passwordvault.h"
#include "profilestore.h"
#include "redis/connection.h"
#include "redis/sandboxserver.h"
#include "redisclient.h"
#include "resetdialog.h"
#include "testsupport.h"
#include "usagebardelegate.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLabel>
#include <QSpinBox>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include "keybrowser.h"
#include "keytreemodel.h"
#include <QMenu>
#include <QStyle>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <memory>
#include <set>

using namespace ratescope;
using namespace ratescope::ui;
using namespace ratescope::test;

namespace {

constexpr int kWaitMs = 20000;
constexpr qint64 kSecond = 1000000;
const QString kNs = QStringLiteral("ratescope:");

Policy policy(const QString &name, const QByteArray &match, Algorithm algorithm, qint64 limit, qint64 windowUs, int shards = 0)
{
    Policy p;
    p.name = name;
    p.match = match;
    p.spec = {algorithm, limit, windowUs, 1};
    p.shards = shards;
    return p;
}

// The page on its own client, its model under the tester.
struct Page {
    RedisClient client;
    LookupPage page;
    std::unique_ptr<QAbstractItemModelTester> tester;

    explicit Page(const ConnectionOptions &options)
        : client(options)
    {
        tester = std::make_unique<QAbstractItemModelTester>(page.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        page.resize(900, 600);
        client.open();
        page.setClient(&client, kNs.toUtf8());
        page.show();
    }
    bool lookUp(const QString &id)
    {
        QSignalSpy spy(&page, &LookupPage::loaded);
        page.lookUp(id);
        return spy.wait(kWaitMs);
    }
    std::map<QByteArray, const LookupRow *> rows() const
    {
        std::map<QByteArray, const LookupRow *> out;
        for (const LookupRow &r : page.model()->rows())
            out[r.key] = &r;
        return out;
    }
};

} // namespace

class TestLookupPage : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void segmentUnderTheCursor();
    void modelUnderTester();
    void sameRowsAsTheCli();
    void resetFromThePageIsPreviewedAuditedAndShown();
    void grantIsAuditedOnePerRowWithItsReason();
    void grantDialogAsksForLimitWindowAndDuration();
    void requireReasonRefusesWithoutOne();
    void summaryHoldsEveryRow();
    void ctrlKAndStartupLookup();
    void keysPanelLooksUpTheSegmentUnderTheMouse();
    void columnsFitTheTab();

private:
    void seedCustomer();
    QString url() const { return m_server.options().toUrl(); }
    std::unique_ptr<MainWindow> openWindow(const MainWindow::StartupView &view);

    SandboxServer m_server;
    std::unique_ptr<Connection> m_conn;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
    std::unique_ptr<ProfileStore> m_store;
    std::unique_ptr<PasswordVault> m_vault;
};

void TestLookupPage::initTestCase()
{
    m_server.start();
    m_conn = std::make_unique<Connection>(m_server.options());
}

void TestLookupPage::init()
{
    m_conn->command({"FLUSHALL"});
    seedCustomer();
    QFile::remove(m_dir.filePath(QStringLiteral("settings.ini")));
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    m_store = std::make_unique<ProfileStore>(m_settings.get());
    m_vault = std::make_unique<PasswordVault>(PasswordVault::Backend::SessionOnly);
}

void TestLookupPage::cleanup()
{
    m_store.reset();
    m_settings.reset();
    m_vault.reset();
}

// acme in several formats (long windows: nothing changes between the page's read and the
// CLI's), one denying; another customer's keys that only look alike; keys that are no limiter.
void TestLookupPage::seedCustomer()
{
    PolicyStore store(*m_conn, kNs);
    const qint64 hour = 3600 * kSecond;
    for (const Policy &p : {policy(QStringLiteral("api"), "api:*", Algorithm::SlidingLog, 5, hour),
                            policy(QStringLiteral("login"), "login:*", Algorithm::SlidingLog, 3, hour),
                            policy(QStringLiteral("rl"), "rl:*", Algorithm::SlidingLog, 12, hour, 4),
                            policy(QStringLiteral("svc"), "svc:*", Algorithm::FixedWindow, 100, hour)})
        store.set(p, 0, QStringLiteral("test"));
    Limiter limiter(*m_conn);
    const auto spec = [&](const QString &name) { return store.get(name)->spec; };
    for (int i = 0; i < 6; ++i)
        limiter.check("api:acme", spec(QStringLiteral("api"))); // 5 of 5: denying
    for (int i = 0; i < 2; ++i)
        limiter.check("login:acme:/search", spec(QStringLiteral("login")));
    limiter.check("rl:{acme}:0", spec(QStringLiteral("rl")));
    limiter.check("rl:{acme}:2", spec(QStringLiteral("rl")));
    limiter.check("api:acmecorp", spec(QStringLiteral("api")));
    const Reply t = m_conn->command({"TIME"});
    const qint64 nowS = t[0].bytes().toLongLong();
    m_conn->command({"SET", "svc:acme:" + QByteArray::number(nowS / 3600), "7"}); // a service's own hourly counter
    m_conn->command({"ZADD", "rlflx:acme", QByteArray::number(nowS * 1000 - 5000), "a"}); // no policy: listed, no figures
    m_conn->command({"SET", "acme:profile", "{\"plan\":\"gold\"}"});
    m_conn->command({"HSET", "session:acme", "user", "42"});
}

std::unique_ptr<MainWindow> TestLookupPage::openWindow(const MainWindow::StartupView &view)
{
    auto window = std::make_unique<MainWindow>(*m_store, *m_vault);
    window->setStartupView(view);
    const ConnectionOptions options = m_server.options();
    const ConnectionProfile profile = ConnectionProfile::fromOptions(options, options.toUrl());
    window->addSessionProfile(profile, options);
    QSignalSpy settled(window.get(), &MainWindow::settled);
    window->connectProfile(profile.name);
    window->show();
    return settled.wait(30000) ? std::move(window) : nullptr;
}

void TestLookupPage::segmentUnderTheCursor()
{
    // Under the cursor: that segment; on a separator, a number or unknown: the last word.
    QCOMPARE(lookupIdAt("api:acme", 1), QByteArray("api"));
    QCOMPARE(lookupIdAt("api:acme", 5), QByteArray("acme"));
    QCOMPARE(lookupIdAt("rl:{acme}:3", 5), QByteArray("acme"));
    QCOMPARE(lookupIdAt("rl:{acme}:3", -1), QByteArray("acme"));
    QCOMPARE(lookupIdAt("rl:{acme}:3", 10), QByteArray("acme")); // on the shard number
    QCOMPARE(lookupIdAt("login:acme:/search", -1), QByteArray("search"));
    QCOMPARE(lookupIdAt("login:acme:/search", 7), QByteArray("acme"));
    QCOMPARE(lookupIdAt("request_rate_limiter.{acme}.tokens", 23), QByteArray("acme"));
    QCOMPARE(lookupIdAt("u=alice@example.com", 3), QByteArray("alice"));
    QCOMPARE(lookupIdAt("api key|acme;eu,1", 4), QByteArray("key"));
    QCOMPARE(lookupIdAt("svc:acme:4862", -1), QByteArray("acme"));
    QCOMPARE(lookupIdAt("svc:acme:4862", 3), QByteArray("acme")); // on a separator
    QCOMPARE(lookupIdAt("1:2:3", -1), QByteArray());
    QCOMPARE(lookupIdAt("", -1), QByteArray());
}

void TestLookupPage::modelUnderTester()
{
    LookupModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    LookupResult result;
    result.nowUs = 1700000000 * kSecond;
    for (const QByteArray key : {"api:acme", "login:acme"}) {
        LookupRow row;
        row.key = key;
        row.keys = {key};
        row.policy = QStringLiteral("api");
        row.spec = LimitSpec{Algorithm::SlidingLog, 5, 10 * kSecond, 1};
        Usage u;
        u.usedNow = key == "api:acme" ? 5 : 1;
        u.decision.limit = 5;
        u.decision.allowed = key != "api:acme";
        u.decision.retryAfterUs = u.decision.allowed ? 0 : 3400000;
        row.usage = u;
        result.rows.push_back(row);
    }
    model.setResult(result);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.denyingCount(), 1);
    QVERIFY(model.index(0, LookupModel::Limiter).data(LookupModel::DenyingRole).toBool());
    QVERIFY(!model.index(0, LookupModel::Limiter).data(Qt::DecorationRole).isNull()); // marked, not by colour alone
    QCOMPARE(model.index(0, LookupModel::Used).data().toString(), QStringLiteral("5 / 5"));
    QVERIFY(model.index(0, LookupModel::Remaining).data().toString().contains(QStringLiteral("0 · next in 3.4 s")));
    QCOMPARE(model.index(1, LookupModel::Used).data(LookupModel::FractionRole).toDouble(), 0.2);
    // The same limiters again: in place (a selection stays); others: reset.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setResult(result);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(reset.size(), 0);
    result.rows.pop_back();
    model.setResult(result);
    QCOMPARE(reset.size(), 1);
    QCOMPARE(model.rowCount(), 1);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestLookupPage::sameRowsAsTheCli()
{
    Page p(m_server.options());
    QVERIFY(p.lookUp(QStringLiteral("acme")));
    const CliResult cli = runCli({QStringLiteral("--url"), url(), QStringLiteral("--json"), QStringLiteral("lookup"), QStringLiteral("acme")});
    QVERIFY2(cli.exitCode == 0, cli.err.constData());
    std::vector<QJsonObject> expected;
    for (const QJsonObject &o : jsonObjects(cli.out))
        if (!o.contains(QStringLiteral("lookup")))
            expected.push_back(o);
    const auto &rows = p.page.model()->rows();
    QCOMPARE(rows.size(), expected.size());
    QCOMPARE(rows.size(), size_t(5)); // api, login, the rl group, the svc counter, rlflx
    for (size_t i = 0; i < rows.size(); ++i) {
        const LookupRow &r = rows[i];
        const QJsonObject &o = expected[i]; // the same order: denying first
        QCOMPARE(QString::fromUtf8(r.key), o.value(QStringLiteral("key")).toString());
        QCOMPARE(r.policy, o.value(QStringLiteral("policy")).toString());
        QCOMPARE(r.algorithmText(), o.value(QStringLiteral("algorithm")).toString());
        QCOMPARE(r.denying(), o.value(QStringLiteral("denying")).toBool());
        QCOMPARE(r.shards, o.value(QStringLiteral("shards")).toInt());
        if (r.usage) {
            QCOMPARE(r.usage->usedNow, o.value(QStringLiteral("used")).toInteger());
            QCOMPARE(r.usage->decision.limit, o.value(QStringLiteral("limit")).toInteger());
        } else {
            QVERIFY(o.value(QStringLiteral("used")).isNull());
        }
    }
    QCOMPARE(rows.front().key, QByteArray("api:acme"));
    QVERIFY(p.page.headline().contains(QStringLiteral("refused now by 1 of its 5 limiters")));
    QVERIFY(p.page.model()->index(0, LookupModel::Verdict).data().toString().startsWith(QStringLiteral("denied since")));
    // Live: the next pass follows within a second or so, while shown.
    QSignalSpy again(&p.page, &LookupPage::loaded);
    QVERIFY(again.wait(2 * LookupPage::kLiveMs + 500));
    // Nothing holds bob: said so.
    QVERIFY(p.lookUp(QStringLiteral("bob")));
    QCOMPARE(p.page.model()->rowCount(), 0);
    QVERIFY(p.page.headline().contains(QStringLiteral("No limiter holds bob")));
}

void TestLookupPage::resetFromThePageIsPreviewedAuditedAndShown()
{
    auto window = openWindow({{}, {}, {}, QStringLiteral("acme"), {}, {}, {}});
    QVERIFY(window);
    LookupPage *page = window->lookup();
    QCOMPARE(window->tabs()->currentWidget(), page);
    QTRY_VERIFY_WITH_TIMEOUT(page->isLoaded() && page->model()->rowCount() == 5, kWaitMs);
    page->reasonEdit()->setText(QStringLiteral("TICKET-4711 acme gets 429s"));
    // The denying row, the group and the counter, selected: exactly their keys are previewed.
    const auto &rows = page->model()->rows();
    int group = -1, counter = -1;
    for (int r = 0; r < int(rows.size()); ++r) {
        if (rows[size_t(r)].shards)
            group = r;
        if (rows[size_t(r)].key == "svc:acme")
            counter = r;
    }
    QVERIFY(group > 0 && counter > 0);
    QItemSelectionModel *sel = page->view()->selectionModel();
    for (int r : {0, group, counter})
        sel->select(page->model()->index(r, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
    const QByteArray hourWindow = "svc:acme:" + QByteArray::number(m_conn->command({"TIME"})[0].bytes().toLongLong() / 3600);
    page->resetRows();
    ResetDialog *dialog = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((dialog = window->findChild<ResetDialog *>()) != nullptr, kWaitMs);
    QCOMPARE(dialog->reason(), QStringLiteral("TICKET-4711 acme gets 429s"));
    QTRY_COMPARE_WITH_TIMEOUT(dialog->stage(), ResetDialog::Stage::Preview, kWaitMs);
    QList<QByteArray> previewed = dialog->previewedKeys();
    std::sort(previewed.begin(), previewed.end());
    // The log, the group's shards that exist (0 and 2), the counter's window: what the rows hold.
    QCOMPARE(previewed, (QList<QByteArray>{"api:acme", "rl:{acme}:0", "rl:{acme}:2", hourWindow}));
    auto *resetButton = dialog->findChild<QPushButton *>(QStringLiteral("resetButton"));
    QVERIFY(resetButton && resetButton->isEnabled());
    QTest::mouseClick(resetButton, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(dialog->stage(), ResetDialog::Stage::Done, kWaitMs);
    QCOMPARE(dialog->result().deleted, 4);
    // Within a second the rows say so: nobody denies acme any more.
    QTRY_VERIFY_WITH_TIMEOUT(page->model()->denyingCount() == 0 && page->model()->rowCount() == 2, 1000);
    QVERIFY(page->headline().contains(QStringLiteral("not refused")));
    // Both audit entries carry the reason; the other keys stay.
    int withReason = 0;
    for (const AuditEntry &e : AuditLog(*m_conn, kNs).list(10))
        if (e.action.startsWith(QStringLiteral("reset")) && e.reason == QStringLiteral("TICKET-4711 acme gets 429s"))
            ++withReason;
    QCOMPARE(withReason, 2);
    for (const QByteArray k : {"login:acme:/search", "api:acmecorp", "acme:profile", "session:acme", "rlflx:acme"})
        QCOMPARE(m_conn->command({"EXISTS", k}).toInteger(), 1);
    // The summary records what was done.
    const QString summary = page->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("reset 3 limiters")) && summary.contains(QStringLiteral("4 keys deleted")) &&
                 summary.contains(QStringLiteral("TICKET-4711")),
             qPrintable(summary));
    dialog->close();
}

void TestLookupPage::grantIsAuditedOnePerRowWithItsReason()
{
    Page p(m_server.options());
    QVERIFY(p.lookUp(QStringLiteral("acme")));
    p.page.reasonEdit()->setText(QStringLiteral("TICKET-12"));
    const qint64 before = qint64(AuditLog(*m_conn, kNs).list(1000).size());
    p.page.grantRows(50, 0, 3600 * kSecond); // nothing selected: every row
    QTRY_VERIFY_WITH_TIMEOUT(p.page.message().startsWith(QStringLiteral("Granted")), kWaitMs);
    OverrideStore overrides(*m_conn, kNs);
    for (const QByteArray k : {"api:acme", "login:acme:/search", "rl:{acme}", "svc:acme"})
        QVERIFY2(overrides.get(k), k.constData());
    QVERIFY(!overrides.get("rlflx:acme")); // no policy covers it: skipped
    QVERIFY(!overrides.get("api:acmecorp"));
    const auto entries = AuditLog(*m_conn, kNs).list(1000);
    QCOMPARE(qint64(entries.size()), before + 4);
    for (size_t i = 0; i < 4; ++i)
        QCOMPARE(entries[i].reason, QStringLiteral("TICKET-12"));
    // The rows show the override within a pass.
    QTRY_VERIFY_WITH_TIMEOUT(p.rows().at("api:acme")->override.has_value() && p.rows().at("api:acme")->usage->decision.limit == 50,
                             3000);
    QVERIFY(p.page.summaryText().contains(QStringLiteral("granted 50 for 1h to 4 limiters")));
}

void TestLookupPage::grantDialogAsksForLimitWindowAndDuration()
{
    Page p(m_server.options());
    QVERIFY(p.lookUp(QStringLiteral("acme")));
    p.page.reasonEdit()->setText(QStringLiteral("TICKET-13"));
    // The selected row alone.
    p.page.view()->selectionModel()->select(p.page.model()->index(0, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
    p.page.grantWithDialog();
    auto *dialog = p.page.findChild<QDialog *>(QStringLiteral("grantDialog"));
    QVERIFY(dialog);
    QTRY_VERIFY(dialog->isVisible());
    QVERIFY(dialog->findChild<QLabel *>(QStringLiteral("grantReason"))->text().contains(QStringLiteral("TICKET-13")));
    auto *limit = dialog->findChild<QSpinBox *>();
    QVERIFY(limit);
    QCOMPARE(limit->value(), 10); // twice the limit in force
    limit->setValue(20);
    auto *window = dialog->findChild<QLineEdit *>();
    QVERIFY(window);
    window->setText(QStringLiteral("1 week")); // not a duration: said in the dialog, which stays
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    QVERIFY(dialog->isVisible());
    window->setText(QStringLiteral("30m"));
    dialog->findChild<QComboBox *>()->setEditText(QStringLiteral("2h"));
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    QTRY_VERIFY_WITH_TIMEOUT(p.page.message().startsWith(QStringLiteral("Granted")), kWaitMs);
    const auto o = OverrideStore(*m_conn, kNs).get("api:acme");
    QVERIFY(o);
    QCOMPARE(o->limit, 20);
    QCOMPARE(o->windowUs, 1800 * kSecond);
    QVERIFY(!OverrideStore(*m_conn, kNs).get("login:acme:/search")); // not selected
    QCOMPARE(AuditLog(*m_conn, kNs).list(1).front().reason, QStringLiteral("TICKET-13"));
}

void TestLookupPage::requireReasonRefusesWithoutOne()
{
    const CliResult on = runCli({QStringLiteral("--url"), url(), QStringLiteral("--reason"), QStringLiteral("policy"),
                                 QStringLiteral("settings"), QStringLiteral("set"), QStringLiteral("require-reason"), QStringLiteral("on")});
    QVERIFY2(on.exitCode == 0, on.err.constData());
    Page p(m_server.options());
    QVERIFY(p.lookUp(QStringLiteral("acme")));
    QVERIFY(p.page.requiresReason());
    QVERIFY(p.page.reasonEdit()->placeholderText().contains(QStringLiteral("required")));
    const QByteArray before = keyspaceSnapshot(*m_conn);
    QSignalSpy resets(&p.page, &LookupPage::resetRequested);
    p.page.resetRows();
    QCOMPARE(resets.size(), 0);
    QVERIFY2(p.page.message().contains(QStringLiteral("requires a reason")), qPrintable(p.page.message()));
    p.page.grantRows(50, 0, 3600 * kSecond);
    QVERIFY(p.page.message().contains(QStringLiteral("requires a reason")));
    QCOMPARE(keyspaceSnapshot(*m_conn), before); // nothing sent, so nothing written, not even an audit entry
    // With a reason, the same grant goes through.
    p.page.reasonEdit()->setText(QStringLiteral("TICKET-99"));
    p.page.grantRows(50, 0, 3600 * kSecond);
    QTRY_VERIFY_WITH_TIMEOUT(p.page.message().startsWith(QStringLiteral("Granted")), kWaitMs);
    QCOMPARE(AuditLog(*m_conn, kNs).list(1).front().reason, QStringLiteral("TICKET-99"));
}

void TestLookupPage::summaryHoldsEveryRow()
{
    Page p(m_server.options());
    QVERIFY(p.lookUp(QStringLiteral("acme")));
    p.page.copySummary();
    const QString summary = QApplication::clipboard()->text();
    QCOMPARE(summary, p.page.summaryText());
    QVERIFY(summary.startsWith(QStringLiteral("Rate limits of acme, read ")));
    QVERIFY(summary.contains(QStringLiteral("5 limiters, 1 denying")));
    for (const LookupRow &r : p.page.model()->rows()) {
        QVERIFY2(summary.contains(LookupModel::limiterText(r)), qPrintable(LookupModel::limiterText(r)));
        QVERIFY(summary.contains((r.denying() ? QStringLiteral("DENYING ") : QStringLiteral("ok      ")) + LookupModel::limiterText(r)));
    }
    QVERIFY(summary.contains(QStringLiteral("denied since")));
    QVERIFY(summary.contains(QStringLiteral("Nothing was changed")));
    QVERIFY(!summary.contains(QLatin1Char('<'))); // plain text
}

void TestLookupPage::ctrlKAndStartupLookup()
{
    auto window = openWindow({});
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    window->tabs()->setCurrentIndex(0);
    QWidget *tree = window->keyBrowser()->view();
    tree->setFocus();
    QTest::keySequence(tree, QKeySequence(Qt::CTRL | Qt::Key_K));
    QCOMPARE(window->tabs()->currentWidget(), window->lookup());
    QVERIFY(window->lookup()->identifierEdit()->hasFocus());
    QTest::keyClicks(window->lookup()->identifierEdit(), QStringLiteral("acme"));
    QTest::keyClick(window->lookup()->identifierEdit(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(window->lookup()->isLoaded() && window->lookup()->model()->rowCount() == 5, kWaitMs);
    // The page fits beside the keys panel.
    QVERIFY2(window->lookup()->minimumSizeHint().width() <= 690, qPrintable(QString::number(window->lookup()->minimumSizeHint().width())));
}

void TestLookupPage::keysPanelLooksUpTheSegmentUnderTheMouse()
{
    auto window = openWindow({});
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    KeyBrowser *browser = window->keyBrowser();
    QTreeView *tree = browser->view();
    QTRY_VERIFY_WITH_TIMEOUT(browser->model()->findKey("rl:{acme}:2") != KeyTreeModel::kNoKey, kWaitMs);
    const QModelIndex shard = browser->model()->indexOfKey(browser->model()->findKey("rl:{acme}:2"));
    tree->scrollTo(shard);
    tree->expand(shard.parent());
    QTRY_VERIFY(tree->visualRect(shard).isValid());
    const QRect cell = tree->visualRect(shard);
    // The cell shows the key's last part ("2", under rl:{acme}); on it, or from the keyboard:
    // the last segment that is no number.
    QCOMPARE(browser->customerAt(cell.center(), true), QByteArray("acme"));
    QCOMPARE(browser->customerAt(cell.center(), false), QByteArray("acme"));
    const QModelIndex login = browser->model()->indexOfKey(browser->model()->findKey("login:acme:/search"));
    QVERIFY(login.isValid());
    tree->scrollTo(login);
    QTRY_VERIFY(tree->visualRect(login).isValid());
    const QRect loginCell = tree->visualRect(login);
    const int margin = tree->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, tree) + 1;
    const QString shown = login.data().toString();
    const int onSearch = loginCell.left() + margin + tree->fontMetrics().horizontalAdvance(shown.left(shown.size() - 2));
    QCOMPARE(browser->customerAt(QPoint(onSearch, loginCell.center().y()), true), QByteArray("search"));
    // The menu item asks the window for the Lookup tab.
    QSignalSpy asked(browser, &KeyBrowser::lookupRequested);
    emit tree->customContextMenuRequested(cell.center());
    QMenu *menu = browser->findChild<QMenu *>();
    QVERIFY(menu);
    QAction *look = menu->findChild<QAction *>(QStringLiteral("lookUpCustomer"));
    QVERIFY(look);
    QCOMPARE(look->text(), QStringLiteral("Look up this customer: acme"));
    look->trigger();
    QCOMPARE(asked.size(), 1);
    QCOMPARE(window->tabs()->currentWidget(), window->lookup());
    QCOMPARE(window->lookup()->identifier(), QByteArray("acme"));
    QTRY_VERIFY_WITH_TIMEOUT(window->lookup()->isLoaded() && window->lookup()->model()->rowCount() == 5, kWaitMs);
    menu->close();
}

// The table fits its tab beside the keys panel at a desk's sizes, as the keys panel does: no
// horizontal scrolling; the limiter, used / limit and remaining always shown and never cut (a
// limit of 1,000,000 in its short form, "1.0M / 1.0M"); the other columns shown while they fit,
// whole, and hidden after (the row's tooltip has what they hold).
void TestLookupPage::columnsFitTheTab()
{
    PolicyStore(*m_conn, kNs).set(policy(QStringLiteral("big"), "big:*", Algorithm::FixedWindow, 1000000, 3600 * kSecond), 0,
                                  QStringLiteral("test"));
    QVERIFY(Limiter(*m_conn).check("big:acme", {Algorithm::FixedWindow, 1000000, 3600 * kSecond, 1000000}).allowed);
    MainWindow::StartupView view;
    view.lookup = QStringLiteral("acme");
    auto window = openWindow(view);
    QVERIFY(window);
    QCOMPARE(window->tabs()->currentWidget(), window->lookup());
    QTRY_COMPARE_WITH_TIMEOUT(window->lookup()->model()->rowCount(), 6, kWaitMs);
    QTableView *table = window->lookup()->view();
    QHeaderView *header = table->horizontalHeader();
    auto *usage = qobject_cast<UsageBarDelegate *>(table->itemDelegateForColumn(LookupModel::Used));
    QVERIFY(usage);
    int big = -1;
    for (int r = 0; r < window->lookup()->model()->rowCount(); ++r)
        if (window->lookup()->model()->row(r).key == "big:acme")
            big = r;
    QVERIFY(big >= 0);
    QCOMPARE(window->lookup()->model()->index(big, LookupModel::Used).data().toString(), QStringLiteral("1,000,000 / 1,000,000"));
    QVERIFY(window->lookup()->model()->index(big, LookupModel::Used).data(Qt::ToolTipRole).toString().contains(
        QStringLiteral("used 1,000,000 of 1,000,000")));
    QStringList shown;
    for (const QSize size : {QSize(1280, 800), QSize(1024, 700), QSize(1600, 1000)}) {
        window->resize(size);
        QTRY_COMPARE(window->size(), size);
        QTest::qWait(0); // the layout's posted events
        const QString at = QStringLiteral("at %1x%2").arg(size.width()).arg(size.height());
        QVERIFY2(header->length() <= table->viewport()->width(), qPrintable(at));
        for (const int c : {LookupModel::Limiter, LookupModel::Used, LookupModel::Remaining})
            QVERIFY2(!header->isSectionHidden(c), qPrintable(at));
        QStringList columns;
        for (int c = 0; c < LookupModel::ColumnCount; ++c) {
            if (header->isSectionHidden(c))
                continue;
            columns << window->lookup()->model()->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
            if (c == LookupModel::Verdict)
                continue; // the last column takes what is left: its words elide (the answer above has them)
            for (int r = 0; r < window->lookup()->model()->rowCount(); ++r) {
                const QModelIndex index = window->lookup()->model()->index(r, c);
                if (c == LookupModel::Used) {
                    QStyleOptionViewItem option;
                    option.initFrom(table);
                    option.rect = table->visualRect(index);
                    const QString text = usage->shownText(option, index);
                    QVERIFY2(UsageBarDelegate::fits(option, text), qPrintable(at + QStringLiteral(": ") + text));
                    if (r == big)
                        QVERIFY2(text == QStringLiteral("1,000,000 / 1,000,000") || text == QStringLiteral("1.0M / 1.0M"),
                                 qPrintable(text));
                } else {
                    // The cell is a pixel narrower than its column: the grid line.
                    QVERIFY2(table->sizeHintForIndex(index).width() + 1 <= header->sectionSize(c),
                             qPrintable(QStringLiteral("%1: '%2' in %3 px").arg(at, index.data().toString()).arg(header->sectionSize(c))));
                }
            }
        }
        shown << QStringLiteral("%1: %2").arg(at, columns.join(QStringLiteral(", ")));
    }
    qInfo().noquote() << shown.join(QLatin1Char('\n'));
}

QTEST_MAIN(TestLookupPage)
#include "tst_lookuppage.moc"
