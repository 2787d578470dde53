// `ratescope-cli info`: which server this is, how big, and (cluster, sentinel, replicas)
// which nodes stand behind it.
#include "cli.h"

#include "redis/serverinfo.h"

#include <QJsonArray>

namespace ratescope::cli {

namespace {

int runInfo(Cli &cli)
{
    const ServerInfo info = ServerInfo::fetch(cli.connection());
    if (cli.json()) {
        QJsonArray nodes;
        for (const Connection::Node &n : info.nodes) {
            QJsonObject o{{QStringLiteral("address"), n.address.toString()}, {QStringLiteral("role"), n.role}};
            if (!n.slotRanges.isEmpty())
                o.insert(QStringLiteral("slots"), n.slotRanges);
            if (!n.master.host.isEmpty())
                o.insert(QStringLiteral("master"), n.master.toString());
            if (!n.link.isEmpty())
                o.insert(QStringLiteral("link"), n.link);
            if (!n.problem.isEmpty())
                o.insert(QStringLiteral("not_answering"), n.problem);
            nodes.append(o);
        }
        cli.printJson({
            {QStringLiteral("version"), info.version},
            {QStringLiteral("mode"), info.mode},
            {QStringLiteral("role"), info.role},
            {QStringLiteral("db_size"), info.dbSize},
            {QStringLiteral("expires"), info.expires},
            {QStringLiteral("used_memory"), info.usedMemory},
            {QStringLiteral("maxmemory"), info.maxMemory},
            {QStringLiteral("connected_clients"), info.clients},
            {QStringLiteral("uptime_seconds"), info.uptimeSeconds},
            {QStringLiteral("nodes"), nodes},
            {QStringLiteral("masters_not_answering"), info.mastersMissing},
        });
        return ExitOk;
    }
    QList<QPair<QString, QString>> fields{
        {QStringLiteral("server"), cli.connection().options().toUrl()},
        {QStringLiteral("version"), info.version},
        {QStringLiteral("mode"), info.mode},
        {QStringLiteral("role"), info.role},
        {QStringLiteral("db_size"), QString::number(info.dbSize)},
        {QStringLiteral("expires"), QString::number(info.expires)},
        {QStringLiteral("used_memory"),
         QStringLiteral("%1 (%2 bytes)%3")
             .arg(formatBytes(info.usedMemory))
             .arg(info.usedMemory)
             .arg(info.maxMemory > 0 ? QStringLiteral(" of %1").arg(formatBytes(info.maxMemory)) : QStringLiteral(", no maxmemory"))},
        {QStringLiteral("clients"), QString::number(info.clients)},
    };
    if (info.mastersMissing > 0)
        fields.append({QStringLiteral("warning"),
                       QStringLiteral("%1 master(s) did not answer: the sizes above leave them out").arg(info.mastersMissing)});
    // One line per node once there is more than the one server.
    if (info.nodes.size() > 1 || cli.connection().isCluster())
        for (const Connection::Node &n : info.nodes)
            fields.append({QStringLiteral("node"), QStringLiteral("%1  %2").arg(n.address.toString(), n.describe())});
    cli.printFields(fields);
    return ExitOk;
}

} // namespace

void registerInfo(QList<Subcommand> &commands)
{
    commands.append({QStringLiteral("info"),
                     QStringLiteral("info"),
                     QStringLiteral("Server version, mode, role, database size, memory and, for a cluster, sentinel or "
                                    "replicated server, its nodes and their roles."),
                     {},
                     false,
                     runInfo});
}

} // namespace ratescope::cli
