// The Overview tab: the server as a limiter store (version, role, memory against its limit
// and eviction policy, clients, keys with expiry) and the policies declared under the
// namespace, and the limiter scripts' state (functions library, script cache, older releases'
// scripts) with a Deploy button that previews what it loads. Refreshed every 10 s while shown.
#pragma once

#include "redisclient.h"
#include "ticktimer.h"
#include "limiters/scriptlibrary.h"

#include <QPointer>
#include <QWidget>

class QLabel;
class QPushButton;
class QTableView;

namespace ratescope::ui {

class PolicyTableModel;

class OverviewPage : public QWidget {
    Q_OBJECT
public:
    explicit OverviewPage(QWidget *parent = nullptr);
    void setClient(RedisClient *client, const QString &ns);
    void refresh();
    bool isLoaded() const { return m_loaded; }
    PolicyTableModel *policies() const { return m_policies; }
    QString summaryText() const;
    QString scriptsText() const;
    QPushButton *deployButton() const { return m_deploy; }
    // Who the audit trail names for a deploy (empty: the OS user).
    void setOperatorName(const QString &name) { m_operator = name; }
    // The Deploy button: reads the plan on the worker, previews it, and loads it once confirmed.
    void deploy();

protected:
    void showEvent(QShowEvent *event) override; // read once first shown: hidden, it reads nothing

signals:
    void loaded();

private:
    void updateDeployable();
    void confirmDeploy(const DeployPlan &plan);

    QPointer<RedisClient> m_client;
    QString m_ns;
    QObject m_requests; // owner of this page's requests
    RedisClient::RepeatMemory m_readMemory = RedisClient::newRepeatMemory(); // what the last read asked
    bool m_loaded = false;
    bool m_pending = false; // a read in flight
    bool m_again = false;   // asked for while one was: read again when it is back
    QLabel *m_summary;
    QLabel *m_warning;
    QLabel *m_scripts;
    QPushButton *m_deploy;
    QString m_operator;
    bool m_deploying = false;
    QLabel *m_policyNote;
    QTableView *m_table;
    PolicyTableModel *m_policies;
    TickTimer m_timer; // on the client's shared tick: its reads go in the key views' rounds
};

} // namespace ratescope::ui
