// The console's main window: a toolbar (profile picker, connect, read-only lock, refresh, key
// filter), the keys panel beside tabs (overview, monitor, burst, policies, what if, hot, audit,
// lookup, opened keys), a banner while the connection is lost or refused, and the server's vital signs
// in the status bar. Key actions (burst, limits, reset) from the keys panel and key views arrive here.
#pragma once

#include "burstpage.h"
#include "connectionprofile.h"
#include "keyactions.h"
#include "passwordprompt.h"
#include "passwordvault.h"
#include "redisclient.h"

#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <optional>

class QAction;
class QMenu;
class QComboBox;
class QLineEdit;
class QTabWidget;
class QToolButton;

namespace ratescope::ui {

class ConnectionBanner;
class ConnectionEventLog;
class OperatorBar;
class AuditPage;
class BurstPage;
class KeyBrowser;
class MonitorPage;
class PoliciesPage;
class OverviewPage;
class ProfileStore;
class ServerStatusBar;
class WhatIfPage;
class HotPage;
class LookupPage;
class ResetDialog;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(ProfileStore &profiles, PasswordVault &vault, QWidget *parent = nullptr);
    ~MainWindow() override;

    // A profile that is not saved (the demo's sandbox, a --url): listed first and reached
    // with `options` as given (they may carry a password; it stays in memory).
    void addSessionProfile(const ConnectionProfile &profile, const ConnectionOptions &options);
    // Connects to a saved or session profile, asking for its password when needed.
    bool connectProfile(const QString &name);
    void disconnectFromServer();
    // Locks every connection of this window read-only (--read-only): the toolbar's lock.
    void setReadOnly(bool readOnly);
    void openKey(const QByteArray &key);
    // Adds the key to the Monitor tab's chart (and keeps polling it while connected).
    void pinKey(const QByteArray &key);
    // "overview", "monitor", "burst", "policies", "whatif", "hot", "audit", "lookup", or a key
    // (opened if it is not).
    void showTab(const QString &tab);

    // What the command line asks to see once connected (--open-key, --pin, --tab): applied to
    // the next connection as soon as it exists, so a password asked for first does not lose it.
    struct StartupView {
        QList<QByteArray> openKeys;
        QList<QByteArray> pins;
        QString tab;
        QString lookup; // an identifier the Lookup tab looks up (and is shown, unless tab says otherwise)
        QString editPolicy; // a policy opened in the Policies tab's editor (shown, unless tab says otherwise)
        // A burst or the boundary test started from the Burst tab (shown, unless tab says otherwise).
        std::optional<BurstPage::Prefill> burst;
        QByteArray resetPattern; // the reset dialog opened on the keys matching it (nothing deleted unless confirmed)
    };
    void setStartupView(const StartupView &view);
    // Every connection this window makes from now on is followed by `log` (--event-log): one
    // line per change of its state. The log must outlive the window's connections.
    void setEventLog(ConnectionEventLog *log);

    RedisClient *client() const { return m_client; }
    QString currentProfile() const { return m_current.name; }
    KeyBrowser *keyBrowser() const { return m_browser; }
    OverviewPage *overview() const { return m_overview; }
    MonitorPage *monitor() const { return m_monitor; }
    BurstPage *burst() const { return m_burst; }
    PoliciesPage *policies() const { return m_policies; }
    WhatIfPage *whatIf() const { return m_whatIf; }
    HotPage *hot() const { return m_hot; }
    AuditPage *audit() const { return m_audit; }
    LookupPage *lookup() const { return m_lookup; }
    // The Lookup tab, its identifier field focused (Ctrl+K); with an id, looked up.
    void showLookup(const QString &id = {});
    // Burst, change limit, edit policy, what if (their tabs, prefilled) or reset (the preview dialog).
    void runKeyAction(KeyAction action, const QList<QByteArray> &keys);
    // The reset dialog for exact keys or a SCAN MATCH pattern (opened, not waited for), the
    // audit entries carrying reason; nullptr when not connected.
    ResetDialog *openReset(const QList<QByteArray> &keys, const QByteArray &pattern, const QString &reason = {});
    ConnectionBanner *banner() const { return m_banner; }
    ServerStatusBar *serverStatus() const { return m_status; }
    QTabWidget *tabs() const { return m_tabs; }
    QLineEdit *filterEdit() const { return m_filter; }
    QAction *lockAction() const { return m_lockAction; }
    QString operatorName() const { return m_operator; }
    OperatorBar *operatorBar() const { return m_operatorBar; }
    // The login prompt while one is open (the server wants a password, or refused one).
    PasswordPrompt *passwordPrompt() const { return m_prompt; }

    // Connected, the server's status known, the keyspace read and the rows in view filled, and
    // every open key view and the monitor's pinned keys drawn once.
    bool isSettled() const;

    // Tab titles of the open keys: the shortest ending (by segments) that tells each apart
    // from the others, middle-elided when long; the whole key in the tooltip.
    static QStringList keyTabTitles(const QList<QByteArray> &keys, const QByteArray &separator, int maxChars = 32);

signals:
    void settled();

private:
    // The menu bar: Connection, View, Key, Help, each action with its keys, which work wherever
    // the focus is: Ctrl+F the filter, Ctrl+W / Ctrl+F4 close the tab, Ctrl+Tab / Ctrl+PgDn and
    // Ctrl+Shift+Tab / Ctrl+PgUp switch tabs, Alt+1..8 the fixed tabs, Ctrl+K the Lookup, Ctrl+Shift+R reset the
    // selected keys (or the open key's) through the dialog, F5 refresh.
    void buildMenus();
    void updateKeyActions();
    void showKeys(); // Help › Keyboard and menus: read from the menus
    // The keys selected in the panel, else the key whose tab is shown.
    QList<QByteArray> actionKeys() const;
    // The name recorded with this console's changes beside the OS user, given to every page.
    void setOperator(const QString &name);
    // Once connected: the saved profile's operator, asked for once (the bar) when never given.
    void recallOperator();
    void retitleKeyTabs();
    void reloadProfiles(const QString &select = {});
    QString selectedProfile() const;
    void connectWith(const ConnectionProfile &profile, const ConnectionOptions &options);
    void obtainPassword(const ConnectionProfile &profile, PasswordVault::Secret which, std::function<void(QString)> done);
    void askPassword(const ConnectionProfile &profile, PasswordVault::Secret which, std::function<void(QString)> done);
    // The server said NOAUTH or refused the login: the prompt (opened, or told the refusal).
    void askLogin();
    // A login typed into the prompt: the connection is made again with it.
    void loginWith(const QString &user, const QString &password, bool remember);
    // Connected with a login typed at a prompt: kept for the session, and in the keychain
    // when asked (a saved profile's), the profile following (its user, where its password is).
    void keepLogin();
    void toggleConnection();
    void editProfile(const QString &name);
    void newProfile();
    void deleteProfile();
    void reportKeychainProblem(const QString &text); // a box, not a passing status line
    void refresh();
    void updateActions();
    void checkSettled();
    void applyFilter();
    void openStartupKeys();
    void applyStartupView();
    void askUnlock();                  // the read-only lock opens once confirmed and recorded
    bool isPinnedTab(int index) const; // the pages stay; key tabs close

    ProfileStore &m_profiles;
    PasswordVault &m_vault;
    QHash<QString, std::pair<ConnectionProfile, ConnectionOptions>> m_sessionProfiles;
    quint64 m_connectAttempt = 0; // numbers connectProfile()'s password lookups
    QStringList m_sessionOrder;
    ConnectionProfile m_current;
    QPointer<RedisClient> m_client;
    QPointer<ConnectionEventLog> m_eventLog;
    bool m_forceReadOnly = false;
    bool m_settledSent = false;
    std::optional<StartupView> m_startup;
    QPointer<ResetDialog> m_startupReset; // settled once it shows its preview
    QPointer<PasswordPrompt> m_prompt;
    // A login typed at a prompt, until the connection made with it answers (never written
    // anywhere but the vault, and only once the server took it).
    struct TypedLogin {
        QString user, password;
        bool remember = false;
        PasswordVault::Secret which = PasswordVault::Secret::Server;
        QPointer<RedisClient> client; // the connection it was tried on
    };
    std::optional<TypedLogin> m_typedLogin;

    QComboBox *m_picker;
    QAction *m_connectAction;
    QToolButton *m_profilesButton;
    QAction *m_editAction;
    QAction *m_deleteAction;
    QAction *m_lockAction;
    QAction *m_refreshAction;
    QAction *m_newProfileAction = nullptr;
    QAction *m_operatorAction = nullptr;
    QMenu *m_keyMenu = nullptr;
    QAction *m_openKeyAction = nullptr;
    QAction *m_pinAction = nullptr;
    QAction *m_burstAction = nullptr;
    QAction *m_changeLimitAction = nullptr;
    QAction *m_editPolicyAction = nullptr;
    QAction *m_whatIfAction = nullptr;
    QAction *m_resetAction = nullptr;
    QAction *m_closeTabAction = nullptr;
    OperatorBar *m_operatorBar = nullptr;
    QString m_operator;
    QHash<QString, QString> m_sessionOperators; // a --url's or the demo's, for this session only
    QString m_filterHelp; // the filter's tooltip while what is typed is fine
    QLineEdit *m_filter;
    QTimer m_filterDebounce;
    ConnectionBanner *m_banner;
    KeyBrowser *m_browser;
    QTabWidget *m_tabs;
    OverviewPage *m_overview;
    MonitorPage *m_monitor;
    BurstPage *m_burst;
    PoliciesPage *m_policies;
    WhatIfPage *m_whatIf;
    HotPage *m_hot;
    AuditPage *m_audit;
    LookupPage *m_lookup;
    ConnectionOptions m_options; // the current connection's, for the burst engine's own connections
    ServerStatusBar *m_status;
};

} // namespace ratescope::ui
