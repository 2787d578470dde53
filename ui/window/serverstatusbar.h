// The status bar's vital signs of the connection: state, server version and role, the nodes
// behind it (cluster masters and replicas, the master sentinels chose, replicas), round trip
// (PING every 2 s), used memory, keys in the database, and the read-only lock.
#pragma once

#include "redisclient.h"
#include <QPointer>
#include <QWidget>

class QLabel;

namespace ratescope::ui {

class ServerStatusBar : public QWidget {
    Q_OBJECT
public:
    explicit ServerStatusBar(QWidget *parent = nullptr);
    void setClient(RedisClient *client);
    // Plain text of everything shown, for tests and logs.
    QString summary() const;
    // The nodes and their roles, one per line (the nodes label's tooltip as plain text).
    QString nodesText() const { return m_nodesText; }

private:
    void update();

    QPointer<RedisClient> m_client;
    QLabel *m_state;
    QLabel *m_server;
    QLabel *m_nodes;
    QWidget *m_nodesDivider;
    QString m_nodesText;
    QLabel *m_latency;
    QLabel *m_memory;
    QLabel *m_keys;
    QLabel *m_lock;
};

} // namespace ratescope::ui
