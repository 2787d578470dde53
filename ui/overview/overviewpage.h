// The Overview tab: the server as a limiter store (version, role, memory against its limit
// and eviction policy, clients, keys with expiry) and the policies declared under the
// namespace. Refreshed every 10 s while it is shown.
#pragma once

#include "redisclient.h"
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QLabel;
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

signals:
    void loaded();

private:
    QPointer<RedisClient> m_client;
    QString m_ns;
    QObject m_requests; // owner of this page's requests
    bool m_loaded = false;
    QLabel *m_summary;
    QLabel *m_warning;
    QLabel *m_policyNote;
    QTableView *m_table;
    PolicyTableModel *m_policies;
    QTimer m_timer;
};

} // namespace ratescope::ui
