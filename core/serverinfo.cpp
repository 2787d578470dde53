#include "serverinfo.h"

#include "connection.h"

namespace ratescope {

QHash<QString, QString> ServerInfo::parseInfo(const QByteArray &text)
{
    QHash<QString, QString> fields;
    for (const QByteArray &rawLine : text.split('\n')) {
        const QByteArray line = rawLine.trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const int colon = line.indexOf(':');
        if (colon > 0)
            fields.insert(QString::fromUtf8(line.left(colon)), QString::fromUtf8(line.mid(colon + 1)));
    }
    return fields;
}

ServerInfo ServerInfo::fetch(Connection &connection)
{
    const auto replies = connection.pipeline({
        {"INFO", "server"},
        {"INFO", "replication"},
        {"INFO", "memory"},
        {"DBSIZE"},
    });
    QHash<QString, QString> fields;
    for (size_t i = 0; i < 3; ++i)
        fields.insert(parseInfo(replies[i].orThrow().bytes()));
    ServerInfo info;
    info.version = fields.value(QStringLiteral("redis_version"));
    info.mode = fields.value(QStringLiteral("redis_mode"), QStringLiteral("standalone"));
    info.role = fields.value(QStringLiteral("role"));
    info.usedMemory = fields.value(QStringLiteral("used_memory")).toLongLong();
    info.dbSize = replies[3].toInteger();
    return info;
}

QString formatBytes(qint64 bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    return u == 0 ? QStringLiteral("%1 B").arg(bytes) : QStringLiteral("%1 %2").arg(v, 0, 'f', 2).arg(QLatin1String(units[u]));
}

} // namespace ratescope
