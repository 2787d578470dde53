// What the status bar and `ratescope-cli info` show about a server.
#pragma once

#include "redis/connection.h"

#include <QHash>
#include <QString>

#include <vector>

namespace ratescope {

// In a cluster, sizes are summed over the masters (the data is split between them).
struct ServerInfo {
    QString version;
    QString mode; // standalone | cluster | sentinel
    QString role; // master | slave (as INFO says; in a cluster, the first master's)
    qint64 dbSize = 0;
    qint64 usedMemory = 0;
    qint64 maxMemory = 0;     // 0: no limit (in a cluster: when any master has none)
    qint64 expires = 0;       // keys of the database that have a TTL
    qint64 clients = 0;       // connected clients
    qint64 uptimeSeconds = 0; // the most recently started master's
    // Cluster: the masters with their slots and replicas. Otherwise the server connected
    // to, then its replicas (a master) or, for a replica, nothing more: its master is in
    // Node::master.
    std::vector<Connection::Node> nodes;
    // Cluster masters that did not answer (down, or refusing INFO); the sums leave them out.
    int mastersMissing = 0;

    int masterCount() const;
    int replicaCount() const;

    // Runs INFO server/clients/replication/memory/keyspace and DBSIZE in one round trip
    // per master. A cluster master that does not answer is counted in mastersMissing, its
    // node says why; when none answers, its error is thrown.
    static ServerInfo fetch(Connection &connection);
    // What fetch() asks each master, with a PING in front: for a status poll that reads it
    // ahead in one timed round trip on one server (Connection::prefetch).
    static std::vector<Command> reads();
    // For users who may not run INFO: DBSIZE (summed over the masters that answer) and the
    // nodes only.
    static ServerInfo fetchWithoutInfo(Connection &connection);
    // "field:value" lines of an INFO reply; section headers and blanks skipped.
    static QHash<QString, QString> parseInfo(const QByteArray &text);
};

// 1069616 -> "1.02 MiB"
QString formatBytes(qint64 bytes);

} // namespace ratescope
