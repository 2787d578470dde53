#include "mainwindow.h"

#include "admin/audit.h"
#include "auditpage.h"
#include "burstpage.h"
#include "auditqueries.h"
#include "connectionbanner.h"
#include "connectioneventlog.h"
#include "connectiondialog.h"
#include "hotpage.h"
#include "keybrowser.h"
#include "base/keytext.h"
#include "keytreemodel.h"
#include "keyview.h"
#include "base/glob.h"
#include "lockicon.h"
#include "lookuppage.h"
#include "operatorbar.h"
#include "monitorpage.h"
#include "overviewpage.h"
#include "passwordprompt.h"
#include "passwordvault.h"
#include "policiespage.h"
#include "profilestore.h"
#include "redisclient.h"
#include "resetdialog.h"
#include "serverstatusbar.h"
#include "whatifpage.h"

#include <QAction>
#include <QApplication>
#include <QDesktopServices>
#include <QFileInfo>
#include <QMenuBar>
#include <QUrl>
#include <QTimer>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace ratescope::ui {

MainWindow::MainWindow(ProfileStore &profiles, PasswordVault &vault, QWidget *parent)
    : QMainWindow(parent)
    , m_profiles(profiles)
    , m_vault(vault)
{
    setWindowTitle(QStringLiteral("Ratescope"));

    auto *toolbar = addToolBar(QStringLiteral("Connection"));
    toolbar->setObjectName(QStringLiteral("connectionToolbar"));
    toolbar->setMovable(false);
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_picker = new QComboBox(this);
    m_picker->setMinimumContentsLength(22);
    m_picker->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_picker->setToolTip(QStringLiteral("Connection profile"));
    toolbar->addWidget(m_picker);
    m_connectAction = toolbar->addAction(QStringLiteral("Connect"), this, &MainWindow::toggleConnection);
    m_profilesButton = new QToolButton(this);
    m_profilesButton->setText(QStringLiteral("Profiles"));
    m_profilesButton->setPopupMode(QToolButton::InstantPopup);
    auto *profileMenu = new QMenu(m_profilesButton);
    profileMenu->addAction(QStringLiteral("New profile…"), this, &MainWindow::newProfile);
    m_editAction = profileMenu->addAction(QStringLiteral("Edit profile…"), this, [this] { editProfile(selectedProfile()); });
    m_deleteAction = profileMenu->addAction(QStringLiteral("Delete profile"), this, &MainWindow::deleteProfile);
    m_profilesButton->setMenu(profileMenu);
    toolbar->addWidget(m_profilesButton);
    toolbar->addSeparator();
    m_lockAction = toolbar->addAction(lockIcon(), QStringLiteral("Read-only"));
    m_lockAction->setCheckable(true);
    m_lockAction->setToolTip(QStringLiteral("Read-only lock: while it is on, every change (reset, "
                                            "override, burst) is refused before anything is sent"));
    connect(m_lockAction, &QAction::toggled, this, [this](bool on) {
        if (m_client && !on) {
            // Unlocking allows changes to the server: the lock stays closed until the operator
            // confirms and the unlock is on record.
            const QSignalBlocker block(m_lockAction);
            m_lockAction->setChecked(true);
            askUnlock();
            return;
        }
        if (m_client)
            m_client->setReadOnly(on);
        m_lockAction->setIconText(on ? QStringLiteral("Read-only") : QStringLiteral("Writable"));
    });
    // The toolbar says the state (its icon text); the menu names the lock, ticked when closed.
    m_lockAction->setText(QStringLiteral("&Read-only lock"));
    m_lockAction->setIconText(QStringLiteral("Writable"));
    m_refreshAction =
        toolbar->addAction(style()->standardIcon(QStyle::SP_BrowserReload), QStringLiteral("Refresh"), this, &MainWindow::refresh);
    m_refreshAction->setShortcut(QKeySequence::Refresh);
    m_refreshAction->setToolTip(QStringLiteral("Read the keyspace and policies again (F5)"));
    auto *spacer = new QWidget(this);
    spacer->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    toolbar->addWidget(spacer);
    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(QStringLiteral("Filter keys: glob (demo:api:*) or any text"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setMinimumWidth(300);
    m_filterHelp = QStringLiteral("SCAN MATCH pattern: * ? [abc]. Text without them matches keys that contain it. (Ctrl+F)");
    m_filter->setToolTip(m_filterHelp);
    toolbar->addWidget(m_filter);
    m_filterDebounce.setSingleShot(true);
    m_filterDebounce.setInterval(500);
    connect(&m_filterDebounce, &QTimer::timeout, this, &MainWindow::applyFilter);
    connect(m_filter, &QLineEdit::textEdited, this, [this] { m_filterDebounce.start(); });
    connect(m_filter, &QLineEdit::returnPressed, this, &MainWindow::applyFilter);
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString &t) {
        if (t.isEmpty())
            applyFilter(); // the clear button
    });

    m_banner = new ConnectionBanner(this);
    m_browser = new KeyBrowser(this);
    m_tabs = new QTabWidget(this);
    m_tabs->setTabsClosable(true);
    m_tabs->setDocumentMode(true);
    m_overview = new OverviewPage(m_tabs);
    m_tabs->addTab(m_overview, QStringLiteral("Overview"));
    m_tabs->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);
    m_monitor = new MonitorPage(m_tabs);
    m_burst = new BurstPage(m_tabs);
    m_policies = new PoliciesPage(m_tabs);
    m_whatIf = new WhatIfPage(m_tabs);
    m_hot = new HotPage(m_tabs);
    m_audit = new AuditPage(m_tabs);
    m_lookup = new LookupPage(m_tabs);
    for (const auto &[page, title] : {std::pair<QWidget *, const char *>{m_monitor, "Monitor"},
                                      {m_burst, "Burst"},
                                      {m_policies, "Policies"},
                                      {m_whatIf, "What if"},
                                      {m_hot, "Hot"},
                                      {m_audit, "Audit"},
                                      {m_lookup, "Lookup"}}) {
        const int at = m_tabs->addTab(page, QLatin1String(title));
        m_tabs->tabBar()->setTabButton(at, QTabBar::RightSide, nullptr);
    }
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, [this](int index) {
        if (!isPinnedTab(index))
            delete m_tabs->widget(index); // its requests are dropped with it
    });

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_browser);
    splitter->addWidget(m_tabs);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);
    // The keys panel as wide as its first columns (key, algorithm, used / limit: the panel fits
    // what else shows to its width); the tabs take the rest.
    QHeaderView *keysHeader = m_browser->view()->header();
    const int keysWidth = keysHeader->sectionSize(KeyTreeModel::KeyColumn) + keysHeader->sectionSize(KeyTreeModel::AlgorithmColumn) +
                          keysHeader->sectionSize(KeyTreeModel::UsageColumn) + m_browser->view()->verticalScrollBar()->sizeHint().width() + 8;
    splitter->setSizes({keysWidth, std::max(380, 1280 - keysWidth)});
    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_operatorBar = new OperatorBar(this);
    connect(m_operatorBar, &OperatorBar::answered, this, [this](const QString &name) {
        if (m_current.name.isEmpty())
            return;
        if (m_sessionProfiles.contains(m_current.name))
            m_sessionOperators.insert(m_current.name, name);
        else
            m_profiles.setOperatorName(m_current.name, name); // settings: a name, never a secret
        setOperator(name);
        statusBar()->showMessage(name.isEmpty() ? QStringLiteral("Changes are recorded as the OS user %1").arg(AuditLog::osUser())
                                                : QStringLiteral("Changes are recorded as %1 (OS user %2)").arg(name, AuditLog::osUser()),
                                 10000);
    });
    layout->addWidget(m_banner);
    layout->addWidget(m_operatorBar);
    layout->addWidget(splitter, 1);
    setCentralWidget(central);
    buildMenus();

    m_status = new ServerStatusBar(this);
    statusBar()->addPermanentWidget(m_status, 1);
    statusBar()->setSizeGripEnabled(true);

    connect(m_browser, &KeyBrowser::openKeyRequested, this, &MainWindow::openKey);
    connect(m_browser, &KeyBrowser::filterRequested, this, [this](const QString &pattern) {
        m_filter->setText(pattern);
        applyFilter();
    });
    connect(m_browser, &KeyBrowser::settled, this, &MainWindow::checkSettled);
    connect(m_overview, &OverviewPage::loaded, this, &MainWindow::checkSettled);
    connect(m_monitor, &MonitorPage::loaded, this, &MainWindow::checkSettled);
    connect(m_browser, &KeyBrowser::pinKeyRequested, this, &MainWindow::pinKey);
    connect(m_browser, &KeyBrowser::keyActionRequested, this, &MainWindow::runKeyAction);
    connect(m_browser, &KeyBrowser::resetGroupRequested, this, [this](const QByteArray &pattern) { openReset({}, pattern); });
    connect(m_policies, &PoliciesPage::loaded, this, &MainWindow::checkSettled);
    connect(m_policies, &PoliciesPage::previewRequested, this, [this](const std::optional<Policy> &stored, const Policy &edited) {
        m_tabs->setCurrentWidget(m_whatIf);
        m_whatIf->previewPolicy(stored, edited);
    });
    connect(m_whatIf, &WhatIfPage::finished, this, &MainWindow::checkSettled);
    connect(m_burst, &BurstPage::busyChanged, this, &MainWindow::checkSettled);
    // What a burst did shows at once in the keys panel and in the key's view, not at their next read.
    connect(m_burst, &BurstPage::keyChanged, this, [this](const QByteArray &key) {
        m_browser->refreshKeys({key});
        for (int i = 1; i < m_tabs->count(); ++i)
            if (auto *view = qobject_cast<KeyView *>(m_tabs->widget(i)); view && view->key() == key)
                view->refresh();
    });
    connect(m_whatIf, &WhatIfPage::openKeyRequested, this, &MainWindow::openKey);
    connect(m_hot, &HotPage::openKeyRequested, this, &MainWindow::openKey);
    connect(m_hot, &HotPage::loaded, this, &MainWindow::checkSettled);
    connect(m_audit, &AuditPage::loaded, this, &MainWindow::checkSettled);
    connect(m_browser, &KeyBrowser::lookupRequested, this, [this](const QByteArray &id) { showLookup(QString::fromUtf8(id)); });
    connect(m_lookup, &LookupPage::loaded, this, &MainWindow::checkSettled);
    connect(m_lookup, &LookupPage::openKeyRequested, this, &MainWindow::openKey);
    connect(m_lookup, &LookupPage::pinKeyRequested, this, &MainWindow::pinKey);
    connect(m_lookup, &LookupPage::resetRequested, this, [this](const QList<QByteArray> &keys, const QString &reason) {
        if (ResetDialog *dialog = openReset(keys, {}, reason))
            connect(dialog, qOverload<qint64>(&ResetDialog::finished), m_lookup, &LookupPage::resetFinished);
    });
    connect(m_banner, &ConnectionBanner::editProfileRequested, this, [this] { editProfile(m_current.name); });
    connect(m_banner, &ConnectionBanner::passwordRequested, this, &MainWindow::askLogin);
    connect(m_picker, &QComboBox::currentIndexChanged, this, &MainWindow::updateActions);

    reloadProfiles(m_profiles.lastUsed());
    resize(1280, 800);
}

MainWindow::~MainWindow()
{
    // Views first (their owners cancel), then the connection's worker.
    m_browser->setClient(nullptr, {}, {});
    m_overview->setClient(nullptr, {});
    m_monitor->setClient(nullptr, {});
    m_burst->setClient(nullptr, {}, {});
    m_policies->setClient(nullptr, {});
    m_whatIf->setClient(nullptr, {}, {});
    m_hot->setClient(nullptr, {});
    m_audit->setClient(nullptr, {});
    m_lookup->setClient(nullptr, {});
    delete m_client;
}

void MainWindow::addSessionProfile(const ConnectionProfile &profile, const ConnectionOptions &options)
{
    if (!m_sessionProfiles.contains(profile.name))
        m_sessionOrder << profile.name;
    m_sessionProfiles.insert(profile.name, {profile, options});
    reloadProfiles(profile.name);
}

void MainWindow::reloadProfiles(const QString &select)
{
    const QSignalBlocker block(m_picker);
    m_picker->clear();
    for (const QString &name : m_sessionOrder) {
        const QString where = m_sessionProfiles.value(name).second.endpoint();
        // A URL says where already.
        m_picker->addItem(name.contains(QLatin1String("://")) ? name : QStringLiteral("%1 (%2)").arg(name, where), name);
    }
    for (const ConnectionProfile &p : m_profiles.list())
        m_picker->addItem(QStringLiteral("%1 (%2)").arg(p.name, p.endpoint()), p.name);
    if (m_picker->count() == 0)
        m_picker->addItem(QStringLiteral("No profiles yet: Profiles › New"), QString());
    const int at = m_picker->findData(select);
    m_picker->setCurrentIndex(at >= 0 ? at : 0);
    updateActions();
}

QString MainWindow::selectedProfile() const
{
    return m_picker->currentData().toString();
}

void MainWindow::updateActions()
{
    const QString selected = selectedProfile();
    const bool isSaved = !selected.isEmpty() && !m_sessionProfiles.contains(selected);
    const bool connectedToSelected = m_client && selected == m_current.name;
    m_connectAction->setText(connectedToSelected ? QStringLiteral("Disconnect") : QStringLiteral("Connect"));
    m_connectAction->setEnabled(connectedToSelected || !selected.isEmpty());
    m_editAction->setEnabled(isSaved);
    m_deleteAction->setEnabled(isSaved);
    m_refreshAction->setEnabled(m_client != nullptr);
    m_lockAction->setEnabled(m_client != nullptr && !m_forceReadOnly);
    if (m_operatorAction)
        m_operatorAction->setEnabled(m_client != nullptr);
}

void MainWindow::toggleConnection()
{
    const QString selected = selectedProfile();
    if (m_client && selected == m_current.name)
        disconnectFromServer();
    else
        connectProfile(selected);
}

bool MainWindow::connectProfile(const QString &name)
{
    if (m_sessionProfiles.contains(name)) {
        const auto &[profile, options] = m_sessionProfiles.value(name);
        connectWith(profile, options);
        return true;
    }
    const auto profile = m_profiles.find(name);
    if (!profile)
        return false;
    m_profiles.setLastUsed(name);
    reloadProfiles(name);
    // The server's password, then (Sentinel profiles) the sentinels': each from the vault,
    // or asked for.
    // A later connect (another profile picked meanwhile) makes this one moot.
    const quint64 attempt = ++m_connectAttempt;
    obtainPassword(*profile, PasswordVault::Secret::Server, [this, p = *profile, attempt](QString password) {
        if (attempt != m_connectAttempt)
            return;
        obtainPassword(p, PasswordVault::Secret::Sentinel, [this, p, password, attempt](QString sentinelPassword) {
            if (attempt == m_connectAttempt)
                connectWith(p, p.toOptions(password, sentinelPassword));
        });
    });
    return true;
}

void MainWindow::obtainPassword(const ConnectionProfile &profile, PasswordVault::Secret which, std::function<void(QString)> done)
{
    const auto storage = which == PasswordVault::Secret::Server                        ? profile.passwordStorage
                         : profile.transport == ConnectionProfile::Transport::Sentinel ? profile.sentinelPasswordStorage
                                                                                       : ConnectionProfile::PasswordStorage::None;
    if (storage == ConnectionProfile::PasswordStorage::None) {
        done(QString());
        return;
    }
    m_vault.fetch(
        profile.name, this,
        [this, profile, which, done](std::optional<QString> password) {
            if (password)
                done(*password);
            else
                askPassword(profile, which, done);
        },
        which);
}

void MainWindow::askPassword(const ConnectionProfile &profile, PasswordVault::Secret which, std::function<void(QString)> done)
{
    // open(), not exec(): the GUI thread never waits in a nested event loop.
    auto *prompt = new PasswordPrompt(this);
    prompt->setAttribute(Qt::WA_DeleteOnClose);
    const bool sentinels = which == PasswordVault::Secret::Sentinel;
    prompt->setLogin(QStringLiteral("%1 (%2)").arg(profile.name, profile.endpoint()), sentinels ? profile.sentinelUser : profile.user, true,
                     !m_vault.keychainMissing());
    prompt->setSentinels(sentinels);
    prompt->userEdit()->setEnabled(false); // the profile's user: Edit profile… changes it
    prompt->userEdit()->setToolTip(QStringLiteral("The profile's user (Connection › Edit profile… changes it)"));
    connect(prompt, &PasswordPrompt::submitted, this, [this, prompt, profile, which, done](const QString &, const QString &password, bool remember) {
        m_vault.remember(profile.name, password, which);
        // Kept in the keychain only once the server has taken it (keepLogin).
        m_typedLogin = TypedLogin{which == PasswordVault::Secret::Sentinel ? profile.sentinelUser : profile.user, password, remember, which, {}};
        prompt->accept();
        done(password);
    });
    prompt->open();
}

void MainWindow::askLogin()
{
    if (!m_client || !m_client->needsCredentials())
        return;
    const bool saved = !m_sessionProfiles.contains(m_current.name);
    // The sentinels' own login, or the server's.
    const bool sentinels = m_current.transport == ConnectionProfile::Transport::Sentinel &&
                           m_client->lastError().contains(QLatin1String("by the sentinels"));
    if (!m_prompt) {
        m_prompt = new PasswordPrompt(this);
        m_prompt->setAttribute(Qt::WA_DeleteOnClose);
        const QString what = saved ? QStringLiteral("%1 (%2)").arg(m_current.name, m_client->endpoint()) : m_client->endpoint();
        const bool remember = saved && !m_vault.keychainMissing();
        m_prompt->setLogin(what, sentinels ? m_options.sentinelUser : m_options.user, saved, remember);
        m_prompt->setSentinels(sentinels);
        connect(m_prompt, &PasswordPrompt::submitted, this, &MainWindow::loginWith);
        connect(m_prompt, &QDialog::rejected, this, [this] { m_typedLogin.reset(); });
        m_prompt->open();
    }
    m_prompt->showRefusal(m_client->lastError());
}

void MainWindow::loginWith(const QString &user, const QString &password, bool remember)
{
    if (!m_client)
        return;
    const bool sentinels = m_current.transport == ConnectionProfile::Transport::Sentinel &&
                           m_client->lastError().contains(QLatin1String("by the sentinels"));
    ConnectionProfile profile = m_current;
    ConnectionOptions options = m_options;
    if (sentinels) {
        profile.sentinelUser = options.sentinelUser = user;
        options.sentinelPassword = password;
    } else {
        profile.user = options.user = user;
        options.password = password;
    }
    // The prompt stays open over the new attempt: a refusal shows in it again.
    const QPointer<PasswordPrompt> prompt = m_prompt;
    m_prompt = nullptr;
    connectWith(profile, options);
    m_prompt = prompt;
    m_typedLogin = TypedLogin{user, password, remember, sentinels ? PasswordVault::Secret::Sentinel : PasswordVault::Secret::Server, m_client};
}

void MainWindow::keepLogin()
{
    if (!m_typedLogin || !m_client || m_typedLogin->client != m_client)
        return;
    const TypedLogin login = *m_typedLogin;
    m_typedLogin.reset();
    if (m_prompt) {
        m_prompt->accept();
        m_prompt = nullptr;
    }
    const QString name = m_current.name;
    if (m_sessionProfiles.contains(name)) {
        // A --url or the demo: the login is this session's, in memory, for the next connect.
        m_sessionProfiles[name] = {m_current, m_options};
        return;
    }
    m_vault.remember(name, login.password, login.which);
    auto profile = m_profiles.find(name);
    if (!profile)
        return;
    using Storage = ConnectionProfile::PasswordStorage;
    const bool sentinels = login.which == PasswordVault::Secret::Sentinel;
    (sentinels ? profile->sentinelUser : profile->user) = login.user;
    Storage &storage = sentinels ? profile->sentinelPasswordStorage : profile->passwordStorage;
    if (storage == Storage::None)
        storage = Storage::Ask; // asked for before connecting next time
    if (!login.remember) {
        m_profiles.save(*profile);
        return;
    }
    m_vault.store(
        name, login.password, this,
        [this, p = *profile, sentinels](PasswordVault::Kept kept, const QString &note) mutable {
            (sentinels ? p.sentinelPasswordStorage : p.passwordStorage) =
                kept == PasswordVault::Kept::InKeychain ? Storage::Keychain : Storage::Ask;
            m_profiles.save(p);
            statusBar()->showMessage(note.isEmpty() ? QStringLiteral("Password of %1 kept in the keychain").arg(p.name) : note, 10000);
        },
        login.which);
}

void MainWindow::connectWith(const ConnectionProfile &profile, const ConnectionOptions &options)
{
    disconnectFromServer();
    m_current = profile;
    m_settledSent = false;
    setOperator(m_sessionProfiles.contains(profile.name) ? m_sessionOperators.value(profile.name)
                                                         : m_profiles.operatorName(profile.name).value_or(QString()));
    m_client = new RedisClient(options, this);
    m_client->setReadOnly(profile.readOnly || m_forceReadOnly);
    if (m_forceReadOnly)
        m_client->lockReadOnlyForSession();
    if (m_typedLogin && !m_typedLogin->client)
        m_typedLogin->client = m_client; // typed before this connection (a profile's password asked for)
    auto showLock = [this](bool on) {
        const QSignalBlocker block(m_lockAction);
        m_lockAction->setChecked(on);
        m_lockAction->setIconText(on ? QStringLiteral("Read-only") : QStringLiteral("Writable"));
    };
    showLock(m_client->isReadOnly());
    connect(m_client, &RedisClient::readOnlyChanged, this, showLock);
    connect(m_client, &RedisClient::statusChanged, this, &MainWindow::checkSettled);
    connect(m_client, &RedisClient::stateChanged, this, [this](RedisClient::State s) {
        // A refused password is not kept for the session: the next attempt asks again.
        if (s == RedisClient::State::Failed && !m_sessionProfiles.contains(m_current.name)) {
            using Storage = ConnectionProfile::PasswordStorage;
            if (m_current.passwordStorage != Storage::None)
                m_vault.dropSessionPassword(m_current.name);
            if (m_current.sentinelPasswordStorage != Storage::None)
                m_vault.dropSessionPassword(m_current.name, PasswordVault::Secret::Sentinel);
        }
        if (s == RedisClient::State::Connected) {
            keepLogin();
            recallOperator();
            applyStartupView(); // once connected: after a password prompt too
        } else if (s == RedisClient::State::Failed && m_client->needsCredentials()) {
            askLogin(); // the prompt, or the refusal in the open one
        } else if (s == RedisClient::State::Reconnecting && m_prompt) {
            m_prompt->close(); // not reached at all: the banner says so and tries again
            m_typedLogin.reset();
        }
        checkSettled();
    });
    // Opened first: what the views ask from here to the end of this turn of the event loop goes
    // with the connection attempt (their reads in the handshake's round trip, RedisClient::open).
    m_client->open();
    m_status->setClient(m_client);
    m_banner->setClient(m_client, !m_sessionProfiles.contains(profile.name));
    m_browser->setClient(m_client, profile.ns.toUtf8(), profile.separator.toUtf8());
    m_overview->setClient(m_client, profile.ns);
    m_monitor->setClient(m_client, profile.ns.toUtf8());
    m_options = options;
    m_burst->setClient(m_client, options, profile.ns.toUtf8());
    m_policies->setClient(m_client, profile.ns.toUtf8());
    m_whatIf->setClient(m_client, options, profile.ns.toUtf8());
    m_hot->setClient(m_client, profile.ns.toUtf8());
    m_audit->setClient(m_client, profile.ns.toUtf8());
    m_lookup->setClient(m_client, profile.ns.toUtf8());
    if (m_eventLog)
        m_eventLog->setClient(m_client);
    openStartupKeys();
    setWindowTitle(QStringLiteral("Ratescope — %1 (%2)").arg(profile.name, m_client->endpoint()));
    const int at = m_picker->findData(profile.name);
    if (at >= 0) {
        const QSignalBlocker block(m_picker);
        m_picker->setCurrentIndex(at);
    }
    updateActions();
}

void MainWindow::disconnectFromServer()
{
    ++m_connectAttempt; // a password still being fetched or asked for is no longer wanted
    if (m_prompt)
        m_prompt->close(); // the login asked for is no longer wanted either
    m_operatorBar->hide();
    if (!m_client)
        return;
    for (int i = m_tabs->count() - 1; i >= 0; --i)
        if (!isPinnedTab(i))
            delete m_tabs->widget(i);
    m_browser->setClient(nullptr, {}, {});
    m_overview->setClient(nullptr, {});
    m_monitor->setClient(nullptr, {}); // the pins and their history stay, shown as stale
    m_burst->setClient(nullptr, {}, {});
    m_policies->setClient(nullptr, {});
    m_whatIf->setClient(nullptr, {}, {}); // a file trace still runs; a run under way finishes
    m_hot->setClient(nullptr, {});        // what it showed stays, as of its time
    m_audit->setClient(nullptr, {});
    m_lookup->setClient(nullptr, {}); // what it showed stays, as of its time
    m_options = {};
    m_status->setClient(nullptr);
    m_banner->setClient(nullptr);
    if (m_eventLog)
        m_eventLog->setClient(nullptr);
    m_client->retire(); // no waiting on the network here
    m_client = nullptr;
    m_current = {};
    setWindowTitle(QStringLiteral("Ratescope"));
    updateActions();
}

void MainWindow::setEventLog(ConnectionEventLog *log)
{
    m_eventLog = log;
    if (log && m_client)
        log->setClient(m_client);
}

void MainWindow::setReadOnly(bool readOnly)
{
    m_forceReadOnly = readOnly;
    if (m_client && readOnly)
        m_client->lockReadOnlyForSession();
    updateActions();
}

void MainWindow::buildMenus()
{
    // Every action of the window with its keys, each once: the menus are where the keys are
    // found, and (as actions of the window's menu bar) they work wherever the focus is.
    auto add = [this](QMenu *menu, const QString &name, const QList<QKeySequence> &keys, auto slot) {
        auto *a = menu->addAction(name);
        a->setShortcuts(keys);
        a->setShortcutContext(Qt::WindowShortcut);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    QMenuBar *bar = menuBar();

    QMenu *connection = bar->addMenu(QStringLiteral("&Connection"));
    connection->addAction(m_connectAction);
    connection->addSeparator();
    m_newProfileAction = add(connection, QStringLiteral("&New profile…"), {QKeySequence::New}, [this] { newProfile(); });
    connection->addAction(m_editAction);
    connection->addAction(m_deleteAction);
    connection->addSeparator();
    m_operatorAction = add(connection, QStringLiteral("&Operator name…"), {}, [this] {
        if (m_client)
            m_operatorBar->ask(m_current.name, m_operator);
    });
    m_operatorAction->setToolTip(QStringLiteral("The name the audit trail records with your changes, beside the OS user"));
    connection->addAction(m_lockAction);
    connection->addSeparator();
    add(connection, QStringLiteral("&Quit"), {QKeySequence(Qt::CTRL | Qt::Key_Q)}, [this] { close(); });

    QMenu *view = bar->addMenu(QStringLiteral("&View"));
    view->addAction(m_refreshAction);
    add(view, QStringLiteral("&Filter keys…"), {QKeySequence::Find}, [this] {
        m_filter->setFocus(Qt::ShortcutFocusReason);
        m_filter->selectAll();
    });
    add(view, QStringLiteral("&Look up a customer…"), {QKeySequence(Qt::CTRL | Qt::Key_K)}, [this] { showLookup(); });
    view->addSeparator();
    QMenu *go = view->addMenu(QStringLiteral("&Go to"));
    const std::pair<QWidget *, const char *> pages[] = {{m_overview, "&Overview"}, {m_monitor, "&Monitor"}, {m_burst, "&Burst"},
                                                        {m_policies, "&Policies"}, {m_whatIf, "&What if"},  {m_hot, "&Hot"},
                                                        {m_audit, "&Audit"},      {m_lookup, "&Lookup"}};
    int n = 0;
    for (const auto &[page, title] : pages)
        add(go, QLatin1String(title), {QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + n++))}, [this, page] { m_tabs->setCurrentWidget(page); });
    auto step = [this](int by) {
        const int count = m_tabs->count();
        if (count > 0)
            m_tabs->setCurrentIndex((m_tabs->currentIndex() + by + count) % count);
    };
    view->addSeparator();
    add(view, QStringLiteral("&Next tab"), {QKeySequence(Qt::CTRL | Qt::Key_Tab), QKeySequence(Qt::CTRL | Qt::Key_PageDown)}, [step] { step(1); });
    add(view, QStringLiteral("&Previous tab"),
        {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Tab), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Backtab),
         QKeySequence(Qt::CTRL | Qt::Key_PageUp)},
        [step] { step(-1); });

    // The key actions, on the keys selected in the panel, else the key whose tab is shown.
    QMenu *key = bar->addMenu(QStringLiteral("&Key"));
    m_keyMenu = key;
    auto onKeys = [this](KeyAction action) {
        return [this, action] {
            const QList<QByteArray> keys = actionKeys();
            if (!keys.isEmpty())
                runKeyAction(action, keys);
        };
    };
    m_openKeyAction = add(key, QStringLiteral("&Open"), {}, [this] {
        for (const QByteArray &k : m_browser->selectedKeys().mid(0, 20))
            openKey(k);
    });
    m_pinAction = add(key, QStringLiteral("&Pin to monitor"), {}, [this] {
        for (const QByteArray &k : actionKeys().mid(0, 20))
            pinKey(k);
    });
    key->addSeparator();
    m_burstAction = add(key, QStringLiteral("&Burst…"), {}, onKeys(KeyAction::Burst));
    m_changeLimitAction = add(key, QStringLiteral("&Change this key's limit…"), {}, onKeys(KeyAction::ChangeLimit));
    m_editPolicyAction = add(key, QStringLiteral("&Edit its policy…"), {}, onKeys(KeyAction::EditPolicy));
    m_whatIfAction = add(key, QStringLiteral("&What if…"), {}, onKeys(KeyAction::WhatIf));
    key->addSeparator();
    m_resetAction = add(key, QStringLiteral("&Reset…"), {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R)}, [this] {
        const QList<QByteArray> keys = actionKeys();
        if (!keys.isEmpty())
            openReset(keys, {});
    });
    key->addSeparator();
    m_closeTabAction = add(key, QStringLiteral("&Close tab"), {QKeySequence(Qt::CTRL | Qt::Key_W), QKeySequence(Qt::CTRL | Qt::Key_F4)}, [this] {
        const int i = m_tabs->currentIndex();
        if (i >= 0 && !isPinnedTab(i))
            delete m_tabs->widget(i);
    });
    // Enabled for what there is to act on while the menu is open (the keys stay reachable by
    // their shortcuts, whose handlers check again).
    connect(key, &QMenu::aboutToShow, this, &MainWindow::updateKeyActions);
    connect(key, &QMenu::aboutToHide, this, [this] {
        // A disabled action takes no key: between menus, the handlers decide.
        for (QAction *a : m_keyMenu->actions())
            a->setEnabled(true);
    });

    QMenu *help = bar->addMenu(QStringLiteral("&Help"));
    add(help, QStringLiteral("&Keyboard and menus"), {QKeySequence::HelpContents}, [this] { showKeys(); });
    add(help, QStringLiteral("The console's &manual"), {}, [this] {
        // The installed page, else the one beside the sources; else where it is.
        const QString installed = QStringLiteral("/usr/share/doc/ratescope/console.md");
        if (QFileInfo::exists(installed) && QDesktopServices::openUrl(QUrl::fromLocalFile(installed)))
            return;
        auto *box = new QMessageBox(QMessageBox::Information, QStringLiteral("Manual"),
                                    QStringLiteral("The console's manual is the man page ratescope(1): run man ratescope. "
                                                   "In the sources, docs/console.md says the same at length."),
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    help->addSeparator();
    add(help, QStringLiteral("&About Ratescope"), {}, [this] {
        QMessageBox::about(this, QStringLiteral("About Ratescope"),
                           QStringLiteral("<b>Ratescope %1</b><p>An admin console and live monitor for rate limiters that keep "
                                          "their state in Redis.</p>")
                               .arg(QCoreApplication::applicationVersion().toHtmlEscaped()));
    });
    add(help, QStringLiteral("About &Qt"), {}, [] { QApplication::aboutQt(); });
}

void MainWindow::setOperator(const QString &name)
{
    m_operator = name;
    m_policies->setOperatorName(name);
    m_overview->setOperatorName(name);
    m_burst->setOperatorName(name);
    m_lookup->setOperatorName(name);
    m_operatorAction->setText(name.isEmpty() ? QStringLiteral("&Operator name…") : QStringLiteral("&Operator name (%1)…").arg(name));
}

void MainWindow::recallOperator()
{
    // Asked once per saved profile; a --url or the demo only when asked for (the menu).
    if (m_client && !m_sessionProfiles.contains(m_current.name) && !m_profiles.operatorName(m_current.name))
        m_operatorBar->ask(m_current.name, {});
}

QList<QByteArray> MainWindow::actionKeys() const
{
    QList<QByteArray> keys = m_browser->selectedKeys();
    if (keys.isEmpty())
        if (auto *view = qobject_cast<KeyView *>(m_tabs->currentWidget()))
            keys << view->key();
    return keys;
}

void MainWindow::updateKeyActions()
{
    const bool connected = m_client != nullptr;
    const int keys = int(actionKeys().size());
    const bool locked = !m_client || m_client->isReadOnly();
    const QString lockedWhy = QStringLiteral("Read-only: unlock changes first (the toolbar's lock)");
    m_openKeyAction->setEnabled(connected && !m_browser->selectedKeys().isEmpty());
    m_pinAction->setEnabled(connected && keys > 0);
    for (QAction *a : {m_burstAction, m_changeLimitAction, m_editPolicyAction, m_whatIfAction})
        a->setEnabled(connected && keys > 0);
    m_resetAction->setEnabled(connected && keys > 0 && !locked);
    m_resetAction->setToolTip(locked && connected ? lockedWhy : QString());
    m_closeTabAction->setEnabled(!isPinnedTab(m_tabs->currentIndex()));
}

void MainWindow::showKeys()
{
    // Read from the menus themselves, so the list is never out of step with them.
    QString rows;
    const std::function<void(QMenu *, const QString &)> walk = [&](QMenu *menu, const QString &path) {
        const QString where = path.isEmpty() ? menu->title().remove(QLatin1Char('&')) : path + QStringLiteral(" › ") + menu->title().remove(QLatin1Char('&'));
        for (QAction *a : menu->actions()) {
            if (a->menu()) {
                walk(a->menu(), where);
                continue;
            }
            if (a->isSeparator() || a->shortcuts().isEmpty())
                continue;
            QStringList keys;
            for (const QKeySequence &k : a->shortcuts())
                if (!k.toString().contains(QLatin1String("Backtab"))) // Shift+Tab, as typed
                    keys << k.toString(QKeySequence::NativeText).toHtmlEscaped();
            rows += QStringLiteral("<tr><td nowrap>%1 › %2</td><td nowrap><b>%3</b></td></tr>")
                        .arg(where.toHtmlEscaped(), a->text().remove(QLatin1Char('&')).toHtmlEscaped(), keys.join(QStringLiteral(", ")));
        }
    };
    for (QAction *a : menuBar()->actions())
        if (a->menu())
            walk(a->menu(), {});
    auto *box = new QMessageBox(QMessageBox::NoIcon, QStringLiteral("Keyboard and menus"),
                                QStringLiteral("<table cellspacing=6>%1</table><p>The keys work wherever the focus is.</p>").arg(rows),
                                QMessageBox::Close, this);
    box->setObjectName(QStringLiteral("keysHelp"));
    box->setStyleSheet(QStringLiteral("QLabel { min-width: 30em; }")); // one line per action
    box->setTextFormat(Qt::RichText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::showLookup(const QString &id)
{
    m_tabs->setCurrentWidget(m_lookup);
    if (!id.isEmpty())
        m_lookup->lookUp(id);
    m_lookup->focusIdentifier();
}

QStringList MainWindow::keyTabTitles(const QList<QByteArray> &keys, const QByteArray &separator, int maxChars)
{
    // Each key's ending of `segments` segments (the whole key when it has fewer).
    auto ending = [&](const QByteArray &key, int segments) {
        if (separator.isEmpty())
            return key;
        qsizetype at = key.size();
        for (int s = 0; s < segments; ++s) {
            at = at <= 0 ? -1 : key.lastIndexOf(separator, at - 1);
            if (at < 0)
                return key;
        }
        return key.mid(at + separator.size());
    };
    QStringList titles;
    for (const QByteArray &key : keys) {
        QByteArray title = key;
        for (int segments = 1; segments < 64; ++segments) {
            const QByteArray mine = ending(key, segments);
            bool unique = true;
            for (const QByteArray &other : keys)
                if (other != key && (other == mine || other.endsWith(separator + mine) || ending(other, segments) == mine))
                    unique = false;
            if (unique || mine == key) {
                title = mine;
                break;
            }
        }
        QString shown = displayKey(title);
        if (shown.size() > maxChars) {
            const int keep = maxChars - 1, head = keep / 2;
            shown = shown.left(head) + QChar(0x2026) + shown.right(keep - head);
        }
        titles << shown;
    }
    return titles;
}

void MainWindow::retitleKeyTabs()
{
    QList<int> at;
    QList<QByteArray> keys;
    for (int i = 1; i < m_tabs->count(); ++i)
        if (auto *view = qobject_cast<KeyView *>(m_tabs->widget(i))) {
            at << i;
            keys << view->key();
        }
    const QStringList titles = keyTabTitles(keys, m_current.separator.toUtf8());
    for (qsizetype k = 0; k < at.size(); ++k)
        m_tabs->setTabText(at[k], titles[k]);
}

void MainWindow::openKey(const QByteArray &key)
{
    if (!m_client)
        return;
    for (int i = 1; i < m_tabs->count(); ++i)
        if (auto *view = qobject_cast<KeyView *>(m_tabs->widget(i)); view && view->key() == key) {
            m_tabs->setCurrentIndex(i);
            return;
        }
    auto *view = new KeyView(m_client, key, m_current.ns.toUtf8(), m_tabs);
    connect(view, &KeyView::pinRequested, this, &MainWindow::pinKey);
    connect(view, &KeyView::loaded, this, &MainWindow::checkSettled);
    connect(view, &KeyView::keyActionRequested, this, &MainWindow::runKeyAction);
    // However the tab goes (closed, Ctrl+W, a new connection), the others' titles follow.
    connect(view, &QObject::destroyed, this, [this] { QTimer::singleShot(0, this, &MainWindow::retitleKeyTabs); });
    // Keys are bytes: the tab shows them escaped, never as markup or raw control characters;
    // titled apart from the other keys' tabs (retitleKeyTabs).
    const int at = m_tabs->addTab(view, displayKey(key));
    // A tooltip that looks like markup is rendered as markup: escaped and marked rich text.
    m_tabs->setTabToolTip(at, QStringLiteral("<qt>%1</qt>").arg(displayKey(key).toHtmlEscaped()));
    retitleKeyTabs();
    m_tabs->setCurrentIndex(at);
}

void MainWindow::refresh()
{
    m_browser->refresh();
    m_overview->refresh();
    for (int i = 1; i < m_tabs->count(); ++i)
        if (auto *view = qobject_cast<KeyView *>(m_tabs->widget(i)))
            view->refresh();
}

void MainWindow::applyFilter()
{
    m_filterDebounce.stop();
    // A broken glob says why where it was typed; the listing stays as it was.
    const QString text = m_filter->text().trimmed();
    const bool glob = text.contains(QLatin1Char('*')) || text.contains(QLatin1Char('?')) || text.contains(QLatin1Char('['));
    const QString problem = glob ? globSyntaxProblem(text.toUtf8()) : QString();
    m_filter->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 1px solid #d32f2f; }"));
    m_filter->setToolTip(problem.isEmpty() ? m_filterHelp : QStringLiteral("Not a pattern: %1").arg(problem));
    if (!problem.isEmpty()) {
        statusBar()->showMessage(QStringLiteral("Filter not applied: %1").arg(problem), 15000);
        return;
    }
    m_browser->setFilter(m_filter->text());
}

void MainWindow::newProfile()
{
    auto *dialog = new ConnectionDialog(m_profiles, m_vault, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (m_client) {
        // Prefilled from the connection in use (a --url, the demo, another profile): saving
        // it is a name away. Its passwords are in the (masked) fields, as typed or given.
        ConnectionProfile p = m_current;
        const bool session = m_sessionProfiles.contains(p.name);
        p.name = session ? (p.name.contains(QLatin1String("://")) ? m_client->endpoint() : p.name) : QStringLiteral("%1 copy").arg(p.name);
        p.passwordStorage = p.sentinelPasswordStorage = ConnectionProfile::PasswordStorage::None;
        dialog->setProfile(p, false);
        dialog->passwordEdit()->setText(m_options.password);
        dialog->sentinelPasswordEdit()->setText(m_options.sentinelPassword);
    }
    connect(dialog, &ConnectionDialog::saved, this, [this, dialog](const ConnectionProfile &p) {
        reloadProfiles(p.name);
        const QString note = dialog->saveNote();
        statusBar()->showMessage(note.isEmpty() ? QStringLiteral("Saved profile %1").arg(p.name) : note, 10000);
    });
    dialog->open();
}

void MainWindow::editProfile(const QString &name)
{
    const auto profile = m_profiles.find(name);
    if (!profile)
        return;
    auto *dialog = new ConnectionDialog(m_profiles, m_vault, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setProfile(*profile, true);
    connect(dialog, &ConnectionDialog::saved, this, [this, name, dialog](const ConnectionProfile &p) {
        reloadProfiles(p.name);
        const QString note = dialog->saveNote();
        statusBar()->showMessage(note.isEmpty() ? QStringLiteral("Saved profile %1").arg(p.name) : note, 10000);
        if (m_client && m_current.name == name)
            connectProfile(p.name); // the connection follows its profile
    });
    dialog->open();
}

void MainWindow::deleteProfile()
{
    const QString name = selectedProfile();
    if (name.isEmpty() || m_sessionProfiles.contains(name))
        return;
    auto *box = new QMessageBox(QMessageBox::Question, QStringLiteral("Delete profile"),
                                QStringLiteral("Delete the profile %1 and its stored password?").arg(name),
                                QMessageBox::Yes | QMessageBox::Cancel, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, name](int button) {
        if (button != QMessageBox::Yes)
            return;
        if (m_current.name == name)
            disconnectFromServer();
        const auto profile = m_profiles.find(name);
        m_profiles.remove(name);
        // Removed from the keychain even when reading it failed earlier this session; when a
        // password kept there cannot be removed, the user is told where the entry is left.
        using Storage = ConnectionProfile::PasswordStorage;
        const std::pair<PasswordVault::Secret, bool> secrets[] = {
            {PasswordVault::Secret::Server, profile && profile->passwordStorage == Storage::Keychain},
            {PasswordVault::Secret::Sentinel, profile && profile->sentinelPasswordStorage == Storage::Keychain}};
        for (const auto &[which, kept] : secrets)
            m_vault.forget(name, which, this, [this, name, kept](const QString &note) {
                if (!note.isEmpty() && kept)
                    reportKeychainProblem(QStringLiteral("The profile %1 was deleted. %2").arg(name, note));
            });
        reloadProfiles();
    });
    box->open();
}

void MainWindow::reportKeychainProblem(const QString &text)
{
    auto *box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Password left in the keychain"), text, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("keychainProblem"));
    box->setTextFormat(Qt::PlainText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::askUnlock()
{
    if (!m_client || findChild<QMessageBox *>(QStringLiteral("unlockQuestion")))
        return;
    auto *box = new QMessageBox(QMessageBox::Warning, QStringLiteral("Allow changes"),
                                QStringLiteral("Allow changes to %1?\n\nResets, limit changes and bursts will be "
                                               "sent to this server. The unlock is recorded in the audit trail.")
                                    .arg(m_client->endpoint()),
                                QMessageBox::Yes | QMessageBox::Cancel, this);
    box->setObjectName(QStringLiteral("unlockQuestion"));
    box->setTextFormat(Qt::PlainText);
    box->button(QMessageBox::Yes)->setText(QStringLiteral("Allow changes"));
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this](int button) {
        if (button != QMessageBox::Yes || !m_client)
            return;
        // The record first: no unlock that the audit trail does not show.
        AuditEntry entry;
        entry.action = QStringLiteral("readonly.unlock");
        entry.target = m_client->url();
        entry.before = QStringLiteral("{\"read_only\":true}");
        entry.after = QStringLiteral("{\"read_only\":false}");
        entry.count = 1;
        m_client->request(
            this, [entry, ns = MetadataNamespace(m_current.ns), op = m_operator](Connection &c) { return appendAuditEntry(c, ns, entry, op); },
            [this](const Outcome<QString> &o) {
                if (!o.ok()) {
                    statusBar()->showMessage(
                        QStringLiteral("Still read-only: the unlock could not be recorded (%1)").arg(o.failure().message), 15000);
                    return;
                }
                m_client->setReadOnly(false);
                const QSignalBlocker block(m_lockAction);
                m_lockAction->setChecked(false);
                m_lockAction->setIconText(QStringLiteral("Writable"));
                statusBar()->showMessage(QStringLiteral("Changes allowed (recorded in the audit trail)"), 10000);
            });
    });
    box->open();
}

bool MainWindow::isPinnedTab(int index) const
{
    const QWidget *w = m_tabs->widget(index);
    return w == m_overview || w == m_monitor || w == m_burst || w == m_policies || w == m_whatIf || w == m_hot || w == m_audit ||
           w == m_lookup;
}

void MainWindow::runKeyAction(KeyAction action, const QList<QByteArray> &keys)
{
    if (keys.isEmpty() || !m_client)
        return;
    switch (action) {
    case KeyAction::Burst:
        m_burst->setKey(keys.first());
        m_tabs->setCurrentWidget(m_burst);
        break;
    case KeyAction::ChangeLimit:
        m_policies->changeKeyLimit(keys.first());
        m_tabs->setCurrentWidget(m_policies);
        break;
    case KeyAction::EditPolicy:
        m_policies->editPolicyOf(keys.first());
        m_tabs->setCurrentWidget(m_policies);
        break;
    case KeyAction::WhatIf:
        m_whatIf->previewKey(keys.first());
        m_tabs->setCurrentWidget(m_whatIf);
        break;
    case KeyAction::Reset:
        openReset(keys, {});
        break;
    }
}

ResetDialog *MainWindow::openReset(const QList<QByteArray> &keys, const QByteArray &pattern, const QString &reason)
{
    if (!m_client)
        return nullptr;
    auto *dialog = new ResetDialog(m_client, m_current.ns.toUtf8(), {keys, pattern}, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setOperatorName(m_operator);
    dialog->setReason(reason);
    // The keys panel and open views show what is left once the keys are gone.
    connect(dialog, qOverload<qint64>(&ResetDialog::finished), this, &MainWindow::refresh);
    dialog->open();
    return dialog;
}

void MainWindow::pinKey(const QByteArray &key)
{
    m_monitor->pin(key);
    statusBar()->showMessage(QStringLiteral("Pinned to the monitor: %1").arg(displayKey(key)), 5000);
}

void MainWindow::showTab(const QString &tab)
{
    if (tab.compare(QLatin1String("overview"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_overview);
    else if (tab.compare(QLatin1String("monitor"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_monitor);
    else if (tab.compare(QLatin1String("burst"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_burst);
    else if (tab.compare(QLatin1String("policies"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_policies);
    else if (tab.compare(QLatin1String("whatif"), Qt::CaseInsensitive) == 0 ||
             tab.compare(QLatin1String("what-if"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_whatIf);
    else if (tab.compare(QLatin1String("hot"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_hot);
    else if (tab.compare(QLatin1String("audit"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_audit);
    else if (tab.compare(QLatin1String("lookup"), Qt::CaseInsensitive) == 0)
        m_tabs->setCurrentWidget(m_lookup);
    else if (!tab.isEmpty())
        openKey(tab.toLocal8Bit()); // selects its tab when it is open already
}

void MainWindow::setStartupView(const StartupView &view)
{
    m_startup = view;
    if (m_client)
        applyStartupView();
}

void MainWindow::openStartupKeys()
{
    // The keys asked for open as the console connects, so that their first reads go with the
    // handshake, and the window is first shown on the key rather than on a page that would
    // read its own first. The rest of the startup view waits for the connection.
    if (!m_startup)
        return;
    for (const QByteArray &key : m_startup->openKeys)
        openKey(key);
}

void MainWindow::applyStartupView()
{
    if (!m_startup || !m_client)
        return;
    const StartupView view = *m_startup;
    m_startup.reset();
    for (const QByteArray &key : view.pins)
        m_monitor->pin(key);
    for (const QByteArray &key : view.openKeys)
        openKey(key);
    if (!view.lookup.isEmpty()) {
        m_lookup->lookUp(view.lookup);
        if (view.tab.isEmpty())
            m_tabs->setCurrentWidget(m_lookup);
    }
    if (!view.editPolicy.isEmpty()) {
        m_policies->editPolicyNamed(view.editPolicy);
        if (view.tab.isEmpty())
            m_tabs->setCurrentWidget(m_policies);
    }
    if (view.burst) {
        m_burst->prefill(*view.burst);
        m_burst->startWhenReady();
        if (view.tab.isEmpty())
            m_tabs->setCurrentWidget(m_burst);
    }
    if (!view.tab.isEmpty())
        showTab(view.tab);
    else if (view.burst || !view.editPolicy.isEmpty() || !view.lookup.isEmpty())
        ; // their tab is shown
    else if (!view.openKeys.isEmpty())
        openKey(view.openKeys.last());
    else if (!view.pins.isEmpty())
        m_tabs->setCurrentWidget(m_monitor);
    if (!view.resetPattern.isEmpty()) {
        m_startupReset = openReset({}, view.resetPattern);
        if (m_startupReset)
            connect(m_startupReset, &ResetDialog::stageChanged, this, &MainWindow::checkSettled);
    }
}

bool MainWindow::isSettled() const
{
    if (!m_client || m_client->state() != RedisClient::State::Connected || !m_client->status() || !m_browser->isSettled() ||
        !m_monitor->isLoaded() || m_burst->isBusy() ||
        (m_startupReset && m_startupReset->stage() == ResetDialog::Stage::Planning))
        return false;
    for (int i = 0; i < m_tabs->count(); ++i)
        if (auto *view = qobject_cast<KeyView *>(m_tabs->widget(i)); view && !view->isLoaded())
            return false;
    // The Overview, Policies, Hot, Audit and Lookup tabs read when shown: wait for them only
    // then; the What-if view for a comparison it was asked to run.
    const QWidget *shown = m_tabs->currentWidget();
    return (shown != m_overview || m_overview->isLoaded()) && (shown != m_policies || m_policies->isLoaded()) && (shown != m_audit || m_audit->isLoaded()) &&
           (shown != m_whatIf || m_whatIf->isIdle()) && (shown != m_hot || m_hot->isLoaded()) &&
           (shown != m_lookup || m_lookup->identifier().isEmpty() || m_lookup->isLoaded());
}

void MainWindow::checkSettled()
{
    if (!m_settledSent && isSettled()) {
        m_settledSent = true;
        emit settled();
    }
}

} // namespace ratescope::ui
