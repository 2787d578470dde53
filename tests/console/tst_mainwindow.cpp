// The main window as a live monitor: what the command line asks to see (--open-key, --pin,
// --tab) once connected, pins from a key view and from the key browser reaching the Monitor tab,
// the Overview and Monitor tabs staying put, and a lost connection shown as lost (the banner, key
// views and the monitor marked stale), never as live numbers. Real redis-server, offscreen.
#include "admin/audit.h"
#include "auditpage.h"
#include "burstpage.h"
#include "redis/connection.h"
#include "connectionbanner.h"
#include "connectiondialog.h"
#include "connectionprofile.h"
#include "keybrowser.h"
#include "keytreemodel.h"
#include "keyview.h"
#include "lookuppage.h"
#include "limiters/limiter.h"
#include "mainwindow.h"
#include "operatorbar.h"
#include "passwordprompt.h"
#include "testsupport.h"
#include "monitorpage.h"
#include "overviewpage.h"
#include "passwordvault.h"
#include "policiespage.h"
#include "admin/policy.h"
#include "profilestore.h"
#include "redisclient.h"
#include "resetdialog.h"
#include "redis/sandboxserver.h"
#include "usagebardelegate.h"
#include "whatifpage.h"

#include <QCheckBox>
#include <QFile>
#include <QSpinBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMenu>
#include <QStatusBar>
#include <QHeaderView>
#include <QScrollBar>
#include <QTreeView>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QScrollArea>
#include <QTableView>
#include <QAbstractItemView>
#include <QTest>

using namespace ratescope;
using namespace ratescope::ui;

namespace {

constexpr qint64 kWindowUs = 3600LL * 1000000; // an hour: nothing expires while the test looks

// A policy of one test's own, and the keys it covers: made empty for the test, and removed when
// it ends, so that what the other tests changed does not matter and they see nothing of it.
class OwnPolicy {
public:
    OwnPolicy(const ConnectionOptions &options, const QString &name, const QByteArray &match, const LimitSpec &spec,
              const QList<QByteArray> &keys)
        : m_connection(options)
        , m_keys(keys)
    {
        Policy p;
        p.name = name;
        p.match = match;
        p.spec = spec;
        m_stored = PolicyStore(m_connection, QStringLiteral("ratescope:")).set(p, 0, QStringLiteral("test"));
        for (const QByteArray &k : m_keys)
            m_connection.command({"DEL", k});
    }
    ~OwnPolicy()
    {
        for (const QByteArray &k : m_keys)
            m_connection.command({"DEL", k});
        PolicyStore(m_connection, QStringLiteral("ratescope:")).remove(m_stored.name, m_stored.version, QStringLiteral("test"));
    }
    Connection &connection() { return m_connection; }

private:
    Connection m_connection;
    QList<QByteArray> m_keys;
    Policy m_stored;
};

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void startupViewOpensKeysPinsAndTab();
    void pinsFromKeyViewAndBrowserReachTheMonitor();
    void overviewAndMonitorTabsStay();
    void keyActionsOpenTheirPages();
    void keyActionsLockedWhenReadOnly();
    void pagesLeaveRoomForTheKeysPanel();
    void unlockingAsksAndIsAudited();
    void lostConnectionIsShownAsLost();
    void keyboardFromAnywhere();
    void keyTabTitlesTellKeysApart();
    void keysPanelFitsTheWindow();
    void policyEditorFitsBesideTheTables();
    void everyTabFitsAtADesk();
    void noAuthAsksForThePassword();
    void savedProfileRemembersLoginAndOperator();
    void menusListEveryShortcutOnce();
    void startupBurstBoundaryAndResetSettleShown();
    void burstShowsInTheKeysPanelAndTheKeyView();

private:
    std::unique_ptr<MainWindow> openWindow(const MainWindow::StartupView &view);

    std::unique_ptr<SandboxServer> m_server;
    QTemporaryDir m_dir;
    std::unique_ptr<QSettings> m_settings;
    std::unique_ptr<ProfileStore> m_store;
    std::unique_ptr<PasswordVault> m_vault;
};

void TestMainWindow::initTestCase()
{
    m_server = std::make_unique<SandboxServer>();
    m_server->start();
    Connection c(m_server->options());
    PolicyStore policies(c, QStringLiteral("ratescope:"));
    Policy log;
    log.name = QStringLiteral("log");
    log.match = "app:log:*";
    log.spec = {Algorithm::SlidingLog, 10, kWindowUs, 1};
    policies.set(log, 0, QStringLiteral("test"));
    Policy gcra;
    gcra.name = QStringLiteral("gcra");
    gcra.match = "app:gcra:*";
    gcra.spec = {Algorithm::Gcra, 10, kWindowUs, 1};
    policies.set(gcra, 0, QStringLiteral("test"));
    // The server's clock: the views draw against it.
    const Reply t = c.command({"TIME"});
    const qint64 now = t[0].bytes().toLongLong() * 1000000 + t[1].bytes().toLongLong();
    Limiter limiter(c);
    for (int i = 0; i < 4; ++i)
        limiter.check("app:log:alice", log.spec, now - 1000 * (4 - i));
    for (int i = 0; i < 10; ++i) // gcra at its limit: denied now
        limiter.check("app:gcra:bob", gcra.spec, now - 1000);
}

void TestMainWindow::init()
{
    QFile::remove(m_dir.filePath(QStringLiteral("settings.ini")));
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    m_store = std::make_unique<ProfileStore>(m_settings.get());
    m_vault = std::make_unique<PasswordVault>(PasswordVault::Backend::SessionOnly);
}

void TestMainWindow::cleanup()
{
    m_store.reset();
    m_settings.reset();
    m_vault.reset();
}

std::unique_ptr<MainWindow> TestMainWindow::openWindow(const MainWindow::StartupView &view)
{
    auto window = std::make_unique<MainWindow>(*m_store, *m_vault);
    window->setStartupView(view);
    const ConnectionOptions options = m_server->options();
    const ConnectionProfile profile = ConnectionProfile::fromOptions(options, options.toUrl());
    window->addSessionProfile(profile, options);
    QSignalSpy settled(window.get(), &MainWindow::settled);
    window->connectProfile(profile.name);
    window->show();
    return settled.wait(30000) ? std::move(window) : nullptr;
}

void TestMainWindow::startupViewOpensKeysPinsAndTab()
{
    MainWindow::StartupView view;
    view.openKeys = {"app:log:alice", "app:gcra:bob"};
    view.pins = {"app:log:alice", "app:gcra:bob"};
    view.tab = QStringLiteral("monitor");
    const auto window = openWindow(view);
    QVERIFY(window);

    // Settled means every key view and the pinned keys have their first data drawn.
    QCOMPARE(window->tabs()->currentWidget(), window->monitor());
    QCOMPARE(window->monitor()->pinnedKeys(), (QList<QByteArray>{"app:log:alice", "app:gcra:bob"}));
    QVERIFY(window->monitor()->isLoaded());
    QStringList opened;
    for (int i = 0; i < window->tabs()->count(); ++i)
        if (auto *v = qobject_cast<KeyView *>(window->tabs()->widget(i))) {
            QVERIFY(v->isLoaded());
            opened << QString::fromUtf8(v->key());
        }
    QCOMPARE(opened, (QStringList{QStringLiteral("app:log:alice"), QStringLiteral("app:gcra:bob")}));

    // The views show the server's state: 4 of 10 in the log, GCRA denying.
    auto *alice = qobject_cast<KeyView *>(window->tabs()->widget(8)); // after the eight pages
    QVERIFY(alice);
    QVERIFY2(alice->fieldText(QStringLiteral("Used")).startsWith(QStringLiteral("4 of 10")),
             qPrintable(alice->fieldText(QStringLiteral("Used"))));

    // --tab KEY selects an open key, or opens it.
    window->showTab(QStringLiteral("app:log:alice"));
    QCOMPARE(window->tabs()->currentWidget(), alice);
    window->showTab(QStringLiteral("overview"));
    QCOMPARE(window->tabs()->currentWidget(), window->overview());
    window->showTab(QStringLiteral("burst"));
    QCOMPARE(window->tabs()->currentWidget(), window->burst());
    window->showTab(QStringLiteral("policies"));
    QCOMPARE(window->tabs()->currentWidget(), window->policies());
    window->showTab(QStringLiteral("whatif"));
    QCOMPARE(window->tabs()->currentWidget(), window->whatIf());
    window->showTab(QStringLiteral("audit"));
    QCOMPARE(window->tabs()->currentWidget(), window->audit());
}

void TestMainWindow::pinsFromKeyViewAndBrowserReachTheMonitor()
{
    MainWindow::StartupView view;
    view.openKeys = {"app:gcra:bob"};
    const auto window = openWindow(view);
    QVERIFY(window);
    QVERIFY(window->monitor()->pinnedKeys().isEmpty());

    auto *bob = qobject_cast<KeyView *>(window->tabs()->currentWidget());
    QVERIFY(bob);
    emit bob->pinRequested(bob->key()); // its "Pin to monitor" button
    QCOMPARE(window->monitor()->pinnedKeys(), QList<QByteArray>{"app:gcra:bob"});
    emit window->keyBrowser()->pinKeyRequested("app:log:alice"); // the keys panel's context menu
    QCOMPARE(window->monitor()->pinnedKeys(), (QList<QByteArray>{"app:gcra:bob", "app:log:alice"}));
    // Pinning twice keeps one line.
    emit bob->pinRequested(bob->key());
    QCOMPARE(window->monitor()->pinnedKeys().size(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(window->monitor()->isLoaded(), 10000);
}

void TestMainWindow::overviewAndMonitorTabsStay()
{
    MainWindow::StartupView view;
    view.openKeys = {"app:log:alice"};
    view.pins = {"app:log:alice"};
    const auto window = openWindow(view);
    QVERIFY(window);
    QTabWidget *tabs = window->tabs();
    constexpr int kPages = 8; // overview, monitor, burst, policies, what if, hot, audit, lookup
    QCOMPARE(tabs->count(), kPages + 1);
    const QStringList titles{QStringLiteral("Overview"), QStringLiteral("Monitor"), QStringLiteral("Burst"), QStringLiteral("Policies"),
                             QStringLiteral("What if"),  QStringLiteral("Hot"),     QStringLiteral("Audit"),  QStringLiteral("Lookup")};
    // No close button on the pages; a close request for them is ignored.
    for (int i = 0; i < kPages; ++i) {
        QCOMPARE(tabs->tabText(i), titles[i]);
        QVERIFY(!tabs->tabBar()->tabButton(i, QTabBar::RightSide));
        emit tabs->tabCloseRequested(i);
    }
    QCOMPARE(tabs->count(), kPages + 1);
    emit tabs->tabCloseRequested(kPages); // the key's tab closes
    QCOMPARE(tabs->count(), kPages);

    // Disconnecting closes the key tabs but keeps the monitor's pins (shown as stale).
    window->openKey("app:log:alice");
    QCOMPARE(tabs->count(), kPages + 1);
    window->disconnectFromServer();
    QCOMPARE(tabs->count(), kPages);
    QCOMPARE(window->monitor()->pinnedKeys(), QList<QByteArray>{"app:log:alice"});
    QVERIFY(!window->monitor()->noteText().isEmpty());
}

void TestMainWindow::keyActionsOpenTheirPages()
{
    const auto window = openWindow({});
    QVERIFY(window);
    window->runKeyAction(KeyAction::Burst, {"app:gcra:bob"});
    QCOMPARE(window->tabs()->currentWidget(), window->burst());
    window->runKeyAction(KeyAction::ChangeLimit, {"app:gcra:bob"});
    QCOMPARE(window->tabs()->currentWidget(), window->policies());
    window->runKeyAction(KeyAction::EditPolicy, {"app:log:alice"});
    QCOMPARE(window->tabs()->currentWidget(), window->policies());
    // What if: the key's log, its limits in force ("now") and a copy to change ("proposed").
    window->runKeyAction(KeyAction::WhatIf, {"app:log:alice"});
    QCOMPARE(window->tabs()->currentWidget(), window->whatIf());
    QTRY_VERIFY_WITH_TIMEOUT(window->whatIf()->isIdle(), 10000);
    QCOMPARE(window->whatIf()->trace().glob, QByteArray("app:log:alice"));
    const auto specs = window->whatIf()->specs();
    QCOMPARE(specs.size(), size_t(2));
    QCOMPARE(specs[0].name, QStringLiteral("now"));
    QCOMPARE(specs[0].spec, (LimitSpec{Algorithm::SlidingLog, 10, kWindowUs, 1}));
    // Reset opens the preview; nothing is deleted until it is confirmed there.
    window->runKeyAction(KeyAction::Reset, {"app:log:alice"});
    auto *dialog = window->findChild<ResetDialog *>();
    QVERIFY(dialog);
    QTRY_COMPARE_WITH_TIMEOUT(dialog->previewedKeys(), QList<QByteArray>{"app:log:alice"}, 10000);
    dialog->reject();
    Connection c(m_server->options());
    QCOMPARE(c.command({"EXISTS", "app:log:alice"}).integer(), 1);
}

void TestMainWindow::keyActionsLockedWhenReadOnly()
{
    const auto window = openWindow({});
    QVERIFY(window);
    RedisClient *client = window->client();
    auto enabled = [client](const QList<QByteArray> &keys) {
        QMenu menu;
        addKeyActions(&menu, client, keys, [](KeyAction, const QList<QByteArray> &) {});
        QMap<QString, bool> on;
        for (QAction *a : menu.actions())
            if (!a->isSeparator())
                on.insert(a->text(), a->isEnabled());
        return on;
    };
    QMap<QString, bool> writable = enabled({"app:log:alice"});
    QCOMPARE(writable.value(QStringLiteral("Burst…")), true);
    QCOMPARE(writable.value(QStringLiteral("Reset…")), true);
    QCOMPARE(writable.value(QStringLiteral("Change this key's limit…")), true);
    // A selection: only reset takes several keys.
    const QMap<QString, bool> several = enabled({"app:log:alice", "app:gcra:bob"});
    QCOMPARE(several.value(QStringLiteral("Reset 2 keys…")), true);
    QCOMPARE(several.value(QStringLiteral("Burst…")), false);

    window->lockAction()->setChecked(true);
    QVERIFY(client->isReadOnly());
    const QMap<QString, bool> locked = enabled({"app:log:alice"});
    QCOMPARE(locked.value(QStringLiteral("Burst…")), false);
    QCOMPARE(locked.value(QStringLiteral("Reset…")), false);
    QVERIFY(!whyReadOnly(client).isEmpty());
}

void TestMainWindow::pagesLeaveRoomForTheKeysPanel()
{
    // Beside the keys panel at 1024 px (its key and used / limit) a page has about 690 px: none
    // may insist on more.
    MainWindow::StartupView view;
    view.openKeys = {"app:log:alice", "app:gcra:bob"};
    const auto window = openWindow(view);
    QVERIFY(window);
    QStringList wide;
    for (int i = 0; i < window->tabs()->count(); ++i) {
        QWidget *page = window->tabs()->widget(i);
        const int w = page->minimumSizeHint().width();
        if (w > 690)
            wide << QStringLiteral("%1: %2 px").arg(window->tabs()->tabText(i)).arg(w);
    }
    QVERIFY2(wide.isEmpty(), qPrintable(wide.join(QStringLiteral(", "))));
    QCOMPARE(window->width(), 1280);
}

void TestMainWindow::unlockingAsksAndIsAudited()
{
    const auto window = openWindow({});
    QVERIFY(window);
    RedisClient *client = window->client();
    Connection c(m_server->options());
    const auto unlocks = [&c] {
        int n = 0;
        for (const AuditEntry &e : AuditLog(c, QStringLiteral("ratescope:")).list(1000))
            n += e.action == QStringLiteral("readonly.unlock");
        return n;
    };
    const int before = unlocks();
    window->lockAction()->trigger(); // lock: no question
    QVERIFY(client->isReadOnly());
    QVERIFY(!window->findChild<QMessageBox *>(QStringLiteral("unlockQuestion")));

    // Unlock, cancelled: still locked, nothing recorded.
    window->lockAction()->trigger();
    QVERIFY(window->lockAction()->isChecked());
    auto *question = window->findChild<QMessageBox *>(QStringLiteral("unlockQuestion"));
    QVERIFY(question);
    question->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!window->findChild<QMessageBox *>(QStringLiteral("unlockQuestion")));
    QVERIFY(client->isReadOnly());
    QCOMPARE(unlocks(), before);

    // Unlock, confirmed: open once the entry is written, exactly one entry.
    window->lockAction()->trigger();
    question = window->findChild<QMessageBox *>(QStringLiteral("unlockQuestion"));
    QVERIFY(question);
    question->button(QMessageBox::Yes)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!client->isReadOnly(), 10000);
    QVERIFY(!window->lockAction()->isChecked());
    QCOMPARE(unlocks(), before + 1);
}

void TestMainWindow::lostConnectionIsShownAsLost()
{
    MainWindow::StartupView view;
    view.openKeys = {"app:log:alice"};
    view.pins = {"app:log:alice", "app:gcra:bob"};
    view.tab = QStringLiteral("app:log:alice");
    const auto window = openWindow(view);
    QVERIFY(window);
    auto *alice = qobject_cast<KeyView *>(window->tabs()->currentWidget());
    QVERIFY(alice);
    QVERIFY(!alice->isStale());
    QVERIFY(window->monitor()->noteText().isEmpty());
    QVERIFY(window->banner()->isHidden());

    m_server->kill();
    // The heartbeat notices within one beat; the banner says so, and neither the key view nor the
    // monitor goes on looking live.
    QTRY_VERIFY_WITH_TIMEOUT(!window->banner()->isHidden(), 15000);
    QTRY_VERIFY_WITH_TIMEOUT(alice->isStale(), 15000);
    QVERIFY(!alice->staleText().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!window->monitor()->noteText().isEmpty(), 15000);

    // A key opened while the connection is lost shows no numbers as if live either.
    window->openKey("app:gcra:bob");
    auto *bob = qobject_cast<KeyView *>(window->tabs()->currentWidget());
    QVERIFY(bob && bob->key() == "app:gcra:bob");
    QTRY_VERIFY_WITH_TIMEOUT(bob->readsStarted() > 0, 5000);
    QVERIFY(!bob->isLoaded() || bob->isStale());

    // Back on the same port: the views come back by themselves.
    m_server->restart();
    QTRY_VERIFY_WITH_TIMEOUT(window->banner()->isHidden(), 40000);
    QTRY_VERIFY_WITH_TIMEOUT(!alice->isStale(), 15000);
    QTRY_VERIFY_WITH_TIMEOUT(window->monitor()->noteText().isEmpty(), 15000);
}

// The usual keys work wherever the focus is: the tree, a key view, the filter.
void TestMainWindow::keyboardFromAnywhere()
{
    auto window = openWindow({{"app:log:alice", "app:gcra:bob"}, {}, QStringLiteral("overview"), {}, {}, {}, {}});
    QVERIFY(window);
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    QTabWidget *tabs = window->tabs();
    const int keyTabs = tabs->count() - 8;
    QCOMPARE(keyTabs, 2);
    auto press = [&](QWidget *from, QKeySequence keys) {
        from->setFocus();
        QTest::keySequence(from, keys);
    };
    QWidget *tree = window->keyBrowser()->view();

    // Ctrl+F from the tree: the filter, its text selected.
    window->filterEdit()->setText(QStringLiteral("app:*"));
    press(tree, QKeySequence(QKeySequence::Find));
    QVERIFY(window->filterEdit()->hasFocus());
    QCOMPARE(window->filterEdit()->selectedText(), QStringLiteral("app:*"));

    // Ctrl+Tab / Ctrl+PgDn forward, Ctrl+Shift+Tab / Ctrl+PgUp back, from the filter and the tree.
    tabs->setCurrentIndex(0);
    press(window->filterEdit(), QKeySequence(Qt::CTRL | Qt::Key_Tab));
    QCOMPARE(tabs->currentIndex(), 1);
    press(tree, QKeySequence(Qt::CTRL | Qt::Key_PageDown));
    QCOMPARE(tabs->currentIndex(), 2);
    press(tree, QKeySequence(Qt::CTRL | Qt::Key_PageUp));
    QCOMPARE(tabs->currentIndex(), 1);
    press(tree, QKeySequence(Qt::CTRL | Qt::Key_PageUp));
    press(tree, QKeySequence(Qt::CTRL | Qt::Key_PageUp)); // around: the last tab
    QCOMPARE(tabs->currentIndex(), tabs->count() - 1);

    // Alt+1 .. Alt+8: the fixed tabs, from the tree.
    press(tree, QKeySequence(Qt::ALT | Qt::Key_4));
    QCOMPARE(tabs->currentWidget(), window->policies());
    press(tree, QKeySequence(Qt::ALT | Qt::Key_1));
    QCOMPARE(tabs->currentWidget(), window->overview());
    tabs->setCurrentIndex(tabs->count() - 1);

    // Ctrl+W closes a key's tab from inside its view; the fixed tabs stay.
    auto *view = qobject_cast<KeyView *>(tabs->currentWidget());
    QVERIFY(view);
    press(view, QKeySequence(Qt::CTRL | Qt::Key_W));
    QCOMPARE(tabs->count(), 9);
    tabs->setCurrentIndex(0);
    press(tree, QKeySequence(Qt::CTRL | Qt::Key_F4));
    QCOMPARE(tabs->count(), 9);

    // Ctrl+K from the tree: the Lookup tab, its identifier field focused.
    press(tree, QKeySequence(Qt::CTRL | Qt::Key_K));
    QCOMPARE(tabs->currentWidget(), window->lookup());
    QVERIFY(window->lookup()->identifierEdit()->hasFocus());

    // Ctrl+Shift+R: the reset dialog for the open key.
    tabs->setCurrentIndex(tabs->count() - 1);
    press(tabs->currentWidget(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    auto *reset = window->findChild<ResetDialog *>();
    QVERIFY(reset);
    reset->close();

    // A broken glob is said where it was typed; the listing stays.
    const qint64 listed = window->keyBrowser()->model()->keyCount();
    window->filterEdit()->setText(QStringLiteral("app:[log"));
    QTest::keyClick(window->filterEdit(), Qt::Key_Return);
    QVERIFY2(window->filterEdit()->toolTip().startsWith(QStringLiteral("Not a pattern:")), qPrintable(window->filterEdit()->toolTip()));
    QVERIFY(window->statusBar()->currentMessage().startsWith(QStringLiteral("Filter not applied:")));
    QCOMPARE(window->keyBrowser()->model()->keyCount(), listed);
    QCOMPARE(window->keyBrowser()->matchPattern(), QByteArray("*"));
}

void TestMainWindow::keyTabTitlesTellKeysApart()
{
    auto titles = [](QList<QByteArray> keys) { return MainWindow::keyTabTitles(keys, ":", 32); };
    QCOMPARE(titles({"api:acme:mallory", "feed:globex:mallory", "api:0"}),
             (QStringList{QStringLiteral("acme:mallory"), QStringLiteral("globex:mallory"), QStringLiteral("0")}));
    QCOMPARE(titles({"a:b:c", "x:b:c"}), (QStringList{QStringLiteral("a:b:c"), QStringLiteral("x:b:c")}));
    QCOMPARE(titles({"one"}), QStringList{QStringLiteral("one")});
    QCOMPARE(titles({"k", "x:k"}), (QStringList{QStringLiteral("k"), QStringLiteral("x:k")}));
    const QString long1 = titles({"svc:" + QByteArray(60, 'a') + "z"}).front();
    QCOMPARE(long1.size(), 32);
    QVERIFY(long1.contains(QChar(0x2026)));
    QVERIFY(long1.endsWith(QLatin1Char('z')));
}

// At 1280x800 and 1024x700 the keys panel needs no horizontal scroll: the key keeps a readable
// width and Used / limit stays; what does not fit is hidden, not cut.
void TestMainWindow::keysPanelFitsTheWindow()
{
    // A limiter of 1,000,000: its figures read whole, or in their short form, never elided.
    OwnPolicy big(m_server->options(), QStringLiteral("big"), "app:big:*", {Algorithm::FixedWindow, 1000000, kWindowUs, 1}, {"app:big:one"});
    QVERIFY(Limiter(big.connection()).check("app:big:one", {Algorithm::FixedWindow, 1000000, kWindowUs, 1000000}).allowed);
    auto window = openWindow({});
    QVERIFY(window);
    QTreeView *tree = window->keyBrowser()->view();
    const int em = tree->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const quint32 bigId = window->keyBrowser()->model()->findKey("app:big:one");
    QVERIFY(bigId != KeyTreeModel::kNoKey);
    const QModelIndex bigUsage = window->keyBrowser()->model()->indexOfKey(bigId, KeyTreeModel::UsageColumn);
    tree->scrollTo(bigUsage);
    QTRY_COMPARE_WITH_TIMEOUT(bigUsage.data().toString(), QStringLiteral("1,000,000 / 1,000,000"), 10000);
    QCOMPARE(bigUsage.data(UsageBarDelegate::ShortTextRole).toString(), QStringLiteral("1.0M / 1.0M"));
    QVERIFY(bigUsage.data(Qt::ToolTipRole).toString().contains(QStringLiteral("used 1,000,000 of 1,000,000")));
    auto *usage = qobject_cast<UsageBarDelegate *>(tree->itemDelegateForColumn(KeyTreeModel::UsageColumn));
    QVERIFY(usage);
    for (const QSize size : {QSize(1280, 800), QSize(1024, 700)}) {
        window->resize(size);
        QTRY_COMPARE(window->size(), size);
        QTest::qWait(0); // the layout's posted events
        QHeaderView *header = tree->header();
        const QString at = QStringLiteral("at %1x%2").arg(size.width()).arg(size.height());
        QVERIFY2(header->length() <= tree->viewport()->width(), qPrintable(at));
        QVERIFY2(!tree->horizontalScrollBar()->isVisible(), qPrintable(at));
        QVERIFY2(header->sectionSize(KeyTreeModel::KeyColumn) >= 11 * em, qPrintable(at));
        QVERIFY2(!header->isSectionHidden(KeyTreeModel::UsageColumn), qPrintable(at));
        for (int c = 0; c < KeyTreeModel::ColumnCount; ++c)
            if (!header->isSectionHidden(c) && c != KeyTreeModel::KeyColumn)
                QVERIFY2(header->sectionSize(c) >= 6 * em, qPrintable(at));
        QStyleOptionViewItem option;
        option.initFrom(tree);
        option.rect = tree->visualRect(bigUsage);
        const QString text = usage->shownText(option, bigUsage);
        QVERIFY2(UsageBarDelegate::fits(option, text), qPrintable(at + QStringLiteral(": ") + text));
        QVERIFY2(text == QStringLiteral("1,000,000 / 1,000,000") || text == QStringLiteral("1.0M / 1.0M"), qPrintable(text));
    }
}

// --edit-policy opens the editor; at a desk's sizes its fields and buttons are reached without
// scrolling sideways (the tables beside it give up width and scroll instead).
void TestMainWindow::policyEditorFitsBesideTheTables()
{
    {
        Connection c(m_server->options());
        Policy desk;
        desk.name = QStringLiteral("desk");
        desk.match = "desk:*";
        desk.description = QStringLiteral("A description long enough to be read from its start, not its end, in a narrow field");
        desk.spec = {Algorithm::SlidingLog, 10, kWindowUs, 1};
        PolicyStore(c, QStringLiteral("ratescope:")).set(desk, 0, QStringLiteral("test"));
    }
    MainWindow::StartupView view;
    view.editPolicy = QStringLiteral("desk");
    auto window = openWindow(view);
    QVERIFY(window);
    QCOMPARE(window->tabs()->currentWidget(), static_cast<QWidget *>(window->policies()));
    QPushButton *save = nullptr;
    for (QPushButton *b : window->policies()->findChildren<QPushButton *>())
        if (b->text() == QLatin1String("Save"))
            save = b;
    QVERIFY(save);
    QTRY_VERIFY(save->isVisible());
    QScrollArea *scroll = nullptr;
    for (QScrollArea *a : window->policies()->findChildren<QScrollArea *>())
        if (a->isAncestorOf(save))
            scroll = a;
    QVERIFY(scroll);
    for (const QSize size : {QSize(1280, 800), QSize(1024, 700)}) {
        window->resize(size);
        QTRY_COMPARE(window->size(), size);
        QTest::qWait(0);
        const QString at = QStringLiteral("at %1x%2").arg(size.width()).arg(size.height());
        QTRY_VERIFY2(!scroll->horizontalScrollBar()->isVisible(), qPrintable(at));
        const QPoint right = save->mapTo(scroll->viewport(), QPoint(save->width(), 0));
        QVERIFY2(right.x() <= scroll->viewport()->width(), qPrintable(at));
    }
}

namespace {

// What does not fit in `page` as shown: a widget narrower than its smallest useful width (its
// minimum size hint), or a column of a table shown narrower than `minColumn`. Widgets inside a
// scroll area are laid out at their own size, so they are judged by the same rule.
QStringList cutWidgets(QWidget *page, int minColumn)
{
    QStringList cut;
    for (QWidget *w : page->findChildren<QWidget *>()) {
        if (!w->isVisibleTo(page) || w->width() <= 0)
            continue;
        const int needs = std::max(w->minimumSizeHint().width(), w->minimumWidth());
        // Scroll bars, headers and viewports size themselves within their views.
        if (qobject_cast<QScrollBar *>(w) || qobject_cast<QHeaderView *>(w) || w->objectName() == QLatin1String("qt_scrollarea_viewport"))
            continue;
        if (needs > 0 && w->width() + 1 < needs)
            cut << QStringLiteral("%1 '%2' is %3 px, needs %4").arg(QString::fromLatin1(w->metaObject()->className()), w->objectName())
                       .arg(w->width())
                       .arg(needs);
        // An empty field's placeholder (what to type in it) shown whole: QLineEdit's own size hint
        // is 17 x wide plus what it keeps around its text.
        if (auto *edit = qobject_cast<QLineEdit *>(w); edit && edit->text().isEmpty() && !edit->placeholderText().isEmpty()) {
            const QFontMetrics fm = edit->fontMetrics();
            const int around = edit->sizeHint().width() - 17 * fm.horizontalAdvance(QLatin1Char('x'));
            if (edit->width() < fm.horizontalAdvance(edit->placeholderText()) + around)
                cut << QStringLiteral("the placeholder of QLineEdit '%1' is cut: \"%2\" in %3 px")
                           .arg(edit->objectName(), edit->placeholderText())
                           .arg(edit->width());
        }
        if (auto *view = qobject_cast<QAbstractItemView *>(w)) {
            const QHeaderView *header = nullptr;
            if (auto *table = qobject_cast<QTableView *>(view))
                header = table->horizontalHeader();
            else if (auto *tree = qobject_cast<QTreeView *>(view))
                header = tree->header();
            if (!header || !header->isVisible() || !view->model())
                continue;
            for (int c = 0; c < header->count(); ++c)
                // A column narrower than its title and than minColumn is cut (one as wide as a
                // short title, "Now", is not).
                if (!header->isSectionHidden(c) && header->sectionSize(c) > 0 &&
                    header->sectionSize(c) < std::min(minColumn, header->sectionSizeHint(c)))
                    cut << QStringLiteral("column '%1' of a %2 is %3 px")
                               .arg(view->model()->headerData(c, Qt::Horizontal).toString(), QString::fromLatin1(view->metaObject()->className()))
                               .arg(header->sectionSize(c));
        }
    }
    return cut;
}

} // namespace

// Every tab, and a key view of each kind opened, at the two desks the console is made for:
// nothing narrower than it needs, no column cut to a sliver.
void TestMainWindow::everyTabFitsAtADesk()
{
    auto window = openWindow({{"app:log:alice", "app:gcra:bob"}, {}, QStringLiteral("overview"), {}, {}, {}, {}});
    QVERIFY(window);
    const int em = window->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    QStringList problems;
    for (const QSize size : {QSize(1280, 800), QSize(1024, 700)}) {
        window->resize(size);
        QTRY_COMPARE(window->size(), size); // no page asks for more than the window has
        // The keys panel beside the pages keeps its readable minimum: the key and Used / limit.
        QTRY_VERIFY2(!window->keyBrowser()->view()->header()->isSectionHidden(KeyTreeModel::UsageColumn),
                     qPrintable(QStringLiteral("keys panel %1 px at %2x%3").arg(window->keyBrowser()->width()).arg(size.width()).arg(size.height())));
        for (int i = 0; i < window->tabs()->count(); ++i) {
            window->tabs()->setCurrentIndex(i);
            QTest::qWait(50); // the page's layout and its first reads
            for (const QString &p : cutWidgets(window->tabs()->widget(i), 3 * em))
                problems << QStringLiteral("%1x%2, tab '%3': %4").arg(size.width()).arg(size.height()).arg(window->tabs()->tabText(i), p);
        }
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
}

namespace {

const QString kServerPassword = QStringLiteral("Desk-Pa55word");

// The prompt's Connect button.
QAbstractButton *connectButton(PasswordPrompt *prompt)
{
    for (QAbstractButton *b : prompt->findChild<QDialogButtonBox *>()->buttons())
        if (prompt->findChild<QDialogButtonBox *>()->buttonRole(b) == QDialogButtonBox::AcceptRole)
            return b;
    return nullptr;
}

} // namespace

// A server that wants a password: the prompt comes up (NOAUTH), a wrong password keeps it open
// with the server's WRONGPASS, the right one connects; the password is nowhere to be read.
void TestMainWindow::noAuthAsksForThePassword()
{
    SandboxServer guarded(test::passwordConfig(kServerPassword));
    guarded.start();
    MainWindow window(*m_store, *m_vault);
    const ConnectionOptions options = guarded.options(); // no password
    const ConnectionProfile profile = ConnectionProfile::fromOptions(options, options.toUrl());
    window.addSessionProfile(profile, options);
    window.setStartupView({{}, {}, QStringLiteral("policies"), {}, {}, {}, {}});
    window.show();
    window.connectProfile(profile.name);

    QTRY_VERIFY_WITH_TIMEOUT(window.passwordPrompt() && window.passwordPrompt()->isVisible(), 10000);
    PasswordPrompt *prompt = window.passwordPrompt();
    QVERIFY2(prompt->messageText().contains(QStringLiteral("NOAUTH")), qPrintable(prompt->messageText()));
    QVERIFY(!prompt->rememberBox()->isEnabled()); // a --url: no profile to keep it with
    QVERIFY(window.banner()->text().contains(QStringLiteral("needs a password")));
    QVERIFY(!window.banner()->passwordButton()->isHidden());
    QCOMPARE(window.client()->state(), RedisClient::State::Failed); // not retried: a login is needed

    // Wrong: the prompt stays, with the server's words, ready for the next try.
    prompt->passwordEdit()->setText(QStringLiteral("not-the-password"));
    QTest::keyClick(prompt->passwordEdit(), Qt::Key_Return);
    QVERIFY(prompt->isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(!prompt->isBusy(), 10000);
    QVERIFY2(prompt->messageText().contains(QStringLiteral("WRONGPASS")), qPrintable(prompt->messageText()));
    QCOMPARE(window.passwordPrompt(), prompt);
    QVERIFY(prompt->isVisible());
    QVERIFY(prompt->passwordEdit()->text().isEmpty());
    QVERIFY(!prompt->messageText().contains(QStringLiteral("not-the-password")));
    QVERIFY(!window.banner()->text().contains(QStringLiteral("not-the-password")));
    if (const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS"); !dir.isEmpty())
        prompt->grab().save(dir + QStringLiteral("/password-prompt-refused.png"));

    // Right: connected, the prompt gone, and what the command line asked for shown.
    prompt->passwordEdit()->setText(kServerPassword);
    connectButton(prompt)->click();
    QTRY_COMPARE_WITH_TIMEOUT(window.client() ? window.client()->state() : RedisClient::State::Idle, RedisClient::State::Connected, 10000);
    QTRY_VERIFY(!window.passwordPrompt());
    QCOMPARE(window.tabs()->currentWidget(), window.policies());
    QVERIFY(window.banner()->isHidden());
    QVERIFY(!window.windowTitle().contains(kServerPassword));
    QVERIFY(!window.client()->url().contains(kServerPassword));
    QVERIFY(window.operatorBar()->isHidden()); // a --url: not asked unless wanted

    // Connecting again to the same --url this session takes the login typed.
    window.disconnectFromServer();
    window.connectProfile(profile.name);
    QTRY_COMPARE_WITH_TIMEOUT(window.client() ? window.client()->state() : RedisClient::State::Idle, RedisClient::State::Connected, 10000);
    QVERIFY(!window.passwordPrompt());
    QFile settings(m_settings->fileName());
    m_settings->sync();
    if (settings.open(QIODevice::ReadOnly))
        QVERIFY(!settings.readAll().contains(kServerPassword.toUtf8()));
}

// A saved profile that did not know it needs a password: the login typed, remembered, goes to
// the vault (here this session's: no keychain offscreen), the profile learns to ask for it;
// the operator is asked once and recorded with a change beside the OS user.
void TestMainWindow::savedProfileRemembersLoginAndOperator()
{
    SandboxServer guarded(test::passwordConfig(kServerPassword));
    guarded.start();
    ConnectionProfile p;
    p.name = QStringLiteral("desk");
    p.host = QStringLiteral("127.0.0.1");
    p.port = guarded.port();
    m_store->save(p);
    MainWindow window(*m_store, *m_vault);
    const auto state = [&window] { return window.client() ? window.client()->state() : RedisClient::State::Idle; };
    window.show();
    window.connectProfile(p.name);
    QTRY_VERIFY_WITH_TIMEOUT(window.passwordPrompt() && window.passwordPrompt()->isVisible(), 10000);
    PasswordPrompt *prompt = window.passwordPrompt();
    QVERIFY(prompt->rememberBox()->isEnabled());
    QVERIFY(prompt->rememberBox()->isChecked());
    if (const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS"); !dir.isEmpty())
        prompt->grab().save(dir + QStringLiteral("/password-prompt.png"));
    prompt->passwordEdit()->setText(kServerPassword);
    connectButton(prompt)->click();
    QTRY_COMPARE_WITH_TIMEOUT(state(), RedisClient::State::Connected, 10000);
    QTRY_COMPARE(m_store->find(p.name)->passwordStorage, ConnectionProfile::PasswordStorage::Ask);
    QVERIFY(m_vault->hasSessionPassword(p.name));

    // The operator, asked once for this profile.
    QTRY_VERIFY(window.operatorBar()->isVisible());
    if (const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS"); !dir.isEmpty())
        window.grab().save(dir + QStringLiteral("/operator-bar.png"));
    window.operatorBar()->nameEdit()->setText(QStringLiteral("  Dana Ops "));
    QTest::keyClick(window.operatorBar()->nameEdit(), Qt::Key_Return);
    QVERIFY(window.operatorBar()->isHidden());
    QCOMPARE(window.operatorName(), QStringLiteral("Dana Ops"));
    QCOMPARE(m_store->operatorName(p.name).value_or(QString()), QStringLiteral("Dana Ops"));

    // A change from the console (the lock closed, then opened: audited) carries it.
    window.lockAction()->trigger();
    window.lockAction()->trigger();
    auto *question = window.findChild<QMessageBox *>(QStringLiteral("unlockQuestion"));
    QVERIFY(question);
    question->button(QMessageBox::Yes)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!window.client()->isReadOnly(), 10000);
    ConnectionOptions admin = guarded.options();
    admin.password = kServerPassword;
    Connection c(admin);
    const auto entries = AuditLog(c, QStringLiteral("ratescope:")).list(1);
    QCOMPARE(entries.size(), size_t(1));
    QCOMPARE(entries.front().action, QStringLiteral("readonly.unlock"));
    QCOMPARE(entries.front().actor, QStringLiteral("Dana Ops"));
    QCOMPARE(entries.front().osUser, AuditLog::osUser());

    // Next time: asked neither (the operator is known) nor connected without the password.
    window.disconnectFromServer();
    window.connectProfile(p.name);
    QTRY_COMPARE_WITH_TIMEOUT(state(), RedisClient::State::Connected, 10000);
    QVERIFY(window.operatorBar()->isHidden());
    QCOMPARE(window.operatorName(), QStringLiteral("Dana Ops"));
    m_settings->sync();
    QFile settings(m_settings->fileName());
    QVERIFY(settings.open(QIODevice::ReadOnly));
    const QByteArray text = settings.readAll();
    QVERIFY(!text.contains(kServerPassword.toUtf8()));
    QVERIFY(text.contains("Dana Ops"));

    // New profile: prefilled from this connection.
    for (QAction *a : window.menuBar()->actions().first()->menu()->actions())
        if (a->text() == QStringLiteral("&New profile…"))
            a->trigger();
    auto *dialog = window.findChild<ConnectionDialog *>();
    QVERIFY(dialog);
    QCOMPARE(dialog->portEdit()->value(), int(guarded.port()));
    QCOMPARE(dialog->passwordEdit()->text(), kServerPassword);
    QCOMPARE(dialog->passwordEdit()->echoMode(), QLineEdit::Password);
    QCOMPARE(dialog->nameEdit()->text(), QStringLiteral("desk copy"));
    dialog->close();
}

// The menus hold every action with its keys, and no key twice.
void TestMainWindow::menusListEveryShortcutOnce()
{
    MainWindow window(*m_store, *m_vault);
    QStringList titles;
    QHash<QString, QString> byKey;
    QStringList twice;
    const std::function<void(QMenu *)> walk = [&](QMenu *menu) {
        for (QAction *a : menu->actions()) {
            if (a->menu()) {
                walk(a->menu());
                continue;
            }
            titles << a->text().remove(QLatin1Char('&'));
            for (const QKeySequence &k : a->shortcuts()) {
                if (byKey.contains(k.toString()))
                    twice << k.toString();
                byKey.insert(k.toString(), a->text());
            }
        }
    };
    for (QAction *a : window.menuBar()->actions())
        walk(a->menu());
    QVERIFY2(twice.isEmpty(), qPrintable(twice.join(QStringLiteral(", "))));
    for (const char *keys : {"F5", "Ctrl+F", "Ctrl+W", "Ctrl+F4", "Ctrl+Tab", "Ctrl+PgDown", "Ctrl+Shift+Tab", "Ctrl+PgUp",
                             "Ctrl+Shift+R", "Alt+1", "Alt+8", "Ctrl+Q", "Ctrl+N", "Ctrl+K"})
        QVERIFY2(byKey.contains(QLatin1String(keys)), keys);
    for (const char *title : {"Connect", "New profile…", "Operator name…", "Refresh", "Filter keys…", "Overview", "Audit", "Reset…",
                              "Close tab", "Keyboard and menus", "About Ratescope"})
        QVERIFY2(titles.contains(QString::fromUtf8(title)), title);
    // No action of the window outside the menus holds a key of its own.
    for (QAction *a : window.actions())
        QVERIFY2(a->shortcuts().isEmpty(), qPrintable(a->text()));

    // Help › Keyboard and menus lists them, read from the menus.
    window.resize(1024, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTest::keySequence(&window, QKeySequence(Qt::Key_F1));
    QMessageBox *help = nullptr;
    QTRY_VERIFY((help = window.findChild<QMessageBox *>(QStringLiteral("keysHelp"))));
    QVERIFY2(help->text().contains(QStringLiteral("Ctrl+Shift+R")), qPrintable(help->text()));
    QVERIFY(help->text().contains(QStringLiteral("Key › Reset…")));
    if (const QString dir = qEnvironmentVariable("RATESCOPE_SHOTS"); !dir.isEmpty()) {
        help->grab().save(dir + QStringLiteral("/keys-help.png"));
        for (QAction *a : window.menuBar()->actions())
            a->menu()->grab().save(dir + QStringLiteral("/menu-%1.png").arg(a->text().remove(QLatin1Char('&')).toLower()));
    }
    help->close();
}

// --burst, --boundary-test and --reset: the run ends (or is refused, saying why) before the
// window settles, and the reset dialog shows its preview, nothing deleted.
void TestMainWindow::startupBurstBoundaryAndResetSettleShown()
{
    Connection c(m_server->options());
    c.command({"DEL", "app:burst:startup"});
    Limiter limiter(c);
    for (const QByteArray &key : {QByteArray("app:log:reset1"), QByteArray("app:log:reset2")})
        limiter.check(key, {Algorithm::SlidingLog, 10, kWindowUs, 1});
    {
        MainWindow::StartupView view;
        BurstPage::Prefill burst;
        burst.key = "app:burst:startup";
        burst.algorithm = Algorithm::SlidingLog;
        burst.limit = QStringLiteral("50");
        burst.window = QStringLiteral("1h");
        burst.requests = QStringLiteral("200");
        burst.connections = 2;
        burst.pipeline = 4;
        view.burst = burst;
        view.resetPattern = "app:log:reset*";
        const auto window = openWindow(view);
        QVERIFY(window);
        QCOMPARE(window->tabs()->currentWidget(), window->burst());
        QVERIFY(!window->burst()->isBusy());
        QVERIFY(window->burst()->lastSummary());
        QCOMPARE(window->burst()->lastSummary()->sent, 200);
        QCOMPARE(window->burst()->lastSummary()->allowed, 50);
        ResetDialog *reset = nullptr;
        for (ResetDialog *d : window->findChildren<ResetDialog *>())
            if (d->isVisible())
                reset = d;
        QVERIFY(reset);
        QCOMPARE(reset->stage(), ResetDialog::Stage::Preview);
        QCOMPARE(reset->previewedKeys(), (QList<QByteArray>{"app:log:reset1", "app:log:reset2"}));
        reset->reject();
        QCOMPARE(c.command({"EXISTS", "app:log:reset1", "app:log:reset2"}).integer(), 2);
    }
    {
        // A field the form refuses: not started, the reason in the status line, and settled.
        MainWindow::StartupView view;
        BurstPage::Prefill burst;
        burst.key = "app:burst:startup";
        burst.algorithm = Algorithm::SlidingLog;
        burst.limit = QStringLiteral("many");
        burst.window = QStringLiteral("1h");
        burst.requests = QStringLiteral("10");
        view.burst = burst;
        const auto window = openWindow(view);
        QVERIFY(window);
        QVERIFY(!window->burst()->lastSummary());
        QVERIFY2(window->burst()->statusText().startsWith(QStringLiteral("Not started:")), qPrintable(window->burst()->statusText()));
    }
    {
        MainWindow::StartupView view;
        BurstPage::Prefill boundary;
        boundary.boundary = true;
        view.burst = boundary;
        const auto window = openWindow(view);
        QVERIFY(window);
        QCOMPARE(window->burst()->mode(), BurstPage::Mode::Boundary);
        QCOMPARE(window->burst()->lastBoundary().size(), size_t(2));
    }
    c.command({"DEL", "app:burst:startup", "app:log:reset1", "app:log:reset2"});
}

// A burst fired from the console shows at once in the keys panel's row and in the key's view:
// both read the key again when it ends (the view's own refresh is off here, and the panel's
// rows do not age).
void TestMainWindow::burstShowsInTheKeysPanelAndTheKeyView()
{
    const LimitSpec spec{Algorithm::SlidingLog, 10, kWindowUs, 1};
    OwnPolicy fired(m_server->options(), QStringLiteral("fired"), "app:fired:*", spec, {"app:fired:dave"});
    Limiter limiter(fired.connection());
    for (int i = 0; i < 3; ++i)
        limiter.check("app:fired:dave", spec);
    MainWindow::StartupView view;
    view.openKeys = {"app:fired:dave"};
    const auto window = openWindow(view);
    QVERIFY(window);
    KeyView *dave = nullptr;
    for (int i = 0; i < window->tabs()->count(); ++i)
        if (auto *v = qobject_cast<KeyView *>(window->tabs()->widget(i)); v && v->key() == "app:fired:dave")
            dave = v;
    QVERIFY(dave);
    dave->setRefreshInterval(0);
    QVERIFY2(dave->fieldText(QStringLiteral("Used")).startsWith(QStringLiteral("3 of 10")), qPrintable(dave->fieldText(QStringLiteral("Used"))));
    KeyBrowser *browser = window->keyBrowser();
    browser->model()->setClock([] { return qint64(1) << 40; }); // read once more, then never by age
    const quint32 id = browser->model()->findKey("app:fired:dave");
    QVERIFY(id != KeyTreeModel::kNoKey);
    const QModelIndex used = browser->model()->indexOfKey(id, KeyTreeModel::UsageColumn);
    browser->view()->scrollTo(used);
    QTRY_COMPARE_WITH_TIMEOUT(used.data().toString(), QStringLiteral("3 / 10"), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(browser->isSettled(), 10000);

    QSignalSpy changed(window->burst(), &BurstPage::keyChanged);
    window->tabs()->setCurrentWidget(window->burst());
    BurstPage::Prefill burst; // the limits in force at the key: 10 per hour
    burst.key = "app:fired:dave";
    burst.requests = QStringLiteral("5");
    window->burst()->prefill(burst);
    window->burst()->startWhenReady();
    // The key exists: the page asks first.
    QMessageBox *box = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((box = window->burst()->findChild<QMessageBox *>()) && box->isVisible(), 10000);
    for (QAbstractButton *b : box->buttons())
        if (box->buttonRole(b) == QMessageBox::AcceptRole)
            b->click();
    QTRY_COMPARE_WITH_TIMEOUT(changed.size(), 1, 30000);
    QCOMPARE(changed.front().front().toByteArray(), QByteArray("app:fired:dave"));
    QVERIFY(window->burst()->lastSummary());
    QCOMPARE(window->burst()->lastSummary()->allowed, 5);
    QTRY_COMPARE_WITH_TIMEOUT(used.data().toString(), QStringLiteral("8 / 10"), 10000);
    QTRY_VERIFY2_WITH_TIMEOUT(dave->fieldText(QStringLiteral("Used")).startsWith(QStringLiteral("8 of 10")),
                              qPrintable(dave->fieldText(QStringLiteral("Used"))), 10000);
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
