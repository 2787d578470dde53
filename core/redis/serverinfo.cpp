#include "redis/serverinfo.h"

#include "redis/connection.h"

#include <algorithm>

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

namespace {

qint64 number(const QHash<QString, QString> &fields, const char *name)
{
    return fields.value(QLatin1String(name)).toLongLong();
}

// "keys=43,expires=42,avg_ttl=9123" -> 42
qint64 expiresOf(const QString &keyspaceLine)
{
    for (const QString &part : keyspaceLine.split(QLatin1Char(',')))
        if (part.startsWith(QLatin1String("expires=")))
            return part.mid(8).toLongLong();
    return 0;
}

// "ip=127.0.0.1,port=6380,state=online,offset=42,lag=0"
Connection::Node replicaOf(const QString &line, const HostPort &master)
{
    Connection::Node n;
    n.role = QStringLiteral("replica");
    n.master = master;
    for (const QString &part : line.split(QLatin1Char(','))) {
        const QString key = part.section(QLatin1Char('='), 0, 0), value = part.section(QLatin1Char('='), 1);
        if (key == QLatin1String("ip"))
            n.address.host = value;
        else if (key == QLatin1String("port"))
            n.address.port = quint16(value.toUInt());
        else if (key == QLatin1String("state"))
            n.link = value;
    }
    return n;
}

} // namespace

std::vector<Command> ServerInfo::reads()
{
    return {{"PING"}, {"INFO", "server"}, {"INFO", "clients"}, {"INFO", "replication"}, {"INFO", "memory"}, {"INFO", "keyspace"}, {"DBSIZE"}};
}

ServerInfo ServerInfo::fetch(Connection &connection)
{
    ServerInfo info;
    connection.refreshTopology(); // a status display wants failovers and new replicas seen
    // A cluster's map before the masters are asked: the same as onEachMaster's, in its order.
    // Otherwise after: through sentinels, that call may have followed a failover.
    if (connection.isCluster())
        info.nodes = connection.nodes();
    std::vector<Command> asked = reads();
    asked.erase(asked.begin()); // no PING
    const auto perMaster = connection.onEachMaster(asked);
    const QString db = QStringLiteral("db%1").arg(connection.options().db);
    if (!connection.isCluster())
        info.nodes = connection.nodes();
    std::vector<Connection::Node *> masters;
    for (Connection::Node &n : info.nodes)
        if (n.role != QLatin1String("replica"))
            masters.push_back(&n);
    bool anyUnlimited = false;
    QHash<QString, QString> first;
    for (size_t m = 0; m < perMaster.size(); ++m) {
        const std::vector<Reply> &replies = perMaster[m];
        const auto refused = std::find_if(replies.begin(), replies.end(), [](const Reply &r) { return r.isError(); });
        if (refused != replies.end() && perMaster.size() > 1) {
            ++info.mastersMissing;
            if (m < masters.size()) // "DOWN <address>: why" -> "why"
                masters[m]->problem =
                    refused->text().startsWith(QLatin1String("DOWN ")) ? refused->text().section(QStringLiteral(": "), 1) : refused->text();
            continue;
        }
        QHash<QString, QString> fields;
        for (size_t i = 0; i < 5; ++i)
            fields.insert(parseInfo(replies[i].orThrow().bytes()));
        if (first.isEmpty())
            first = fields;
        info.dbSize += replies[5].orThrow().toInteger();
        info.usedMemory += number(fields, "used_memory");
        info.clients += number(fields, "connected_clients");
        info.expires += expiresOf(fields.value(db));
        const qint64 max = number(fields, "maxmemory");
        anyUnlimited = anyUnlimited || max == 0;
        info.maxMemory += max;
        const qint64 up = number(fields, "uptime_in_seconds");
        info.uptimeSeconds = info.uptimeSeconds == 0 ? up : std::min(info.uptimeSeconds, up);
    }
    if (!perMaster.empty() && info.mastersMissing == int(perMaster.size())) // none answered: as one server would fail
        std::find_if(perMaster.front().begin(), perMaster.front().end(), [](const Reply &r) { return r.isError(); })->orThrow();
    if (anyUnlimited)
        info.maxMemory = 0;
    info.version = first.value(QStringLiteral("redis_version"));
    info.mode = first.value(QStringLiteral("redis_mode"), QStringLiteral("standalone"));
    info.role = first.value(QStringLiteral("role"));

    if (!connection.isCluster() && !info.nodes.empty()) {
        Connection::Node &self = info.nodes.front();
        if (info.role == QLatin1String("slave")) {
            self.role = QStringLiteral("replica");
            self.master = {first.value(QStringLiteral("master_host")), quint16(number(first, "master_port"))};
            self.link = first.value(QStringLiteral("master_link_status"));
        } else if (info.role == QLatin1String("master")) {
            if (self.role == QLatin1String("standalone"))
                self.role = QStringLiteral("master");
            const HostPort address = self.address; // self moves as nodes grows
            for (qint64 i = 0; i < number(first, "connected_slaves"); ++i) {
                const QString line = first.value(QStringLiteral("slave%1").arg(i));
                if (!line.isEmpty())
                    info.nodes.push_back(replicaOf(line, address));
            }
        }
    }
    return info;
}

ServerInfo ServerInfo::fetchWithoutInfo(Connection &connection)
{
    ServerInfo info;
    info.nodes = connection.nodes();
    if (connection.isCluster())
        info.mode = QStringLiteral("cluster");
    const auto perMaster = connection.onEachMaster({{"DBSIZE"}});
    for (const std::vector<Reply> &replies : perMaster) {
        if (replies.front().isError() && perMaster.size() > 1)
            ++info.mastersMissing;
        else
            info.dbSize += replies.front().orThrow().toInteger();
    }
    if (!perMaster.empty() && info.mastersMissing == int(perMaster.size()))
        perMaster.front().front().orThrow();
    return info;
}

int ServerInfo::masterCount() const
{
    return int(std::count_if(nodes.begin(), nodes.end(), [](const Connection::Node &n) { return n.role != QLatin1String("replica"); }));
}

int ServerInfo::replicaCount() const
{
    return int(nodes.size()) - masterCount();
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
