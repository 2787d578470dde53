// What the status bar and `ratescope-cli info` show about a server.
#pragma once

#include <QHash>
#include <QString>

namespace ratescope {

class Connection;

struct ServerInfo {
    QString version;
    QString mode; // standalone | cluster | sentinel
    QString role; // master | slave (as INFO says)
    qint64 dbSize = 0;
    qint64 usedMemory = 0;

    // Runs INFO server/replication/memory and DBSIZE in one round trip.
    static ServerInfo fetch(Connection &connection);
    // "field:value" lines of an INFO reply; section headers and blanks skipped.
    static QHash<QString, QString> parseInfo(const QByteArray &text);
};

// 1069616 -> "1.02 MiB"
QString formatBytes(qint64 bytes);

} // namespace ratescope
